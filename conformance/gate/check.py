"""The CI gate: a run's results held against the known-discrepancy baseline.

The gate passes when every discrepancy is covered by a baseline entry of its
runtime and no entry has stopped reproducing. An entry stopped reproducing
("fixed upstream?") when:

* a ``case`` entry: some result in its scope conforms now (each result it
  names is expected to show the discrepancy);
* a ``signature`` entry (a family): at least :data:`FIXED_EVIDENCE` results
  in its scope conform (pass, both_rejected) and none shows its outcome.
  Results in scope with other outcomes (another entry's discrepancy,
  harness_unsupported) are no evidence either way, and a family marked
  ``depends_on_values`` is never called fixed: inputs without the values that
  trigger it prove nothing.

A result in an entry's scope with another discrepancy kind than the entry's
is not covered: the discrepancy changed, and it fails the gate as new.
Entries whose scope holds no result of the run (a runtime or case not run, a
fuzz campaign that drew no such input) are reported and do not fail it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from conformance.engine.judge import CONFORMING, DISCREPANCIES
from conformance.gate.baseline import Entry

FIXED_EVIDENCE = 20  # in-scope results without the discrepancy that call a family fixed


@dataclass
class EntryResult:
    entry: Entry
    applies: bool = True  # False: the entry is for other runtime versions
    scope: Counter = field(default_factory=Counter)  # outcome kind -> results in scope
    covered: int = 0
    conforming_ids: list[str] = field(default_factory=list)  # in scope but conforming now

    @property
    def fixed(self) -> bool:
        if not self.applies or not self.scope:
            return False
        if self.entry.each:
            return bool(self.conforming_ids)
        if self.entry.depends_on_values or self.covered:
            return False
        return sum(self.scope[kind] for kind in CONFORMING) >= FIXED_EVIDENCE

    @property
    def unproven(self) -> bool:
        """A family with results in scope, none showing it, but too few to tell."""
        return (
            self.applies
            and not self.entry.each
            and self.covered == 0
            and bool(self.scope)
            and not self.fixed
        )

    @property
    def unmatched(self) -> bool:
        return self.applies and not self.scope


@dataclass
class Gate:
    results: int
    discrepancies: int
    unexpected: list[dict]  # discrepancy records no entry covers
    entries: list[EntryResult]
    # id(record) -> the entry that names a covered discrepancy (a case entry before a family)
    covered_by: dict[int, Entry] = field(default_factory=dict, repr=False)

    @property
    def fixed(self) -> list[EntryResult]:
        return [e for e in self.entries if e.fixed]

    @property
    def unmatched(self) -> list[EntryResult]:
        return [e for e in self.entries if e.unmatched]

    @property
    def unproven(self) -> list[EntryResult]:
        return [e for e in self.entries if e.unproven]

    @property
    def inapplicable(self) -> list[EntryResult]:
        return [e for e in self.entries if not e.applies]

    def passed(self, allow_fixed: bool = False) -> bool:
        return not self.unexpected and (allow_fixed or not self.fixed)


def check(
    records: Iterable[dict], baselines: dict[str, list[Entry]], versions: dict[str, str | None]
) -> Gate:
    """Hold records against the baselines of the runtimes they come from.
    ``versions`` maps runtime name -> version string, from the run header."""
    results = [
        EntryResult(entry, applies=entry.applies_to(versions.get(runtime)))
        for runtime, entries in baselines.items()
        for entry in entries
    ]
    by_runtime: dict[str, list[EntryResult]] = {}
    for result in sorted(results, key=lambda r: not r.entry.each):  # case entries first
        if result.applies:
            by_runtime.setdefault(result.entry.runtime, []).append(result)
    unexpected, total, discrepancies, covered_by = [], 0, 0, {}
    for record in records:
        total += 1
        kind = record.get("kind")
        for result in by_runtime.get(record.get("runtime"), ()):
            if not result.entry.in_scope(record):
                continue
            result.scope[kind] += 1
            if kind in result.entry.outcome:
                result.covered += 1
                covered_by.setdefault(id(record), result.entry)
            elif kind in CONFORMING and len(result.conforming_ids) < 20:
                result.conforming_ids.append(f"{record.get('case_id')} [{record.get('variant')}]")
        if kind in DISCREPANCIES:
            discrepancies += 1
            if id(record) not in covered_by:
                unexpected.append(record)
    return Gate(total, discrepancies, unexpected, results, covered_by)


def group_id(record: dict) -> str:
    """The case-file id; for a generated (fuzz) example, which has none worth
    grouping by, its signature: opset, dtype, variant, clause and features."""
    if not str(record.get("source", "")).startswith("<generated>"):
        return record.get("base_id", "")
    violation = (record.get("expected") or {}).get("violation")
    parts = [f"opset {record.get('opset')}", record.get("dtype"), record.get("variant")]
    return "generated: " + " ".join(
        map(str, [*parts, violation or "valid", *(record.get("features") or [])])
    )


def groups(records: Iterable[dict]) -> list[tuple[tuple[str, str, str, str], list[dict]]]:
    """Records by (runtime, kind, op, case-file id or fuzz signature), largest group first."""
    grouped: dict[tuple, list[dict]] = {}
    for record in records:
        key = (record["runtime"], record["kind"], record["op"], group_id(record))
        grouped.setdefault(key, []).append(record)
    return sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0]))


def explain(gate: Gate, allow_fixed: bool, known: str, limit: int = 25) -> list[str]:
    """What the gate found, in lines for the terminal: the failures first,
    each with where to look and what to do."""
    lines = []
    if gate.unexpected:
        found = groups(gate.unexpected)
        lines.append(
            f"NEW: {len(gate.unexpected)} discrepancies not in the baseline "
            f"({known}/<runtime>.yaml), in {len(found)} group(s) (runtime, kind, op, case-file id):"
        )
        for (runtime, kind, op, base_id), members in found[:limit]:
            first = members[0]
            variants = ", ".join(sorted({m["variant"] for m in members}))
            lines.append(f"  {runtime:12} {kind:17} {op:15} {base_id} ({len(members)}: {variants})")
            lines.append(f"      {first.get('source', '')}: {first.get('message', '')[:160]}")
        if len(found) > limit:
            lines.append(f"  ... {len(found) - limit} more groups")
        lines.append("  a runtime bug to accept for now? add an entry (README: 'The gate')")
    for result in gate.fixed:
        entry = result.entry
        now = ", ".join(f"{kind} {n}" for kind, n in result.scope.most_common())
        label = "FIXED UPSTREAM?" if not allow_fixed else "fixed upstream? (allowed)"
        lines.append(f"{label} {entry.where}: {entry.describe()} no longer reproduces")
        if entry.each:
            more = " ..." if len(result.conforming_ids) > 5 else ""
            lines.append(f"  conforming now: {', '.join(result.conforming_ids[:5])}{more}")
        lines.append(f"  results in scope: {now}; remove or narrow the entry")
    for result in gate.unproven:
        entry = result.entry
        lines.append(
            f"not reproduced: {entry.where}: {entry.describe()} on {result.scope.total()} "
            + (
                "results in scope (it depends on values: never called fixed)"
                if entry.depends_on_values
                else f"results in scope (under {FIXED_EVIDENCE} conforming: too few to tell)"
            )
        )
    if gate.unmatched:  # normal for a subset or a fuzz campaign: one line, details in gate.json
        places = ", ".join(r.entry.where.rsplit("/", 1)[-1] for r in gate.unmatched)
        lines.append(f"unmatched (no result in scope here, not a failure): {places}")
    for result in gate.inapplicable:
        entry = result.entry
        lines.append(f"not used: {entry.where}: for {entry.runtime} {entry.versions}")
    covered = gate.discrepancies - len(gate.unexpected)
    verdict = "PASSED" if gate.passed(allow_fixed) else "FAILED"
    lines.append(
        f"gate {verdict}: {gate.discrepancies} discrepancies in {gate.results} results, "
        f"{covered} known, {len(gate.unexpected)} new, {len(gate.fixed)} entries fixed upstream?"
    )
    return lines
