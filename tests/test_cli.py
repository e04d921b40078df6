"""The CLI as a user runs it: a real process, exit codes, and no tracebacks.

The exit-code rule (conformance/cli/exits.py): 1 is a verdict on the
runtimes, 2 means none can be given (bad input, or the harness). A case file
that disagrees with the oracle is 2 in `cases validate` and `run` alike; a
case over the memory guard is "not checked" in `cases validate`, `run` and
the pytest plugin alike, and fails none of them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conformance import adapters, errors, oracle
from conformance.cases import check, loader, values
from conformance.cli import exits
from conformance.engine import files, pool, records, targets
from conformance.gate import verdict
from conformance.report import diff
from conformance.tables import spec
from tests.conftest import CASES, REPO, conformance_here


def test_validate_the_shipped_cases():
    result = conformance_here("cases", "validate", "--check-models")
    assert result.returncode == 0, result.stderr
    assert "all cases agree with the oracle" in result.stdout


def _case_file(path, dtype: str, data: str, expected: str):
    path.write_text(
        f"cases:\n  - id: x\n    op: Gather\n    opset: 13\n    dtype: {dtype}\n"
        f"    data: {data}\n    indices: [0]\n    expected: {expected}\n"
        "    description: d\n    spec: s\n"
    )
    return path


def test_validate_a_malformed_file_exits_2_with_file_line_field(tmp_path):
    bad = _case_file(tmp_path / "bad.yaml", "float33", "[1]", "oracle")
    result = conformance_here("cases", "validate", str(bad))
    assert result.returncode == 2
    assert f"{bad}:5: cases[0].dtype" in result.stderr and "float33" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_validate_a_wrong_expectation_exits_2_saying_which_side_is_which(tmp_path):
    wrong = _case_file(tmp_path / "wrong.yaml", "int32", "[5, 6]", "[6]")
    result = conformance_here("cases", "validate", str(wrong))
    assert result.returncode == 2
    assert f"{wrong}:2: x.op13.int32.int64: expected output differs from the oracle's: " in (
        result.stderr
    )
    assert "1 of 1 elements differ; first at [0]: the file says 6, the oracle computes 5" in (
        result.stderr
    )
    wrong = _case_file(tmp_path / "shape.yaml", "int32", "[5, 6]", "[[5]]")
    result = conformance_here("cases", "validate", str(wrong))
    assert result.returncode == 2
    assert "the file says shape [1, 1], the oracle computes [1]" in result.stderr
    assert "FAILED: 1 case(s) with problems" in result.stderr


def test_a_case_that_disagrees_with_the_oracle_exits_2_in_validate_and_run_alike(tmp_path):
    """One rule: the file or the oracle is wrong, no verdict rests on it (before:
    `cases validate` said 1, `run` 2)."""
    wrong = _case_file(tmp_path / "wrong.yaml", "int32", "[5, 6]", "[6]")
    validated = conformance_here("cases", "validate", str(wrong))
    ran = conformance_here("run", "--runtime", "reference", "--variants", "static",
                           "--cases", str(wrong), "--out", str(tmp_path / "run"))  # fmt: skip
    assert (validated.returncode, ran.returncode) == (exits.USAGE, exits.USAGE)
    problem = "the file says 6, the oracle computes 5"
    assert problem in validated.stderr and problem in ran.stderr
    assert "1 case problem(s)" in ran.stderr
    # The verdict on the runtime was fine (reference computes 5): 2 is about the file.
    (record,) = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    assert record["kind"] == "pass"


# -- cases nobody could check: the memory guard ----------------------------------------
# data [1, 1000000] float32 and indices [100000]: 4 MB of inputs, a 400 GB output,
# written down as expected_shape (a literal expectation: it too cannot be checked).
HUGE = """cases:
  - id: huge
    op: Gather
    opset: 13
    dtype: float32
    data: {full: {shape: [1, 1000000], value: 1}}
    indices: {full: {shape: [100000], value: 0}}
    expected: oracle
    expected_shape: [100000, 1000000]
    description: 10^11 output elements
    spec: s
