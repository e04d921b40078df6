"""``conformance model``'s verdict as the page shows it: one table per model
that a deployer scans ("Your model, as built and as run").

Built from the typed verdict (:mod:`conformance.report.node_verdicts`:
``ModelVerdict``, ``TargetVerdict``), ``nodes.json`` and the run's records,
never from the terminal's lines: one row per target (its verdict word as a
badge, nodes exact as built and in situ, the outputs' difference and the
precise profile's, what to do), then the inputs that break the spec, each as
the input's property with what every target did with it, then the what-if
results, which never set the verdict. Fields a later verdict adds are read
with a default, so an older or newer ``nodes.json`` still gives the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from conformance.messages import first_line
from conformance.report import node_verdicts
from conformance.report.node_verdicts import ModelVerdict, TargetVerdict
from conformance.tables import explanations
from conformance.tables.operators import OPERATORS

MESSAGE_CHARS = 240  # a refusal's message in a cell: its informative head, whole on hover
TODO_SHOWN = 4  # what-to-do lines per target row
NAMES_SHOWN = 3  # node names per what-if row; the nodes' section lists more

# The badge's tone per verdict word (CSS ``badge-<tone>``); a word not listed
# takes the tone of its first word ("safe as built; ..." is good), else "note".
TONES = {
    "safe": "good",
    "differs": "bad",
    "cannot load": "bad",
    "cannot run": "bad",
    "crashed": "bad",
    "timed out": "bad",
}
# What a target did with an input the spec forbids, by its record's kind.
DID = {
    "both_rejected": "refused it, as the spec requires",
    "accepted_invalid": "accepted it and returned an output",
    "crash": "crashed on it",
    "timeout": "did not finish on it",
    "harness_unsupported": "not judged: the harness cannot carry it",
}
# What to do about an input that breaks a clause; {what}: the input and its bounds.
CLAUSE_TODO = {
    "index-out-of-range": "validate {what} before inference (e.g. token ids against the "
    "vocabulary): the spec forbids these values and no runtime is bound to compute them",
}
OTHER_TODO = "fix the input {what}: the spec forbids it, whatever a runtime does with it"
# "index 4 at indices[1]" (an index tuple's: "index 2 (tuple 1, component 1)"): the
# element the oracle named, in a record's or in situ's text
ELEMENT = re.compile(r"index (-?\d+) (?:at (indices\[[^\]]*\])|\((tuple \d+, component \d+)\))")


@dataclass(frozen=True)
class Badge:
    word: str
    tone: str  # good | bad | note | input | whatif (CSS badge-<tone>)


@dataclass
class TargetRow:
    target: str
    badge: Badge
    as_built: str  # "1 of 2 nodes"
    in_situ: str  # "2 of 2 exact", "not judged: why", "not fed (give --inputs)"
    outputs: str  # the whole model's outputs against the comparison's reference
    precise: list[str] = field(default_factory=list)  # each precise profile's figure
    todo: list[str] = field(default_factory=list)
    message: str = ""  # the whole model's message, cut (whole in ``message_whole``)
    message_whole: str = ""
    refused: bool = False  # the whole model did not run (or load): the message says why


@dataclass
class InputRow:
    """A fed input that breaks the spec at a node: the input's property."""

    input: str  # "ids (graph input)"
    element: str  # "index 4 at indices[1]" when a target or in situ named it
    node: str
    clause: str
    did: list[tuple[str, str]]  # (target, what it did with it)
    todo: str


@dataclass
class WhatIfRow:
    target: str
    kind: str
    mechanism: str
    nodes: list[str]  # the first NAMES_SHOWN nodes it hits
    count: int  # every node it hits
    todo: str
    about: str = ""


@dataclass
class ModelTable:
    model: str
    counts: str  # "3 node(s) found, 2 judged, 1 not judged"
    compared: str  # what the outputs were compared with, in words
    targets: list[TargetRow]
    inputs: list[InputRow]
    what_ifs: list[WhatIfRow]


def tables(document: dict, records: list[dict], made: list[ModelVerdict]) -> list[ModelTable]:
    """One table per model of ``made`` (the verdicts of ``document`` and ``records``)."""
    entries: dict[str, list[dict]] = {}
    for entry in document.get("nodes") or ():
        entries.setdefault(entry["model"], []).append(entry)
    return [_table(verdict, entries.get(verdict.model, []), records) for verdict in made]


def _table(verdict: ModelVerdict, entries: list[dict], records: list[dict]) -> ModelTable:
    inputs = input_rows(entries, records)
    broken = {row.node for row in inputs}
    counts = (
        f"{verdict.found} node(s) found, {verdict.judged} judged, "
        f"{len(verdict.not_judged)} not judged"
    )
    return ModelTable(
        model=verdict.model,
        counts=counts,
        compared=compared_with(verdict),
        targets=[target_row(verdict, t, entries, broken) for t in verdict.targets],
        inputs=inputs,
        what_ifs=what_if_rows(verdict),
    )


