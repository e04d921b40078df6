"""A run folder is a unit: one run writes it at a time, its files and records
carry the run's id, and a folder whose parts do not belong together is
refused by gate, report and diff (exit 2), never passed. The readers run in
this process (conformance_here): what they read is the folder, not the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from conformance.engine import records
from tests.conftest import REPO, conformance_here

CASES = ["-k", "gather-example-axis0", "--variants", "static"]


def _run(out, *extra):
    return conformance_here("run", "--runtime", "onnxruntime", *CASES, "--out", str(out),
                            "--no-progress", *extra)  # fmt: skip


def test_a_second_run_into_a_busy_folder_is_refused_naming_the_first(tmp_path):
    out = tmp_path / "run"
    first = subprocess.Popen(  # a long run: every case, every variant, on the slow runtime
        [sys.executable, "-m", "conformance", "run", "--runtime", "reference", "--out", str(out),
         "--no-progress"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (out / records.RESULTS).exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        second = _run(out)
        assert second.returncode == 2, second.stdout + second.stderr
        assert "another run is writing this folder" in second.stderr
        assert f"pid {first.pid}" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        first.kill()
        first.wait()
    # Once the holder is gone, the folder is free again.
    again = _run(out)
    assert again.returncode == 0, again.stdout + again.stderr


def test_every_file_and_record_carries_the_run_id(tmp_path):
    out = tmp_path / "run"
    assert _run(out).returncode == 0
    run_id = json.loads((out / records.HEADER).read_text())["run_id"]
    assert json.loads((out / records.SUMMARY).read_text())["run_id"] == run_id
    lines = (out / records.RESULTS).read_text().splitlines()
    assert lines and all(json.loads(line)["run_id"] == run_id for line in lines)


def test_results_cut_short_or_mixed_are_refused_not_passed(tmp_path):
    out = tmp_path / "run"
    assert _run(out).returncode == 0
    lines = (out / records.RESULTS).read_text().splitlines(keepends=True)
    whole = "".join(lines)
    # cut short: the summary counts more records than there are
    (out / records.RESULTS).write_text("".join(lines[:-1]))
    for command in (["gate", str(out)], ["report", str(out), "-o", str(tmp_path / "r.html")],
                    ["diff", str(out), str(out), "-o", str(tmp_path / "d.html")]):  # fmt: skip
        done = conformance_here(*command)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert "records, but summary.json counts" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    # emptied: the same
    (out / records.RESULTS).write_text("")
    assert conformance_here("gate", str(out)).returncode == 2
    # another run's records swapped in
    other = tmp_path / "other"
    assert _run(other).returncode == 0
    (out / records.RESULTS).write_text((other / records.RESULTS).read_text())
    done = conformance_here("gate", str(out))
    assert done.returncode == 2 and "records of another run" in done.stderr
    # another run's summary
    (out / records.RESULTS).write_text(whole)
    (out / records.SUMMARY).write_text((other / records.SUMMARY).read_text())
    done = conformance_here("gate", str(out))
    assert done.returncode == 2 and "the files are not of one run" in done.stderr


def test_writes_never_follow_a_symlink_planted_in_the_folder(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    os.symlink(victim, out / (records.SUMMARY + ".partial"))
    os.symlink(victim, out / records.RESULTS)
    done = _run(out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert victim.read_text() == "keep me"
    assert not (out / records.RESULTS).is_symlink()


TORN = b'{"case_id": "\xff\xfe"'  # a last line cut short, inside a character


def _readers(out, tmp_path) -> dict[str, list[str]]:
    """Every command that reads run folders, on ``out``."""
    return {
        "gate": ["gate", str(out)],
        "report": ["report", str(out), "-o", str(tmp_path / "r.html")],
        "diff": ["diff", str(out), str(out), "-o", str(tmp_path / "d.html")],
        "scoreboard": ["scoreboard", str(out), "-o", str(tmp_path / "s.html")],
    }


def test_a_torn_or_unterminated_line_in_a_finished_run_is_refused_by_every_reader(tmp_path):
    """A finished run's writer left whole lines only: a partial last line
    appended after it (or its last newline gone) means results.jsonl is not
    what summary.json says was recorded. Refused (exit 2, file and line) by
    every reader, never judged: the gate used to pass it, the records adding up."""
    out = tmp_path / "run"
    assert _run(out).returncode == 0
    results = out / records.RESULTS
    whole = results.read_bytes()
    count = whole.count(b"\n")
    assert conformance_here("gate", str(out)).returncode == 0
    for content, said in (
        (whole + TORN, f"{results}:{count + 1}: a line cut short (not a JSON record: not UTF-8)"),
        (whole[:-1], f"{results}:{count}: a record without its newline"),
    ):
        results.write_bytes(content)
        for command, args in _readers(out, tmp_path).items():
            done = conformance_here(*args)
            assert done.returncode == 2, (command, done.stdout, done.stderr)
            assert said in done.stderr and "summary.json says the run ended" in done.stderr, (
                command, done.stderr)  # fmt: skip
            assert "Traceback" not in done.stderr
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "s.html").exists()


def test_a_killed_run_keeps_its_partial_last_line_dropped_and_an_interrupted_one_is_read(
    tmp_path,
):
    """What formats.md promises of unfinished folders stays: a killed run (no
    summary.json) may end in a line cut short, which is dropped (the report
    reads the rest, the gate refuses the run as unfinished); an interrupted
    run's whole lines are read (report) and refused by the gate as partial."""
    out = tmp_path / "run"
    assert _run(out).returncode == 0
    results, summary = out / records.RESULTS, out / records.SUMMARY
    count = results.read_bytes().count(b"\n")
    content = json.loads(summary.read_text())
    summary.write_text(json.dumps({**content, "interrupted": True}))
    done = conformance_here("report", str(out), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0 and f"{count} results" in done.stdout, done.stderr
    done = conformance_here("gate", str(out))
    assert done.returncode == 2 and "interrupted" in done.stderr, done.stderr
    summary.unlink()  # killed: no summary, and a write cut short
    with results.open("ab") as appended:
        appended.write(TORN)
    for command, args in _readers(out, tmp_path).items():
        done = conformance_here(*args)
        assert "Traceback" not in done.stderr and "cut short" not in done.stderr, done.stderr
        if command == "gate":
            assert done.returncode == 2 and "did not finish" in done.stderr, done.stderr
        else:
            assert done.returncode == 0, (command, done.stdout, done.stderr)
    done = conformance_here("report", str(out), "-o", str(tmp_path / "r.html"))
    assert f"{count} results" in done.stdout
