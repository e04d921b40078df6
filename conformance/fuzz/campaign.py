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

- shrinking gets at most half of the elapsed time, and each bug at most
  ``shrink_seconds`` and ``shrink_calls`` runtime calls; a bug not shrunk in
  its share keeps the example that found it (``"shrunk": false``);
- once a runtime has crashed or hung on at least two inputs of a kind
  (:func:`_cost_keys`: operator, features and index classes, whatever their
  dtype, variant, opset and broken clause) and on at least three in four of
  them, it is no longer sent such inputs: each would cost a worker restart or
  a timeout and tell nothing new. They are counted as ``skipped``. Inputs of
  a kind not yet seen twice go first in their round, so that the rule knows.

The counts are exact: an example counts once it has a result (a record in
results.jsonl), or when every runtime skipped it; then each of its runs is a
record or counted in ``skipped`` (records = examples x runtimes - skipped, for
a campaign that was not interrupted). An example the time budget stopped
before any of its jobs started is not counted; one it stopped half way gets a
"not run" record for each runtime it did not reach
(:meth:`conformance.engine.schedule.Schedule.not_run`).

Bugs first (:mod:`conformance.fuzz.bugs`): every discrepancy has a cause
(the bug: runtime, kind, operator and mechanism) besides its class; a class
is a (signature, bug) pair, so it never mixes two mechanisms, and a bug
gathers its classes. Only a bug's first class is shrunk (the rest keep the
example that found them), and only by the shard that claims the bug in the
regression store (:mod:`conformance.fuzz.store`), which then holds the bug's
smallest reproducer for later campaigns (``conformance fuzz replay``). A
campaign on a store that already holds bugs replays them first: a bug still
there is not shrunk again.

A pack's discrepancy is re-run alone (the one-node model is the authority)
for the first :attr:`CampaignOptions.confirm_alone` discrepancies of each bug
only; after that the record keeps what the pack showed (``confirmed: false``,
its note saying the verdict rests on the pack): the hundredth example of a
confirmed bug costs no compile of its own.

