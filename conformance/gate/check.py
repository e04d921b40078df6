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

An entry is judged only on results that could have reproduced it: of its
runtime and target (version, profile, CPU: :meth:`BaselineEntry.applies_to`), in its
case and signature (op, case id, dtype, variant, ...), run by the harness,
with an input that can show one of its outcomes (:func:`could_show`: a
refusal or a wrong output of a valid input, an output for an invalid one).
An entry with no such result in the run is "not judged" (a subset: a
shard, one operator, one case file; a fuzz campaign that drew no such
input): reported in one line, never fixed, never a failure. So a CI job
that gates a subset gets the verdict of what it ran.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from conformance.engine.groups import Grouping, GroupKey
from conformance.engine.judge import CONFORMING, DISCREPANCIES
from conformance.gate.baseline import INVALID_ONLY, VALID_ONLY, BaselineEntry, Where
from conformance.tables import outcomes

FIXED_EVIDENCE = 20  # in-scope results without the discrepancy that call a family fixed
# The discrepancies any input may come to (crash, timeout); the others only a
# valid input (baseline.VALID_ONLY) or only an invalid one (INVALID_ONLY).
ANY_INPUT = outcomes.kinds(lambda kind: kind.discrepancy and kind.inputs == outcomes.ANY)


def could_show(entry: BaselineEntry, record: dict) -> bool:
    """Whether the record's input could have shown one of the entry's
    outcomes: a valid input cannot be accepted_invalid, an invalid one cannot
    be refused wrongly or give a wrong value (its refusal conforms), and a
    result the harness could not run (harness_unsupported) showed nothing."""
    if record.get("kind") not in CONFORMING | DISCREPANCIES:
        return False
    violation = (record.get("expected") or {}).get("violation") not in (None, "none")
    possible = ANY_INPUT | (INVALID_ONLY if violation else VALID_ONLY)
    return bool(possible & set(entry.outcome))


@dataclass
class EntryResult:
    entry: BaselineEntry
    applies: bool = True  # False: the entry is for other versions, profiles, CPUs or GPUs
    # outcome kind -> results in scope that could have reproduced it (could_show)
    scope: Counter = field(default_factory=Counter)
    covered: int = 0
    conforming_ids: list[str] = field(default_factory=list)  # in scope but conforming now

    @property
    def judged(self) -> bool:
        """It holds for the target, and the run held results that could have reproduced it."""
        return self.applies and bool(self.scope)

    @property
    def fixed(self) -> bool:
        if not self.judged:
            return False
        if self.entry.each:
            return bool(self.conforming_ids)
        if self.entry.depends_on_values or self.covered:
            return False
        return sum(self.scope[kind] for kind in CONFORMING) >= FIXED_EVIDENCE

    @property
    def unproven(self) -> bool:
        """A family with results in scope, none showing it, but too few to tell."""
        return self.judged and not self.entry.each and self.covered == 0 and not self.fixed

    @property
    def not_judged(self) -> bool:
        """It holds for the target, but no result of the run could have reproduced it."""
        return self.applies and not self.scope


@dataclass
class Gate:
    results: int
    discrepant: list[dict]  # every discrepancy record
    unexpected: list[dict]  # discrepancy records no entry covers
    entries: list[EntryResult]
    # id(record) -> the entry that names a covered discrepancy (a case entry before a family)
    covered_by: dict[int, BaselineEntry] = field(default_factory=dict, repr=False)

    @property
    def discrepancies(self) -> int:
        return len(self.discrepant)

    # Grouped once, here: gate.json, the verdict's lines, its Markdown and the
    # report show these groups (engine.groups), none groups them again.
    @cached_property
    def grouping(self) -> Grouping:
        """Every discrepancy's group, its key computed once."""
        return Grouping(self.discrepant)

    @cached_property
    def groups(self) -> list[tuple[GroupKey, list[dict]]]:
        """Every discrepancy group, largest first."""
        return self.grouping.grouped()

    @cached_property
    def new_groups(self) -> list[tuple[GroupKey, list[dict]]]:
        """The groups of the discrepancies no entry covers, largest first."""
        return self.grouping.grouped(self.unexpected)

    @property
    def fixed(self) -> list[EntryResult]:
        return [e for e in self.entries if e.fixed]

    @property
    def not_judged(self) -> list[EntryResult]:
        return [e for e in self.entries if e.not_judged]

    @property
    def unproven(self) -> list[EntryResult]:
        return [e for e in self.entries if e.unproven]

    @property
    def inapplicable(self) -> list[EntryResult]:
        return [e for e in self.entries if not e.applies]

    def passed(self, allow_fixed: bool = False) -> bool:
        return not self.unexpected and (allow_fixed or not self.fixed)


def check(
    records: Iterable[dict],
    baselines: dict[str, list[BaselineEntry]],
    targets: Mapping[str, Where | str | None],
) -> Gate:
    """Hold records against the baselines of the runtimes they come from.
    ``targets`` maps runtime name -> what it is (:class:`Where`: version,
    profile, CPU flags, from the run header), or just its version string."""
    results = [
        EntryResult(entry, applies=entry.applies_to(targets.get(runtime)))
        for runtime, entries in baselines.items()
        for entry in entries
    ]
    by_runtime: dict[str, list[EntryResult]] = {}
    for result in sorted(results, key=lambda r: not r.entry.each):  # case entries first
        if result.applies:
            by_runtime.setdefault(result.entry.runtime, []).append(result)
    unexpected, total, discrepant = [], 0, []
    covered_by: dict[int, BaselineEntry] = {}
    for record in records:
        total += 1
        kind = record.get("kind")
        for result in by_runtime.get(record.get("runtime", ""), ()):
            if not result.entry.in_scope(record):
                continue
            if result.entry.covers(record):
                result.scope[kind] += 1
                result.covered += 1
                covered_by.setdefault(id(record), result.entry)
                continue
            if not could_show(result.entry, record):
                continue  # no evidence either way: it could not have reproduced the entry
            result.scope[kind] += 1
            if kind in CONFORMING and len(result.conforming_ids) < 20:
                result.conforming_ids.append(f"{record.get('case_id')} [{record.get('variant')}]")
        if kind in DISCREPANCIES:
            discrepant.append(record)
            if id(record) not in covered_by:
                unexpected.append(record)
    return Gate(total, discrepant, unexpected, results, covered_by)
