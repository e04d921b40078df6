"""What the HTML report shows, computed from run folders (no HTML here).

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

import math
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from conformance.engine import credentials, models, records
from conformance.engine.groups import GroupKey, Signature, group_key
from conformance.engine.judge import DISCREPANCIES
from conformance.gate import baseline, verdict
from conformance.messages import first_line
from conformance.tables import decisions, explanations, outcomes

# Worst first: the colour of a matrix cell is its worst outcome.
SEVERITY = tuple(k.name for k in sorted(outcomes.OUTCOME_KINDS, key=lambda k: k.severity))
SHOWN_ELEMENTS = 64  # tensors above this are summarised, not dumped
SHOWN_STRING = 200  # characters of one string element shown
MESSAGE_WIDTH = 160  # characters of a group's example message or an entry's reason


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
    """Discrepancies of one group (:func:`conformance.engine.groups.group_key`):
    (runtime, kind, op, case-file id or generated input's signature)."""

    runtime: str
    kind: str
    op: str
    name: str  # the case-file id, or "generated: <signature>"
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
    reproducer: ReproducerView | None = None  # a value mismatch cut down (engine.reproduce)
    fuzz_class: dict | None = None  # the fuzz class of a generated group, with its links
    families: list[str] = field(default_factory=list)  # ids of the families it belongs to
    anchor: str = ""  # its id in the page ("group-3")

    @property
    def key(self) -> GroupKey:
        return GroupKey(self.runtime, self.kind, self.op, self.name)

    @property
    def baseline(self) -> str:
        """'new' when any result is outside the baseline, else 'known'."""
        return "new" if self.new else "known"


@dataclass
class ReproducerView:
    """The smallest input that still shows a group's value mismatch, as the run confirmed it."""

    data: Tensor
    indices: Tensor
    axis: int | None
    runs: int  # runs it took to confirm the cuts
    differing: list[dict]  # position, expected, actual


@dataclass
class Family:
    """Discrepancies one mechanism explains, on one runtime and kind: the
    results a baseline entry covers (its reason is the mechanism), or the new
    results (nothing explains them yet; the mechanism is the first message)."""

    id: str  # "f1", "f2"...: the report's filter value, in the order shown
    runtime: str
    kind: str
    op: str  # the ops, comma-separated
    mechanism: str  # one line
    where: str | None  # the baseline entry (file:line) of a known family
    count: int = 0  # results
    groups: int = 0
    # its smallest input: the record with the fewest elements among its own results
    # whose input the run kept (groups.json: each group's smallest), else among all
    example: dict | None = None
    data: Tensor | None = None  # the example's input, when the run kept it
    indices: Tensor | None = None

    @property
    def new(self) -> bool:
        return self.where is None


@dataclass
class DecisionRow:
    decision: decisions.Decision
    observed: dict[str, str]  # runtime -> what it did on inputs under this decision


@dataclass
class FuzzBug:
    """A bug of a fuzz campaign (findings.json ``bugs``, format 2): one root
    cause, with the classes it explains and its smallest reproducer."""

    id: str
    runtime: str
    kind: str
    op: str
    cause: str  # one line for a person
    mechanism: str  # how the campaign told it apart, in words (:func:`mechanism_text`)
    hits: int
    first_found_s: float | None
    dtypes: list[str]
    variants: list[str]
    shrunk_by: str | None  # the shard that shrank its reproducer; None: not shrunk yet
    store: str | None  # "new" or "held" by the regression store; None: no store
    classes: list[dict] = field(default_factory=list)  # findings.json class entries, with links
    reproducer: dict | None = None  # the class holding its smallest reproducer
    anchor: str = ""  # its id in the page ("bug-b-3f2a9c01d4e5")
    # Results of its classes the gate found new (no baseline entry covers
    # them); None: no gate spoke on them.
    new: int | None = None


@dataclass
class HeatCell:
    """One cell of the coverage heat map."""

    key: tuple[str, ...]  # its key in the findings.json table
    count: int
    meaningful: bool  # False: the spec makes it meaningless (shown hatched)
    level: int  # 0 (never reached) to HEAT_LEVELS, on a log scale of its table's counts

    @property
    def cold(self) -> bool:
        """Meaningful, and never reached."""
        return self.meaningful and not self.count


@dataclass
class OpCoverage:
    """An operator's part of the heat map: dtype rows by variant columns,
    then a row per other table (features, axis lengths, index classes)."""

    op: str
    variants: list[str]
    dtype_rows: list[tuple[str, list[HeatCell]]]
    rows: list[tuple[str, list[tuple[str, HeatCell]]]]  # (label, [(value, cell)])


@dataclass
class CoverageView:
    """What fuzz campaigns reached (findings.json ``coverage``, summed over runs)."""

    examples: int
    reached: int
    meaningful: int
    max_elements: list[int]  # the caps of the campaigns
    ops: list[OpCoverage]
    cold: list[str]  # the meaningful cells never reached, as text


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


def _by_severity(item) -> int:
    return SEVERITY.index(item[0])


# -- tensors --------------------------------------------------------------------------
def _element(value) -> str:
    if isinstance(value, list) and len(value) == 2:  # a complex element: [real, imaginary]
        return f"({value[0]}, {value[1]}j)"
    text = repr(value) if isinstance(value, str) else str(value)
    if len(text) > SHOWN_STRING:
        text = text[:SHOWN_STRING] + f"… ({len(text)} characters)"
    return text


def _leaves(values, rank: int, most: int) -> list:
    """The first ``most`` elements of a tensor's nested ``values`` in row-major
    order, each what lies ``rank`` lists deep (a complex element, a [real,
    imaginary] pair, is one), without trusting the nesting to fit the shape."""
    found: list = []
    todo = [(values, 0)]
    while todo and len(found) < most:
        value, depth = todo.pop()
        if isinstance(value, list) and depth < rank:
            todo.extend((item, depth + 1) for item in reversed(value[:most]))
        else:
            found.append(value)
    return found


def _tensor(content: dict) -> Tensor:
    """A tensor as the run kept it (conformance.engine.tensors) as text for a person."""
    shape = list(content.get("shape", []))
    size = math.prod(shape)
    if "values" not in content:
        return Tensor(content.get("dtype", "?"), shape, f"({size} elements, not kept)", True)
    values = _leaves(content["values"], len(shape), SHOWN_ELEMENTS) if size else []
    shown = [_element(v) for v in values]
    summarised = size > SHOWN_ELEMENTS
    if len(shape) <= 1 or summarised:
        body = "[" + ", ".join(shown) + (", …" if summarised else "") + "]"
        if len(shape) > 1:
            body = f"(flattened) {body}"
    else:
        row = math.prod(shape[1:]) or 1
        rows = [shown[i : i + row] for i in range(0, len(shown), row)]
        body = "\n".join("[" + ", ".join(r) + "]" for r in rows) or "[]"
    return Tensor(content.get("dtype", "?"), shape, body, summarised)


# -- the report -----------------------------------------------------------------------
def _node_verdicts(runs: list[records.RunFolder]) -> list:
    """The verdict per model node of the runs ``conformance model`` wrote (their nodes.json)."""
    import json

    from conformance.report import node_verdicts

    made = []
    for run in runs:
        path = run.folder / node_verdicts.NODES
        if not path.is_file():
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # the results stand without it; the report only lacks the node table
        made += node_verdicts.verdicts(document, run.records)
    return made


def from_runs(
    runs: list[records.RunFolder],
    report_path: Path,
    known: Path | baseline.BaselineFolders | None = None,
) -> Report:
    """The report of these runs. Discrepancy groups are marked known or new
    as each run's gate decided (gate.json), or, with ``known``, by holding
    the runs against that baseline folder now."""
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
    )
    report.bugs, report.unassigned = fuzz_bugs(per_run)
    report.coverage = coverage_view([f.get("coverage") for f, _ in per_run])
    inputs = {
        GroupKey(g["runtime"], g["kind"], g["op"], g["group"]): g
        for run in runs
        for g in (run.groups or {}).get("groups", [])
    }
    classes = {_class_key(found): found for found in findings}
    for group in report.groups:
        held = inputs.get(group.key)
        if held and held.get("case_id") == group.example.get("case_id"):
            group.data, group.indices = _tensor(held["data"]), _tensor(held["indices"])
            if "reproducer" in held:
                group.reproducer = _reproducer(held["reproducer"])
        group.fuzz_class = classes.get(group.key)
    report.nodes = _node_verdicts(runs)
    report.unfinished = [why for run in runs if (why := run.unfinished())]
    report.stale_gates = [run.stale_gate for run in runs if run.stale_gate]
    report.harness_errors = sum((run.summary or {}).get("harness_errors", 0) for run in runs)
    report.case_problems = [p for run in runs for p in (run.summary or {}).get("case_problems", [])]
    if known is not None:
        try:
            decided = verdict.decide(runs, known)
        except verdict.GateError as error:
            report.baseline_error = f"the baseline in {known} does not load: {error.problems[-1]}"
            report.families = _families(report)
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
    report.families = _families(report)
    return report