def words_cut(line: str, limit: int) -> str:
    """``line`` cut to ``limit`` characters between words (a page never shows half a
    word), ``…`` when cut."""
    if len(line) <= limit:
        return line
    head = line[: limit - 1]
    return (head.rsplit(" ", 1)[0] if " " in head else head).rstrip(" ,;:") + " …"


# -- a row per target -------------------------------------------------------------------
def badge_of(word: str) -> Badge:
    tone = TONES.get(word) or TONES.get(re.split(r"[\s:;,]", word, maxsplit=1)[0], "note")
    return Badge(word, tone)


def target_row(
    verdict: ModelVerdict, target: TargetVerdict, entries: list[dict], broken: set[str]
) -> TargetRow:
    whole = target.whole or {}
    # what the whole model's run said: a refusal's cause, or a note on a model that
    # ran (how it ran); "loads" says only that it was run on zeros
    refused = whole.get("status") not in (None, "ran", "loads")
    message = str(whole.get("message") or "") if whole.get("status") != "loads" else ""
    differing = len(set(target.differing))
    return TargetRow(
        target=target.runtime,
        badge=badge_of(target.status),
        as_built=f"{verdict.judged - differing} of {verdict.judged} exact",
        in_situ=in_situ_of(verdict, target, entries),
        outputs=outputs_of(verdict, target),
        precise=precise_of(verdict, target),
        todo=todo_of(verdict, target, broken),
        message=words_cut(first_line(message), MESSAGE_CHARS),
        message_whole=message,
        refused=refused,
    )


def in_situ_of(verdict: ModelVerdict, target: TargetVerdict, entries: list[dict]) -> str:
    """How many nodes were judged inside the whole model, and why the others were not."""
    if not verdict.fed:
        return "not run: give --inputs"
    exact = target.in_situ.get("exact", 0)
    judged = exact + target.in_situ.get("differs", 0)
    others = [f"{n} {word}" for word, n in sorted(target.in_situ.items()) if word != "exact"]
    said = f"{exact} of {verdict.judged} exact" + (f" ({', '.join(others)})" if others else "")
    if judged:
        return said
    why = next(
        (
            situ["why"]
            for e in entries
            if (situ := (e.get("in_situ") or {}).get(target.runtime)) and situ.get("why")
        ),
        "",
    )
    return f"not judged in situ: {why}" if why else said


def compared_with(verdict: ModelVerdict) -> str:
    whole = verdict.whole or {}
    if not whole:  # node cases run on their own (run --cases of saved cases)
        return ""
    if whole.get("skipped"):
        return f"whole model not run: {whole['skipped']}"
    if not verdict.fed:
        return "the whole model was loaded on each target; give --inputs to run it"
    ran = [name for name, t in (whole.get("targets") or {}).items() if t.get("status") == "ran"]
    reference = whole.get("compared_with")
    if len(ran) < 2:
        return f"only {ran[0]} ran the whole model: its outputs are compared with nothing" if ran \
            else "no target ran the whole model"  # fmt: skip
    return f"outputs of {', '.join(ran)} compared with {reference}'s"


def outputs_of(verdict: ModelVerdict, target: TargetVerdict) -> str:
    """The target's outputs against the comparison's reference, as measured."""
    whole = verdict.whole or {}
    status = (target.whole or {}).get("status", "")
    if not verdict.fed or not whole or whole.get("skipped"):
        return "not run"
    if status != "ran":
        return f"none: {status or 'not run'}"
    reference = whole.get("compared_with")
    ran = [t for t in (whole.get("targets") or {}).values() if t.get("status") == "ran"]
    if len(ran) < 2:
        return "the only target that ran: nothing to compare"
    if target.runtime == reference:
        return "the reference of the comparison"
    found = _difference(whole, target.runtime)
    if found is None:
        return f"bit for bit as {reference}"
    return f"{_num(_largest(found['outputs']))} from {reference}"


def precise_of(verdict: ModelVerdict, target: TargetVerdict) -> list[str]:
    """What each precise profile's rerun measured, for a target whose outputs differ."""
    found = _difference(verdict.whole or {}, target.runtime)
    said = []
    for rerun in (found or {}).get("reruns") or ():
        if rerun.get("status") != "ran":
            said.append(f"{rerun['target']}: {rerun.get('status')}")
        elif not any(d.get("differs") for d in rerun.get("outputs") or ()):
            said.append(f"{rerun['target']}: bit for bit")
        else:
            said.append(f"{rerun['target']}: {_num(_largest(rerun.get('outputs') or []))}")
    return said


def _difference(whole: dict, runtime: str) -> dict | None:
    return next((d for d in whole.get("differences") or () if d.get("target") == runtime), None)


def _largest(outputs: list[dict]) -> float | None:
    gaps = [d["max_abs"] for d in outputs if d.get("max_abs") is not None]
    return max(gaps) if gaps else None


def _num(value: float | None) -> str:
    return "a difference" if value is None else f"{value:.3g}"


