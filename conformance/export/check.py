"""``conformance export OUT_DIR --check RESULTS ...``: a runner's results held
to the lists the export wrote for it, so that a list that drifts shows
(docs/export.md, "Checking a runner's results against its list").

Read here: the results of IREE's op suite (``iree-test-suites/onnx_ops``) run
with one of the export's IREE configs, as pytest writes them
(``--junitxml=FILE``; or the suite's log, ``--report-log=FILE``), each test
known by its user properties ``relative_test_directory_name`` and
``test_name`` (the config's name); and the suite's importer's
``import_failures.txt``. A line is

* **stale** when the results contradict it: a test listed as failing that
  passes (the suite's ``[XPASS(strict)]``), or fails at the other step; a
  test listed as refused by the importer that was imported;
* **missing** when a test fails (or the importer refuses it) and no line
  says so.

Tests of the results that are not the export's are not looked at; tests of
the export the results do not hold (skipped by the list, refused by the
importer, or not run) are counted.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

from conformance.export import folder as export_folder
from conformance.export import pipelines, reading, runners
from conformance.export.selection import ExportError
from conformance.messages import shown
from conformance.strict_json import parse

STALE, MISSING = "stale", "missing"
PASSED, FAILED, XFAILED, SKIPPED = "passed", "failed", "xfailed", "skipped"
XPASS_STRICT = "[XPASS(strict)]"
COMPILE_ERROR = "Error invoking iree-compile"
RUN_ERROR = "Error invoking iree-run-module"
WRONG_STEP = "move to 'expected_run_failures'"  # an expected compile failure that failed at run
IMPORT_SUCCESSES = "import_successes.txt"  # the suite's importer writes it beside its failures


@dataclass(frozen=True)
class Result:
    """One test's result in one config of the runner."""

    test: str  # the test's folder name, test_<name>
    config: str  # the config's name
    outcome: str  # PASSED, FAILED, XFAILED, SKIPPED
    text: str  # what the runner said: a failure's message, an xfail's reason


@dataclass(frozen=True)
class Finding:
    kind: str  # STALE or MISSING
    test: str
    where: str  # the list file and the list holding the line; for a missing line, the file
    said: str  # what the results show


@dataclass
class CheckSummary:
    """What ``--check`` found."""

    findings: list[Finding] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)  # list file -> results checked
    absent: dict[str, dict[str, int]] = field(default_factory=dict)  # list file -> why -> tests
    foreign: int = 0  # results of tests that are not the export's


# -- reading results ------------------------------------------------------------------------
def _error(path: Path, said: str) -> ExportError:
    return ExportError(f"{path}: {said}")


def _test_of(relative: str, known: set[str]) -> str | None:
    name = relative.rstrip("/").rsplit("/", 1)[-1]
    return name if name in known else None


def _read(path: Path) -> bytes:
    """A file --check reads, whole: a regular file, bounded (reading.read_bytes)."""
    try:
        return reading.read_bytes(path)
    except FileNotFoundError:
        raise _error(path, "no such file") from None


def _junit(path: Path, known: set[str]) -> tuple[list[Result], int]:
    raw = _read(path)
    try:
        root = ElementTree.fromstring(raw)
    # LookupError: an encoding Python does not know; ValueError: one expat cannot read
    except (ElementTree.ParseError, LookupError, ValueError) as error:
        raise _error(path, f"not a JUnit XML file: {error}") from None
    results, foreign = [], 0
    for case in root.iter("testcase"):
        properties = {
            p.get("name"): p.get("value", "") for p in case.iter("property") if p.get("name")
        }
        relative = properties.get("relative_test_directory_name")
        config = properties.get("test_name")
        if relative is None or config is None:
            raise _error(
                path,
                f"testcase {case.get('classname')}::{case.get('name')} has no "
                "relative_test_directory_name and test_name properties: not the results of "
                "iree-test-suites/onnx_ops (its conftest.py records them)",
            )
        test = _test_of(relative, known)
        if test is None:
            foreign += 1
            continue
        outcome, text = PASSED, ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, text = FAILED, f"{child.get('message', '')}\n{child.text or ''}"
                break
            if child.tag == "skipped":
                xfail = child.get("type") == "pytest.xfail"
                outcome, text = (XFAILED if xfail else SKIPPED), child.get("message", "")
        results.append(Result(test, config, outcome, text))
    return results, foreign


