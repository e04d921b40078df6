"""A time-boxed fuzz campaign: draw, run, record, shrink, save.

The campaign runs in rounds through the same engine as ``conformance run``
(:class:`conformance.engine.run.Run`): each round draws examples from
:func:`conformance.fuzz.strategies.examples` with a seed derived from the campaign
seed (:mod:`conformance.fuzz.seeds`), toward the coverage cells still cold
(:mod:`conformance.fuzz.coverage`), runs each in its drawn variant on every
runtime the skip rule does not spare it (:mod:`conformance.fuzz.skips`), judges
it against the oracle and appends the records to ``results.jsonl``
(:mod:`conformance.fuzz.rounds`). What the results show is recorded in
:class:`~conformance.fuzz.findings.Findings`
(classes, bugs, their claims in the store, the counts); a new class is saved at
once with the example that found it (:mod:`conformance.fuzz.artifacts`), then
shrunk between rounds (:mod:`conformance.fuzz.shrinker`) and saved again. A
campaign on a store that already holds bugs replays them first
(:mod:`conformance.fuzz.replay`): a bug still there is not shrunk again.

Near the end, rounds shrink to what the rate says still fits; the budget
holds inside a round too (:mod:`conformance.fuzz.budget`). A campaign given
``max_examples`` (``--max-examples``) also ends once it has run that many
of its own examples, the last round cut to what is still wanted: what it
runs is then the seed's first examples, however loaded the machine (a test's
campaign is so bounded, with a budget it never reaches). An example the time
budget stopped before any of its jobs started is not counted; one it stopped
half way gets a "not run" record for each runtime it did not reach
(:meth:`conformance.engine.schedule.Schedule.not_run`): records = examples x
runtimes - skipped, for a campaign that was not interrupted.

A pack's discrepancy is re-run alone (the one-node model is the authority)
for the first :attr:`CampaignOptions.confirm_alone` discrepancies of each bug
only; after that the record keeps what the pack showed (``confirmed: false``,
its note saying the verdict rests on the pack): the hundredth example of a
confirmed bug costs no compile of its own.

The engine's options are defined once, in :class:`conformance.engine.run.Options`,
from which :class:`CampaignOptions` derives; the folder is written only under
the run's lock (a campaign refused by it leaves the folder alone). What the
campaign counts is its own examples, never the store's replay: a campaign with
none (the budget ran out in the replay, in the first draw, or before any job
started) is :class:`NothingRan`, not a pass; one with a target that judged
none of its examples (each "not run", or ``harness_unsupported``) says so in
the run's summary (``Summary.unjudged``), and does not pass either.
"""

from __future__ import annotations

import contextlib
import random
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

from conformance.cases.case import Case
from conformance.engine.run import Run
from conformance.fuzz import artifacts, coverage, replay, skips
from conformance.fuzz.budget import Budget, OutOfBudget
from conformance.fuzz.findings import Bug, Findings, FoundClass
from conformance.fuzz.options import (
    CAMPAIGN_SETS,
    FUZZ_TIMEOUTS,
    BadCampaign,
    CampaignOptions,
    NothingRan,
)
from conformance.fuzz.rounds import Round
from conformance.fuzz.seeds import derive, stream
from conformance.fuzz.shrinker import Shrinker
from conformance.fuzz.strategies import Example

