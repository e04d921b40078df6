"""The report page: what the HTML report shows, computed from run folders (no HTML here).

A run folder is what ``conformance run`` or ``conformance fuzz`` writes:
``results.jsonl`` plus ``header.json`` and ``summary.json`` beside it, and
``findings.json`` for a fuzz campaign, ``gate.json`` (the gate's verdict on
each discrepancy group) and ``groups.json`` (the smallest input of each
group). :func:`from_runs` takes run folders as
:func:`conformance.engine.run_folder.read_folders` reads them (several are
merged: shards, or runs of different runtimes) and returns a :class:`Report`,
a plain data structure the template walks. Everything it shows comes from
those folders: it never reads case files or follows a path found in a record.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from conformance.engine import credentials, models, records
from conformance.engine.groups import Grouping, GroupKey, group_key
from conformance.engine.judge import DISCREPANCIES
from conformance.gate import baseline, verdict
from conformance.report.views.coverage import CoverageView, coverage_view
from conformance.report.views.decisions import DecisionRow, decision_rows
from conformance.report.views.families import Family, families
from conformance.report.views.fuzz import FuzzBug, class_key, fuzz_bugs
from conformance.report.views.group import Group
from conformance.report.views.model import ModelTable
from conformance.report.views.model import tables as model_tables
from conformance.report.views.severity import SEVERITY, by_severity
from conformance.report.views.tensors import (
    differing,
    elements,
    reproducer,
    tensor,
)


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
    def discrepancies(self) -> int:
        return sum(n for kind, n in self.counts.items() if kind in DISCREPANCIES)

    @property
    def title(self) -> str:
        return ", ".join(f"{n} {kind}" for kind, n in sorted(self.counts.items(), key=by_severity))


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
    total: int  # results
    records: list[dict] = field(default_factory=list, repr=False)  # the results themselves
    baseline: str | None = None  # the baseline folder(s) groups were held against
    baseline_error: str | None = None  # why no baseline could be used
    verdicts: list[dict] = field(default_factory=list)  # each run's gate.json (or the --known one)
    # "file:line" -> the verdicts' entry (gate.json ``entries``: match, versions, holds...)
    entries: dict[str, dict] = field(default_factory=dict)
    unfinished: list[str] = field(default_factory=list)  # why some run cannot stand for a whole run
    stale_gates: list[str] = field(default_factory=list)  # gate.json files set aside (RunFolder)
    harness_errors: int = 0
    case_problems: list[dict] = field(default_factory=list)  # case files the oracle contradicts
    families: list[Family] = field(default_factory=list)
    bugs: list[FuzzBug] = field(default_factory=list)  # fuzz bugs (findings.json format 2)
    unassigned: list[dict] = field(default_factory=list)  # fuzz classes of no bug listed
    coverage: CoverageView | None = None  # what the fuzz campaigns reached
    # conformance model: per model, its nodes' verdict (report.node_verdicts.ModelVerdict)
    nodes: list = field(default_factory=list)
    # conformance model: per model, its verdict as the page's table (views.model.ModelTable)
    model_tables: list[ModelTable] = field(default_factory=list)

    @property
    def packing(self) -> dict:
        """What packed execution did: results from packs, those re-run alone,
        and the results whose pack gave another kind (findings of their own)."""
        return {
            "packed": sum(bool(r.get("packed")) for r in self.records),
            "confirmed": sum(r.get("confirmed") is True for r in self.records),
            "unconfirmed": sum(r.get("confirmed") is False for r in self.records),
            "differently": [r for r in self.records if r.get("packed_kind")],
        }

    @property
    def targets(self) -> dict[str, dict]:
        """runtime -> what its run header says of it (adapter, profile, version,
        requested and effective properties, interpreter) and of its machine."""
        found = {}
        for header in self.headers:
            for name, about in (header.get("runtimes") or {}).items():
                found[name] = {
                    **(about or {}),
                    "cpu": header.get("cpu"),
                    "cpu_flags": header.get("cpu_flags"),
                }
        return {name: found.get(name, {}) for name in self.runtimes}

    def anchor_of(self, runtime: str, kind: str, op: str, group: str) -> str | None:
        """The page anchor of a group named by its key (gate.json names groups so)."""
        key = GroupKey(runtime, kind, op, group)
        return next((g.anchor for g in self.groups if g.key == key), None)

    # id(record) -> the baseline entry covering it: {"where", "reason", "clause", "upstream"}
    known_by: dict = field(default_factory=dict, repr=False)


# -- the report -----------------------------------------------------------------------
def _node_verdicts(runs: list[records.RunFolder]) -> tuple[list, list[ModelTable]]:
    """The verdict per model node of the runs ``conformance model`` wrote (their
    nodes.json), and each model's verdict as the page's table."""
    import json

    from conformance.report import node_verdicts

    made: list = []
    shown: list[ModelTable] = []
    for run in runs:
        path = run.folder / node_verdicts.NODES
        if not path.is_file():
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # the results stand without it; the report only lacks the node table
        mine = node_verdicts.verdicts(document, run.records)
        made += mine
        shown += model_tables(document, run.records, mine)
    return made, shown


def from_runs(
    runs: list[records.RunFolder],
    report_path: Path,
    known: Path | baseline.BaselineFolders | None = None,
    grouping: Grouping | None = None,
) -> Report:
    """The report of these runs. Discrepancy groups are marked known or new
    as each run's gate decided (gate.json), or, with ``known``, by holding
    the runs against that baseline folder now. ``grouping``: the runs'
    discrepancies grouped already (the gate's, at the end of a run)."""
    findings = []
    per_run = []  # (a run's findings.json, its classes with links)
    for run in runs:
        linked = []
        for found in (run.findings or {}).get("classes", []):
            found = dict(found)
            found["links"] = {
                name: _relative(run.folder / relative, report_path.parent)
                for name, relative in found.get("files", {}).items()
                if _inside(run.folder, relative)
            }
            linked.append(found)
        findings += linked
        if run.findings:
            per_run.append((run.findings, linked))
    report = build(
        [run.header for run in runs if run.header],
        [record for run in runs for record in run.records],
        findings,
        grouping,
    )
    report.bugs, report.unassigned = fuzz_bugs(per_run)
    report.coverage = coverage_view([f.get("coverage") for f, _ in per_run])
    inputs = {
        GroupKey(g["runtime"], g["kind"], g["op"], g["group"]): g
        for run in runs
        for g in (run.groups or {}).get("groups", [])
    }
    classes = {class_key(found): found for found in findings}
    for group in report.groups:
        held = inputs.get(group.key)
        if held and held.get("case_id") == group.example.get("case_id"):
            group.data, group.indices = tensor(held["data"]), tensor(held["indices"])
            if "reproducer" in held:
                group.reproducer = reproducer(held["reproducer"])
        group.fuzz_class = classes.get(group.key)
    report.nodes, report.model_tables = _node_verdicts(runs)
    report.unfinished = [why for run in runs if (why := run.unfinished())]
    report.stale_gates = [run.stale_gate for run in runs if run.stale_gate]
    report.harness_errors = sum((run.summary or {}).get("harness_errors", 0) for run in runs)
    report.case_problems = [p for run in runs for p in (run.summary or {}).get("case_problems", [])]
    if known is not None:
        try:
            decided = verdict.decide(runs, known)
        except verdict.GateError as error:
            report.baseline_error = f"the baseline in {known} does not load: {error.problems[-1]}"
            report.families = families(report.groups, report.baseline, report.known_by)
            return report
        report.verdicts = [decided.to_json()]
        covers = {key: entry.where for key, entry in decided.gate.covered_by.items()}
        _mark(report, decided.groups(), str(known), covers)
    elif any(run.gate for run in runs):
        report.verdicts = [run.gate for run in runs if run.gate]
        marks = [g for run in runs for g in (run.gate or {}).get("groups", [])]
        folders = sorted({str(run.gate.get("baseline")) for run in runs if run.gate})
        _mark(report, marks, ", ".join(folders))
    if report.verdicts:
        _mark_bugs(report)
    report.families = families(report.groups, report.baseline, report.known_by)
    return report


def _mark_bugs(report: Report) -> None:
    """Each bug's new results: those of its classes' groups the gate found
    new. The new bugs go first: they are what needs triage."""
    groups = {group.key: group for group in report.groups}
    for bug in report.bugs:
        keys = {class_key(found) for found in bug.classes if found.get("signature")}
        bug.new = sum(groups[key].new for key in keys if key in groups)
    report.bugs.sort(key=lambda bug: not bug.new)  # stable: the order within each stays


def _mark(
    report: Report, marks: list[dict], baseline: str, covers: dict[int, str] | None = None
) -> None:
    """Each group's gate verdict: how many of its results are new, which
    baseline entries cover the rest (per record, for JUnit and the families);
    and each entry of the verdicts in full (what it matches, where it holds),
    by file:line. ``covers`` (id(record) -> the file:line of the entry that
    covers it, from a verdict decided now) says which entry covers which
    result; a gate.json names only a group's entries, and its known results
    are all given the first."""
    report.baseline = baseline
    for decided in report.verdicts:
        for entry in decided.get("entries", []):
            report.entries.setdefault(entry["where"], entry)
    by_key: dict[GroupKey, list[dict]] = defaultdict(list)
    for mark in marks:
        by_key[GroupKey(mark["runtime"], mark["kind"], mark["op"], mark["group"])].append(mark)
    for group in report.groups:
        mine = by_key.get(group.key)
        if not mine:  # a run without a gate: its results are not known to be known
            group.new = group.count
            continue
        new_results: set[tuple] = set()
        for mark in mine:
            group.new += mark["new"]
            for entry in mark.get("known", []):
                group.known[entry["where"]] = entry
            if mark["new"] and mark.get("new_results"):
                new_results.update(map(tuple, mark["new_results"]))
            elif mark["new"] and mark["new"] == mark["count"]:
                new_results.update((r["case_id"], r["variant"]) for r in group.records)
        cover = next(iter(group.known.values()), None)
        for record in group.records:
            if covers is not None:
                where = covers.get(id(record))
                if where in group.known:
                    report.known_by[id(record)] = group.known[where]
            elif cover is not None and (record["case_id"], record["variant"]) not in new_results:
                report.known_by[id(record)] = cover


def _inside(folder: Path, relative: str) -> bool:
    """Whether a path a run wrote stays inside its folder (links never leave it)."""
    try:
        return (folder / relative).resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError):
        return False


