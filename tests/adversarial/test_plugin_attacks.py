"""Hostile input to the pytest plugin (issue 32, 13-17): a project that
defines ``--runtime`` itself, an installed adapter whose import raises, runs
that cannot start, numeric options out of range, a refused session with its
case files in a subfolder, the baseline file a failure names.

pytest runs in-process (``pytester``); the plugin, the engine, NumPy and ONNX
are imported here first, so that each inner run finds them loaded (pytester
drops what an inner run imported).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import conformance.engine.run  # loaded by the plugin's first item
import conformance.pytest_plugin
import conformance.report.render  # noqa: F401  (the session's report)
from conformance import adapters, cli, shipped
from conformance.cli import options
from conformance.gate import baseline
from tests.adversarial.test_cli_attacks import COMPLEX_CASE, PACKAGE, hostile_site  # noqa: F401
from tests.conftest import CASES

pytest_plugins = ["pytester"]

ONE = (CASES / "gather" / "spec_examples.yaml").read_text()
COLLECT = ("-p", "conformance", "--collect-only", "-q", "-p", "no:cacheprovider")
STATIC_REFERENCE = ("--conformance-runtime", "reference", "--conformance-variants", "static")
OWN_RUNTIME = """\
def pytest_addoption(parser):
    parser.addoption("--runtime", default="theirs", help="the project's own")


def pytest_collection_modifyitems(config, items):
    print("project runtime:", config.getoption("--runtime"))
