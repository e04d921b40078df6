"""The report's fuzz bugs (findings.json format 2): each root cause with its
classes and smallest reproducer, and how the campaign told it apart."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from conformance.engine.groups import GroupKey, Signature
from conformance.messages import first_line
from conformance.report.views.severity import severity


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
        key=lambda b: (b.runtime, severity(b.kind), b.op, -b.hits, b.id),
    )
    return ordered, unassigned


def _elements(found: dict) -> int:
    case = found.get("case") or {}
    shapes = [(case.get(part) or {}).get("shape") for part in ("data", "indices")]
    return sum(math.prod(shape) for shape in shapes if shape is not None)


def class_key(found: dict) -> GroupKey:
    """The discrepancy group a fuzz class's results fall in."""
    return Signature.from_json(found["signature"]).key