def _mark_bugs(report: Report) -> None:
    """Each bug's new results: those of its classes' groups the gate found
    new. The new bugs go first: they are what needs triage."""
    groups = {group.key: group for group in report.groups}
    for bug in report.bugs:
        keys = {_class_key(found) for found in bug.classes if found.get("signature")}
        bug.new = sum(groups[key].new for key in keys if key in groups)
    report.bugs.sort(key=lambda bug: not bug.new)  # stable: the order within each stays


# -- fuzz bugs and coverage (findings.json format 2) --------------------------------------
def _store(status: str | None) -> str | None:
    """A bug's ``store`` status; ``known`` is how findings of earlier versions spell ``held``."""
    return "held" if status == "known" else status


def mechanism_text(mechanism: dict | None) -> str:
    """How the campaign told a bug apart (its ``mechanism``), in words."""
    mechanism = mechanism or {}
    by = mechanism.get("by")
    features = ", ".join(mechanism.get("features") or []) or "no feature"
    trigger = mechanism.get("trigger") or features
    if by == "signal" and trigger.startswith("panic"):
        return f"killed by {mechanism.get('signal', 'a signal')} after a Rust {trigger}"
    if by == "signal":
        return f"killed by {mechanism.get('signal', 'a signal')} on inputs with {trigger}"
    if by == "dtype":
        return f"refuses valid inputs of data type {mechanism.get('dtype', '?')}"
    if by in ("explanations", "bug_models"):  # "bug_models", "models": earlier findings
        named = ", ".join(mechanism.get("explanations") or mechanism.get("models") or [])
        return f"outputs explained exactly by the explanation (or its family) {named}"
    if by == "unexplained":
        return f"wrong values no explanation fits, on inputs with {features}"
    if by == "message":
        return f"refused with: {mechanism.get('message', '')}"
    if by == "clause":
        return f"accepts inputs that break {mechanism.get('clause', '?')}"
    if by == "trigger":  # a hang or a wrong dtype or shape, by its trigger (fuzz.bugs)
        return f"on inputs with {trigger}"
    return ", ".join(f"{k}: {v}" for k, v in mechanism.items()) or "not said"


