"""Corrupted run folders given to report, gate and diff: exit 2 with the file
and what is wrong, never a traceback, never exit 1 (which means a verdict)."""

from __future__ import annotations

import json
import shutil

import pytest

from conformance.engine import records
from tests.conftest import conformance

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
    done = conformance(*args)
    assert done.returncode == 2, (name, done.stdout, done.stderr)
    assert said in done.stderr and str(run / records.RESULTS) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_last_line_cut_inside_a_character_is_a_killed_run_not_an_error(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / records.RESULTS).write_bytes(_line() + b"\n" + CUT_UTF8)
    done = conformance("report", str(run), "-o", str(tmp_path / "r.html"))
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
    done = conformance("gate", str(run))
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr


def test_results_that_are_a_folder_and_an_unwritable_out(tmp_path):
    run = tmp_path / "run"
    (run / records.RESULTS).mkdir(parents=True)
    done = conformance("gate", str(run))
    assert done.returncode == 2 and "a folder, not a results file" in done.stderr
    blocker = tmp_path / "file"
    blocker.write_text("x")
    done = conformance("run", "--runtime", "onnxruntime", "-k", "gather-example-axis0",
                       "--out", str(blocker / "sub"), "--no-progress")  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and str(blocker) in done.stderr
    shutil.rmtree(run)