def _report_log(path: Path, known: set[str]) -> tuple[list[Result], int]:
    """pytest-reportlog's JSON lines: per test its setup, call and teardown
    reports; the call's outcome, else the setup's when it did not pass."""
    by_node: dict[str, Result] = {}
    foreign: set[str] = set()
    for number, line in enumerate(_read(path).splitlines(), 1):
        if not line.strip():
            continue
        try:  # strict: UTF-8, nested at most MAX_DEPTH, no integer Python cannot convert
            report = parse(line)
        except ValueError as error:
            raise _error(path, f"line {number}: not JSON ({error})") from None
        if not isinstance(report, dict) or report.get("$report_type") != "TestReport":
            continue
        when, outcome = report.get("when"), report.get("outcome")
        if when == "teardown" or (when == "setup" and outcome == PASSED):
            continue
        properties = _user_properties(path, number, report.get("user_properties"))
        relative = properties.get("relative_test_directory_name")
        config = properties.get("test_name")
        node = str(report.get("nodeid"))
        if relative is None or config is None:
            raise _error(
                path,
                f"line {number}: {node} has no relative_test_directory_name and test_name "
                "user properties: not the results of iree-test-suites/onnx_ops",
            )
        test = _test_of(str(relative), known)
        if test is None:
            foreign.add(node)
            continue
        longrepr = report.get("longrepr") or ""
        text = longrepr if isinstance(longrepr, str) else json.dumps(longrepr)
        if outcome == SKIPPED and "wasxfail" in report:
            found = Result(test, str(config), XFAILED, str(report["wasxfail"]))
        elif outcome in (PASSED, FAILED, SKIPPED):
            found = Result(test, str(config), str(outcome), text)
        else:
            raise _error(path, f"line {number}: outcome {shown(outcome)}")
        by_node[node] = found
    return list(by_node.values()), len(foreign)


def _user_properties(path: Path, number: int, value) -> dict[str, object]:
    """A report's ``user_properties`` (pytest's ``[name, value]`` pairs) as a
    mapping; ExportError at the line for anything else."""
    if value is None:
        return {}
    if not isinstance(value, list):
        raise _error(path, f"line {number}: user_properties is {shown(value)}, "
                     "not a list of [name, value] pairs")  # fmt: skip
    found: dict[str, object] = {}
    for index, pair in enumerate(value):
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
            raise _error(path, f"line {number}: user_properties[{index}] is not a "
                         "[name, value] pair with a string name")  # fmt: skip
        found[pair[0]] = pair[1]
    return found


def _text(path: Path) -> str:
    """A text file --check reads (bounded), as UTF-8; ExportError naming it else."""
    try:
        return _read(path).decode("utf-8")
    except UnicodeDecodeError as error:
        raise _error(path, f"not UTF-8 text ({error.reason} at byte {error.start})") from None


def _names(path: Path) -> list[str]:
    text = _text(path)
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


# -- the export's lists ----------------------------------------------------------------------
def _config(path: Path) -> dict:
    """An IREE config as the export writes it (JSON with ``//`` comment lines),
    its lists lists of test paths; ExportError naming the file and what is not so."""
    kept = [line for line in _text(path).splitlines() if not line.lstrip().startswith("//")]
    try:
        config = parse("\n".join(kept).encode("utf-8"))
    except ValueError as error:
        raise _error(path, f"not a config the export writes: {error}") from None
    if not isinstance(config, dict) or not isinstance(config.get("config_name"), str):
        raise _error(path, "not a config the export writes: no config_name")
    for key in runners.IREE_LISTS:
        listed = config.get(key)
        if listed is not None and not (
            isinstance(listed, list) and all(isinstance(entry, str) for entry in listed)
        ):
            raise _error(path, f"{key} is not a list of test paths (strings): "
                         f"{shown(listed)}")  # fmt: skip
    return config


def _listed(config: dict) -> dict[str, str]:
    """Test name -> the list of the config naming it."""
    found = {}
    for key in runners.IREE_LISTS:
        for entry in config.get(key) or []:
            found[str(entry).rsplit("/", 1)[-1]] = key
    return found


def _step(text: str) -> str:
    if COMPILE_ERROR in text:
        return "fails at compile"
    if RUN_ERROR in text or WRONG_STEP in text:
        return "fails at run"
    return "fails: " + (text.strip().splitlines() or ["(no message)"])[0][:200]


