"""A run folder is a unit: one run writes it at a time, its files and records
carry the run's id, and a folder whose parts do not belong together is
refused by gate, report and diff (exit 2), never passed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from conformance.engine import records
from tests.conftest import REPO, conformance

CASES = ["-k", "gather-example-axis0", "--variants", "static"]


def _run(out, *extra):
    return conformance("run", "--runtime", "onnxruntime", *CASES, "--out", str(out),
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
        done = conformance(*command)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert "records, but summary.json counts" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    # emptied: the same
    (out / records.RESULTS).write_text("")
    assert conformance("gate", str(out)).returncode == 2
    # another run's records swapped in
    other = tmp_path / "other"
    assert _run(other).returncode == 0
    (out / records.RESULTS).write_text((other / records.RESULTS).read_text())
    done = conformance("gate", str(out))
    assert done.returncode == 2 and "records of another run" in done.stderr
    # another run's summary
    (out / records.RESULTS).write_text(whole)
    (out / records.SUMMARY).write_text((other / records.SUMMARY).read_text())
    done = conformance("gate", str(out))
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