__all__ = [
    "CAMPAIGN_SETS", "FUZZ_TIMEOUTS", "BadCampaign", "Bug", "Campaign", "CampaignOptions",
    "FoundClass", "NothingRan", "Status",
]  # fmt: skip


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
        self.budget = Budget(options.time_budget)
        self.findings = Findings(options, self.budget)
        self.skips = skips.SkipRule()
        self.shrinker = Shrinker(options, self.findings, self.budget, self._status)
        self.run: Run | None = None
        self.written: dict | None = None  # findings.json as the campaign last wrote it
        self.drawn = 0  # examples drawn (their case ids are fuzz-1, fuzz-2...)
        keys_seed = derive(options.seed, stream(options.shard) + "/keys", 0)
        self._keys = random.Random(keys_seed)  # where each batch goes (coverage.next_key)

    # What callers read of a campaign: its findings.
    bugs = property(lambda self: self.findings.bugs)
    classes = property(lambda self: self.findings.classes)
    coverage = property(lambda self: self.findings.coverage)

    def elapsed(self) -> float:
        return self.budget.elapsed()

    def execute(self) -> Run:
        """Run until the time budget is spent (or Ctrl-C); return the finished
        Run (and keep in ``written`` the findings it wrote last)."""
        options = self.options
        campaign = {
            "seed": options.seed,
            "time_budget_s": options.time_budget,
            "max_elements": options.max_elements,
            "round_size": options.round_size,
            "max_examples": options.max_examples,
            "shard": list(options.shard),
        }
        header = {"campaign": campaign, **(options.extra_header or {})}
        self.run = Run(options.out_dir, options.engine(), self.command, header)
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, self._interrupt) if main else None
        try:
            # Everything is written under the run's folder lock: a campaign the
            # lock refuses (EngineError from Run) writes nothing into the folder.
            with self.run:
                try:
                    self._fuzz(self.run)
                finally:
                    self.shrinker.store_unshrunk(self.run)
                    # also after a second Ctrl-C; kept for the front-end, which shows it
                    self.written = artifacts.write_findings(self.findings)
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
        return self.run

    def _fuzz(self, run: Run) -> None:
        findings = self.findings
        findings.begin(run.pool.runtimes, "{}/{}@{}".format(*self.options.shard, run.run_id))
        self.budget.start()
        artifacts.write_findings(findings)
        if self.options.store is not None:
            self._replay_store(run)
        # The next batch is drawn in a thread while this round runs: the drive
        # mostly waits on the workers' pipes, and drawing is the parent's largest
        # cost. Hypothesis runs in one thread at a time: shrinking waits for the draw.
        with ThreadPoolExecutor(1, thread_name_prefix="conformance-draw") as drawer:
            batch = 0
            pending: Future[list[Example]] | None = drawer.submit(*self._next_batch(batch))
            while pending is not None and self.budget.left() > 0:
                began = time.monotonic()
                examples = pending.result()  # draw
                if not examples:  # the budget ran out while drawing
                    break
                batch += 1
                # no batch is drawn that --max-examples would leave unused
                wanted = self._wanted(len(examples))
                pending = drawer.submit(*self._next_batch(batch)) if wanted else None
                self._one_round(run, examples)  # run and record
                if self.shrinker.due() and pending is not None:
                    pending.result()
                findings.fuzz_s += time.monotonic() - began
                artifacts.write_findings(findings)  # save
                self._status()
                self.shrinker.shrink_pending(run)  # shrink (and save)
        run.summary.interrupted = self.budget.stopping
        if not self.budget.stopping and not findings.examples:
            # What `conformance gate` refuses ("the run has no results") is no
            # pass here either; nor is a campaign whose results are all the
            # replay's: it fuzzed nothing.
            count = len(findings.replayed)
            replayed = (
                f" (the store's replay of {count} bug{'' if count == 1 else 's'} "
                f"took {findings.replay_s:.1f} s)"
                if findings.replayed
                else ""
            )
            raise NothingRan(
                f"the time budget ({self.options.time_budget:g} s) ran out before any example "
                f"ran{replayed}: nothing was fuzzed; give a longer --time-budget"
            )
        run.summary.unjudged = findings.unjudged()

    def _wanted(self, drawn: int) -> bool:
        """Whether the campaign wants examples beyond the ``drawn`` ones
        about to run (``--max-examples``; otherwise the budget decides)."""
        most = self.options.max_examples
        return most is None or self.drawn + drawn < most

    def _replay_store(self, run: Run) -> None:
        """The store's bugs, replayed before fuzzing: each one still there is
        known (it is not shrunk again), and findings.json says which are
        fixed or changed."""
        store, findings = self.options.store, self.findings
        assert store is not None  # called only when there is one
        entries = store.entries()
        findings.note_store(store)
        if not entries:
            return
        began = time.monotonic()
        findings.replayed = replay.replay(
            run, entries, self.options.out_dir, self.budget.deadline()
        )
        findings.replay_s = time.monotonic() - began
        artifacts.write_findings(findings)

    def _interrupt(self, signum, frame) -> None:
        """Ctrl-C: finish the round in flight, save, stop. A KeyboardInterrupt
        raised anywhere could land inside Hypothesis, which does not always pass
        it on; a second Ctrl-C does raise it, at once."""
        if self.budget.stopping:
            raise KeyboardInterrupt
        self.budget.stopping = True

    def _status(self, shrinking: str | None = None) -> None:
        if self.on_status:
            findings = self.findings
            self.on_status(
                Status(
                    elapsed_s=self.budget.elapsed(),
                    budget_s=self.options.time_budget,
                    examples=findings.examples,
                    fuzz_s=findings.fuzz_s,
                    classes=len(findings.classes),
                    skipped=findings.skipped,
                    shrinking=shrinking,
                    bugs=len(findings.bugs),
                )
            )

    # -- draw -------------------------------------------------------------------
    def _next_batch(self, batch: int) -> tuple:
        """What draws batch number ``batch`` (a callable and its arguments, for
        the drawing thread): ``round_size`` examples with a seed derived from
        the campaign's. Each batch has a key
        (:func:`conformance.fuzz.coverage.next_key`: op, opset, variant, data
        and index dtype), chosen here toward the coverage cells still cold;
        most of its examples are valid at that key, so that they share packed
        models (and sessions) on every runtime."""
        options, reached = self.options, self.findings.coverage
        key = coverage.next_key(reached, self._keys)
        strategy = coverage.round_strategy(reached, key, options.max_elements)
        if options.strategy is not None:  # fuzz --model: within the model's nodes
            strategy = options.strategy
        return self._draw, strategy, derive(options.seed, stream(options.shard), batch)

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
            if self.budget.started and self.budget.left() <= 0:  # the budget holds between draws
                raise OutOfBudget
            drawn.append(example)

        with contextlib.suppress(OutOfBudget):
            collect()
        return drawn

    # -- run and record -----------------------------------------------------------
    def _one_round(self, run: Run, batch: list[Example]) -> None:
        findings = self.findings
        # Near the end, rounds shrink to what the rate says still fits.
        rate = findings.examples / findings.fuzz_s if findings.fuzz_s else 0.0
        size = self.options.round_size
        if rate:
            size = max(4, min(size, int(rate * self.budget.left())))
        if self.options.max_examples is not None:  # the last round: what is still wanted
            size = min(size, self.options.max_examples - self.drawn)
        this = Round(findings, self.skips, self.options.out_dir)
        cases: list[Case] = []
        for example in batch[:size]:
            if self.budget.left() <= 0:
                break
            self.drawn += 1
            case = example.as_case(f"fuzz-{self.drawn}")
            this.add(example, case)
            cases.append(case)
        for part in this.parts(cases):
            if not part or self.budget.stopping:
                continue
            items = [this.item(case) for case in part]
            # The budget holds inside a round too: past it, no job starts (a
            # runtime that hangs on everything costs one timeout, not a round's).
            try:
                run.drive(
                    items,
                    progress=lambda *_: self._status(),
                    recorded=this.recorded,
                    deadline=self.budget.deadline(),
                    confirm=this.confirm,
                )
            finally:
                this.settled()
