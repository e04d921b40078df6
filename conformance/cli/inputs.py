"""What the commands read: case files and finished run folders (the
targets and their baselines are :func:`conformance.gate.settings.build`'s).

Each reader raises the input's own error (``CaseErrors``, ``RecordsError``,
``GateError``: :class:`conformance.errors.ConformanceError`), which
:func:`conformance.cli.main` prints and turns into exit 2.
"""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

from conformance import shipped
from conformance.cases import CaseErrors, backend, discover
from conformance.cases.check import DEFAULT_CASE_MEMORY
from conformance.cases.loader import case_paths, load_all
from conformance.engine import records
from conformance.gate import baseline
from conformance.gate.settings import known_folders
from conformance.report.terminal import cases as cases_text


def load_cases(paths: list[Path] | None, memory: int = DEFAULT_CASE_MEMORY):
    """Cases of the given paths (none: the shipped corpus; the word ``shipped``
    stands for it among them; folders of ONNX backend tests too, each test
    folder that is not a case said on stderr with its reason); CaseErrors,
    every problem of every file, noting that nothing was run. ``memory``: the
    memory guard (``--case-memory``), which bounds the values read from files."""
    try:
        loaded = load_all(case_paths(paths), memory)
    except CaseErrors as errors:
        errors.add_note(cases_text.case_errors_note(errors.errors))
        raise
    for line in cases_text.not_taken_lines(loaded.not_taken):
        print(line, file=sys.stderr)
    return loaded.cases


def corpus(paths: list[Path] | None) -> dict:
    """What the run header records of the case files judged (``corpus``:
    shipped or not, the paths, the files and their digest; docs/formats.md)."""
    given = case_paths(paths)
    return shipped.describe(given, [*discover(given), *backend.files(given)])


def select(cases, pattern: str | None):
    """Cases whose id contains ``pattern`` (or matches it as a glob)."""
    if not pattern:
        return cases
    glob = pattern if any(ch in pattern for ch in "*?[") else f"*{pattern}*"
    return [c for c in cases if fnmatch.fnmatchcase(c.id, glob)]


def finished_runs(
    results: list[Path], known: list[Path] | None
) -> tuple[list[records.RunFolder], baseline.BaselineFolders | None]:
    """The run folders ``results`` names, read, and the baseline folders
    ``known`` names (checked first: a GateError when one does not exist; the
    word ``shipped`` read), None when none was given."""
    folders = None if known is None else known_folders(known)
    return records.read_folders(results), folders