def _relative(target: Path, start: Path) -> str:
    """A link from the page to a file of a run: always a relative path that a
    browser cannot read as a URL scheme ("./javascript:..." is a file name)."""
    relative = os.path.relpath(target.resolve(), start.resolve())
    return relative if relative.startswith("../") else f"./{relative}"


def _masked(header: dict) -> dict:
    """A run header as the report shows it: a URL's credentials masked in its
    command line (recorded masked since issue 32; a folder from before is not)."""
    command = header.get("command")
    if not isinstance(command, list):
        return header
    return {**header, "command": credentials.mask_command(command)}


def build(
    headers: list[dict],
    results: list[dict],
    findings: list[dict],
    grouping: Grouping | None = None,
) -> Report:
    """The report of these records (inputs and gate marks are added by
    :func:`from_runs`), their discrepancies grouped by ``grouping`` when
    they were grouped already."""
    key_of = grouping.key if grouping is not None else group_key
    runtimes = sorted({e["runtime"] for e in results})
    present_variants = {e["variant"] for e in results}
    variants = [v for v in models.VARIANTS if v in present_variants]
    totals: dict[str, Counter] = {rt: Counter() for rt in runtimes}
    cells: dict[tuple, dict[tuple, Cell]] = defaultdict(lambda: defaultdict(Cell))
    groups: dict[tuple, Group] = {}
    for record in results:
        runtime, kind = record["runtime"], record["kind"]
        totals[runtime][kind] += 1
        row = (record["op"], record["opset"], record["dtype"])
        cells[row][runtime, record["variant"]].counts[kind] += 1
        if kind not in DISCREPANCIES:
            continue
        key = key_of(record)
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(runtime, kind, record["op"], key.group, 0, record)
        group.count += 1
        group.records.append(record)
        group.dtypes.add(record["dtype"])
        group.variants.add(record["variant"])
        if elements(record) < elements(group.example):
            group.example = record
    ordered = sorted(groups.values(), key=lambda g: (SEVERITY.index(g.kind), -g.count, g.name))
    for number, group in enumerate(ordered, start=1):
        group.anchor = f"group-{number}"
        _fill(group)
    ops = sorted({e["op"] for e in results})
    dtypes_seen = sorted({e["dtype"] for e in results})
    kinds = [k for k in SEVERITY if any(totals[rt][k] for rt in runtimes)]
    matrix = [(row, cells[row]) for row in sorted(cells)]
    return Report(
        headers=[_masked(header) for header in headers],
        runtimes=runtimes,
        variants=variants,
        ops=ops,
        dtypes=dtypes_seen,
        kinds=kinds,
        totals=totals,
        matrix=matrix,
        groups=ordered,
        decision_rows=decision_rows(results, runtimes),
        findings=findings,
        total=len(results),
        records=results,
    )


def _fill(group: Group) -> None:
    group.differing = differing(group.example)
