"""The pytest plugin: case files collected as items, judged as the gate judges them."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from conformance.engine import records
from tests.conftest import CASES, run_pytest

KNOWN = CASES / "known"
ORT = ("--conformance-runtime", "onnxruntime")
# The project's baselines, not the shipped ones; with "=", one folder (it takes several).
OWN_KNOWN = ("--conformance-known=cases/known",)

CASE_FILE = """\
defaults:
  expected: oracle
cases:
  - id: plug-ok
    op: Gather
    opset: 13
    dtype: float32
    data: [1.0, 2.0, 3.0]
    indices: [2, 0]
    description: an ordinary gather
    spec: gather-scalar-indices
  - id: plug-complex
    op: Gather
    opset: 13
    dtype: complex64
    data: [[1, 2], [3, 4]]
    indices: [1]
    description: ORT has no complex kernel (a known family)
    spec: data-dtype
  - id: plug-string
    op: Gather
    opset: 13
    dtype: string
    data: [["a", "b"], ["c", "d"]]
    indices: [1, 0]
    description: ORT loses all but the first string of each row
    spec: bitwise-exact
"""

PROPERTY_TEST = """\
from hypothesis import given, settings
from conformance import strategies
from conformance.oracle import verdict


@settings(max_examples=20, deadline=None)
@given(strategies.valid_examples(op="Gather"))
def test_valid_examples_have_an_output(example):
    assert verdict(example.op, example.opset, example.data, example.indices,
                   axis=example.axis).valid
"""


def pytest_in(folder, *args, switch=("-p", "conformance")):
    """pytest in a tmp project, the plugin enabled (``-p conformance``) unless
    ``switch`` says otherwise, held against the project's own baselines
    (cases/known: the default is the shipped ones, never ./cases)."""
    return run_pytest(folder, *switch, *OWN_KNOWN, *args)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "plug.yaml").write_text(CASE_FILE)
    shutil.copytree(KNOWN, tmp_path / "cases" / "known")
    (tmp_path / "test_props.py").write_text(PROPERTY_TEST)
    return tmp_path


def test_outside_a_terminal_the_run_says_its_progress(project, monkeypatch):
    """CI logs: pytest's output is not a terminal, so the one drive that runs
    every case prints run's progress line (every 10 s; here every 1 ms)."""
    monkeypatch.setenv("CONFORMANCE_PROGRESS_EVERY", "0.001")
    shutil.copy(CASES / "gather" / "shapes.yaml", project / "cases")  # batches of 32: parts
    result = pytest_in(project, "cases", "-q", *ORT, "--conformance-pack", "1")
    lines = [x for x in result.stdout.splitlines() if x.startswith("conformance running: ")]
    assert lines, result.stdout + result.stderr
    assert all(re.search(r"running: \d+/\d+ results \(\d+%\), \d+ discrepancies so far", x)
               for x in lines), lines  # fmt: skip


def test_pytest_collects_case_runtime_variant_items(project):
    result = pytest_in(project, "cases", "--collect-only", "-q", *ORT,
                       "--conformance-variants", "static", "dynamic")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    names = [line for line in result.stdout.splitlines() if "::" in line]
    assert "cases/plug.yaml::plug-ok.op13.float32.int64[onnxruntime-static]" in names
    assert len(names) == 3 * 2  # three cases, one runtime, two variants; known/ not collected


def test_known_discrepancies_xfail_and_xdist_junit_and_properties_run_together(project):
    junit = project / "junit.xml"
    # enabled by --conformance here: the flag reaches each xdist worker
    result = pytest_in(project, "cases", "test_props.py", *ORT, "-n", "2",
                       f"--junitxml={junit}", "-rxXf", switch=["--conformance"])  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    # plug-ok passes in 5 variants, and the property test; complex and string are families
    assert "6 passed, 10 xfailed" in result.stdout
    suite = ET.parse(junit).getroot().find("testsuite")
    names = {case.get("name") for case in suite.iter("testcase")}
    assert "plug-ok.op13.float32.int64[onnxruntime-static]" in names
    assert "test_valid_examples_have_an_output" in names
    assert (project / "reports" / "pytest" / "report.html").exists()
    workers = sorted(p.name for p in (project / "reports" / "pytest").iterdir() if p.is_dir())
    assert workers == ["gw0", "gw1"]


def test_a_discrepancy_outside_the_baseline_fails_with_its_message(project):
    known = project / "cases" / "known" / "onnxruntime.yaml"
    known.write_text("entries: []\n")
    result = pytest_in(project, "cases", *ORT, "--conformance-variants", "static")
    assert result.returncode == 1
    assert "onnxruntime rejected: [ONNXRuntimeError]" in result.stdout
    assert "case plug-complex.op13.complex64.int64 (cases/plug.yaml:12), variant static" in (
        result.stdout
    )
    assert "expected: complex64 of shape [1, 2]" in result.stdout
    assert "not in the baseline (cases/known/onnxruntime.yaml)" in result.stdout
    assert "Traceback" not in result.stdout


