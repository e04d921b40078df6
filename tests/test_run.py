"""`conformance run` as a user runs it: real runtimes, real processes, files on disk
(the CLI in this process where its verdict and files are what is checked)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conformance.cases import load
from conformance.engine.run import Options, Run
from tests.conftest import CASES, REPO, conformance, conformance_here

FAULTY = "tests.faulty_adapter:FaultyAdapter"
RECORD_FIELDS = {
    "case_id", "op", "opset", "runtime", "variant", "kind", "message", "base_id", "dtype",
    "indices_dtype", "axis", "data_shape", "indices_shape", "source", "expected", "disputed",
    "load_ms", "run_ms", "cached",
}  # fmt: skip


def read_results(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_a_run_on_the_real_runtimes_records_every_outcome(tmp_path):
    out = tmp_path / "run"
    result = conformance("run", "-k", "gather-empty-indices.op13.int32.int64", "--out", str(out))
    assert result.returncode == 1, result.stderr  # OpenVINO crashes here: a discrepancy
    records = read_results(out)
    assert len(records) == 1 * 5 * 4  # every installed runtime: the four built-in ones
    assert all(set(r) >= RECORD_FIELDS for r in records)
    kinds = {(r["runtime"], r["variant"]): r["kind"] for r in records}
    assert kinds[("openvino", "static")] == "crash"
    assert kinds[("onnxruntime", "static")] == "pass"
    crash = next(r for r in records if r["kind"] == "crash")
    assert crash["signal"] == "SIGFPE" and crash["expected"] == {"dtype": "int32", "shape": [0, 4]}
    header = json.loads((out / "header.json").read_text())
    assert set(header["runtimes"]) == {"onnxruntime", "openvino", "reference", "tract"}
    assert header["runtimes"]["openvino"]["version"].startswith("20")
    assert header["command"][:2] == ["conformance", "run"] and header["packages"]["numpy"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["records"] == 20 and summary["counts"]["openvino"]["crash"] >= 1
    assert {
        "runtime": "openvino",
        "kind": "crash",
        "op": "Gather",
        "group": "gather-empty-indices",
        "records": summary["counts"]["openvino"]["crash"],
    } in summary["groups"]
    assert "crash" in result.stdout and "gather-empty-indices" in result.stdout


def test_a_conforming_run_exits_0(tmp_path):
    result = conformance_here(
        "run",
        "--runtime",
        "onnxruntime",
        "-k",
        "gather-example-axis0.op13*",
        "--out",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert {r["kind"] for r in read_results(tmp_path)} == {"pass"}


def test_invalid_inputs_are_judged(tmp_path):
    result = conformance_here(
        "run", "--runtime", "onnxruntime", "--variants", "static",
        "-k", "gather-index-at-s.op13.int32.int64", "--out", str(tmp_path),
    )  # fmt: skip
    (record,) = read_results(tmp_path)
    assert record["expected"] == {"violation": "index-out-of-range"}
    assert record["kind"] in ("both_rejected", "accepted_invalid"), result.stderr


def test_the_memory_guard_refuses_a_huge_declared_output_before_allocating(tmp_path):
    cases = tmp_path / "huge.yaml"
    cases.write_text(
        "cases:\n  - id: huge-output\n    op: Gather\n    opset: 13\n    dtype: float32\n"
        "    data: {full: {shape: [1, 1000000], value: 1}}\n"
        "    indices: {full: {shape: [100000], value: 0}}\n"
        "    expected: oracle\n    description: 10^11 output elements\n    spec: s\n"
    )
    result = conformance_here(
        "run", "--runtime", "onnxruntime", "--cases", str(cases), "--out", str(tmp_path / "o")
    )
    assert result.returncode == 0, result.stderr  # harness_unsupported is not a failure
    records = read_results(tmp_path / "o")
    assert {r["kind"] for r in records} == {"harness_unsupported"} and len(records) == 5
    assert "memory guard" in records[0]["message"] and records[0]["expected"] is None


def test_a_case_file_that_disagrees_with_the_oracle_is_warned_and_exits_2(tmp_path):
    cases = tmp_path / "wrong.yaml"
    cases.write_text(
        "cases:\n  - id: right\n    op: Gather\n    opset: 13\n    dtype: int32\n"
        "    data: [5, 6]\n    indices: [1]\n    expected: [6]\n    description: d\n    spec: s\n"
        "  - id: wrong\n    op: Gather\n    opset: 13\n    dtype: int32\n"
        "    data: [5, 6]\n    indices: [0]\n    expected: [6]\n    description: d\n    spec: s\n"
    )
    out = tmp_path / "o"
    args = ["--runtime", "onnxruntime", "--variants", "static", "dynamic", "--out", str(out)]
    result = conformance_here("run", "--cases", str(cases), *args)
    assert result.returncode == 2, result.stdout + result.stderr
    problem = (
        "expected output differs from the oracle's: 1 of 1 elements differ; first at [0]: "
        "the file says 6, the oracle computes 5"
    )
    warning = f"warning: {cases}:11: wrong.op13.int32.int64: {problem}"
    assert result.stderr.count(warning) == 1  # once per case, not per variant
    assert "right.op13" not in result.stderr
    assert "1 case problem(s)" in result.stderr and "Traceback" not in result.stderr
    # The results are still judged against the oracle: ORT computes 5, and passes.
    assert {r["kind"] for r in read_results(out)} == {"pass"} and len(read_results(out)) == 4
    summary = json.loads((out / "summary.json").read_text())
    assert summary["case_problems"] == [
        {"case_id": "wrong.op13.int32.int64", "source": f"{cases}:11", "problem": problem}
    ]
    gated = conformance_here("gate", str(out))
    assert gated.returncode == 2
    assert f"cannot gate: {out}: 1 case problem(s)" in gated.stderr
    assert "see case_problems in summary.json" in gated.stderr
    # With --gate the run's own exit is 2 as well, whatever the gate decides.
    assert conformance_here("run", "--gate", "--cases", str(cases), *args).returncode == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (["--runtime", "tensorrt"], "unknown runtime 'tensorrt'"),
        (["-k", "no-such-case"], "no case matches"),
        (["--case-memory", "lots"], "argument --case-memory: not a size: 'lots'"),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(tmp_path, args, message):
    result = conformance_here("run", *args, "--out", str(tmp_path))
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


SLOW = "tests.faulty_adapter:SlowAdapter"


def _start_long_run(out):
    return subprocess.Popen(
        [sys.executable, "-m", "conformance", "run", "--runtime", SLOW, "--batch-size", "4",
         "--no-progress", "--out", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # Ctrl-C as a terminal delivers it: a test run started in the background
        # (nohup, `cmd &`) inherits SIGINT ignored, and Python then never raises
        # KeyboardInterrupt (the run would go on and exit 0).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip


def _wait_for_results(out, process, lines=8):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        path = out / "results.jsonl"
        if path.exists() and path.read_text().count("\n") >= lines:
            return
        time.sleep(0.05)
    pytest.fail("the run produced no results in time")


def _gone(pid, within=5.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_kill_9_of_the_main_process_keeps_every_flushed_result_and_kills_the_workers(tmp_path):
    process = _start_long_run(tmp_path)
    _wait_for_results(tmp_path, process)
    process.kill()
    process.wait()
    records = read_results(tmp_path)  # every line is a whole record
    assert len(records) >= 8
    worker = json.loads((tmp_path / "header.json").read_text())["runtimes"]["faulty"]["pid"]
    assert _gone(worker), "the worker outlived the killed parent"


def test_ctrl_c_stops_cleanly_and_keeps_the_results(tmp_path):
    process = _start_long_run(tmp_path)
    _wait_for_results(tmp_path, process)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "results recorded so far are kept" in stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["records"] == len(read_results(tmp_path)) >= 8


def test_shards_split_the_cases_and_report_merges_them(tmp_path):
    runs = []
    for index in (1, 2, 3):
        out = tmp_path / f"shard{index}"
        done = conformance_here(
            "run", "--runtime", FAULTY, "-k", "gather-", "--variants", "static",
            "--shard", f"{index}/3", "--out", str(out),
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        assert json.loads((out / "header.json").read_text())["shard"] == [index, 3]
        runs.append({json.loads(line)["case_id"] for line in (out / "results.jsonl").open()})
    everything = tmp_path / "all"
    done = conformance_here(
        "run",
        "--runtime",
        FAULTY,
        "-k",
        "gather-",
        "--variants",
        "static",
        "--out",
        str(everything),
    )
    whole = {json.loads(line)["case_id"] for line in (everything / "results.jsonl").open()}
    assert runs[0] | runs[1] | runs[2] == whole
    assert not (runs[0] & runs[1]) and not (runs[1] & runs[2]) and not (runs[0] & runs[2])
    merged = conformance_here(
        "report", *(str(tmp_path / f"shard{i}") for i in (1, 2, 3)), "-o", str(tmp_path / "m.html")
    )
    assert merged.returncode == 0 and f"{len(whole)} results" in merged.stdout
    bad = conformance_here("run", "--shard", "4/3", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "'4/3': give I/N with 1 <= I <= N" in bad.stderr


def test_a_drive_past_its_deadline_runs_nothing_and_returns_every_case(tmp_path):
    """The cases the pool never took (its deadline had passed) are returned as
    unrun with the rest. Before, only cases it took were: a fuzz round drawn
    as the budget ran out counted an example that never ran."""
    cases = [case for case in load([CASES / "gather"]) if case.base_id.startswith("gather-ex")]
    assert cases
    with Run(tmp_path / "run", Options([FAULTY], ("static",))) as run:
        unrun = run.drive([(case, ["static"]) for case in cases], deadline=time.monotonic() - 1)
        assert unrun == cases
        assert (run.summary.cases, run.summary.records) == (0, 0)
        again = run.drive([(case, ["static"]) for case in cases])  # no deadline: all run
        assert again == [] and run.summary.cases == len(cases)
    assert len(read_results(tmp_path / "run")) == len(cases)
