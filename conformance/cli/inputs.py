"""What the commands read: case files, finished run folders, baselines.

Each reader raises the input's own error (``CaseErrors``, ``RecordsError``,
``GateError``: :class:`conformance.errors.ConformanceError`), which
:func:`conformance.cli.main` prints and turns into exit 2; a reader that
returns None has said why already (a ``--known`` folder that does not exist).
"""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

from rich.console import Console

from conformance import shipped
from conformance.cases import CaseErrors, backend, discover
from conformance.cases.check import DEFAULT_CASE_MEMORY
from conformance.cases.loader import case_paths, load_all
from conformance.cli import options
from conformance.engine import records
from conformance.engine.targets import Target
from conformance.gate import verdict
from conformance.report.terminal import cases as cases_text
from conformance.report.terminal import gate as gate_text


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


def finished_runs(args, err: Console) -> list[records.RunFolder] | None:
    """The run folders ``args.results`` names, read (``args.known`` checked
    first: None after saying one does not exist; else it becomes the folders
    it names, the word ``shipped`` read)."""
    if args.known is not None:
        args.known = options.known_folder(args, err)
        if args.known is None:
            return None
    return records.read_folders(args.results)


def baselines(args, runtimes: list[Target], err: Console, deciding: bool = True):
    """The baselines of these targets (their baseline names' files in each
    folder; a ``module:Class`` given on ``--runtime`` has its name only once
    its workers report it: the gate reads its file after the run), or None
    when a ``--known`` folder does not exist (said). A bad baseline file is a
    GateError, every problem listed; unless the gate is ``deciding`` the
    exit code, when its problems are printed and the run goes on ungated (None).
    The reading itself is :func:`conformance.gate.verdict.load_baselines`'s,
    as the pytest plugin's."""
    folder = options.known_folder(args, err)
    if folder is None:
        return None
    try:
        return verdict.load_baselines(folder, {t.name or t.adapter: t.adapter for t in runtimes})
    except verdict.GateError as error:
        if deciding:
            raise
        for line in gate_text.ungated_lines(error.problems):
            err.print(line, markup=False)
        return None