"""


@pytest.fixture
def project(pytester):
    """A project with one real case file in cases/."""
    pytester.mkdir("cases")
    (pytester.path / "cases" / "one.yaml").write_text(ONE)
    return pytester


def items_of(result) -> list[str]:
    return [line for line in result.outlines if "::" in line]


# -- 13. a project's own --runtime, whichever loads first ---------------------------------
@pytest.mark.parametrize(
    "how",
    [
        "switch",  # -p conformance: the switch registers the plugin before the conftests
        "plugin-first",  # -p conformance.pytest_plugin: registered before the conftests
        "conftest-first",  # the conftest names the plugin after adding its option
    ],
)
def test_a_conftest_that_defines_runtime_can_enable_the_plugin(project, how):
    conftest = OWN_RUNTIME
    switch = ["-p", "conformance"]
    if how == "plugin-first":
        switch = ["-p", "conformance.pytest_plugin"]
    elif how == "conftest-first":
        conftest = OWN_RUNTIME + 'pytest_plugins = ["conformance.pytest_plugin"]\n'
        switch = ["-p", "no:conformance"]
    project.makeconftest(conftest)
    result = project.runpytest_inprocess(*switch, "--collect-only", "-q", "-p", "no:cacheprovider",
                                         "cases", *STATIC_REFERENCE, "--runtime", "mine",
                                         "--known", str(CASES / "known"))  # fmt: skip
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert "project runtime: mine" in result.outlines  # the conftest's option, not ours
    assert items_of(result) and all(i.endswith("[reference-static]") for i in items_of(result))
    # the aliases whose names stayed free still work, deprecated
    assert "--known is deprecated: use --conformance-known" in result.stdout.str()
    assert "--runtime is deprecated" not in result.stdout.str()


# -- 14. listing installed adapters imports none ----------------------------------------
def test_an_adapter_package_whose_import_raises_breaks_no_default_run(project, request,
                                                                      monkeypatch):  # fmt: skip
    """Before: INTERNALERROR, exit 3, in every `pytest -p conformance` run."""
    monkeypatch.syspath_prepend(str(request.getfixturevalue("hostile_site")))
    result = project.runpytest_inprocess(*COLLECT, "cases", "--conformance-variants", "static")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    runtimes = {item.rsplit("[", 1)[1].removesuffix("-static]") for item in items_of(result)}
    assert runtimes == set(adapters.installed_builtins())  # as `run` by default
    assert PACKAGE not in sys.modules


# -- 15. a run that never starts ----------------------------------------------------------
def test_a_run_that_cannot_start_is_one_usage_error(project):
    """A module:Class that does not import: its worker says so, once; before,
    an error per item and `AttributeError: 'Run' object has no attribute
    '_lock'` from pytest_sessionfinish."""
    result = project.runpytest_inprocess("-p", "conformance", "-p", "no:cacheprovider", "cases",
                                         "--conformance-runtime", "nosuch.module:Adapter",
                                         "--conformance-variants", "static")  # fmt: skip
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "conformance: the run did not start: " in text and "No module named 'nosuch'" in text
    assert "Traceback" not in text and "_lock" not in text and "INTERNALERROR" not in text
    assert not (project.path / "reports" / "pytest" / "report.html").exists()


@pytest.mark.parametrize("out", ["afile", "afile/below"])
def test_an_output_folder_that_is_a_file_is_a_usage_error(project, out):
    (project.path / "afile").write_text("a file\n")
    result = project.runpytest_inprocess(*COLLECT, "cases", *STATIC_REFERENCE,
                                         "--conformance-out", out)  # fmt: skip
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert f"--conformance-out {out}: Not a directory" in text
    assert "Traceback" not in text and "RecordsError" not in text


# -- 16. numeric options checked as run checks them ---------------------------------------
@pytest.mark.parametrize(
    "flag, value, said",
    [
        ("--conformance-timeout", "-1", "give a finite number of seconds > 0"),
        ("--conformance-timeout", "nan", "give a finite number of seconds > 0"),
        ("--conformance-pack", "0", "give a whole number >= 1"),
        ("--conformance-pack", "-3", "give a whole number >= 1"),
        ("--conformance-pack", "1025", f"give at most {options.MAX_PACK} cases per model"),
    ],
)
def test_numeric_options_are_refused_as_run_refuses_them(project, capsys, flag, value, said):
    """Before: --conformance-timeout -1 made every item an ERROR (exit 1);
    --conformance-pack -3 was recorded in header.json, which its schema refuses."""
    result = project.runpytest_inprocess(*COLLECT, "cases", *STATIC_REFERENCE, f"{flag}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"argument {flag}: {value!r}: {said}" in result.stderr.str()
    run_flag = flag.replace("--conformance-", "--")  # the same checked type: the same words
    with pytest.raises(SystemExit) as refused:
        cli.parser().parse_args(["run", f"{run_flag}={value}"])
    assert refused.value.code == 2
    assert f"argument {run_flag}: {value!r}: {said}" in capsys.readouterr().err


def test_an_unknown_runtime_with_cases_in_a_subfolder_is_one_usage_error(pytester):
    """Before: a collection error with a traceback per case file."""
    (pytester.path / "sub" / "cases").mkdir(parents=True)
    for name in ("a", "b", "c"):
        (pytester.path / "sub" / "cases" / f"{name}.yaml").write_text(ONE)
    # the project's root: no cases/ there, so not checked at the session's start
    result = pytester.runpytest_inprocess(*COLLECT, ".", "--conformance-runtime", "nope")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert text.count("unknown runtime 'nope'") == 1, text
    assert "error during collection" not in text and "Traceback" not in text


# -- 17. the failure names the file the gate reads ----------------------------------------
def test_a_new_discrepancy_names_the_baseline_file_of_the_target(project, tmp_path):
    """openvino:1thread's entries are openvino.yaml's (adapters.baseline_name);
    here ONNX Runtime's 1thread profile, which refuses complex data."""
    (project.path / "cases" / "one.yaml").write_text(COMPLEX_CASE)
    empty = tmp_path / "empty-known"
    empty.mkdir()
    result = project.runpytest_inprocess("-p", "conformance", "-p", "no:cacheprovider", "cases",
                                         "--conformance-runtime", "onnxruntime:1thread",
                                         "--conformance-variants", "static",
                                         f"--conformance-known={empty}")  # fmt: skip
    text = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, text
    assert f"not in the baseline ({empty / 'onnxruntime.yaml'})" in text
    assert "onnxruntime:1thread.yaml" not in text


# -- 3. in the plugin too, only the bare word is the word ---------------------------------
def test_conformance_known_dot_slash_shipped_is_the_folder(pytester):
    pytester.mkdir("shipped")
    for typed, folder in [("./shipped", Path("shipped")), ("shipped", shipped.baselines())]:
        config = pytester.parseconfig("-p", "conformance", f"--conformance-known={typed}")
        assert list(baseline.folders(config.option.conformance_known)) == [folder], typed