def fuzz_bugs(per_run: list[tuple[dict, list[dict]]]) -> tuple[list[FuzzBug], list[dict]]:
    """The bugs of these findings.json contents (each with its classes, links
    added), and the classes no bug lists. A bug found by several runs (shards
    of one campaign: the same id) is one, its counts summed. Ordered by
    runtime, then kind (worst first), op and most hits."""
    bugs: dict[str, FuzzBug] = {}
    unassigned = []
    for content, classes in per_run:
        numbered = {found.get("number"): found for found in classes}
        listed: set[int] = set()  # the classes' numbers
        for entry in content.get("bugs") or []:
            mine = [numbered[n] for n in entry.get("classes") or [] if n in numbered]
            listed.update(entry.get("classes") or [])
            reproducer = numbered.get(entry.get("reproducer"))
            bug = bugs.get(entry.get("id"))
            if bug is None:
                bug = bugs[entry.get("id")] = FuzzBug(
                    id=str(entry.get("id")),
                    runtime=str(entry.get("runtime")),
                    kind=str(entry.get("kind")),
                    op=str(entry.get("op")),
                    cause=first_line(entry.get("cause"), 300),
                    mechanism=mechanism_text(entry.get("mechanism")),
                    hits=0,
                    first_found_s=entry.get("first_found_s"),
                    dtypes=[],
                    variants=[],
                    shrunk_by=entry.get("shrunk_by"),
                    store=_store(entry.get("store")),
                    reproducer=reproducer,
                    anchor=f"bug-{entry.get('id')}",
                )
            else:  # another shard's view of it
                first = entry.get("first_found_s")
                if first is not None and (bug.first_found_s is None or first < bug.first_found_s):
                    bug.first_found_s = first
                bug.shrunk_by = bug.shrunk_by or entry.get("shrunk_by")
                bug.store = bug.store or _store(entry.get("store"))
                if bug.reproducer is None or (
                    reproducer is not None and _elements(reproducer) < _elements(bug.reproducer)
                ):
                    bug.reproducer = reproducer
            bug.hits += int(entry.get("hits") or 0)
            bug.dtypes = sorted({*bug.dtypes, *(entry.get("dtypes") or [])})
            bug.variants = sorted({*bug.variants, *(entry.get("variants") or [])})
            bug.classes += mine
        unassigned += [found for found in classes if found.get("number") not in listed]
    ordered = sorted(
        bugs.values(),
        key=lambda b: (b.runtime, _severity(b.kind), b.op, -b.hits, b.id),
    )
    return ordered, unassigned


