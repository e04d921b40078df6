"""The pytest plugin waits to be asked (issue 22): installed, it leaves every
other project's pytest run alone (a folder named `cases` is just a folder, no
NumPy or engine imported, no unprefixed options claimed); `-p conformance`,
`--conformance`, `conformance = true` in the ini file or `-p
conformance.pytest_plugin` enable it; the former option spellings still work,
with a deprecation warning. Real pytest processes in tmp projects."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import CASES, run_pytest

# An unrelated project's scenario file: not a case file (no `cases:` key).
SCENARIO = "name: checkout\nsteps:\n  - open the page\n  - pay\n"

NORMAL_TEST = """\
import sys


def test_nothing_of_the_harness_was_imported():
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in {"numpy", "onnx", "yaml"}
                    or m.startswith(("conformance.engine", "conformance.pytest_plugin")))
    assert loaded == []
"""

SWITCHES = {
    "-p conformance": (["-p", "conformance"], None),
    "--conformance": (["--conformance"], None),
    "ini": ([], "[pytest]\nconformance = true\n"),
    "addopts": ([], "[pytest]\naddopts = -p conformance\n"),
    "-p conformance.pytest_plugin": (["-p", "conformance.pytest_plugin"], None),
}


pytest_in = run_pytest


@pytest.fixture
def unrelated(tmp_path):
    """Another project: a `cases/` folder of its own YAML, and one plain test."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "scenario.yaml").write_text(SCENARIO)
    (tmp_path / "test_normal.py").write_text(NORMAL_TEST)
    return tmp_path


@pytest.fixture
def corpus(tmp_path):
    """A project with one real case file."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "one.yaml").write_text(
        (CASES / "gather" / "spec_examples.yaml").read_text()
    )
    return tmp_path


def test_an_unrelated_cases_folder_is_left_alone(unrelated):
    """Before: "'cases' is a required property ... Interrupted: 1 error during
    collection", and NumPy, ONNX and the engine loaded into the run."""
    scenario = unrelated / "cases" / "scenario.yaml"
    before = scenario.stat().st_mtime_ns
    result = pytest_in(unrelated, "-rA")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "1 passed" in output and "error" not in output.lower(), output
    listed = pytest_in(unrelated, "--collect-only", "-q")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    items = [line for line in listed.stdout.splitlines() if "::" in line]
    assert items == ["test_normal.py::test_nothing_of_the_harness_was_imported"]
    assert scenario.read_text() == SCENARIO and scenario.stat().st_mtime_ns == before
    assert not (unrelated / "reports").exists()  # the plugin wrote no report either


def test_the_unprefixed_option_names_stay_free(unrelated):
    """Without the switch the plugin claims no --runtime, --variants or --known:
    a conftest of the project may define them."""
    (unrelated / "conftest.py").write_text(
        "def pytest_addoption(parser):\n"
        "    for name in ('--runtime', '--variants', '--known'):\n"
        "        parser.addoption(name)\n"
    )
    result = pytest_in(unrelated, "--runtime", "mine", "--variants", "v", "--known", "k")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


@pytest.mark.parametrize("switch", list(SWITCHES))
def test_each_switch_collects_the_case_files(corpus, switch):
    args, ini = SWITCHES[switch]
    if ini:
        (corpus / "pytest.ini").write_text(ini)
    result = pytest_in(corpus, *args, "cases", "--collect-only", "-q",
                       "--conformance-runtime", "reference",
                       "--conformance-variants", "static")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    items = [line for line in result.stdout.splitlines() if "::" in line]
    assert items and all(i.startswith("cases/one.yaml::") for i in items), result.stdout
    assert all(i.endswith("[reference-static]") for i in items), items


