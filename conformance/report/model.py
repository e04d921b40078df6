"""What the HTML report shows, computed from run folders (no HTML here).

A run folder is what ``conformance run`` or ``conformance fuzz`` writes:
``results.jsonl`` plus ``header.json`` and ``summary.json`` beside it, and
``findings.json`` for a fuzz campaign. ``load`` takes folders or results files
(several are merged: shards, or runs of different runtimes) and returns a
:class:`Report`, a plain data structure the template walks.
"""

from __future__ import annotations

import math
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from conformance import gate
from conformance.cases import loader
from conformance.cases.loader import CaseErrors
from conformance.engine import models, records
from conformance.engine.judge import DISCREPANCIES, KINDS
from conformance.gate import baseline
from conformance.tables import decisions, dtypes

# Worst first: the colour of a matrix cell is its worst outcome.
SEVERITY: tuple[str, ...] = (
    "crash",
    "timeout",
    "value_mismatch",
    "dtype_mismatch",
    "shape_mismatch",
    "accepted_invalid",
    "rejected",
    "harness_unsupported",
    "both_rejected",
    "pass",
)
assert set(SEVERITY) == set(KINDS)
SHOWN_ELEMENTS = 64  # tensors above this are summarised, not dumped
SHOWN_STRING = 200  # characters of one string element shown
GENERATED = "(generated examples)"


class ReportError(Exception):
    """A results path that cannot be read, said plainly."""


@dataclass
class Cell:
    counts: Counter = field(default_factory=Counter)

    @property
    def worst(self) -> str:
        return next(kind for kind in SEVERITY if self.counts[kind]) if self.counts else ""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def title(self) -> str:
        return ", ".join(f"{n} {kind}" for kind, n in sorted(self.counts.items(), key=_by_severity))


@dataclass
class Tensor:
    """A tensor as text for a person: whole when small, summarised when large."""

    dtype: str
    shape: list[int]
    text: str
    summarised: bool


@dataclass
class Group:
    """Discrepancies of one (runtime, kind, op, case-file id)."""

    runtime: str
    kind: str
    op: str
    base_id: str
    count: int
    example: dict  # the record of the smallest case in the group
    dtypes: set[str] = field(default_factory=set)
    variants: set[str] = field(default_factory=set)
    data: Tensor | None = None
    indices: Tensor | None = None
    differing: list[dict] = field(default_factory=list)  # position, expected, actual
    records: list[dict] = field(default_factory=list, repr=False)
    new: int = 0  # results no baseline entry covers
    known: dict = field(default_factory=dict)  # "file:line" -> the baseline entry covering some

    @property
    def baseline(self) -> str:
        """'new' when any result is outside the baseline, else 'known'."""
        return "new" if self.new else "known"


@dataclass
class DecisionRow:
    decision: decisions.Decision
    observed: dict[str, str]  # runtime -> what it did on inputs under this decision


@dataclass
class Report:
    headers: list[dict]
    runtimes: list[str]
    variants: list[str]
    ops: list[str]
    dtypes: list[str]
    kinds: list[str]
    totals: dict[str, Counter]  # runtime -> kind -> records
    matrix: list[tuple[tuple[str, int, str], dict[tuple[str, str], Cell]]]
    groups: list[Group]
    decision_rows: list[DecisionRow]
    findings: list[dict]  # fuzz classes, with paths made relative to the report
    records: int
    entries: list[dict] = field(default_factory=list, repr=False)  # the records themselves
    baseline: str | None = None  # the baseline folder groups were held against
    baseline_error: str | None = None  # why no baseline could be used
    known_by: dict = field(default_factory=dict, repr=False)  # id(record) -> covering entry


def _by_severity(item) -> int:
    return SEVERITY.index(item[0])


# -- reading ------------------------------------------------------------------------
def _folder(path: Path) -> tuple[Path, Path]:
    try:
        return records.locate(path)
    except records.RecordsError as error:
        raise ReportError(str(error)) from None


