"""Hostile files where ``conformance export`` reads (issue 44, items 9 and 12):
a previous export's ``manifest.json`` (``--force``), the runner's configs and
lists and its results (``--check``). Each is refused, exit 2, naming the file
and what is wrong: never read if it is not a regular file (a FIFO would block
for ever, ``/dev/zero`` never end), never past :data:`reading.MAX_BYTES`, and
never an ``internal error``."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance import export
from conformance.cli import inputs, main
from conformance.export import reading
from tests.conftest import REPO

SMALL_FILE = REPO / "cases" / "gather" / "dtypes.yaml"  # read alone: cheap
SMALL = "gather-every-dtype"
LISTS = Path("expected-failures") / "iree"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A small export, made once; each test changes a copy."""
    out = tmp_path_factory.mktemp("export") / "out"
    cases = inputs.select(inputs.load_cases([SMALL_FILE]), SMALL)
    export.export(out, cases, inputs.corpus([SMALL_FILE]), pattern=SMALL, variants=("static",))
    return out


@pytest.fixture
def out(made, tmp_path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(made, copy, symlinks=True)
    return copy


def _config(out: Path) -> tuple[Path, dict]:
    """The export's IREE config: (its path, its content without the ``//`` lines)."""
    (path,) = (out / LISTS).glob("*.json")
    text = path.read_text(encoding="utf-8")
    kept = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    return path, json.loads("\n".join(kept))


def _report(out: Path, **fields) -> str:
    """One line of pytest-reportlog for a test of the export, passed, with ``fields``."""
    _, config = _config(out)
    test = json.loads((out / "manifest.json").read_text())["tests"][0]["name"]
    report = {
        "$report_type": "TestReport", "nodeid": "t", "when": "call", "outcome": "passed",
        "user_properties": [["relative_test_directory_name", f"tests/{test}"],
                            ["test_name", config["config_name"]]],
    }  # fmt: skip
    report.update(fields)
    return json.dumps(report) + "\n"


def _unblocked(call: Callable[[], int]) -> int:
    """``call()``, an alarm turning a read that blocks (a FIFO) into a failure."""

    def blocked(*_):
        raise AssertionError("the export blocked reading a file that is not a regular one")

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(20)
    try:
        return call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _check(capsys, out: Path, *results: Path) -> tuple[int, str]:
    code = _unblocked(lambda: main(["export", str(out), "--check", *map(str, results)]))
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err, err
    return code, err


# -- 12: malformed results ---------------------------------------------------------------
RESULTS = {  # name -> (content given the export, what the error says after the file's name)
    "deep.jsonl": (lambda out: "[" * 100_000 + "]" * 100_000 + "\n",
                   "line 1: not JSON (nested deeper than 100 levels)"),
    "digits.jsonl": (lambda out: _report(out).replace('"t"', "9" * 5000),
                     "line 1: not JSON (Exceeds the limit (4300 digits)"),
    "unhashable.jsonl": (lambda out: _report(out, user_properties=[[[1], "x"]]),
                         "line 1: user_properties[0] is not a [name, value] pair"),
    "a-number.jsonl": (lambda out: _report(out, user_properties=5),
                       "line 1: user_properties is 5, not a list of [name, value] pairs"),
    "latin1.jsonl": (lambda out: _report(out).encode() + b"\xff\n",
                     "line 2: not JSON (not UTF-8)"),
    "outcome.jsonl": (lambda out: _report(out, outcome=list(range(10_000))),
                      "line 1: outcome [0, 1, 2, "),
    "encoding.xml": (lambda out: '<?xml version="1.0" encoding="no-such"?><testsuites/>',
                     "not a JUnit XML file: unknown encoding: no-such"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_malformed_results_are_refused_naming_the_file(out, tmp_path, capsys, name):
    make, said = RESULTS[name]
    path = tmp_path / name
    content = make(out)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    code, err = _check(capsys, out, path)
    assert code == 2 and f"error: {path}: {said}" in err, err
    assert len(err) < 1000  # a value shown shortened


def test_good_results_still_check(out, tmp_path, capsys):
    path = tmp_path / "log.jsonl"
    path.write_text(_report(out), encoding="utf-8")
    code, err = _check(capsys, out, path)
    assert code == 0, err


# -- 12: malformed configs and lists -----------------------------------------------------
def test_a_config_that_is_not_utf8_is_refused_naming_it(out, tmp_path, capsys):
    config, _ = _config(out)
    (tmp_path / "log.jsonl").write_text(_report(out), encoding="utf-8")
    config.write_bytes(b"\xff" + config.read_bytes())
    code, err = _check(capsys, out, tmp_path / "log.jsonl")
    assert code == 2 and f"error: {config}: not UTF-8 text (invalid start byte at byte 0)" in err


@pytest.mark.parametrize(
    ("value", "said"),
    [(5, "5"), ({"a": 1}, "{'a': 1}"), ([1, "x"], "[1, 'x']")],
    ids=["a-number", "an-object", "a-number-in-it"],
)
def test_a_config_list_that_is_not_a_list_of_names_is_refused(out, tmp_path, capsys, value, said):
    path, config = _config(out)
    (tmp_path / "log.jsonl").write_text(_report(out), encoding="utf-8")
    path.write_text(json.dumps({**config, "expected_compile_failures": value}))
    code, err = _check(capsys, out, tmp_path / "log.jsonl")
    assert code == 2
    assert (
        f"error: {path}: expected_compile_failures is not a list of test paths (strings): {said}"
        in err
    )


def test_a_deep_config_is_refused_naming_it(out, tmp_path, capsys):
    path, _ = _config(out)
    (tmp_path / "log.jsonl").write_text(_report(out), encoding="utf-8")
    path.write_text("[" * 100_000 + "]" * 100_000)
    code, err = _check(capsys, out, tmp_path / "log.jsonl")
    assert code == 2 and f"error: {path}: not a config the export writes: nested deeper" in err


# -- 9: only regular files, bounded ------------------------------------------------------
def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zeros(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _folder(path: Path) -> None:
    path.mkdir()


def _huge(path: Path) -> None:  # sparse: no disk written
    with path.open("wb") as stream:
        stream.truncate(reading.MAX_BYTES + 1)


NOT_REGULAR = "not a regular file (a folder, a FIFO or a device is never read)"
HOSTILE = [(_fifo, NOT_REGULAR), (_zeros, NOT_REGULAR), (_folder, NOT_REGULAR),
           (_huge, f"larger than {reading.MAX_BYTES:,} bytes")]  # fmt: skip
IDS = ["fifo", "dev-zero", "folder", "over-the-limit"]


@pytest.mark.parametrize(("make", "said"), HOSTILE, ids=IDS)
def test_check_reads_only_regular_configs_within_the_limit(out, tmp_path, capsys, make, said):
    planted = out / LISTS / "planted.json"
    (tmp_path / "log.jsonl").write_text(_report(out), encoding="utf-8")
    make(planted)
    code, err = _check(capsys, out, tmp_path / "log.jsonl")
    assert code == 2 and f"error: {planted}: {said}" in err, err


@pytest.mark.parametrize(("make", "said"), HOSTILE, ids=IDS)
def test_check_reads_only_regular_results_and_lists(out, tmp_path, capsys, make, said):
    results = tmp_path / "results.xml"
    make(results)
    code, err = _check(capsys, out, results)
    assert code == 2 and f"error: {results}: {said}" in err, err
    listed = out / LISTS / "import_failures.txt"
    listed.unlink()
    make(listed)
    (tmp_path / "log.jsonl").write_text(_report(out), encoding="utf-8")
    code, err = _check(capsys, out, tmp_path / "log.jsonl")
    assert code == 2 and f"error: {listed}: {said}" in err, err


@pytest.mark.parametrize(("make", "said"), HOSTILE, ids=IDS)
def test_force_reads_only_a_regular_manifest_within_the_limit(out, capsys, make, said):
    manifest = out / "manifest.json"
    manifest.unlink()
    make(manifest)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    args = ["export", str(out), str(SMALL_FILE), "-k", SMALL, "--variants", "static", "--force"]
    code = _unblocked(lambda: main(args))
    err = capsys.readouterr().err
    assert code == 2 and f"error: {manifest}: {said}" in err, err
    assert "internal error" not in err
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # nothing deleted
    code, err = _check(capsys, out, out / LISTS / "import_failures.txt")  # --check, too
    assert code == 2 and f"error: {manifest}: {said}" in err, err