def _severity(kind: str) -> int:
    return SEVERITY.index(kind) if kind in SEVERITY else len(SEVERITY)


def _elements(found: dict) -> int:
    case = found.get("case") or {}
    shapes = [(case.get(part) or {}).get("shape") for part in ("data", "indices")]
    return sum(math.prod(shape) for shape in shapes if shape is not None)


HEAT_LEVELS = 5  # shades of a reached cell
# The heat map's rows beside the dtype grid: table -> (label, key part).
_COVERAGE_ROWS = {
    "features": ("features", "feature"),
    "axis_lengths": ("axis length", "axis_length"),
    "index_classes": ("index class", "index_class"),
}


def _level(count: int, most: int) -> int:
    """A count's shade: 0 for none, else 1 to HEAT_LEVELS on a log scale up
    to ``most`` (a cell reached once is pale, the most reached the darkest)."""
    if count <= 0:
        return 0
    if most <= 1:
        return HEAT_LEVELS
    return max(
        1, min(HEAT_LEVELS, math.ceil(HEAT_LEVELS * math.log(count + 1) / math.log(most + 1)))
    )


def coverage_view(coverages: list[dict | None]) -> CoverageView | None:
    """The heat map of the campaigns' coverage (findings.json ``coverage``,
    :mod:`conformance.fuzz.coverage`'s format): counts summed over runs, a cell
    meaningful when any run says so. None when no run has coverage."""
    held = [c for c in coverages if isinstance(c, dict) and isinstance(c.get("tables"), dict)]
    if not held:
        return None
    counts: dict[str, Counter] = defaultdict(Counter)
    meaningful: dict[str, dict] = defaultdict(dict)  # table -> its meaningful keys, in order
    values: dict[str, dict[str, list]] = defaultdict(dict)
    for content in held:
        for table, part in content["tables"].items():
            for key, known in (part.get("values") or {}).items():
                seen = values[table].setdefault(key, [])
                seen += [str(v) for v in known if str(v) not in seen]
            for cell in part.get("cells") or []:
                key = tuple(map(str, cell.get("key") or ()))
                counts[table][key] += int(cell.get("count") or 0)
                if cell.get("meaningful"):
                    meaningful[table][key] = True

    def cells(table: str, keys: list[tuple]) -> list[HeatCell]:
        most = max(counts[table].values(), default=0)
        return [
            HeatCell(
                key, counts[table][key], key in meaningful[table], _level(counts[table][key], most)
            )
            for key in keys
        ]

    ops = []
    grid = values.get("dtypes", {})
    all_ops = list(
        dict.fromkeys(
            [*grid.get("op", []), *(v for table in values.values() for v in table.get("op", []))]
        )
    )
    for op in all_ops:
        variants = list(grid.get("variant", []))
        dtype_rows = [
            (dtype, cells("dtypes", [(op, variant, dtype) for variant in variants]))
            for dtype in grid.get("dtype", [])
        ]
        rows = []
        for table, (label, part) in _COVERAGE_ROWS.items():
            names = values.get(table, {}).get(part, [])
            if names:
                rows.append(
                    (label, list(zip(names, cells(table, [(op, n) for n in names]), strict=True)))
                )
        ops.append(OpCoverage(op, variants, dtype_rows, rows))
    cold = [
        " ".join(key)
        for table, keys in meaningful.items()
        for key in keys
        if not counts[table][key]
    ]
    return CoverageView(
        examples=sum(int(c.get("examples") or 0) for c in held),
        reached=sum(1 for table, keys in meaningful.items() for key in keys if counts[table][key]),
        meaningful=sum(len(keys) for keys in meaningful.values()),
        max_elements=sorted({c["max_elements"] for c in held if "max_elements" in c}),
        ops=ops,
        cold=cold,
    )


