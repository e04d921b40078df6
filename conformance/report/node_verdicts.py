"""The verdict per model node of ``conformance model``: built from a run
folder's ``nodes.json`` and its results, and what the terminal shows of it.

Per model: the nodes found (judged and not), per target how many compute
as the oracle does, counted once per unique case group and weighted by how
often such a node occurs, and for each discrepancy its mechanism (as the
fuzzer names bugs: :func:`conformance.fuzz.bugs.cause_of`), the nodes it
hits by name and its smallest input.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from conformance.engine.judge import DISCREPANCIES, Outcome
from conformance.fuzz.bugs import cause_of
from conformance.report.terminal.escape import safe

NAMES_SHOWN = 8  # node names listed per discrepancy
NODES = "nodes.json"  # beside the results of a conformance model run
# the case id of a node case made of captured tensors (conformance.graphs.capture)
CAPTURED = re.compile(r"-captured\d+\.op\d+\.")


@dataclass
class Mechanism:
    runtime: str
    kind: str
    text: str
    nodes: list[str] = field(default_factory=list)
    occurrences: int = 0
    smallest: dict | None = None  # the record of the smallest input


@dataclass
class TargetVerdict:
    runtime: str
    unique_ok: int = 0
    unique: int = 0
    weighted_ok: int = 0
    captured: int = 0  # nodes with cases of the tensors the model was fed (--inputs)
    captured_ok: int = 0  # of them, those whose captured cases all conform
    weighted: int = 0


@dataclass
class ModelVerdict:
    model: str
    found: int
    judged: int
    unique: int  # case groups
    cases: int
    targets: list[TargetVerdict]
    mechanisms: list[Mechanism]
    not_judged: list[tuple[str, str]]  # (node label, reason)


def _label(entry: dict) -> str:
    return f"{entry['graph']}/{entry['node']}" if entry["graph"] else entry["node"]


def mechanism_of(record: dict) -> str:
    """A discrepancy's mechanism in words, as the fuzzer names its bugs."""
    violation = (record.get("expected") or {}).get("violation")
    outcome = Outcome(record["kind"], record.get("message") or "", record)
    cause = cause_of(
        record["runtime"],
        record["op"],
        outcome,
        tuple(record.get("features") or ()),
        violation,
        record.get("dtype", ""),
    )
    return cause.text


def verdicts(document: dict, records: list[dict]) -> list[ModelVerdict]:
    """One verdict per model of nodes.json, from the run's records."""
    by_case: dict[str, list[dict]] = defaultdict(list)
    runtimes: list[str] = []
    for record in records:
        by_case[record["case_id"]].append(record)
        if record["runtime"] not in runtimes:
            runtimes.append(record["runtime"])
    entries_by_model: dict[str, list[dict]] = defaultdict(list)
    for entry in document["nodes"]:
        entries_by_model[entry["model"]].append(entry)
    made = []
    for model, entries in entries_by_model.items():
        judged = [e for e in entries if e["not_judged"] is None and e["cases"]]
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for entry in judged:
            groups[tuple(entry["cases"])].append(entry)
        targets = []
        mechanisms: dict[tuple, Mechanism] = {}
        for runtime in runtimes:
            verdict = TargetVerdict(runtime, unique=len(groups), weighted=len(judged))
            for ids, members in groups.items():
                bad = [
                    r
                    for i in ids
                    for r in by_case.get(i, ())
                    if r["runtime"] == runtime and r["kind"] in DISCREPANCIES
                ]
                captured = [i for i in ids if CAPTURED.search(i)]
                if captured:
                    verdict.captured += len(members)
                    if not any(CAPTURED.search(r["case_id"]) for r in bad):
                        verdict.captured_ok += len(members)
                if not bad:
                    verdict.unique_ok += 1
                    verdict.weighted_ok += len(members)
                    continue
                seen: set[tuple] = set()
                for record in bad:
                    key = (runtime, record["kind"], mechanism_of(record))
                    found = mechanisms.setdefault(key, Mechanism(*key))
                    if key not in seen:
                        seen.add(key)
                        found.occurrences += len(members)
                        found.nodes += [_label(m) for m in members]
                    size = _size(record)
                    if found.smallest is None or size < _size(found.smallest):
                        found.smallest = record
            targets.append(verdict)
        cases = {i for ids in groups for i in ids}
        made.append(
            ModelVerdict(
                model,
                len(entries),
                len(judged),
                len(groups),
                len(cases),
                targets,
                sorted(mechanisms.values(), key=lambda m: (m.runtime, -m.occurrences, m.text)),
                [(_label(e), e["not_judged"]) for e in entries if e["not_judged"] is not None],
            )
        )
    return made