def _read_records(results: Path) -> list[dict]:
    try:
        return records.read_records(results)
    except records.RecordsError as error:
        raise ReportError(str(error)) from None


def _read_json(path: Path) -> dict | None:
    try:
        return records.read_json(path)
    except records.RecordsError as error:
        raise ReportError(str(error)) from None


# -- tensors --------------------------------------------------------------------------
def _element(value) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    if len(text) > SHOWN_STRING:
        text = text[:SHOWN_STRING] + f"… ({len(text)} characters)"
    return text


def tensor_text(array: np.ndarray) -> Tensor:
    summarised = array.size > SHOWN_ELEMENTS
    if array.dtype == object:
        flat = [_element(v) for v in array.reshape(-1)[:SHOWN_ELEMENTS]]
        body = "[" + ", ".join(flat) + ("" if not summarised else ", …") + "]"
        if array.ndim != 1:
            body = f"(flattened) {body}"
    else:
        with np.printoptions(threshold=SHOWN_ELEMENTS, edgeitems=3, linewidth=100):
            body = np.array2string(array, separator=", ")
    return Tensor(dtypes.name_of(array), list(array.shape), body, summarised)


class _Cases:
    """Case inputs by id, from the case files the records name (loaded once each)."""

    def __init__(self) -> None:
        self._files: dict[str, dict] = {}

    def inputs(self, record: dict, cwd: str | None):
        path = record.get("source", "").rpartition(":")[0]
        if not path or path.startswith("<"):
            return None
        if cwd and not Path(path).is_absolute():
            path = str(Path(cwd) / path)  # sources are relative to where the run ran
        if path not in self._files:
            try:
                self._files[path] = {c.id: c for c in loader.load_file(Path(path))}
            except (OSError, loader.CaseErrors):
                self._files[path] = {}
        return self._files[path].get(record["case_id"])


# -- the report -----------------------------------------------------------------------
def load(paths: list[Path], report_path: Path, known: Path | None = None) -> Report:
    """The report of run folders (or results files). Discrepancies are marked
    known or new against the baseline in ``known``, else the one the run's
    gate used (gate.json), else cases/known when there is one."""
    headers, entries, findings, cwds = [], [], [], {}
    for path in paths:
        results, folder = _folder(Path(path))
        mine = _read_records(results)
        entries += mine
        header = _read_json(folder / records.HEADER)
        if header:
            headers.append(header)
            cwds.update((id(entry), header.get("cwd")) for entry in mine)
        found = _read_json(folder / "findings.json")
        for entry in (found or {}).get("classes", []):
            entry = dict(entry)
            entry["links"] = {
                name: _relative(folder / relative, report_path.parent)
                for name, relative in entry.get("files", {}).items()
            }
            findings.append(entry)
        if known is None and (decided := _read_json(folder / "gate.json")):
            known = Path(decided["baseline"])
            if not known.is_dir() and header and header.get("cwd"):
                known = Path(header["cwd"]) / known  # relative to where the run ran
    report = build(headers, entries, findings, cwds)
    _mark_known(report, known if known is not None else baseline.default_folder())
    return report


def _mark_known(report: Report, folder: Path) -> None:
    """Hold each group's results against the baseline: which entries cover
    them, how many are new."""
    if not folder.is_dir():
        return
    try:
        baselines = baseline.load(folder, report.runtimes)
    except CaseErrors as errors:
        report.baseline_error = f"the baseline in {folder} does not load: {errors.errors[0]}"
        return
    report.baseline = str(folder)
    decided = gate.check(report.entries, baselines, records.runtime_versions(report.headers))
    for group in report.groups:
        for entry in group.records:
            cover = decided.covered_by.get(id(entry))
            if cover is None:
                group.new += 1
            else:
                group.known[cover.where] = cover
                report.known_by[id(entry)] = cover


