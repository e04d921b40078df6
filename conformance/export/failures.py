"""A runtime's known discrepancies as exported tests that fail, decided from
its baseline alone, without running anything.

The matching is the gate's own (:meth:`conformance.gate.baseline.BaselineEntry.in_scope`
on the record fields :func:`conformance.engine.records.about` gives a case,
the rule :meth:`BaselineEntry.applies_to` for where an entry holds). Every exported
test is a valid input, so an entry speaks of it only when one of its
outcomes is one a valid input can show (a refusal, a wrong output, a crash,
a timeout; never ``accepted_invalid``). Then:

* a ``case`` entry says each result in its scope shows one of its outcomes:
  the test **fails**;
* a family (``signature`` only) that does not depend on values says the
  same of every input in its scope (no complex kernel): the test **fails**;
* a family that ``depends_on_values`` shows only on some inputs. When each
  of its explanations is a function of the expected output
  (:class:`conformance.tables.explanations.Explanation.transform`) that leaves
  this test's expected output bit for bit as it is, the bug cannot show on
  it: the test is not listed. Otherwise it **may fail**: whether it does
  depends on values no baseline records (which strings of a block a runtime
  empties, where an out-of-range read lands), so it cannot be decided
  without running it. Runners that can skip get it as a skip; the manifest
  says which entries made it so.

Where an entry holds (``versions``, ``profile``, ``cpu``) is decided per
configuration: a profile of the runtime, on the targets the baseline says it
was observed on (``observed``); an entry that holds on any of them is
listed, with its conditions in the comment. A baseline without ``observed``
is taken as written for the default profile, whatever version or CPU.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from conformance.engine.records import about
from conformance.export.selection import Test
from conformance.gate.baseline import BaselineEntry, Observed, Where
from conformance.tables import explanations, outcomes
from conformance.tables.profiles import DEFAULT

FAILS, MAY_FAIL = "fails", "may_fail"
# what a valid input's result can be, when wrong: the kinds an exported test can show
SHOWABLE = outcomes.kinds(lambda kind: kind.discrepancy and kind.inputs != outcomes.INVALID)


@dataclass(frozen=True)
class Configuration:
    """A runtime in one profile, on the targets its baseline was observed on."""

    runtime: str
    profile: str
    targets: tuple[Where, ...] = ()  # empty: the baseline does not say

    def holds(self, entry: BaselineEntry) -> bool:
        if not self.targets:
            return not entry.profile or self.profile in entry.profile
        return any(entry.applies_to(target) for target in self.targets)


@dataclass
class ExpectedFailure:
    """One test's known discrepancy on one configuration."""

    test: Test
    status: str  # FAILS or MAY_FAIL
    entries: list[BaselineEntry] = field(default_factory=list)

    @property
    def outcomes(self) -> tuple[str, ...]:
        found = {kind for entry in self.entries for kind in entry.outcome if kind in SHOWABLE}
        return tuple(sorted(found))

    @property
    def reason(self) -> str:
        return " / ".join(dict.fromkeys(" ".join(e.reason.split()) for e in self.entries))

    @property
    def clauses(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.clause for e in self.entries if e.clause))

    @property
    def upstream(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.upstream for e in self.entries if e.upstream))


def configurations(runtime: str, observed: Iterable[Observed]) -> list[Configuration]:
    """The profiles a baseline was observed in, the default first (only the
    default one when it does not say)."""
    by_profile: dict[str, list[Where]] = {}
    for seen in observed:
        where = Where(version=seen.version, profile=seen.profile, cpu_flags=seen.cpu_flags)
        by_profile.setdefault(seen.profile, []).append(where)
    if not by_profile:
        return [Configuration(runtime, DEFAULT)]
    order = sorted(by_profile, key=lambda p: (p != DEFAULT, p))
    return [Configuration(runtime, p, tuple(by_profile[p])) for p in order]


def _cannot_show(entry: BaselineEntry, expected: np.ndarray) -> bool:
    """Whether the entry's explanations, each a function, leave the expected
    output as it is, bit for bit (then the discrepancy cannot show on it)."""
    if (
        not entry.explained_by
        or "value_mismatch" not in entry.outcome
        or set(entry.outcome) - {"value_mismatch"}
    ):
        return False
    for name in entry.explained_by:
        model = explanations.BY_NAME[name]
        if model.transform is None:
            return False  # a relation: what it allows depends on the runtime
        with np.errstate(all="ignore"):
            changed = model.transform(expected)
        if expected.dtype == object:
            if list(changed.ravel()) != list(expected.ravel()):
                return False
        elif changed.tobytes() != expected.tobytes():
            return False
    return True


def classify(
    tests: Iterable[Test], entries: list[BaselineEntry], configuration: Configuration
) -> list[ExpectedFailure]:
    """The tests the configuration's entries say fail (or may), in test order."""
    holding = [e for e in entries if configuration.holds(e) and SHOWABLE & set(e.outcome)]
    # case entries first, as the gate names a covered discrepancy by them
    holding.sort(key=lambda e: not e.each)
    found = []
    described: dict[int, dict] = {}
    for test in tests:
        if not holding:
            break
        base = described.get(id(test.case))
        if base is None:
            base = described[id(test.case)] = about(test.case, test.verdict)
        record = {**base, "runtime": configuration.runtime, "variant": test.variant}
        known = None
        for entry in holding:
            if not entry.in_scope(record):
                continue
            if entry.depends_on_values:
                if _cannot_show(entry, test.output):
                    continue
                status = MAY_FAIL
            else:
                status = FAILS
            if known is None:
                known = ExpectedFailure(test, status)
            elif status == FAILS:
                known.status = FAILS
            known.entries.append(entry)
        if known is not None:
            found.append(known)
    return found