def _size(record: dict) -> int:
    count = 1
    for shape in (record.get("data_shape") or [], record.get("indices_shape") or []):
        for dim in shape:
            count *= max(dim, 1)
    return sum(record.get("data_shape") or []) + count


# -- terminal ---------------------------------------------------------------------------
def found_lines(files) -> list[str]:
    """What was read, before anything runs: per model its nodes, or that it has none."""
    lines = []
    for found in files:
        sites = found.sites
        if not sites:
            lines.append(safe(f"{found.path}: no Gather or GatherElements node"))
            continue
        ours = sum(1 for s in sites if s.opset is not None)
        graphs = len({s.graph for s in sites})
        lines.append(
            safe(
                f"{found.path}: opset {found.opset}, {len(sites)} Gather/GatherElements node(s) "
                f"({ours} of the ONNX domain) in {graphs} graph(s)"
            )
        )
    return lines


def nothing_judged_line(path) -> str:
    return safe(f"no node can be judged (each says why in {path})")


def table_lines(document: dict, records: list[dict]) -> list[str]:
    """Per model: its verdict first, then the table and the discrepancies."""
    lines: list[str] = []
    for verdict in verdicts(document, records):
        lines += model_lines(verdict)
    return lines


def model_lines(verdict: ModelVerdict) -> list[str]:
    wrong = [t for t in verdict.targets if t.unique_ok < t.unique]
    right = [t.runtime for t in verdict.targets if t.unique_ok == t.unique]
    head = f"model {verdict.model}: "
    if not verdict.judged:
        said = "no node judged"
    elif not wrong:
        said = "every target computes every judged node as the oracle does"
    else:
        said = "; ".join(
            f"{t.runtime} differs from the oracle on {t.weighted - t.weighted_ok} of "
            f"{t.weighted} nodes"
            for t in wrong
        ) + (f"; as the oracle: {', '.join(right)}" if right else "")
    lines = [safe(head + said)]
    lines.append(
        safe(
            f"  {verdict.found} node(s) found, {verdict.judged} judged as {verdict.unique} unique "
            f"node case group(s) ({verdict.cases} cases), {len(verdict.not_judged)} not judged"
        )
    )
    if verdict.targets and verdict.judged:
        width = max(len(t.runtime) for t in verdict.targets) + 2
        fed = any(t.captured for t in verdict.targets)
        head = f"  {'target':<{width}}{'as the oracle (unique)':<26}{'weighted by occurrence':<26}"
        lines.append((head + ("on the inputs it was fed" if fed else "")).rstrip())
        for t in verdict.targets:
            row = f"  {t.runtime:<{width}}{f'{t.unique_ok}/{t.unique}':<26}"
            row += f"{f'{t.weighted_ok}/{t.weighted}':<26}"
            row += f"{t.captured_ok}/{t.captured}" if fed else ""
            lines.append(safe(row.rstrip()))
    for m in verdict.mechanisms:
        names = ", ".join(dict.fromkeys(m.nodes[:NAMES_SHOWN]))
        more = f" and {len(m.nodes) - NAMES_SHOWN} more" if len(m.nodes) > NAMES_SHOWN else ""
        small = m.smallest or {}
        lines.append(
            safe(f"  {m.runtime} {m.kind}: {m.text}; {m.occurrences} node(s): {names}{more}")
        )
        lines.append(
            safe(
                f"    smallest input: {small.get('case_id')} ({small.get('variant')}): data "
                f"{small.get('dtype')}{small.get('data_shape')}, indices "
                f"{small.get('indices_dtype')}{small.get('indices_shape')}, "
                f"axis {small.get('axis')}"
            )
        )
    for label, reason in verdict.not_judged[:20]:
        lines.append(safe(f"  not judged: {label}: {reason}"))
    if len(verdict.not_judged) > 20:
        lines.append(f"  ... and {len(verdict.not_judged) - 20} more not judged (nodes.json)")
    return lines