def _relative(target: Path, start: Path) -> str:
    return os.path.relpath(target.resolve(), start.resolve())


def build(
    headers: list[dict], entries: list[dict], findings: list[dict], cwds: dict | None = None
) -> Report:
    """The report of these records; ``cwds`` maps id(record) to the folder its
    run ran in (case-file sources are relative to it)."""
    runtimes = sorted({e["runtime"] for e in entries})
    present_variants = {e["variant"] for e in entries}
    variants = [v for v in models.VARIANTS if v in present_variants]
    totals: dict[str, Counter] = {rt: Counter() for rt in runtimes}
    cells: dict[tuple, dict[tuple, Cell]] = defaultdict(lambda: defaultdict(Cell))
    groups: dict[tuple, Group] = {}
    for entry in entries:
        runtime, kind = entry["runtime"], entry["kind"]
        totals[runtime][kind] += 1
        row = (entry["op"], entry["opset"], entry["dtype"])
        cells[row][runtime, entry["variant"]].counts[kind] += 1
        if kind not in DISCREPANCIES:
            continue
        # Generated examples (fuzzing) each have an id of their own: they group
        # together, and the fuzz classes table says more.
        base_id = GENERATED if entry["source"].startswith("<") else entry["base_id"]
        key = (runtime, kind, entry["op"], base_id)
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(runtime, kind, entry["op"], base_id, 0, entry)
        group.count += 1
        group.records.append(entry)
        group.dtypes.add(entry["dtype"])
        group.variants.add(entry["variant"])
        if _size(entry) < _size(group.example):
            group.example = entry
    cases = _Cases()
    ordered = sorted(groups.values(), key=lambda g: (SEVERITY.index(g.kind), -g.count, g.base_id))
    for group in ordered:
        _fill(group, cases, (cwds or {}).get(id(group.example)))
    ops = sorted({e["op"] for e in entries})
    dtypes_seen = sorted({e["dtype"] for e in entries})
    kinds = [k for k in SEVERITY if any(totals[rt][k] for rt in runtimes)]
    matrix = [(row, cells[row]) for row in sorted(cells)]
    return Report(
        headers=headers,
        runtimes=runtimes,
        variants=variants,
        ops=ops,
        dtypes=dtypes_seen,
        kinds=kinds,
        totals=totals,
        matrix=matrix,
        groups=ordered,
        decision_rows=_decision_rows(entries, runtimes),
        findings=findings,
        records=len(entries),
        entries=entries,
    )


def _size(entry: dict) -> int:
    return math.prod(entry["data_shape"]) + math.prod(entry["indices_shape"])


def _fill(group: Group, cases: _Cases, cwd: str | None) -> None:
    record = group.example
    case = cases.inputs(record, cwd)
    if case is not None:
        group.data, group.indices = tensor_text(case.data), tensor_text(case.indices)
    positions = record.get("positions") or []
    group.differing = [
        {"position": p, "expected": e, "actual": a}
        for p, e, a in zip(
            positions,
            record.get("expected_values", []),
            record.get("actual_values", []),
            strict=False,
        )
    ]


def _decision_rows(entries: list[dict], runtimes: list[str]) -> list[DecisionRow]:
    """Each decision with what each runtime did on inputs it governs: inputs
    that break its clause (refused or not), and inputs under it when disputed."""
    seen: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for entry in entries:
        expected = entry.get("expected") or {}
        ids = set(entry.get("disputed") or ())
        if "violation" in expected:
            ids.add(expected["violation"])
        for decision_id in ids:
            seen[decision_id][entry["runtime"]][entry["kind"]] += 1
    rows = []
    for decision in decisions.DECISIONS:
        observed = {}
        for runtime in runtimes:
            counts = seen[decision.id][runtime]
            observed[runtime] = ", ".join(
                f"{n} {kind}" for kind, n in sorted(counts.items(), key=_by_severity)
            )
        rows.append(DecisionRow(decision, observed))
    return rows