"""
GUARD = "memory guard: the case declares 400,004,800,000 bytes of inputs and output"


@pytest.fixture
def huge(tmp_path):
    path = tmp_path / "cases" / "huge.yaml"
    path.parent.mkdir()
    path.write_text(HUGE, encoding="utf-8")
    return path


def test_validate_says_a_case_over_the_memory_guard_is_not_checked_and_exits_0(huge):
    result = conformance_here("cases", "validate", str(huge))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"not checked: {huge}:2: huge.op13.float32.int64: {GUARD}" in result.stdout
    assert "computed by it, 1 not checked" in result.stdout
    assert result.stdout.rstrip().endswith(
        "all checked cases agree with the oracle; 1 case(s) not checked "
        "(over the memory guard: --case-memory)"
    )
    assert "FAILED" not in result.stderr


def test_validate_with_a_case_not_checked_and_a_wrong_one_exits_2_saying_both(huge):
    _case_file(huge.parent / "wrong.yaml", "int32", "[5, 6]", "[6]")
    result = conformance_here("cases", "validate", str(huge.parent))
    assert result.returncode == 2
    assert "not checked: " in result.stdout and "the oracle computes 5" in result.stderr
    assert "FAILED: 1 case(s) with problems; 1 not checked (over the memory guard)" in (
        result.stderr
    )


@pytest.mark.parametrize("gate", [[], ["--gate"]])
def test_run_says_a_case_over_the_memory_guard_is_not_checked_and_exits_0(huge, tmp_path, gate):
    out = tmp_path / "run"
    result = conformance_here("run", "--runtime", "reference", "--variants", "static",
                              "dynamic", "--cases", str(huge), "--out", str(out),
                              *gate)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    line = f"not checked: {huge}:2: huge.op13.float32.int64: {GUARD}"
    assert sum(x.startswith(line) for x in lines) == 1, result.stdout  # once per case
    records = [json.loads(x) for x in (out / "results.jsonl").open()]
    assert {(r["kind"], r["expected"]) for r in records} == {("harness_unsupported", None)}
    assert "case problem" not in result.stderr  # its expected_shape was not held to anything


def test_pytest_skips_a_case_over_the_memory_guard_as_not_checked(huge, tmp_path):
    """Before: a case over the guard with a literal expectation (expected_shape)
    failed its items with an OverMemory traceback; and --variants given twice
    kept only the last (now one definition with `run`'s: extended)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "cases", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-p", "conformance", "-q", "-rs", "--conformance-runtime", "reference",
         "--conformance-variants", "static", "--conformance-variants", "dynamic",
         "--conformance-out", str(tmp_path / "out")],
        cwd=huge.parent.parent, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 skipped" in done.stdout and "failed" not in done.stdout, done.stdout
    assert f"not checked: {GUARD}" in done.stdout


def test_oracle_refuses_a_case_over_the_memory_guard_naming_it(huge):
    result = conformance_here("oracle", "huge", "--cases", str(huge))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"{huge}:2: huge.op13.float32.int64: {GUARD}")


# -- user-facing errors: one root, mapped once in cli.main --------------------------------
ROOTED = [
    spec.UnknownOpset, check.OverMemory, loader.CaseErrors, verdict.GateError,
    pool.EngineError, records.RecordsError, targets.TargetError, files.FolderBusy,
    diff.DiffError, adapters.UnknownRuntime,
]  # fmt: skip
# In-band: a verdict, a worker's result, or a loader-internal signal (errors.py says why).
NOT_ROOTED = [
    oracle.SpecViolation, adapters.AdapterError, adapters.LoadError, adapters.RunError,
    adapters.HarnessUnsupported, values.ValueProblem,
]  # fmt: skip


def test_user_facing_errors_share_one_root_and_keep_their_old_bases():
    assert errors.ConformanceError.exit_code == exits.USAGE
    for cls in ROOTED:
        assert issubclass(cls, errors.ConformanceError), cls
    for cls in NOT_ROOTED:
        assert not issubclass(cls, errors.ConformanceError), cls
    for cls, base in [(records.RecordsError, ValueError), (targets.TargetError, ValueError),
                      (pool.EngineError, RuntimeError), (files.FolderBusy, RuntimeError),
                      (diff.DiffError, ValueError), (spec.UnknownOpset, ValueError),
                      (adapters.UnknownRuntime, LookupError)]:  # fmt: skip
        assert issubclass(cls, base), cls