def _class_key(found: dict) -> GroupKey:
    """The discrepancy group a fuzz class's results fall in."""
    return Signature.from_json(found["signature"]).key


def _reproducer(held: dict) -> ReproducerView:
    return ReproducerView(
        data=_tensor(held["data"]),
        indices=_tensor(held["indices"]),
        axis=held.get("axis"),
        runs=held.get("runs", 0),
        differing=[
            {"position": p, "expected": e, "actual": a}
            for p, e, a in zip(
                held.get("positions", []),
                held.get("expected_values", []),
                held.get("actual_values", []),
                strict=False,
            )
        ],
    )


def _families(report: Report) -> list[Family]:
    """The groups' results by mechanism: per runtime and kind, one family per
    covering baseline entry and one of the new results (across ops). Without
    a gate verdict, one family per runtime, kind and op."""
    found: dict[tuple, tuple[Family, list[Group]]] = {}
    ranks: dict[tuple, tuple] = {}  # family key -> the rank of its example

    def rank(group: Group, record: dict) -> tuple:
        """Inputs the run kept first, then the fewest elements."""
        return (record is not group.example or group.data is None, _size(record))

    def add(group: Group, where: str | None, mechanism: str, count: int, mine: list) -> None:
        """``count`` results of ``group`` in the family, ``mine`` those known to be:
        split by the explanation that fits each result (a group's results may
        each fit another: int64 data keeps its low 32 bits here, saturates there)."""
        by_fit: dict[str | None, list] = defaultdict(list)
        for record in mine:
            by_fit[_fit(record)].append(record)
        if len(by_fit) > 1:
            for fit, part in sorted(by_fit.items(), key=lambda item: str(item[0])):
                _add(group, where, mechanism, len(part), part, fit)
            return
        _add(group, where, mechanism, count, mine, next(iter(by_fit), None))

    def _add(group, where, mechanism, count, mine, fit) -> None:
        key = (group.runtime, group.kind, where, None if report.baseline else group.op, fit)
        if fit is not None:
            explanation = explanations.BY_NAME[fit]
            mechanism = f"{mechanism} ({fit}: {explanation.description})"
        if key not in found:
            found[key] = (Family("", group.runtime, group.kind, "", mechanism, where), [])
        family, members = found[key]
        family.count += count
        family.groups += 1
        if group.op not in family.op.split(", "):
            family.op = ", ".join(sorted(filter(None, [*family.op.split(", "), group.op])))
        smallest = min(mine or group.records, key=lambda record: rank(group, record))
        if key not in ranks or rank(group, smallest) < ranks[key]:
            ranks[key] = rank(group, smallest)
            kept = smallest is group.example
            family.example = smallest
            family.data, family.indices = (group.data, group.indices) if kept else (None, None)
        members.append(group)

    for group in report.groups:
        message = first_line(group.example.get("message"), MESSAGE_WIDTH)
        if not report.baseline:
            add(group, None, message, group.count, group.records)
            continue
        # each result with the entry covering it (:func:`_mark`): a group several
        # entries cover is in each of their families, with the results each covers
        by_entry: dict[str | None, list[dict]] = defaultdict(list)
        for record in group.records:
            cover = report.known_by.get(id(record))
            by_entry[cover["where"] if cover else None].append(record)
        new = by_entry.pop(None, [])
        if group.new:
            add(group, None, message, group.new, new)
        known = group.count - group.new
        if known and sum(map(len, by_entry.values())) != known:
            # gate.json marks that do not say which result is whose (merged runs)
            first = next(iter(group.known))
            reason = first_line(group.known[first].get("reason"), MESSAGE_WIDTH)
            add(group, first, reason, known, [])
        elif known:
            for where, mine in sorted(by_entry.items(), key=lambda item: (-len(item[1]), item[0])):
                reason = first_line(group.known[where].get("reason"), MESSAGE_WIDTH)
                add(group, where, reason, len(mine), mine)
    # New first, then by runtime and size: what a reader must act on leads.
    ordered = sorted(found.values(), key=lambda f: (not f[0].new, f[0].runtime, -f[0].count))
    for number, (family, members) in enumerate(ordered, start=1):
        family.id = f"f{number}"
        for group in members:
            group.families.append(family.id)
    return [family for family, _ in ordered]


