"""A time-boxed fuzz campaign: generate, run, classify, shrink, save.

The campaign runs in rounds through the same engine as ``conformance run``
(:class:`conformance.engine.run.Run`): each round draws examples from
:func:`conformance.fuzz.strategies.examples` with a seed derived from the campaign
seed, runs each in its drawn variant on every runtime, judges it against the
oracle and appends the records to ``results.jsonl``. Every discrepancy gets a
:class:`~conformance.fuzz.signature.Signature`; a new one becomes a class,
saved at once with the example that found it, then shrunk between rounds with
Hypothesis' shrinker and saved again (see :mod:`conformance.fuzz.artifacts`).

Two economies keep the campaign finding rather than waiting:

- shrinking gets at most half of the elapsed time, and each class at most
  ``shrink_seconds`` and ``shrink_calls`` runtime calls; a class not shrunk in
  its share keeps the example that found it (``"shrunk": false``);
- once a runtime has crashed or hung on every one of at least two inputs with
  the same operator and features (whatever their dtype, variant, opset and
  broken clause), it is no longer sent such inputs: each would cost a worker
  restart or a timeout and tell nothing new. They are counted as ``skipped``.

The counts are exact: an example counts once it has a result (a record in
results.jsonl), or when every runtime skipped it; then each of its runs is a
record or counted in ``skipped`` (records = examples x runtimes - skipped, for
a campaign that was not interrupted). An example the time budget stopped
before any of its jobs started is not counted; one it stopped half way gets a
"not run" record for each runtime it did not reach
(:meth:`conformance.engine.schedule.Schedule.not_run`).

The engine's options are derived from the campaign's in one place,
:meth:`CampaignOptions.engine`; the folder is written only under the run's
lock (a campaign refused by it leaves the folder alone), and a campaign whose
budget ran out before anything ran is :class:`NothingRan`, not a pass.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis.errors import HypothesisException

from conformance import oracle
from conformance.cases.check import DEFAULT_CASE_MEMORY, OverMemory, verdict_of
from conformance.engine import models
from conformance.engine.judge import DISCREPANCIES, Outcome
from conformance.engine.pool import DEFAULT_WORKER_MEMORY, EngineError
from conformance.engine.run import Options, Run
from conformance.fuzz import artifacts, strategies
from conformance.fuzz.signature import Signature, features, signature_of
from conformance.fuzz.strategies import Example

EXPENSIVE = frozenset({"crash", "timeout"})  # kinds that cost a worker restart


@dataclass
class CampaignOptions:
    runtimes: list[str]
    time_budget: float  # seconds, shrinking included
    seed: int
    out_dir: Path
    max_elements: int = strategies.DEFAULT_MAX_ELEMENTS
    workers: int = 1
    workers_chosen: str = "given"  # or "auto" (conformance.engine.targets.auto_workers)
    timeout: float = 2.0  # per example and runtime: a healthy one takes milliseconds
    round_size: int = 64  # examples per round (also the Hypothesis batch)
    shrink_seconds: float = 10.0  # per class
    shrink_calls: int = 1000  # runtime calls per class (the 10 s usually binds first)
    shrink_share: float = 0.5  # of the elapsed time, at most
    shard: tuple[int, int] = (1, 1)  # (I, N): shards draw different examples
    pack: int | None = None  # cases per model (engine.packs); None: each runtime's measured size
    batch_size: int = 16  # jobs per message to a worker (fewer than run's: rounds are short)
    worker_memory: int = DEFAULT_WORKER_MEMORY  # resident bytes a worker may reach
    case_memory: int = DEFAULT_CASE_MEMORY  # the memory guard, in rounds and in shrinking

    def engine(self) -> Options:
        """The engine's options (:class:`conformance.engine.run.Options`): each
        the campaign option of the same name, but those the campaign sets itself
        (:data:`CAMPAIGN_SETS`). An engine option that is neither is an error
        here, at the first campaign, not a default silently kept."""
        engine = {f.name for f in fields(Options)}
        given = engine & {f.name for f in fields(self)}
        missing = engine - given - CAMPAIGN_SETS.keys()
        if missing:
            raise TypeError(
                f"engine option(s) {', '.join(sorted(missing))} not derived: give "
                "CampaignOptions a field of the same name, or set it in CAMPAIGN_SETS"
            )
        return Options(**{name: getattr(self, name) for name in given}, **CAMPAIGN_SETS)


# Engine options the campaign sets itself, whatever it is given.
CAMPAIGN_SETS = {
    "variants": models.VARIANTS,  # each example runs in its own drawn variant (of these)
}


class NothingRan(EngineError):
    """The time budget ran out before any example ran: nothing was judged, so
    nothing passed (``conformance gate`` refuses such a folder too)."""


@dataclass
class FoundClass:
    number: int
    signature: Signature
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
class Status:
    """What the live display shows."""

    elapsed_s: float
    budget_s: float
    examples: int
    fuzz_s: float  # time spent generating and running (not shrinking)
    classes: int
    skipped: int
    shrinking: str | None  # the slug being shrunk, if any

    @property
    def examples_per_s(self) -> float:
        return self.examples / self.fuzz_s if self.fuzz_s else 0.0

    @property
    def left_s(self) -> float:
        return max(0.0, self.budget_s - self.elapsed_s)


class Campaign:
    def __init__(
        self,
        options: CampaignOptions,
        command: list[str] | None = None,
        on_status: Callable[[Status], None] | None = None,
    ) -> None:
        self.options = options
        self.command = command
        self.on_status = on_status
        self.classes: dict[Signature, FoundClass] = {}
        self.examples = 0  # examples with a result, or skipped on every runtime
        self.skipped = 0
        self.drawn = 0  # examples drawn (their case ids are fuzz-1, fuzz-2...)
        self._uncounted: dict[str, int] = {}  # case id -> runs skipped, until its first result
        self.fuzz_s = 0.0
        self.shrink_s = 0.0
        # input key -> runtime -> kinds seen: decides what is skipped
        self._seen: dict[tuple, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
        self._round: dict[str, Example] = {}
        self._started = 0.0
        self.run: Run | None = None
        self.runtimes: list[str] = []  # the pool's names, once it started
        self.stopping = False  # Ctrl-C was pressed

    # -- the campaign ---------------------------------------------------------
    def execute(self) -> Run:
        """Run until the time budget is spent (or Ctrl-C); return the finished Run."""
        options = self.options
        header = {
            "campaign": {
                "seed": options.seed,
                "time_budget_s": options.time_budget,
                "max_elements": options.max_elements,
                "round_size": options.round_size,
                "shard": list(options.shard),
            }
        }
        self.run = Run(options.out_dir, options.engine(), self.command, header)
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, self._interrupt) if main else None
        try:
            # Everything is written under the run's folder lock: a campaign the
            # lock refuses (EngineError from Run) writes nothing into the folder.
            with self.run:
                try:
                    self._fuzz()
                finally:
                    artifacts.write_findings(self)  # also after a second Ctrl-C
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
        return self.run

    def _fuzz(self) -> None:
        self.runtimes = self.run.pool.runtimes
        self._started = time.monotonic()
        artifacts.write_findings(self)
        source = self._examples()
        while self._left() > 0:
            began = time.monotonic()
            self._one_round(source)
            self.fuzz_s += time.monotonic() - began
            artifacts.write_findings(self)
            self._status()
            self._shrink_pending()
        self.run.summary.interrupted = self.stopping
        if not self.stopping and not self.run.summary.records:
            # What `conformance gate` refuses ("the run has no results") is no pass here either.
            raise NothingRan(
                f"the time budget ({self.options.time_budget:g} s) ran out before any example "
                "ran: nothing was judged; give a longer --time-budget"
            )

    def _interrupt(self, signum, frame) -> None:
        """Ctrl-C: finish the round in flight, save, stop. A KeyboardInterrupt
        raised anywhere could land inside Hypothesis, which does not always pass
        it on; a second Ctrl-C does raise it, at once."""
        if self.stopping:
            raise KeyboardInterrupt
        self.stopping = True

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def _left(self) -> float:
        return 0.0 if self.stopping else self.options.time_budget - self.elapsed()

    def _deadline(self) -> float:
        return self._started + self.options.time_budget

    def _status(self, shrinking: str | None = None) -> None:
        if self.on_status:
            self.on_status(
                Status(
                    elapsed_s=self.elapsed(),
                    budget_s=self.options.time_budget,
                    examples=self.examples,
                    fuzz_s=self.fuzz_s,
                    classes=len(self.classes),
                    skipped=self.skipped,
                    shrinking=shrinking,
                )
            )

    def _examples(self) -> Iterator[Example]:
        """Examples forever, in batches of ``round_size`` with derived seeds."""
        strategy = strategies.examples(max_elements=self.options.max_elements)
        batch = 0
        drawn: list[Example] = []
        while True:
            drawn.clear()

            @seed(_derive(self.options.seed, _stream(self.options.shard), batch))
            @settings(
                database=None,
                max_examples=self.options.round_size,
                phases=[Phase.generate],
                deadline=None,
                suppress_health_check=list(HealthCheck),
                verbosity=Verbosity.quiet,
            )
            @given(strategy)
            def collect(example):
                if self._started and self._left() <= 0:  # the budget holds between draws
                    raise _OutOfBudget
                drawn.append(example)

            try:
                collect()
            except _OutOfBudget:
                if not drawn:
                    return
            yield from drawn
            batch += 1

    def _one_round(self, source: Iterator[Example]) -> None:
        items = []
        self._round = {}
        self._round_outcomes: dict[str, dict[str, Outcome]] = {}
        # Near the end, rounds shrink to what the rate says still fits.
        rate = self.examples / self.fuzz_s if self.fuzz_s else 0.0
        size = self.options.round_size
        if rate:
            size = max(4, min(size, int(rate * self._left())))
        for _ in range(size):
            if self._left() <= 0:
                break
            example = next(source, None)
            if example is None:  # the budget ran out while drawing
                break
            self.drawn += 1
            case = example.as_case(f"fuzz-{self.drawn}")
            key = _cost_key(example)
            runtimes = [rt for rt in self.run.pool.runtimes if not self._hopeless(key, rt)]
            skipped = len(self.run.pool.runtimes) - len(runtimes)
            if runtimes:
                self._uncounted[case.id] = skipped  # counted at its first result
            else:  # skipped everywhere: no result to wait for
                self._count(skipped)
            self._round[case.id] = example
            items.append((case, [example.variant], runtimes))
        # The budget holds inside a round too: past it, no job starts (a
        # runtime that hangs on everything costs one timeout, not a round's).
        # What it stopped before anything of it ran is not counted.
        try:
            self.run.drive(
                items,
                progress=lambda *_: self._status(),
                recorded=self._recorded,
                deadline=self._deadline(),
            )
        finally:
            self._uncounted.clear()

    def _count(self, skipped: int) -> None:
        self.examples += 1
        self.skipped += skipped

    def _hopeless(self, key: tuple, runtime: str) -> bool:
        kinds = self._seen[key][runtime]
        total = sum(kinds.values())
        return total >= 2 and sum(kinds[k] for k in EXPENSIVE) == total

    def _recorded(self, case, variant, runtime, verdict, outcome, raw, record) -> None:
        if case.id in self._uncounted:  # its first result
            self._count(self._uncounted.pop(case.id))
        if verdict is None:  # nothing ran (the memory guard, or the budget ran out first)
            return
        example = self._round[case.id]
        self._round_outcomes.setdefault(case.id, {})[runtime] = outcome
        clause = _clause(verdict)
        self._seen[_cost_key(example)][runtime][outcome.kind] += 1
        if outcome.kind not in DISCREPANCIES:
            return
        signature = signature_of(example, runtime, outcome.kind, clause)
        found = self.classes.get(signature)
        if found:
            found.hits += 1
            return
        found = FoundClass(
            number=len(self.classes) + 1,
            signature=signature,
            first_found_s=round(self.elapsed(), 3),
            example=example,
            verdict=verdict,
            outcomes=self._round_outcomes[case.id],  # the other runtimes' fill in
        )
        self.classes[signature] = found
        artifacts.write_class(found, self.options.out_dir)  # findings.json: at the round's end

    # -- shrinking --------------------------------------------------------------
    def _shrink_pending(self) -> None:
        # Classes of a family often share a cause: the first class of each
        # (runtime, kind, op) is shrunk first, then the first of each
        # (runtime, kind, op, dtype), then the rest, each tier in discovery order.
        done = [f.signature for f in self.classes.values() if f.shrink]
        coarse = {_family(sig)[:3] for sig in done}
        fine = {_family(sig) for sig in done}

        def tier(found: FoundClass) -> tuple:
            family = _family(found.signature)
            return (family[:3] in coarse, family in fine, found.number)

        waiting = sorted((f for f in self.classes.values() if not f.shrink), key=tier)
        for found in waiting:
            if self._left() <= 0:
                return
            if self.shrink_s > self.options.shrink_share * self.elapsed():
                return  # shrinking has had its share for now
            began = time.monotonic()
            self._status(shrinking=found.signature.slug)
            self._shrink(found)
            self._outcomes_everywhere(found)
            self.shrink_s += time.monotonic() - began
            artifacts.write_class(found, self.options.out_dir)
            artifacts.write_findings(self)
        self._status()

    def _shrink(self, found: FoundClass) -> None:
        """Hypothesis' shrinker on a strategy narrowed to the class: the same
        operator, opset, dtypes, variant and broken clause; a candidate counts
        only if it has the class's features and gets the same outcome kind."""
        target = found.signature
        example = found.example
        narrow = dict(
            op=target.op,
            opset=target.opset,
            dtype=target.dtype,
            index_dtype=example.indices_dtype,
            variant=target.variant,
            max_elements=self.options.max_elements,
        )
        if target.violation is None:
            strategy = strategies.valid_examples(**narrow)
        else:
            strategy = strategies.invalid_examples(clause=target.violation, **narrow)
        deadline = time.monotonic() + min(self.options.shrink_seconds, max(0.0, self._left()))
        tally = {"calls": 0, "steps": 0}
        best: list[tuple[Example, oracle.Verdict]] = []

        def reproduces(candidate: Example) -> bool:
            if (
                tally["calls"] >= self.options.shrink_calls
                or time.monotonic() > deadline
                or self.stopping
            ):
                # Out of budget: stop Hypothesis at once. (Answering "no" kept it
                # trying candidates for seconds; so did answering "yes".)
                raise _OutOfBudget
            if features(candidate) != target.features:
                return False
            try:
                verdict = verdict_of(candidate, self.options.case_memory)
            except OverMemory:
                return False
            if _clause(verdict) != target.violation:
                return False
            tally["calls"] += 1
            outcome = self._run_once(candidate, verdict, [target.runtime])[target.runtime]
            if outcome.kind != target.kind:
                return False
            best[:] = [(candidate, verdict)]
            tally["steps"] += 1
            return True

        began = time.monotonic()
        _minimize(strategy, reproduces, _derive(self.options.seed, "shrink", found.number))
        found.shrink = {
            "calls": tally["calls"],
            "steps": tally["steps"],
            "seconds": round(time.monotonic() - began, 3),
        }
        if best:
            found.example, found.verdict = best[0]
            found.shrunk = True

    def _outcomes_everywhere(self, found: FoundClass) -> None:
        """What every runtime does with the class's (minimal) example."""
        found.outcomes = self._run_once(found.example, found.verdict, self.run.pool.runtimes)

    def _run_once(
        self, example: Example, verdict: oracle.Verdict, runtimes: list[str]
    ) -> dict[str, Outcome]:
        case = example.as_case("fuzz-shrink")
        return self.run.run_one(case, example.variant, runtimes, verdict)


