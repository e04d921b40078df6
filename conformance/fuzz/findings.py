"""What a campaign found: its classes, its bugs (and their claims in the
regression store), what its examples reached, and its counts. This is what
``findings.json`` holds (:func:`conformance.fuzz.artifacts.write_findings`
takes this object).

Every discrepancy has a :class:`~conformance.fuzz.signature.Signature` and a
cause (:mod:`conformance.fuzz.bugs`: runtime, kind, operator and mechanism); a
class is a (signature, bug) pair, so it never mixes two mechanisms, and a bug
gathers its classes. A new bug is claimed in the store: the shard that wins
the claim shrinks it (:mod:`conformance.fuzz.shrinker`); a bug the store
already holds is ``held``.

The counts are exact: an example counts once it has a result (a record in
results.jsonl), or when every runtime skipped it; then each of its runs is a
record or counted in ``skipped``. ``results`` and ``judged`` count the
campaign's own results per runtime (judged: not "not run", not
``harness_unsupported``); the store's replay is not counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conformance import oracle
from conformance.engine.judge import DISCREPANCIES, Outcome
from conformance.fuzz import coverage, replay
from conformance.fuzz.budget import Budget
from conformance.fuzz.bugs import Cause, cause_of
from conformance.fuzz.signature import Signature, features, signature_of
from conformance.fuzz.store import Store
from conformance.fuzz.strategies import Example

if TYPE_CHECKING:
    from conformance.fuzz.options import CampaignOptions


@dataclass
class FoundClass:
    number: int
    signature: Signature
    bug: str  # its bug's id (Cause.id)
    first_found_s: float
    example: Example  # the example that found it, then the shrunk one
    verdict: oracle.Verdict
    hits: int = 1
    shrunk: bool = False
    shrink: dict = field(default_factory=dict)  # calls, seconds, steps
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # runtime -> outcome
    files: dict[str, str] = field(default_factory=dict)
    described: dict | None = None  # findings.json entry but hits, kept until the class changes


@dataclass
class Bug:
    """One root cause and the classes it gathers (findings.json ``bugs``)."""

    cause: Cause
    classes: list[int]  # class numbers, in discovery order
    first_found_s: float
    hits: int = 0
    dtypes: set[str] = field(default_factory=set)
    variants: set[str] = field(default_factory=set)
    shrunk_by: str | None = None  # the shard that shrank it (this campaign's or another)
    store: str | None = None  # "new": stored by this campaign, "held": the store held it
    confirmed: int = 0  # its discrepancies re-run alone so far (CampaignOptions.confirm_alone)
    claimed: bool = False  # this shard shrinks it (it won the store's claim, or there is no store)
    reproducer: int | None = None  # the class holding its smallest reproducer

    @property
    def id(self) -> str:
        return self.cause.id


def clause_of(verdict: oracle.Verdict) -> str | None:
    """The clause an input breaks (None: a valid input)."""
    return None if verdict.valid else verdict.violation.clause


class Findings:
    def __init__(self, options: CampaignOptions, budget: Budget) -> None:
        self.options = options  # what findings.json says of the campaign (seed, budget, store)
        self.budget = budget
        self.classes: dict[tuple[Signature, str], FoundClass] = {}  # (signature, bug id) ->
        self.bugs: dict[str, Bug] = {}  # bug id -> bug, in discovery order
        self.replayed: list[replay.Replayed] = []  # the store's bugs, replayed first
        self.coverage = coverage.Coverage(options.max_elements)  # what the examples reached
        self.store_warnings: list[str] = []
        self.examples = 0  # examples with a result, or skipped on every runtime
        self.skipped = 0
        self.results: Counter = Counter()  # runtime -> the campaign's own results on it
        self.judged: Counter = Counter()  # runtime -> those judged
        self.replay_s = 0.0  # what the store's replay took of the budget
        self.fuzz_s = 0.0  # time spent generating and running (not shrinking)
        self.runtimes: list[str] = []  # the pool's names, once it started
        self.shard = ""  # this campaign's name in the store and in shrunk_by, once it started
        self._confirming: dict[str, int] = {}  # bug id -> confirmations asked before it was found

    def begin(self, runtimes: list[str], shard: str) -> None:
        """The campaign's run started: its runtimes, and its name (its shard and
        its run's id, so that two campaigns never share a claim)."""
        self.runtimes, self.shard = runtimes, shard

    def elapsed(self) -> float:
        """The campaign's elapsed seconds (0 before it started)."""
        return self.budget.elapsed() if self.budget.started else 0.0

    # -- counts -----------------------------------------------------------------
    def count(self, example: Example, skipped: int) -> None:
        """An example counted: its first result came, or every runtime skipped it."""
        self.examples += 1
        self.skipped += skipped
        self.coverage.add(example)

    def result(self, runtime: str, verdict: oracle.Verdict | None, outcome: Outcome) -> None:
        """One of the campaign's own results (``verdict`` None: nothing ran)."""
        self.results[runtime] += 1
        if verdict is not None and outcome.kind != "harness_unsupported":
            self.judged[runtime] += 1  # a "not run" one has no verdict

    def unjudged(self) -> dict[str, int]:
        """The targets that judged none of the campaign's examples, each with
        its results (each "not run" or ``harness_unsupported``): a campaign
        that says nothing of a target does not pass for it."""
        return {rt: self.results[rt] for rt in self.runtimes if not self.judged[rt]}

    # -- classes and bugs -----------------------------------------------------------
    def record(
        self,
        example: Example,
        runtime: str,
        verdict: oracle.Verdict,
        outcome: Outcome,
        outcomes: dict[str, Outcome],
    ) -> FoundClass | None:
        """A judged outcome: a discrepancy counts for its bug and class; returns
        the class when it is new. ``outcomes`` (runtime -> outcome on the
        example, filled in as the other runtimes' come) is a new class's."""
        if outcome.kind not in DISCREPANCIES:
            return None
        clause = clause_of(verdict)
        signature = signature_of(example, runtime, outcome.kind, clause)
        cause = cause_of(runtime, example.op, outcome, signature.features, clause, example.dtype)
        bug = self._bug(cause)
        bug.hits += 1
        bug.dtypes.add(example.dtype)
        bug.variants.add(example.variant)
        found = self.classes.get((signature, cause.id))
        if found:
            found.hits += 1
            return None
        found = FoundClass(
            number=len(self.classes) + 1,
            signature=signature,
            bug=cause.id,
            first_found_s=round(self.budget.elapsed(), 3),
            example=example,
            verdict=verdict,
            outcomes=outcomes,
        )
        self.classes[(signature, cause.id)] = found
        bug.classes.append(found.number)
        if bug.reproducer is None:
            bug.reproducer = found.number
        return found

    def class_numbered(self, number: int) -> FoundClass:
        return list(self.classes.values())[number - 1]

    def _bug(self, cause: Cause) -> Bug:
        """The bug of this cause, new (and claimed in the store) the first time."""
        bug = self.bugs.get(cause.id)
        if bug is None:
            bug = self.bugs[cause.id] = Bug(cause, [], round(self.budget.elapsed(), 3))
            bug.confirmed = self._confirming.pop(cause.id, 0)
            self._claim(bug)
        return bug

    def _claim(self, bug: Bug) -> None:
        """Whether this shard shrinks the bug: with no store, always; with one,
        when it wins the bug's claim (the store holds no entry for it and no
        other shard claimed it first)."""
        store = self.options.store
        if store is None:
            bug.claimed = True
            return
        bug.claimed = store.claim(bug.id, self.shard)
        if not bug.claimed:
            bug.shrunk_by = store.holder(bug.id)
            if store.get(bug.id) is not None:
                bug.store = "held"
        self.note_store(store)

    def note_store(self, store: Store) -> None:
        """The store's warnings not yet noted (findings.json ``store.warnings``)."""
        for warning in getattr(store, "warnings", ())[len(self.store_warnings) :]:
            self.store_warnings.append(warning)

    def confirm(
        self, example: Example | None, runtime: str, verdict: oracle.Verdict, outcome: Outcome
    ) -> bool:
        """Whether a discrepancy a pack showed on ``example`` is re-run alone:
        the first ``confirm_alone`` of its bug are (and each of a bug not seen
        alone yet); None, an input not the campaign's, always is."""
        if example is None:
            return True
        cause = cause_of(
            runtime, example.op, outcome, features(example), clause_of(verdict), example.dtype
        )
        bug = self.bugs.get(cause.id)
        confirmed = bug.confirmed if bug else self._confirming.get(cause.id, 0)
        if confirmed >= self.options.confirm_alone:
            return False
        if bug:
            bug.confirmed += 1
        else:  # confirmed before the bug is known (its first result is still to come)
            self._confirming[cause.id] = confirmed + 1
        return True