def test_a_case_entry_is_a_strict_xfail(project):
    known = project / "cases" / "known" / "onnxruntime.yaml"
    known.write_text(
        "entries:\n  - case: plug-ok\n    outcome: value_mismatch\n"
        "    reason: pretend this was wrong in an older release\n    clause: bitwise-exact\n"
    )
    result = pytest_in(project, "cases", *ORT, "--conformance-variants", "static",
                       "-k", "plug-ok")  # fmt: skip
    assert result.returncode == 1
    assert "[XPASS(strict)]" in result.stdout and "pretend this was wrong" in result.stdout


@pytest.mark.parametrize("holds", ["has", "lacks"])
def test_entries_scoped_by_cpu_flags_apply_in_pytest_as_in_the_gate(project, holds):
    """An entry for a CPU that has (or lacks) a flag: held here only where the
    gate would hold it (the plugin once ignored CPU scopes: XPASS(strict) on a
    CPU the entry does not speak of)."""
    flag = "sse4_2"  # nearly every x86-64 CPU has it; here is what decides
    here = flag in records.cpu_flags()
    known = project / "cases" / "known" / "onnxruntime.yaml"
    known.write_text(
        "entries:\n  - case: plug-ok\n    outcome: value_mismatch\n"
        f"    cpu: {{{holds}: [{flag}]}}\n"
        "    reason: pretend this was wrong on some CPUs\n    clause: bitwise-exact\n"
    )
    result = pytest_in(project, "cases", *ORT, "--conformance-variants", "static",
                       "-k", "plug-ok")  # fmt: skip
    applies = here if holds == "has" else not here
    assert ("[XPASS(strict)]" in result.stdout) == applies, result.stdout
    assert result.returncode == (1 if applies else 0), result.stdout


def test_entries_on_the_axis_apply_in_pytest_as_in_the_gate(project):
    (project / "cases" / "plug.yaml").write_text(
        "defaults: {expected: oracle}\ncases:\n"
        "  - id: plug-axis\n    op: GatherElements\n    opset: 13\n    dtype: float32\n"
        "    attributes: {axis: -1}\n    data: [[1.0, 2.0, 3.0]]\n    indices: [[2]]\n"
        "    description: onnx.reference refuses axis -1 with shorter indices\n"
        "    spec: ge-indices-any-size-on-axis\n"
    )
    result = pytest_in(project, "cases", "--conformance-runtime", "reference")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 xfailed" in result.stdout


def test_a_bad_baseline_stops_pytest_once(project):
    (project / "cases" / "known" / "onnxruntime.yaml").write_text("entries:\n  - case: x\n")
    (project / "cases" / "second.yaml").write_text(CASE_FILE.replace("plug-", "second-"))
    result = pytest_in(project, "cases", "--conformance-runtime", "onnxruntime")
    assert result.returncode == 4, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert output.count("bad baseline file") == 1 and "onnxruntime.yaml:2" in output
    assert "Traceback" not in output


def test_a_broken_case_file_is_a_collection_error_with_its_line(project):
    (project / "cases" / "broken.yaml").write_text("cases:\n  - id: x\n    op: Gathr\n")
    result = pytest_in(project, "cases", "--conformance-runtime", "onnxruntime", "--collect-only")
    assert result.returncode != 0
    assert "cases/broken.yaml:3: cases[0].op: 'Gathr' is not one of" in result.stdout
    assert "Traceback" not in result.stdout


def test_a_case_that_disagrees_with_the_oracle_fails_saying_which_side_is_which(project):
    (project / "cases" / "plug.yaml").write_text(
        "cases:\n  - id: plug-wrong\n    op: Gather\n    opset: 13\n    dtype: int32\n"
        "    data: [5, 6]\n    indices: [0]\n    expected: [6]\n"
        "    description: a wrongly transcribed example\n    spec: s\n"
    )
    result = pytest_in(project, "cases", *ORT, "--conformance-variants", "static",
                       "dynamic")  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "2 failed" in result.stdout
    assert (
        "cases/plug.yaml:2: plug-wrong.op13.int32.int64: expected output differs from the "
        "oracle's: 1 of 1 elements differ; first at [0]: the file says 6, the oracle computes 5"
    ) in result.stdout
    assert "onnxruntime's result, judged against the oracle, is pass" in result.stdout
    assert "Traceback" not in result.stdout
