"""The shrinker: the first class of each bug this shard claimed, shrunk with
Hypothesis between rounds, then stored in the regression store.

Shrinking gets at most ``shrink_share`` of the elapsed time, and each bug at
most ``shrink_seconds`` and ``shrink_calls`` runtime calls; a bug not shrunk in
its share keeps the example that found it (``"shrunk": false``). Only a bug's
first class is shrunk (the rest keep the example that found them), and only by
the shard that claims the bug in the store (:mod:`conformance.fuzz.store`),
which then holds the bug's smallest reproducer; a bug the store already held
is not shrunk again. At the end, the bugs claimed but not shrunk go into the
store with the example that found them, so that no bug found is lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis.errors import HypothesisException

from conformance import oracle
from conformance.cases.check import OverMemory, verdict_of
from conformance.engine.judge import Outcome
from conformance.engine.run import Run
from conformance.fuzz import artifacts, strategies
from conformance.fuzz.budget import Budget, OutOfBudget
from conformance.fuzz.bugs import cause_of
from conformance.fuzz.findings import Bug, Findings, FoundClass, clause_of
from conformance.fuzz.seeds import derive
from conformance.fuzz.signature import features
from conformance.fuzz.store import StoreEntry
from conformance.fuzz.strategies import Example

if TYPE_CHECKING:
    from conformance.fuzz.options import CampaignOptions


class Shrinker:
    def __init__(
        self,
        options: CampaignOptions,
        findings: Findings,
        budget: Budget,
        on_status: Callable[[str | None], None],
    ) -> None:
        self.options = options
        self.findings = findings
        self.budget = budget
        self.store = options.store  # the regression store (None: none)
        self.on_status = on_status  # called with the slug being shrunk, then None
        self.seconds = 0.0  # spent shrinking so far

    def pending(self) -> list[Bug]:
        """The bugs this shard claimed and has still to shrink, in discovery order."""
        return [
            bug
            for bug in self.findings.bugs.values()
            if bug.claimed and bug.shrunk_by is None and bug.store != "held"
        ]

    def within_share(self) -> bool:
        return self.seconds <= self.options.shrink_share * self.budget.elapsed()

    def due(self) -> bool:
        """Whether :meth:`shrink_pending` has a bug to shrink now."""
        return self.within_share() and bool(self.pending())

    def shrink_pending(self, run: Run) -> None:
        """Shrink the pending bugs' first classes within shrinking's share of
        the time; then store each one's reproducer."""
        for bug in self.pending():
            if self.budget.left() <= 0 or not self.within_share():
                return  # out of time, or shrinking has had its share for now
            found = self.findings.class_numbered(bug.classes[0])
            began = time.monotonic()
            self.on_status(found.signature.slug)
            self._shrink(run, found)
            found.outcomes = self._run_once(run, found.example, found.verdict, run.pool.runtimes)
            self.seconds += time.monotonic() - began
            bug.shrunk_by = self.findings.shard
            bug.reproducer = found.number
            artifacts.write_class(found, self.options.out_dir)
            self._store(run, bug, found)
            artifacts.write_findings(self.findings)
        self.on_status(None)

    def store_unshrunk(self, run: Run) -> None:
        """At the end: the bugs this campaign claimed but had no time to shrink
        go into the store with the example that found them (``"shrunk":
        false`` in their description), so that no bug found is lost."""
        if self.store is None:
            return
        for bug in self.findings.bugs.values():
            if bug.claimed and bug.store is None and bug.classes:
                self._store(run, bug, self.findings.class_numbered(bug.classes[0]), shrunk=False)

    def _store(self, run: Run, bug: Bug, found: FoundClass, shrunk: bool = True) -> None:
        """The bug's reproducer into the regression store (when there is one)."""
        if self.store is None:
            return
        shard = self.findings.shard
        entry = StoreEntry(
            bug_id=bug.id,
            bug={**artifacts.bug_json(bug), "shrunk": shrunk and found.shrunk},
            case_yaml=artifacts.case_yaml(found),
            variant=found.example.variant,
            shrunk_by=shard,
            found={
                "versions": {name: about.get("version") for name, about in run.pool.info.items()},
                "seed": self.options.seed,
                "shard": shard,
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            },
        )
        self.store.put(entry)
        bug.store = "new"
        self.findings.note_store(self.store)

    def _shrink(self, run: Run, found: FoundClass) -> None:
        """Hypothesis' shrinker on a strategy narrowed to the class: the same
        operator, opset, dtypes, variant and broken clause; a candidate counts
        only if it has the class's features and shows the same bug (outcome
        kind and mechanism)."""
        options, target, example = self.options, found.signature, found.example
        narrow = dict(
            op=target.op,
            opset=target.opset,
            dtype=target.dtype,
            index_dtype=example.indices_dtype,
            variant=target.variant,
            max_elements=options.max_elements,
        )
        if target.violation is None:
            strategy = strategies.valid_examples(**narrow)
        else:
            strategy = strategies.invalid_examples(clause=target.violation, **narrow)
        deadline = time.monotonic() + min(options.shrink_seconds, max(0.0, self.budget.left()))
        tally = {"calls": 0, "steps": 0}
        best: list[tuple[Example, oracle.Verdict]] = []

        def reproduces(candidate: Example) -> bool:
            if (
                tally["calls"] >= options.shrink_calls
                or time.monotonic() > deadline
                or self.budget.stopping
            ):
                # Out of budget: stop Hypothesis at once. (Answering "no" kept it
                # trying candidates for seconds; so did answering "yes".)
                raise OutOfBudget
            if features(candidate) != target.features:
                return False
            try:
                verdict = verdict_of(candidate, options.case_memory)
            except OverMemory:
                return False
            if clause_of(verdict) != target.violation:
                return False
            tally["calls"] += 1
            outcome = self._run_once(run, candidate, verdict, [target.runtime])[target.runtime]
            if outcome.kind != target.kind:
                return False
            cause = cause_of(
                target.runtime, target.op, outcome, target.features, target.violation, target.dtype
            )
            if cause.id != found.bug:  # the same kind by another mechanism
                return False
            best[:] = [(candidate, verdict)]
            tally["steps"] += 1
            return True

        began = time.monotonic()
        _minimize(strategy, reproduces, derive(options.seed, "shrink", found.number))
        found.shrink = {
            "calls": tally["calls"],
            "steps": tally["steps"],
            "seconds": round(time.monotonic() - began, 3),
        }
        if best:
            found.example, found.verdict = best[0]
            found.shrunk = True

    @staticmethod
    def _run_once(
        run: Run, example: Example, verdict: oracle.Verdict, runtimes: list[str]
    ) -> dict[str, Outcome]:
        return run.run_one(example.as_case("fuzz-shrink"), example.variant, runtimes, verdict)


class _Found(Exception):
    """Raised inside the Hypothesis test to mark a reproducing candidate."""


def _minimize(strategy, condition, seed_value: int) -> None:
    """Generate from ``strategy`` until ``condition`` holds, then shrink with
    Hypothesis; ``condition`` keeps the best candidate itself (like
    ``hypothesis.find``, which cannot hand back a partial result)."""

    @seed(seed_value)
    @settings(
        database=None,
        max_examples=2000,
        phases=[Phase.generate, Phase.shrink],
        deadline=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
    )
    @given(strategy)
    def search(candidate):
        if condition(candidate):
            raise _Found

    try:
        search()
    except (_Found, OutOfBudget):
        pass
    except (HypothesisException, ExceptionGroup):
        # A runtime that is not deterministic (a crash that does not recur on
        # replay) makes Hypothesis report a flaky test; the best candidate stands.
        pass