def test_the_switch_works_without_entry_point_autoload(corpus):
    """`-p conformance` names the entry point: pytest loads it by that name
    even when plugin autoloading is off."""
    result = pytest_in(corpus, "-p", "conformance", "cases", "--collect-only", "-q",
                       "--conformance-runtime", "reference",
                       env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cases/one.yaml::" in result.stdout


def test_the_switch_enables_the_case_files_of_the_unrelated_project_too(unrelated):
    """Enabled, the plugin behaves as before: a YAML file below `cases` is a case file."""
    result = pytest_in(unrelated, "--conformance", "--collect-only", "-q")
    assert result.returncode != 0
    assert "cases/scenario.yaml" in result.stdout and "'cases' is a required property" in (
        result.stdout
    )


def test_no_conformance_blocks_the_ini_switch(corpus):
    (corpus / "pytest.ini").write_text("[pytest]\nconformance = true\n")
    (corpus / "test_normal.py").write_text("def test_ok():\n    pass\n")
    result = pytest_in(corpus, "-p", "no:conformance", "--collect-only", "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    items = [line for line in result.stdout.splitlines() if "::" in line]
    assert items == ["test_normal.py::test_ok"]


def test_a_prefixed_option_without_the_switch_says_how_to_enable_it(unrelated):
    result = pytest_in(unrelated, "--conformance-runtime", "reference", "--conformance-out=x")
    assert result.returncode == 4, result.stdout + result.stderr
    assert (
        "--conformance-out, --conformance-runtime: the conformance plugin is not enabled; "
        "add -p conformance"
    ) in result.stderr


def test_the_former_spellings_still_work_with_a_deprecation_warning(corpus):
    result = pytest_in(corpus, "-p", "conformance", "cases", "--collect-only", "-q",
                       "--runtime", "reference", "--variants", "static",
                       "--known", str(CASES / "known"))  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    items = [line for line in result.stdout.splitlines() if "::" in line]
    assert items and all(i.endswith("[reference-static]") for i in items), result.stdout
    for old, new in [("--runtime", "--conformance-runtime"), ("--variants",
                     "--conformance-variants"), ("--known", "--conformance-known")]:  # fmt: skip
        assert f"PytestDeprecationWarning: {old} is deprecated: use {new}" in result.stdout


def test_the_former_known_spelling_is_the_folder_read(corpus):
    """--known is not swallowed: a folder that does not exist stops the session."""
    result = pytest_in(corpus, "-p", "conformance", "cases", "--collect-only", "-q",
                       "--conformance-runtime", "reference", "--known", "nowhere")  # fmt: skip
    assert result.returncode == 4, result.stdout + result.stderr
    assert "nowhere: no such folder" in result.stdout + result.stderr


def test_the_former_and_prefixed_runtime_spellings_add_up(corpus):
    result = pytest_in(corpus, "-p", "conformance", "cases", "--collect-only", "-q",
                       "--conformance-runtime", "reference", "--runtime", "onnxruntime",
                       "--conformance-variants", "static")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[reference-static]" in result.stdout and "[onnxruntime-static]" in result.stdout


def test_the_deprecated_spellings_are_not_in_help(corpus):
    result = pytest_in(corpus, "-p", "conformance", "--help")
    assert result.returncode == 0, result.stderr
    assert "--conformance-runtime" in result.stdout and "--conformance-known" in result.stdout
    for old in ("--runtime", "--variants", "--known"):
        assert f"  {old}" not in result.stdout, old


def test_the_entry_point_module_imports_nothing_of_the_harness():
    """What pytest loads into every run: beyond pytest itself (imported by
    then), only the `conformance` package's version line and the switch."""
    code = (
        "import json, sys\n"
        "import pytest\n"
        "before = set(sys.modules)\n"
        "import conformance.pytest_switch\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert json.loads(done.stdout) == ["conformance", "conformance.pytest_switch"]


def test_the_entry_point_is_the_switch():
    """The installed pytest11 entry point named `conformance` loads the switch,
    not the plugin (the plugin imports NumPy, ONNX and the engine)."""
    from importlib.metadata import entry_points

    (point,) = [p for p in entry_points(group="pytest11") if p.name == "conformance"]
    assert point.value == "conformance.pytest_switch"
