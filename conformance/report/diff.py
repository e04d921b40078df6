"""What changed between two runs (``conformance diff RUN_A RUN_B``).

Results of the two runs are paired by (runtime, case id, variant), so a
corpus run before and after a runtime upgrade compares result by result:

* new      A conformed (pass, both_rejected), B has a discrepancy
* fixed    A had a discrepancy, B conforms
* changed  a discrepancy in both, of another kind, or the same kind with a
           different message (another wrong value, another error); or a
           discrepancy on one side and harness_unsupported on the other
           (the harness could not carry the case in one run: not "fixed")

Results present in one run only (cases added or filtered out, a runtime not
run) are counted, not compared. Fuzz campaigns draw different inputs (their
``fuzz-N`` ids name different inputs in each), so they are compared by discrepancy signature
instead (runtime, op, kind, dtype, variant, opset, violation, features:
what :class:`conformance.engine.groups.Signature` calls a class): a signature in B only
is new, in A only is "not seen again" (a campaign may simply not have drawn
such an input, so it is not called fixed).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from conformance.engine import records
from conformance.engine.groups import Signature, is_generated
from conformance.engine.judge import CONFORMING, DISCREPANCIES


@dataclass(frozen=True)
class Change:
    runtime: str
    op: str
    base_id: str
    case_id: str
    variant: str
    before: str  # outcome kind in A ("" when not there)
    after: str
    before_message: str = ""
    after_message: str = ""


@dataclass
class Diff:
    a: str
    b: str
    versions: dict[str, tuple[str | None, str | None]]  # runtime -> (A, B)
    by: str  # "result", "signature" (fuzz) or "signature (no result in common)"
    new: list[Change] = field(default_factory=list)
    fixed: list[Change] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    same: int = 0  # discrepancies unchanged
    compared: int = 0
    only_a: int = 0
    only_b: int = 0
    kinds: dict[str, tuple[Counter, Counter]] = field(default_factory=dict)  # runtime -> (A, B)

    @property
    def differs(self) -> bool:
        return bool(self.new or self.fixed or self.changed)

    def grouped(self, changes: list[Change]) -> list[tuple[tuple, list[Change]]]:
        """Changes by (runtime, before -> after, op, case-file id), largest first."""
        out: dict[tuple, list[Change]] = {}
        for change in changes:
            key = (change.runtime, change.before, change.after, change.op, change.base_id)
            out.setdefault(key, []).append(change)
        return sorted(out.items(), key=lambda item: (-len(item[1]), item[0]))


def _key(record: dict) -> tuple:
    return (record.get("runtime"), record.get("case_id"), record.get("variant"))


def read(paths: list[Path]) -> tuple[list[dict], list[dict]]:
    runs = records.read_folders(paths)
    return [run.header for run in runs], [r for run in runs for r in run.records]


def compare(a_paths: list[Path], b_paths: list[Path]) -> Diff:
    """Raises records.RecordsError for an unreadable run."""
    headers_a, entries_a = read(a_paths)
    headers_b, entries_b = read(b_paths)
    versions_a = records.runtime_versions(headers_a)
    versions_b = records.runtime_versions(headers_b)
    diff = Diff(
        a=", ".join(map(str, a_paths)),
        b=", ".join(map(str, b_paths)),
        versions={
            name: (versions_a.get(name), versions_b.get(name))
            for name in sorted(set(versions_a) | set(versions_b))
        },
        by="result",
    )
    for name in sorted({e.get("runtime") for e in entries_a + entries_b}):
        diff.kinds[name] = (
            Counter(e["kind"] for e in entries_a if e.get("runtime") == name),
            Counter(e["kind"] for e in entries_b if e.get("runtime") == name),
        )
    by_key_a = {_key(e): e for e in entries_a}
    by_key_b = {_key(e): e for e in entries_b}
    shared = by_key_a.keys() & by_key_b.keys()
    fuzz = any(map(is_generated, entries_a)) or any(map(is_generated, entries_b))
    if fuzz or (not shared and entries_a and entries_b):
        diff.by = "signature" if fuzz else "signature (no result in common)"
        _by_signature(diff, entries_a, entries_b)
        return diff
    diff.compared = len(shared)
    diff.only_a = len(by_key_a) - len(shared)
    diff.only_b = len(by_key_b) - len(shared)
    for key in sorted(shared, key=str):
        before, after = by_key_a[key], by_key_b[key]
        was, now = before["kind"], after["kind"]
        change = Change(
            runtime=after["runtime"],
            op=after.get("op", ""),
            base_id=after.get("base_id", ""),
            case_id=after["case_id"],
            variant=after["variant"],
            before=was,
            after=now,
            before_message=before.get("message", ""),
            after_message=after.get("message", ""),
        )
        if was in DISCREPANCIES and now in CONFORMING:
            diff.fixed.append(change)
        elif was in CONFORMING and now in DISCREPANCIES:
            diff.new.append(change)
        elif was in DISCREPANCIES or now in DISCREPANCIES:  # both, or one harness_unsupported
            if was != now or change.before_message != change.after_message:
                diff.changed.append(change)
            else:
                diff.same += 1
    return diff


def _by_signature(diff: Diff, entries_a: list[dict], entries_b: list[dict]) -> None:
    count_a = Counter(Signature.of(e) for e in entries_a if e.get("kind") in DISCREPANCIES)
    count_b = Counter(Signature.of(e) for e in entries_b if e.get("kind") in DISCREPANCIES)
    first_b = {}
    for record in entries_b:
        first_b.setdefault(Signature.of(record), record)
    diff.compared = len(count_a.keys() | count_b.keys())
    for sig in sorted(count_b.keys() - count_a.keys(), key=str):
        record = first_b[sig]
        change = Change(sig.runtime, sig.op, sig.input_text, record["case_id"], sig.variant, "",
                        sig.kind, after_message=record.get("message", ""))  # fmt: skip
        diff.new.append(change)
    for sig in sorted(count_a.keys() - count_b.keys(), key=str):
        diff.fixed.append(
            Change(sig.runtime, sig.op, sig.input_text, "", sig.variant, sig.kind, "")
        )
    diff.same = len(count_a.keys() & count_b.keys())