class _Found(Exception):
    """Raised inside the Hypothesis test to mark a reproducing candidate."""


class _OutOfBudget(BaseException):
    """Raised inside the Hypothesis test when the shrink budget is spent. A
    BaseException: Hypothesis passes those on at once instead of shrinking them."""


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
    except (_Found, _OutOfBudget):
        pass
    except (HypothesisException, ExceptionGroup):
        # A runtime that is not deterministic (a crash that does not recur on
        # replay) makes Hypothesis report a flaky test; the best candidate stands.
        pass


def _cost_key(example: Example) -> tuple:
    """What decides whether a runtime crashes or hangs, as far as the skip rule
    is concerned: the operator and the input's features. Coarser than a
    signature, so that the rule learns fast; read from the input alone, so
    that it is known before anything runs."""
    return (example.op, features(example))


def _family(signature: Signature) -> tuple:
    return (signature.runtime, signature.kind, signature.op, signature.dtype)


def _clause(verdict: oracle.Verdict) -> str | None:
    return None if verdict.valid else verdict.violation.clause


def _stream(shard: tuple[int, int]) -> str:
    """The name of a shard's example stream; shard 1/1 keeps the plain one."""
    return "batch" if shard == (1, 1) else f"batch/{shard[0]}/{shard[1]}"


def _derive(campaign_seed: int, purpose: str, number: int) -> int:
    """A seed for one batch or one shrink, stable across Python runs."""
    return random.Random(f"{campaign_seed}/{purpose}/{number}").getrandbits(64)