The engine's options are defined once, in :class:`conformance.engine.run.Options`,
from which :class:`CampaignOptions` derives; the folder is written only under the run's
lock (a campaign refused by it leaves the folder alone). What the campaign
counts is its own examples, never the store's replay: a campaign with none
(the budget ran out in the replay, in the first draw, or before any job
started) is :class:`NothingRan`, not a pass; one with a target that judged
none of its examples (each "not run", or ``harness_unsupported``) says so in
the run's summary (``Summary.unjudged``), and does not pass either.
"""

from __future__ import annotations

import contextlib
import math
import random
import signal
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis.errors import HypothesisException

from conformance import adapters, oracle
from conformance.cases.check import OverMemory, verdict_of
from conformance.cases.model import Case
from conformance.engine import models
from conformance.engine.judge import DISCREPANCIES, Outcome
from conformance.engine.pool import RUN_TIMEOUTS, EngineError, Timeouts
from conformance.engine.run import Options, Run
from conformance.engine.targets import Target
from conformance.errors import ConformanceError
from conformance.fuzz import artifacts, coverage, replay, strategies
from conformance.fuzz.bugs import Cause, cause_of
from conformance.fuzz.signature import Signature, features, signature_of
from conformance.fuzz.store import Entry, Store
from conformance.fuzz.strategies import Example

EXPENSIVE = frozenset({"crash", "timeout"})  # kinds that cost a worker restart
HOPELESS_SHARE = 0.75  # of a kind's results expensive: the runtime is spared it (_hopeless)


# Seconds per job when --timeout is not given: 2 s, where a healthy runtime
# takes milliseconds and a hang costs a whole timeout. The compilers compile
# each job: a full pack of 32 examples takes TVM ~4 s and IREE ~2.7 s alone,
# past 2 s (campaigns' packs are mostly smaller: 40 s campaigns at 2 s timed
# nothing out), and a false timeout would be a false bug; they get run's 30 s.
FUZZ_TIMEOUTS = Timeouts(2.0, {name: RUN_TIMEOUTS.of(name) for name in sorted(adapters.OPT_IN)})

# Engine options the campaign sets itself, whatever it is given.
CAMPAIGN_SETS = {
    "variants": models.VARIANTS,  # each example runs in its own drawn variant (of these)
    "default_timeouts": FUZZ_TIMEOUTS,
}


@dataclass(init=False)
class CampaignOptions(Options):
    """The engine's options (:class:`conformance.engine.run.Options`, defined
    there only: ``workers``, ``timeout``, ``pack``, ``worker_memory``...) and the
    campaign's own. Built as ``CampaignOptions(runtimes, time_budget, seed,
    out_dir, **options)``; the engine's options the campaign sets itself
    (:data:`CAMPAIGN_SETS`) are not given."""

    time_budget: float  # seconds, shrinking included
    seed: int
    out_dir: Path
    max_elements: int = strategies.DEFAULT_MAX_ELEMENTS
    round_size: int = 64  # examples per round (also the Hypothesis batch)
    shrink_seconds: float = 10.0  # per class
    shrink_calls: int = 1000  # runtime calls per class (the 10 s usually binds first)
    shrink_share: float = 0.5  # of the elapsed time, at most
    shard: tuple[int, int] = (1, 1)  # (I, N): shards draw different examples
    store: Store | None = None  # the regression store (None: none)
    confirm_alone: int = 2  # discrepancies per bug re-run alone before packs are trusted
    # fuzz --model: a strategy of Examples every round draws from (None: coverage-guided
    # keys), and what the header says of it
    strategy: object = None
    extra_header: dict | None = None
    batch_size: int = 16  # the engine's, smaller: rounds are short

    def __init__(
        self, runtimes: Sequence[str | Target], time_budget: float, seed: int, out_dir: Path,
        **given: object,
    ) -> None:  # fmt: skip
        self.runtimes, self.time_budget, self.seed, self.out_dir = (
            runtimes, time_budget, seed, out_dir,
        )  # fmt: skip
        settable = {f.name: f for f in fields(self)}
        for name in (given.keys() - settable.keys()) | (given.keys() & CAMPAIGN_SETS.keys()):
            raise TypeError(f"CampaignOptions() got an unexpected keyword argument {name!r}")
        for name, option in settable.items():
            if name in CAMPAIGN_SETS:
                setattr(self, name, CAMPAIGN_SETS[name])
            elif name in given:
                setattr(self, name, given[name])
            elif option.default is not MISSING:
                setattr(self, name, option.default)
            elif option.default_factory is not MISSING:
                setattr(self, name, option.default_factory())
        self.__post_init__()

    def __post_init__(self) -> None:
        # Every duration the campaign computes and writes (findings.json,
        # header.json, the status line) derives from these: none may be NaN or
        # infinite, which JSON cannot hold and no budget can mean.
        for name, low, strict in _CHECKED:
            value = getattr(self, name)
            if value is None and name == "timeout":
                continue
            if not _finite_number(value) or value < low or (strict and value == low):
                bound = f"> {low:g}" if strict else f">= {low:g}"
                raise BadCampaign(f"campaign option {name}={value!r}: give a finite number {bound}")
        if not 0 <= self.shrink_share <= 1:
            raise BadCampaign(f"campaign option shrink_share={self.shrink_share!r}: from 0 to 1")

    def engine(self) -> Options:
        """The engine's options alone, as the engine's own class (the run's
        header records those). An engine option this class does not hold is an
        error here, at the first campaign, not a default silently kept."""
        names = [f.name for f in fields(Options)]
        missing = [name for name in names if not hasattr(self, name)]
        if missing:
            raise TypeError(
                f"engine option(s) {', '.join(sorted(missing))} not derived: "
                "CampaignOptions must derive from conformance.engine.run.Options"
            )
        return Options(**{name: getattr(self, name) for name in names})


class NothingRan(EngineError):
    """The time budget ran out before any of the campaign's own examples ran
    (the store's replay does not count): nothing was fuzzed, so nothing passed
    (``conformance gate`` refuses such a folder too)."""


class BadCampaign(ConformanceError, ValueError):
    """A campaign option no campaign can run with (a budget that is NaN, infinite or <= 0)."""


# (option, lowest value, whether the lowest is excluded): numbers that must be finite
_CHECKED = (
    ("time_budget", 0.0, True),
    ("timeout", 0.0, True),
    ("shrink_seconds", 0.0, False),
    ("shrink_share", 0.0, False),
    ("round_size", 1, False),
    ("shrink_calls", 0, False),
    ("confirm_alone", 0, False),
)


def _finite_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


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
    store: str | None = None  # "new": stored by this campaign, "known": the store held it
    confirmed: int = 0  # its discrepancies re-run alone so far (CampaignOptions.confirm_alone)
    claimed: bool = False  # this shard shrinks it (it won the store's claim, or there is no store)
    reproducer: int | None = None  # the class holding its smallest reproducer

    @property
    def id(self) -> str:
        return self.cause.id


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
    bugs: int = 0

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
        self.classes: dict[tuple[Signature, str], FoundClass] = {}  # (signature, bug id) ->
        self.bugs: dict[str, Bug] = {}  # bug id -> bug, in discovery order
        self.replayed: list[replay.Replayed] = []  # the store's bugs, replayed first
        self.coverage = coverage.Coverage(options.max_elements)  # what the examples reached
        self.store_warnings: list[str] = []
        self.examples = 0  # examples with a result, or skipped on every runtime
        self.skipped = 0
        self.drawn = 0  # examples drawn (their case ids are fuzz-1, fuzz-2...)
        self._uncounted: dict[str, int] = {}  # case id -> runs skipped, until its first result
        # runtime -> the campaign's own results on it, and those judged (not
        # "not run", not harness_unsupported); the replay's are not counted
        self.results: Counter = Counter()
        self.judged: Counter = Counter()
        self.replay_s = 0.0  # what the store's replay took of the budget
        self.fuzz_s = 0.0
        self.shrink_s = 0.0
        # input key -> runtime -> kinds seen: decides what is skipped
        self._seen: dict[tuple, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
        self._round: dict[str, Example] = {}
        self._started = 0.0
        self.run: Run | None = None
        self.runtimes: list[str] = []  # the pool's names, once it started
        self.stopping = False  # Ctrl-C was pressed
        self._confirming: dict[str, int] = {}  # bug id -> confirmations asked before it was found

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
            },
            **(options.extra_header or {}),
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
                    self._store_unshrunk()
                    artifacts.write_findings(self)  # also after a second Ctrl-C
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
        return self.run

    @property
    def shard(self) -> str:
        """This campaign's name in the store and in findings.json (``shrunk_by``):
        its shard and its run's id, so that two campaigns never share a claim."""
        return "{}/{}@{}".format(*self.options.shard, self.run.run_id)

    def _fuzz(self) -> None:
        self.runtimes = self.run.pool.runtimes
        self._started = time.monotonic()
        artifacts.write_findings(self)
        if self.options.store is not None:
            self._replay_store()
        # The next batch is drawn in a thread while this round runs: the drive
        # mostly waits on the workers' pipes, and drawing is the parent's largest
        # cost. Hypothesis runs in one thread at a time: shrinking waits for the draw.
        with ThreadPoolExecutor(1, thread_name_prefix="conformance-draw") as drawer:
            batch = 0
            pending = drawer.submit(*self._next_batch(batch))
            while self._left() > 0:
                began = time.monotonic()
                examples = pending.result()
                if not examples:  # the budget ran out while drawing
                    break
                batch += 1
                pending = drawer.submit(*self._next_batch(batch))
                self._one_round(examples)
                if self._shrinking_due():
                    pending.result()
                self.fuzz_s += time.monotonic() - began
                artifacts.write_findings(self)
                self._status()
                self._shrink_pending()
        self.run.summary.interrupted = self.stopping
        if not self.stopping and not self.examples:
            # What `conformance gate` refuses ("the run has no results") is no
            # pass here either; nor is a campaign whose results are all the
            # replay's: it fuzzed nothing.
            replayed = (
                f" (the store's replay of {_bugs(len(self.replayed))} took {self.replay_s:.1f} s)"
                if self.replayed
                else ""
            )
            raise NothingRan(
                f"the time budget ({self.options.time_budget:g} s) ran out before any example "
                f"ran{replayed}: nothing was fuzzed; give a longer --time-budget"
            )
        self.run.summary.unjudged = self.unjudged()

    def unjudged(self) -> dict[str, int]:
        """The targets that judged none of the campaign's examples, each with
        its results (each "not run" or ``harness_unsupported``): a campaign
        that says nothing of a target does not pass for it."""
        return {rt: self.results[rt] for rt in self.runtimes if not self.judged[rt]}

    def _replay_store(self) -> None:
        """The store's bugs, replayed before fuzzing: each one still there is
        known (it is not shrunk again), and findings.json says which are
        fixed or changed."""
        store = self.options.store
        entries = store.entries()
        self._store_warnings(store)
        if not entries:
            return
        began = time.monotonic()
        self.replayed = replay.replay(self.run, entries, self.options.out_dir, self._deadline())
        self.replay_s = time.monotonic() - began
        artifacts.write_findings(self)

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
                    bugs=len(self.bugs),
                )
            )

    def _next_batch(self, batch: int) -> tuple:
        """What draws batch number ``batch`` (a callable and its arguments, for
        the drawing thread): ``round_size`` examples with a seed derived from
        the campaign's. Each batch has a key
        (:func:`conformance.fuzz.coverage.next_key`: op, opset, variant, data
        and index dtype), chosen here toward the coverage cells still cold;
        most of its examples are valid at that key, so that they share packed
        models (and sessions) on every runtime."""
        if batch == 0:
            seeded = _derive(self.options.seed, _stream(self.options.shard) + "/keys", 0)
            self._keys = random.Random(seeded)
        key = coverage.next_key(self.coverage, self._keys)
        strategy = coverage.round_strategy(self.coverage, key, self.options.max_elements)
        if self.options.strategy is not None:  # fuzz --model: within the model's nodes
            strategy = self.options.strategy
        return self._draw, strategy, _derive(self.options.seed, _stream(self.options.shard), batch)

    def _draw(self, strategy, batch_seed: int) -> list[Example]:
        """One batch (in the drawing thread); fewer when the budget runs out."""
        drawn: list[Example] = []

        @seed(batch_seed)
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

        with contextlib.suppress(_OutOfBudget):
            collect()
        return drawn

    def _shrinking_due(self) -> bool:
        """Whether :meth:`_shrink_pending` has a bug to shrink now."""
        if self.shrink_s > self.options.shrink_share * self.elapsed():
            return False
        return any(
            bug.claimed and bug.shrunk_by is None and bug.store != "known"
            for bug in self.bugs.values()
        )

    def _one_round(self, batch: list[Example]) -> None:
        self._round = {}
        self._cost: dict[str, list[tuple]] = {}  # case id -> its cost keys
        self._round_outcomes: dict[str, dict[str, Outcome]] = {}
        # Near the end, rounds shrink to what the rate says still fits.
        rate = self.examples / self.fuzz_s if self.fuzz_s else 0.0
        size = self.options.round_size
        if rate:
            size = max(4, min(size, int(rate * self._left())))
        drawn: list[tuple[Example, Case]] = []
        for example in batch[:size]:
            if self._left() <= 0:
                break
            self.drawn += 1
            case = example.as_case(f"fuzz-{self.drawn}")
            self._round[case.id] = example
            drawn.append((example, case))
        # Inputs of a kind some runtime has not been seen on twice go first, two
        # of each: the skip rule then knows, for the rest of the round, where a
        # runtime crashes or hangs on everything (a round of 64 inputs that
        # each hang cost 64 timeouts, not 2).
        probes, rest, probing = [], [], Counter()
        for example, case in drawn:
            self._cost[case.id] = _cost_keys(example)  # once: index classes cost a scan
            unknown = [
                key
                for key in self._cost[case.id]
                if any(sum(self._seen[key][rt].values()) < 2 for rt in self.runtimes)
            ]
            if any(probing[key] < 2 for key in unknown):
                probing.update(unknown)
                probes.append((example, case))
            else:
                rest.append((example, case))
        for part in (probes, rest):
            if part and not self.stopping:
                self._drive([self._item(example, case) for example, case in part])

    def _item(self, example: Example, case: Case) -> tuple:
        """The example's run on every runtime the skip rule does not spare it."""
        keys = self._cost[case.id]
        runtimes = [rt for rt in self.runtimes if not any(self._hopeless(k, rt) for k in keys)]
        skipped = len(self.runtimes) - len(runtimes)
        if runtimes:
            self._uncounted[case.id] = skipped  # counted at its first result
        else:  # skipped everywhere: no result to wait for
            self._count(example, skipped)
        return (case, [example.variant], runtimes)

    def _drive(self, items: list[tuple]) -> None:
        # The budget holds inside a round too: past it, no job starts (a
        # runtime that hangs on everything costs one timeout, not a round's).
        # What it stopped before anything of it ran is not counted.
        try:
            self.run.drive(
                items,
                progress=lambda *_: self._status(),
                recorded=self._recorded,
                deadline=self._deadline(),
                confirm=self._confirm,
            )
        finally:
            self._uncounted.clear()

    def _count(self, example: Example, skipped: int) -> None:
        self.examples += 1
        self.skipped += skipped
        self.coverage.add(example)

    def _hopeless(self, key: tuple, runtime: str) -> bool:
        """At least two crashes or hangs on inputs of this kind, and (nearly)
        nothing else: tract panics on most inputs with an index out of range
        and accepts a few; each panic costs a worker restart and a re-run to
        confirm it, for a bug already found."""
        kinds = self._seen[key][runtime]
        total = sum(kinds.values())
        expensive = sum(kinds[k] for k in EXPENSIVE)
        return expensive >= 2 and expensive >= HOPELESS_SHARE * total

    def _recorded(self, case, variant, runtime, verdict, outcome, raw, record) -> None:
        if case.id in self._uncounted:  # its first result
            self._count(self._round[case.id], self._uncounted.pop(case.id))
        self.results[runtime] += 1
        if verdict is None:  # nothing ran (the memory guard, or the budget ran out first)
            return
        if outcome.kind != "harness_unsupported":  # a "not run" one has no verdict
            self.judged[runtime] += 1
        example = self._round[case.id]
        self._round_outcomes.setdefault(case.id, {})[runtime] = outcome
        clause = _clause(verdict)
        for key in self._cost[case.id]:
            self._seen[key][runtime][outcome.kind] += 1
        if outcome.kind not in DISCREPANCIES:
            return
        signature = signature_of(example, runtime, outcome.kind, clause)
        cause = cause_of(runtime, example.op, outcome, signature.features, clause, example.dtype)
        bug = self._bug(cause)
        bug.hits += 1
        bug.dtypes.add(example.dtype)
        bug.variants.add(example.variant)
        found = self.classes.get((signature, cause.id))
        if found:
            found.hits += 1
            return
        found = FoundClass(
            number=len(self.classes) + 1,
            signature=signature,
            bug=cause.id,
            first_found_s=round(self.elapsed(), 3),
            example=example,
            verdict=verdict,
            outcomes=self._round_outcomes[case.id],  # the other runtimes' fill in
        )
        self.classes[(signature, cause.id)] = found
        bug.classes.append(found.number)
        if bug.reproducer is None:
            bug.reproducer = found.number
        artifacts.write_class(found, self.options.out_dir)  # findings.json: at the round's end

    def _bug(self, cause: Cause) -> Bug:
        """The bug of this cause, new (and claimed in the store) the first time."""
        bug = self.bugs.get(cause.id)
        if bug is None:
            bug = self.bugs[cause.id] = Bug(cause, [], round(self.elapsed(), 3))
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
                bug.store = "known"
        self._store_warnings(store)

    def _store_warnings(self, store: Store) -> None:
        for warning in getattr(store, "warnings", ())[len(self.store_warnings) :]:
            self.store_warnings.append(warning)

    def _confirm(self, case, variant, runtime, verdict, outcome) -> bool:
        """Whether a discrepancy a pack showed is re-run alone: the first
        ``confirm_alone`` of its bug are (and each of a bug not seen alone yet)."""
        example = self._round.get(case.id)
        if example is None:
            return True
        cause = cause_of(
            runtime, example.op, outcome, features(example), _clause(verdict), example.dtype
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

    # -- shrinking --------------------------------------------------------------
    def _shrink_pending(self) -> None:
        """Shrink the first class of each bug this shard claimed, in discovery
        order, within shrinking's share of the time; then store its reproducer."""
        for bug in list(self.bugs.values()):
            if not bug.claimed or bug.shrunk_by is not None or bug.store == "known":
                continue
            if self._left() <= 0:
                return
            if self.shrink_s > self.options.shrink_share * self.elapsed():
                return  # shrinking has had its share for now
            found = self._class_numbered(bug.classes[0])
            began = time.monotonic()
            self._status(shrinking=found.signature.slug)
            self._shrink(found)
            self._outcomes_everywhere(found)
            self.shrink_s += time.monotonic() - began
            bug.shrunk_by = self.shard
            bug.reproducer = found.number
            artifacts.write_class(found, self.options.out_dir)
            self._store(bug, found)
            artifacts.write_findings(self)
        self._status()

    def _store_unshrunk(self) -> None:
        """At the end: the bugs this campaign claimed but had no time to shrink
        go into the store with the example that found them (``"shrunk":
        false`` in their description), so that no bug found is lost."""
        if self.options.store is None or self.run is None:
            return
        for bug in self.bugs.values():
            if bug.claimed and bug.store is None and bug.classes:
                self._store(bug, self._class_numbered(bug.classes[0]), shrunk=False)

    def _class_numbered(self, number: int) -> FoundClass:
        return list(self.classes.values())[number - 1]

    def _store(self, bug: Bug, found: FoundClass, shrunk: bool = True) -> None:
        """The bug's reproducer into the regression store (when there is one)."""
        store = self.options.store
        if store is None:
            return
        entry = Entry(
            bug_id=bug.id,
            bug={**artifacts.bug_json(self, bug), "shrunk": shrunk and found.shrunk},
            case_yaml=artifacts.case_yaml(found),
            variant=found.example.variant,
            shrunk_by=self.shard,
            found={
                "versions": {
                    name: about.get("version") for name, about in self.run.pool.info.items()
                },
                "seed": self.options.seed,
                "shard": self.shard,
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            },
        )
        store.put(entry)
        bug.store = "new"
        self._store_warnings(store)

    def _shrink(self, found: FoundClass) -> None:
        """Hypothesis' shrinker on a strategy narrowed to the class: the same
        operator, opset, dtypes, variant and broken clause; a candidate counts
        only if it has the class's features and shows the same bug (outcome
        kind and mechanism)."""
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
            cause = cause_of(
                target.runtime, target.op, outcome, target.features, target.violation, target.dtype
            )
            if cause.id != found.bug:  # the same kind by another mechanism
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


def _cost_keys(example: Example) -> list[tuple]:
    """What decides whether a runtime crashes or hangs, as far as the skip rule
    is concerned (a runtime hopeless on any of these keys is spared the input).
    Read from the input alone, so that they are known before anything runs;
    coarser than a signature, so that the rule learns fast:

    - the operator, the input's features and its index classes
      (:func:`conformance.fuzz.coverage.index_classes`);
    - for indices out of range, the operator and those classes alone: that
      is where runtimes panic (tract) or hang (onnx.reference on 2**63-1)
      whatever else the input has; in-range inputs never share this key.
    """
    classes = coverage.index_classes(example)
    keys = [(example.op, features(example), classes)]
    wrong = tuple(c for c in classes if c in strategies.INVALID_INDEX_CLASSES)
    if wrong:
        keys.append((example.op, "indices", wrong))
    return keys


def _bugs(count: int) -> str:
    return f"{count} bug" + ("" if count == 1 else "s")


def _clause(verdict: oracle.Verdict) -> str | None:
    return None if verdict.valid else verdict.violation.clause


def _stream(shard: tuple[int, int]) -> str:
    """The name of a shard's example stream; shard 1/1 keeps the plain one."""
    return "batch" if shard == (1, 1) else f"batch/{shard[0]}/{shard[1]}"


def _derive(campaign_seed: int, purpose: str, number: int) -> int:
    """A seed for one batch or one shrink, stable across Python runs."""
    return random.Random(f"{campaign_seed}/{purpose}/{number}").getrandbits(64)