def todo_of(verdict: ModelVerdict, target: TargetVerdict, broken: set[str]) -> list[str]:
    """What to do on this target: each as-built mechanism's workaround, each in-situ
    difference's; a node whose fed input breaks the spec points at the input's row."""
    todo: list[str] = []
    if broken and (target.whole or {}).get("status") not in (None, "ran", "loads"):
        todo.append("see the inputs that break the spec, above")
    for m in verdict.mechanisms:
        if m.runtime == target.runtime and m.as_built:
            todo.append(f"{m.text}: {m.workaround or 'see docs/models.md'}")
    for label, mechanism in target.in_situ_differing:
        if label in broken:
            todo.append(f"{label}: its fed input breaks the spec (see the input's row)")
            continue
        found = explanations.BY_NAME.get(mechanism)
        todo.append(
            f"{label}: {found.workaround}"
            if found is not None and found.workaround
            else f"{label}: {mechanism}; report it upstream with the model and inputs"
        )
    todo = list(dict.fromkeys(todo))
    if len(todo) > TODO_SHOWN:
        todo = [*todo[:TODO_SHOWN], f"and {len(todo) - TODO_SHOWN} more (the nodes, below)"]
    return todo or (["nothing"] if badge_of(target.status).tone == "good" else [])


# -- the inputs that break the spec ---------------------------------------------------
def input_rows(entries: list[dict], records: list[dict]) -> list[InputRow]:
    """Each node whose captured (--inputs) case the oracle refuses: the input that
    feeds it, the element, the clause, and what every target did with it. Derived
    from nodes.json and the records: a captured case whose expectation is a
    violation (``expected.violation``)."""
    rows = []
    for entry in entries:
        mine = [
            r
            for r in records
            if r["case_id"] in entry.get("cases", ())
            and node_verdicts.CAPTURED.search(r["case_id"])
            and (r.get("expected") or {}).get("violation")
        ]
        if mine:
            rows.append(_input_row(entry, mine))
    return rows


def _input_row(entry: dict, mine: list[dict]) -> InputRow:
    built = [r for r in mine if node_verdicts.as_built_record(entry, r)] or mine
    clause = built[0]["expected"]["violation"]
    did: dict[str, str] = {}
    for record in built:
        said = DID.get(record["kind"], record["kind"])
        about = node_verdicts.about_of(record)
        did.setdefault(record["runtime"], f"{said} ({about})" if about else said)
    texts = [r.get("message") or "" for r in built]
    texts += [s.get("mechanism", "") for s in (entry.get("in_situ") or {}).values()]
    element = _element(texts)
    source = (entry.get("sources") or {}).get("indices") or {}
    what = _what(source, built[0], clause)
    template = CLAUSE_TODO.get(clause, OTHER_TODO)
    return InputRow(
        input=_input_name(source),
        element=element,
        node=f"{entry['graph']}/{entry['node']}" if entry.get("graph") else entry["node"],
        clause=clause,
        did=sorted(did.items()),
        todo=template.format(what=what),
    )


def _element(texts: list[str]) -> str:
    """The element that breaks the clause, as the oracle named it ("indices[1] = 4")."""
    for text in texts:
        found = ELEMENT.search(text)
        if found:
            return f"{found[2] or 'indices ' + found[3]} = {found[1]}"
    return ""


def _input_name(source: dict) -> str:
    name = source.get("name") or "the indices"
    origin = source.get("from")
    if origin == "input":
        return f"{name} (graph input)"
    if origin == "producer":
        return f"{name} (computed by {source.get('op') or 'a node'})"
    return name


def _what(source: dict, record: dict, clause: str) -> str:
    """The input and, for indices out of range, the range the spec allows."""
    name = source.get("name") or "the indices"
    shape = tuple(record.get("data_shape") or ())
    row = OPERATORS.get(record.get("op") or "")
    sizes = None
    if row is not None and shape and clause == "index-out-of-range":
        sizes = row.index_sizes(shape, tuple(record.get("indices_shape") or ()), record.get("axis"))
    if row is None or not sizes:
        return name
    at = row.value(record.get("axis")) % len(shape)
    if row.indexing == "tuple":  # component k against data dim b + k
        ranges = ", ".join(f"[{-s}, {s - 1}]" for s in sizes)
        return (
            f"{name}'s index tuples within {ranges}, component by component (data dims "
            f"{at} to {at + len(sizes) - 1}, of sizes {', '.join(map(str, sizes))})"
        )
    size = sizes[0]
    return f"{name} within [{-size}, {size - 1}] (axis {at} of size {size})"


# -- what if ----------------------------------------------------------------------------
def what_if_rows(verdict: ModelVerdict) -> list[WhatIfRow]:
    """The discrepancies seen only on what-if cases: never the verdict."""
    rows = []
    for m in verdict.mechanisms:
        if m.as_built:
            continue
        nodes = list(dict.fromkeys(m.nodes))
        rows.append(
            WhatIfRow(
                target=m.runtime,
                kind=m.kind,
                mechanism=m.text,
                nodes=nodes[:NAMES_SHOWN],
                count=len(nodes),
                todo=m.workaround,
                about=m.about,
            )
        )
    return rows