def test_errors_imports_nothing():
    """conformance.errors is below tables and imported by the adapters in workers
    of other environments: it must load alone, bringing no package with it."""
    code = (
        "import sys; before = set(sys.modules); import conformance.errors; "
        "print(sorted(m for m in set(sys.modules) - before if m != 'conformance.errors'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() in ("[]", "['conformance']"), done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["gate", "{missing}"],
        ["report", "{missing}", "-o", "{tmp}/r.html"],
        ["scoreboard", "{missing}", "-o", "{tmp}/s.html"],
        ["diff", "{missing}", "{missing}"],
        ["cases", "list", "{missing}"],
        ["oracle", "x", "--cases", "{missing}"],
        ["run", "--runtime", "reference", "--cases", "{missing}", "--out", "{tmp}/o"],
        ["run", "--runtime", "no-such-runtime", "--out", "{tmp}/o"],
    ],
)
def test_every_command_prints_a_user_facing_error_as_its_message_and_exits_2(tmp_path, args):
    given = [a.format(missing=tmp_path / "missing", tmp=tmp_path) for a in args]
    result = conformance_here(*given)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    first = result.stderr.splitlines()[0]
    assert f"{tmp_path / 'missing'}: no such file" in first or "unknown runtime" in first, first


def test_a_bad_default_baseline_stops_a_gated_run_only(tmp_path):
    """Without --gate the run goes on ungated, saying so; with it, exit 2.
    The default baseline is the shipped one (never ./cases/known): a clone's
    layout, package, schemas (the run folder is read back against them) and
    corpus copied, with its reference.yaml broken."""
    clone = tmp_path / "clone"
    shutil.copytree(REPO / "conformance", clone / "conformance",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shutil.copytree(REPO / "docs" / "schemas", clone / "docs" / "schemas")
    (clone / "cases" / "known").mkdir(parents=True)
    (clone / "cases" / "known" / "reference.yaml").write_text("entries: [{case: 1}]\n")
    _case_file(clone / "cases" / "ok.yaml", "int32", "[5, 6]", "[5]")
    work = tmp_path / "work"
    work.mkdir()  # run elsewhere: the clone's corpus and baselines are the default

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "conformance", *args], cwd=work, capture_output=True,
            text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(clone)},
        )  # fmt: skip

    args = ["run", "--runtime", "reference", "--variants", "static", "--no-progress"]
    ungated = run(*args, "--out", str(tmp_path / "a"))
    assert ungated.returncode == 0, ungated.stdout + ungated.stderr
    assert "reference.yaml:1" in ungated.stderr and "no gate verdict" in ungated.stderr
    assert str(clone / "cases" / "known" / "reference.yaml") in ungated.stderr
    assert not (tmp_path / "a" / "gate.json").exists()
    header = json.loads((tmp_path / "a" / "header.json").read_text())
    assert header["corpus"]["shipped"] is True and header["corpus"]["files"] == 1
    gated = run(*args, "--gate", "--out", str(tmp_path / "b"))
    assert gated.returncode == 2 and "reference.yaml:1" in gated.stderr
    assert "Traceback" not in gated.stderr and not (tmp_path / "b").exists()


def test_missing_path_exits_2(tmp_path):
    result = conformance_here("cases", "validate", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2 and "no such file" in result.stderr


def test_list_and_filter():
    result = conformance_here("cases", "list", "-k", "ge-onnx-example-1.op13")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines and all(line.startswith("ge-onnx-example-1.op13.") for line in lines)


def test_oracle_prints_output_or_violation():
    result = conformance_here("oracle", "ge-onnx-example-1.op13.float32.int64")
    assert result.returncode == 0 and "[[1., 1.]," in result.stdout
    result = conformance_here("oracle", "gather-index-beyond-int32")
    assert result.returncode == 0
    assert result.stdout.count("SpecViolation index-out-of-range") == 3  # one per opset
    result = conformance_here("oracle", "no-such-case")
    assert result.returncode == 2 and "no case with id" in result.stderr


def test_runs_from_another_folder_with_explicit_cases(tmp_path):
    result = conformance_here("cases", "validate", str(CASES / "gather"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