def _judge(result: Result, line: str | None, where: str) -> Finding | None:
    text, test = result.text, result.test
    failed = result.outcome == FAILED
    if line == "expected_compile_failures":
        if result.outcome == XFAILED:
            return None
        if failed and WRONG_STEP in text:
            return Finding(STALE, test, f"{where}: {line}", "compiles, fails at run")
        if (failed and XPASS_STRICT in text) or result.outcome == PASSED:
            return Finding(STALE, test, f"{where}: {line}", "compiles and runs: it passes")
        return Finding(STALE, test, f"{where}: {line}", _step(text))
    if line == "expected_run_failures":
        if result.outcome == XFAILED:
            return None
        if (failed and XPASS_STRICT in text) or result.outcome == PASSED:
            return Finding(STALE, test, f"{where}: {line}", "runs and passes")
        return Finding(STALE, test, f"{where}: {line}", _step(text))
    if failed:  # not listed, or skip_run_tests (compiled only)
        return Finding(MISSING, test, where, _step(text))
    return None


def _check_config(
    summary: CheckSummary,
    where: str,
    config: dict,
    tests: list[str],
    results_of: dict[str, Result],
    refused: set[str],
) -> None:
    """One config's results held to its lists (and to the importer's refusals)."""
    listed = _listed(config)
    summary.checked[where] = len(results_of)
    for test in tests:
        result = results_of.get(test)
        if result is None:
            if test in refused:
                why = "refused by the importer"
            elif listed.get(test) == "skip_compile_tests":
                why = "skipped by the list"
            else:
                why = "not run"
            counts = summary.absent.setdefault(where, {})
            counts[why] = counts.get(why, 0) + 1
            continue
        if test in refused:
            shown = _list_file(runners.IREE_IMPORT_FAILURES)
            summary.findings.append(
                Finding(STALE, test, shown, f"imported and run ({result.outcome})")
            )
        finding = _judge(result, listed.get(test), where)
        if finding is not None:
            summary.findings.append(finding)


def _list_file(name: str) -> str:
    """A file of the export's IREE lists, as a finding names it."""
    return f"expected-failures/{pipelines.IREE.runtime}/{name}"


def check(out: Path, results: list[Path]) -> CheckSummary:
    """The results held to the export's IREE lists (see the module docstring)."""
    manifest_path = out / export_folder.MANIFEST
    if not (manifest_path.exists() or manifest_path.is_symlink()):  # else read, or named
        raise ExportError(f"{out}: not an export (no {export_folder.MANIFEST}): --check reads one")
    manifest = export_folder.read_manifest(out)
    tests = [str(test["name"]) for test in manifest.get("tests", [])]
    known = set(tests)
    lists = out / "expected-failures" / pipelines.IREE.runtime
    configs = {}
    for path in sorted(lists.glob("*.json")) if lists.is_dir() else []:
        config = _config(path)
        configs[config["config_name"]] = (path, config)
    refused_file = lists / runners.IREE_IMPORT_FAILURES
    present = refused_file.exists() or refused_file.is_symlink()  # a FIFO there is named
    refused = set(_names(refused_file)) if present else set()
    summary = CheckSummary()
    by_config: dict[str, dict[str, Result]] = {}
    import_refused: set[str] = set()  # what the importer's own files say
    imported: set[str] = set()
    read_importer = False
    for path in results:
        if path.name in (runners.IREE_IMPORT_FAILURES, IMPORT_SUCCESSES):
            names = {n for n in _names(path) if n in known}
            read_importer = True
            if path.name == IMPORT_SUCCESSES:
                imported |= names
            else:
                import_refused |= names
            continue
        if path.suffix == ".xml":
            read, foreign = _junit(path, known)
        else:
            read, foreign = _report_log(path, known)
        summary.foreign += foreign
        for result in read:
            if result.config not in configs:
                raise _error(
                    path,
                    f"{result.test}: config {result.config!r} is none of the export's IREE "
                    f"configs ({', '.join(sorted(configs)) or 'none'}, in {lists})",
                )
            by_config.setdefault(result.config, {})[result.test] = result
    shown = _list_file(runners.IREE_IMPORT_FAILURES)
    for name in sorted(refused & imported):
        summary.findings.append(Finding(STALE, name, shown, "the importer imports it"))
    for name in sorted(import_refused - refused):
        summary.findings.append(Finding(MISSING, name, shown, "the importer refuses it"))
    for config_name, results_of in by_config.items():
        path, config = configs[config_name]
        _check_config(summary, _list_file(path.name), config, tests, results_of,
                      refused - imported)  # fmt: skip
    if not by_config and not read_importer:
        raise ExportError(
            f"{', '.join(map(str, results))}: no result of a test of {out} "
            f"({summary.foreign} of other tests)"
        )
    return summary