def _fit(record: dict) -> str | None:
    """The first explanation (in the table's order) that fits a result, if any."""
    fitting = [n for n in record.get("explained_by") or () if n in explanations.BY_NAME]
    if not fitting:
        return None
    return min(fitting, key=lambda n: explanations.EXPLANATIONS.index(explanations.BY_NAME[n]))


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


def build(headers: list[dict], results: list[dict], findings: list[dict]) -> Report:
    """The report of these records (inputs and gate marks are added by :func:`from_runs`)."""
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
        key = group_key(record)
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(runtime, kind, record["op"], key.group, 0, record)
        group.count += 1
        group.records.append(record)
        group.dtypes.add(record["dtype"])
        group.variants.add(record["variant"])
        if _size(record) < _size(group.example):
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
        decision_rows=_decision_rows(results, runtimes),
        findings=findings,
        total=len(results),
        records=results,
    )


def _size(record: dict) -> int:
    return math.prod(record["data_shape"]) + math.prod(record["indices_shape"])


def _fill(group: Group) -> None:
    group.differing = differing(group.example)


def differing(record: dict) -> list[dict]:
    """The first differing elements a value_mismatch record lists: position, expected, actual."""
    return [
        {"position": p, "expected": e, "actual": a}
        for p, e, a in zip(
            record.get("positions") or [],
            record.get("expected_values", []),
            record.get("actual_values", []),
            strict=False,
        )
    ]


def _decision_rows(results: list[dict], runtimes: list[str]) -> list[DecisionRow]:
    """Each decision with what each runtime did on inputs it governs: inputs
    that break its clause (refused or not), and inputs under it when disputed."""
    seen: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for record in results:
        expected = record.get("expected") or {}
        ids = set(record.get("disputed") or ())
        if "violation" in expected:
            ids.add(expected["violation"])
        for decision_id in ids:
            seen[decision_id][record["runtime"]][record["kind"]] += 1
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
