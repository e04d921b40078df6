"""Corrupted run folders given to report, gate and diff: exit 2 with the file
and what is wrong, never a traceback, never exit 1 (which means a verdict). The readers run in this
process (conformance_here): what they read is the folder, not the process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.engine import records
from tests.conftest import conformance_here

CUT_UTF8 = '{"case_id": "a", "message": "é'.encode()[:-1]  # cut inside a character


def _line(**change) -> bytes:
    record = {"case_id": "a.op13.float32.int64", "base_id": "a", "runtime": "onnxruntime",
              "variant": "static", "op": "Gather", "opset": 13, "kind": "pass", "message": "",
              "dtype": "float32", "indices_dtype": "int64", "data_shape": [1],
              "indices_shape": [1], "source": "x.yaml:1"}  # fmt: skip
    record.update(change)
    return json.dumps(record).encode()


# (name, results.jsonl bytes, what stderr says)
CORRUPT = [
    ("binary", b"\x00\xff\xfe garbage\n" + _line(), "not a JSON record (not UTF-8)"),
    ("a list", b"[1, 2]\n" + _line() + b"\n", "a JSON list, not a record"),
    ("a number", b"42\n", "a JSON int, not a record"),
    ("another tool", b'{"name": "x", "status": "ok"}\n', "case_id: None is not a record's"),
    ("no runtime", _line(runtime=None) + b"\n", "runtime: None is not a record's runtime"),
    ("unknown kind", _line(kind="sort_of") + b"\n", "kind: 'sort_of' is not an outcome kind"),
    ("lone surrogate", _line(message="\ud800") + b"\n", "a lone surrogate"),
    # found by tests/adversarial/test_fuzzed_inputs.py: each was "internal error" or a
    # wrong type deep inside the report
    ("nested deep", b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}\n" + _line() + b"\n",
     "not a JSON record (nested deeper than 100 levels)"),
    ("5000 digits", _line().replace(b'"opset": 13', b'"opset": ' + b"1" * 5000) + b"\n",
     "not a JSON record (Exceeds the limit (4300 digits)"),
    ("NaN opset", _line().replace(b'"opset": 13', b'"opset": NaN') + b"\n",
     "opset: nan is not a whole number"),
    ("shape of text", _line(data_shape="[1]") + b"\n", "data_shape: '[1]' is not a list"),
    ("values not text", _line(expected_values=[None]) + b"\n",
     "expected_values[0]: None is not text"),
    ("no message", _line(message=None) + b"\n", "message: None is not text"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "content", "said"), CORRUPT, ids=[c[0] for c in CORRUPT])
@pytest.mark.parametrize("command", ["gate", "report", "diff"])
def test_a_corrupted_results_file_is_exit_2_naming_it(tmp_path, name, content, said, command):
    run = tmp_path / "run"
    run.mkdir()
    (run / records.RESULTS).write_bytes(content)
    args = {
        "gate": ["gate", str(run)],
        "report": ["report", str(run), "-o", str(tmp_path / "r.html")],
        "diff": ["diff", str(run), str(run), "-o", str(tmp_path / "d.html")],
    }[command]
    done = conformance_here(*args)
    assert done.returncode == 2, (name, done.stdout, done.stderr)
    assert said in done.stderr and str(run / records.RESULTS) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_last_line_cut_inside_a_character_is_a_killed_run_not_an_error(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / records.RESULTS).write_bytes(_line() + b"\n" + CUT_UTF8)
    done = conformance_here("report", str(run), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
    assert "1 results" in done.stdout


@pytest.mark.parametrize(
    ("name", "header", "said"),
    [("a list", b"[]", "a JSON list, not an object"), ("not UTF-8", b"\xff\xfe{}", "not UTF-8"),
     ("a folder", None, "a folder, not a file")],
)  # fmt: skip
def test_a_corrupted_header_is_exit_2(tmp_path, name, header, said):
    run = tmp_path / "run"
    run.mkdir()
    (run / records.RESULTS).write_bytes(_line() + b"\n")
    if header is None:
        (run / records.HEADER).mkdir()
    else:
        (run / records.HEADER).write_bytes(header)
    done = conformance_here("gate", str(run))
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr


def test_results_that_are_a_folder_and_an_unwritable_out(tmp_path):
    run = tmp_path / "run"
    (run / records.RESULTS).mkdir(parents=True)
    done = conformance_here("gate", str(run))
    assert done.returncode == 2 and "a folder, not a results file" in done.stderr
    blocker = tmp_path / "file"
    blocker.write_text("x")
    done = conformance_here("run", "--runtime", "onnxruntime", "-k", "gather-example-axis0",
                            "--out", str(blocker / "sub"), "--no-progress")  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and str(blocker) in done.stderr
    shutil.rmtree(run)


# -- a run folder whose parts do not add up (found by test_fuzzed_inputs.py) ---------------
def _run(tmp_path, lines: list[bytes], **summary) -> Path:
    """A finished run of these records: header, and a summary that counts them."""
    run = tmp_path / "run"
    run.mkdir()
    found = [json.loads(line) for line in lines]
    count = records.counted(found)
    groups = [dict(zip(("runtime", "kind", "op", "group"), key, strict=True), records=n)
              for key, n in sorted(count.pop("groups").items())]  # fmt: skip
    (run / records.HEADER).write_text(json.dumps({"run_id": "r"}))
    (run / records.SUMMARY).write_text(
        json.dumps({"run_id": "r", **count, "groups": groups, **summary})
    )
    (run / records.RESULTS).write_bytes(b"".join(line + b"\n" for line in lines))
    return run


def _append(run: Path, data: bytes) -> None:
    with (run / records.RESULTS).open("ab") as results:
        results.write(data)


def _summary(run: Path, **change) -> None:
    summary = json.loads((run / records.SUMMARY).read_text())
    (run / records.SUMMARY).write_text(json.dumps({**summary, **change}))


RUN = [_line(run_id="r"), _line(run_id="r", case_id="b.op13.float32.int64", kind="rejected",
                                stage="load", dtype="complex64")]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "change", "said"),
    [
        ("a discrepancy hidden", lambda run: (run / records.RESULTS).write_text(
            (run / records.RESULTS).read_text().replace('"kind": "rejected"', '"kind": "pass"')),
         "the records are not what summary.json counts: counts"),
        ("a discrepancy added", lambda run: (run / records.RESULTS).write_text(
            (run / records.RESULTS).read_text().replace('"kind": "pass"', '"kind": "crash"', 1)),
         "the records are not what summary.json counts: counts"),
        ("another group", lambda run: (run / records.RESULTS).write_text(
            (run / records.RESULTS).read_text().replace('"base_id": "a", "runtime": "onnxruntime",'
                                                        ' "variant": "static", "op": "Gather", '
                                                        '"opset": 13, "kind": "rejected"',
                                                        '"base_id": "z", "runtime": "onnxruntime",'
                                                        ' "variant": "static", "op": "Gather", '
                                                        '"opset": 13, "kind": "rejected"')),
         "the records are not what summary.json counts: groups"),
        ("no header", lambda run: (run / records.HEADER).unlink(),
         "summary.json is of run r, header.json of run None: the files are not of one run"),
        ("header without run id", lambda run: (run / records.HEADER).write_text("{}"),
         "the files are not of one run"),
        ("groups.json of another run", lambda run: (run / records.GROUPS).write_text(
            json.dumps({"format": 1, "run_id": "other", "groups": []})),
         "groups.json is of run other"),
        ("a count that is not a number", lambda run: (run / records.SUMMARY).write_text(
            (run / records.SUMMARY).read_text().replace('"records": 2', '"records": 2.0')),
         "records: 2.0 is not a whole number"),
        ("case problems that are not objects", lambda run: (run / records.SUMMARY).write_text(
            (run / records.SUMMARY).read_text()[:-1] + ', "case_problems": [1]}'),
         "case_problems[0]: 1 is not an object"),
        ("cpu flags that are not names", lambda run: (run / records.HEADER).write_text(
            json.dumps({"run_id": "r", "cpu_flags": ["avx2", True]})),
         "cpu_flags[1]: True is not text"),
        ("a summary of 5000 digits", lambda run: (run / records.SUMMARY).write_text(
            '{"records": ' + "9" * 5000 + "}"), "not JSON (Exceeds the limit"),
        ("a header nested deep", lambda run: (run / records.HEADER).write_text(
            '{"a": ' + "[" * 5000 + "]" * 5000 + "}"), "not JSON (nested deeper than 100 levels)"),
        ("a pass that lists a new group", lambda run: (run / records.GATE).write_text(json.dumps(
            {"passed": True, "new": [{"runtime": "onnxruntime", "kind": "rejected", "op": "Gather",
                                      "group": "a", "count": 1}], "fixed": [], "not_used": []})),
         "passed is true, but it lists 1 new group(s)"),
        ("a known group no entry covers", lambda run: (run / records.GATE).write_text(json.dumps(
            {"passed": True, "new": [], "fixed": [], "not_used": [],
             "groups": [{"runtime": "onnxruntime", "kind": "rejected", "op": "Gather",
                         "group": "b", "count": 1, "new": 0, "known": []}]})),
         "0 new of 1 result(s), 0 entries covering the rest"),
        ("a gate.json without its new groups", lambda run: (run / records.GATE).write_text(
            json.dumps({"passed": True, "fixed": [], "not_used": []})),
         "new: None is not there"),
        # results.jsonl of a run that ended holds whole lines only (its writer is closed)
        ("a torn last line", lambda run: _append(run, b'{"case_id": "\xff\xfe"'),
         "results.jsonl:3: a line cut short (not a JSON record: not UTF-8), but summary.json"),
        ("a torn line of UTF-8", lambda run: _append(run, RUN[0][:40]),
         "results.jsonl:3: a line cut short"),
        ("a record without its newline", lambda run: (run / records.RESULTS).write_bytes(
            (run / records.RESULTS).read_bytes()[:-1]),
         "results.jsonl:2: a record without its newline, but summary.json says the run ended"),
        ("an empty line", lambda run: (run / records.RESULTS).write_bytes(
            RUN[0] + b"\n\n" + RUN[1] + b"\n"), "results.jsonl:2: an empty line"),
        ("a line of spaces at the end", lambda run: _append(run, b"   "),
         "results.jsonl:3: a line cut short"),
        ("a torn line in the middle", lambda run: (run / records.RESULTS).write_bytes(
            RUN[0] + b"\n" + RUN[1][:30] + b"\n" + RUN[1] + b"\n"),
         "results.jsonl:2: not a JSON record"),
        ("an extra whole line", lambda run: _append(run, RUN[1] + b"\n"),
         "3 records, but summary.json counts 2"),
        ("a torn line on an interrupted run", lambda run: (
            _summary(run, interrupted=True), _append(run, b'{"case_id": "\xff\xfe"')),
         "results.jsonl:3: a line cut short"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)  # fmt: skip
def test_a_folder_whose_parts_do_not_add_up_is_refused_never_judged(tmp_path, name, change, said):
    run = _run(tmp_path, RUN)
    change(run)
    done = conformance_here("gate", str(run))  # report and diff read folders the same way (below)
    assert done.returncode == 2, (name, done.stdout, done.stderr)
    assert said in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_the_unchanged_folder_passes_and_every_reader_refuses_a_hidden_discrepancy(tmp_path):
    run = _run(tmp_path, RUN)
    assert conformance_here("gate", str(run)).returncode == 0  # the complex refusal is known
    results = run / records.RESULTS
    results.write_text(results.read_text().replace('"kind": "rejected"', '"kind": "pass"'))
    for args in (["gate", str(run)], ["report", str(run), "-o", str(tmp_path / "r.html")],
                 ["diff", str(run), str(run), "-o", str(tmp_path / "d.html")]):  # fmt: skip
        done = conformance_here(*args)
        assert done.returncode == 2, (args[0], done.stdout, done.stderr)
        assert "the records are not what summary.json counts" in done.stderr, done.stderr


def test_a_gate_json_of_results_edited_since_is_set_aside_then_judged_again(tmp_path):
    """Records edited and their summary recounted make a folder that adds up;
    its gate.json still names the results it judged (run id, SHA-256), so the
    report shows no verdict from it, and the gate judges the new ones."""
    run = _run(tmp_path, RUN)
    assert conformance_here("gate", str(run), "--out", str(run)).returncode == 0
    judged = json.loads((run / records.GATE).read_text())["judged"]
    assert judged == [{"run_id": "r", "results_sha256": records.read_folder(run).results_sha256}]
    page = tmp_path / "r.html"
    assert conformance_here("report", str(run), "-o", str(page)).returncode == 0
    assert "Gate PASSED" in page.read_text()

    edited = [json.loads(line) for line in RUN]
    edited[1]["case_id"] = "c.op13.float32.int64"  # same group, same counts: still adds up
    shutil.rmtree(run)
    run = _run(tmp_path, [json.dumps(r).encode() for r in edited])
    (run / records.GATE).write_text(
        json.dumps({"passed": True, "new": [], "fixed": [], "not_used": [], "judged": judged})
    )
    done = conformance_here("report", str(run), "-o", str(page))
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert "Gate PASSED" not in html and "judged other results than" in html
    assert conformance_here("gate", str(run), "--out", str(run)).returncode == 0  # judged again
    assert conformance_here("report", str(run), "-o", str(page)).returncode == 0
    assert "Gate PASSED" in page.read_text()


def test_a_record_source_is_shown_never_followed(tmp_path):
    """A record's ``source`` once made the report read that file (/dev/zero:
    MemoryError); it is text, shown as such and never a link."""
    run = tmp_path / "run"
    run.mkdir()
    (run / records.RESULTS).write_bytes(
        _line(kind="value_mismatch", message="x", source="/dev/zero:1") + b"\n"
    )
    page = tmp_path / "r.html"
    done = conformance_here("report", str(run), "-o", str(page))
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert "/dev/zero:1" in html and 'href="/dev/zero' not in html
