"""A conformance run: cases -> oracle -> models -> isolated workers -> judged records.

This is the one path every front-end uses (the CLI's ``run``, the fuzz
campaign, the pytest plugin). It knows nothing of terminals or HTML: it takes
cases and options, writes ``results.jsonl``, ``header.json`` and
``summary.json`` into the output folder, and returns a :class:`Summary`.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from conformance.cases.case import Case
from conformance.cases.check import DEFAULT_CASE_MEMORY, disagreements, literal, verdict_of
from conformance.engine import files, models, packs, records, reproduce, targets, tensors
from conformance.engine.groups import GroupKey, group_key, is_generated
from conformance.engine.judge import DISCREPANCIES, Outcome, judge
from conformance.engine.pool import (
    DEFAULT_BATCH,
    DEFAULT_WORKER_MEMORY,
    RUN_TIMEOUTS,
    EngineError,
    Job,
    Raw,
    Timeouts,
    WorkerPool,
)
from conformance.engine.schedule import Confirm, Item, Schedule, Settled
from conformance.engine.targets import Target
from conformance.oracle import Verdict

GROUPS_EVERY_S = 2.0  # groups.json, at most, while a drive runs (always at its end)
HARNESS_ERRORS_KEPT = 5  # examples of harness errors the summary names
MODEL_CACHE = 4096  # serialized models kept by model key (models.model_key)


@dataclass
class Options:
    runtimes: Sequence[str | Target]  # what --runtime takes, or targets
    variants: Sequence[str] = models.VARIANTS
    workers: int = 1
    batch_size: int = DEFAULT_BATCH
    timeout: float | None = None  # seconds per job; None: each adapter's (default_timeouts)
    default_timeouts: Timeouts = RUN_TIMEOUTS  # a fuzz campaign's are shorter
    worker_memory: int = DEFAULT_WORKER_MEMORY
    case_memory: int = DEFAULT_CASE_MEMORY
    workers_chosen: str = "given"  # or "auto": chosen by the threads of the targets
    pack: int | None = None  # cases per model on every runtime; None: each runtime's measured size
    gpu_workers: int = targets.DEFAULT_GPU_WORKERS  # workers the GPU targets share (not -j's)


@dataclass
class Summary:
    cases: int = 0
    records: int = 0
    counts: dict[str, Counter] = field(default_factory=dict)  # runtime -> kind -> n
    discrepancies: int = 0
    harness_errors: int = 0
    # the first harness errors: runtime, case_id, variant, error (the exception's last line)
    harness_error_examples: list[dict] = field(default_factory=list)
    interrupted: bool = False
    error: str | None = None
    duration_s: float = 0.0
    events: list[str] = field(default_factory=list)
    # GroupKey (runtime, kind, op, case-file id or signature) -> results
    groups: Counter = field(default_factory=Counter)
    # {"case_id", "source", "problem"}: a case whose written expectation
    # (expected, expect_error, expected_shape) disagrees with the oracle; its
    # results are judged against the oracle all the same
    case_problems: list[dict] = field(default_factory=list)
    # A fuzz campaign's targets that judged none of its examples (each result
    # "not run" or harness_unsupported), each with its number of results: the
    # campaign does not pass (conformance.fuzz.campaign). Empty in a run.
    unjudged: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        content = asdict(self)
        content["counts"] = {rt: dict(sorted(c.items())) for rt, c in self.counts.items()}
        content["groups"] = [
            {**key._asdict(), "records": n} for key, n in sorted(self.groups.items())
        ]
        return content


def cpu_budget(
    info: dict[str, dict], workers: int, chosen: str = "given", gpu: Iterable[str] = ()
) -> dict:
    """How many threads the workers of a run may compute with, against the
    cores: targets in their default profile take every core each, so several
    workers share them. Verdicts stay exact either way; what suffers is time
    (and a per-case timeout may fire on a starved worker), so the header says it.
    The ``gpu`` targets compute on their GPU, with workers of their own: not counted."""
    cores = os.cpu_count() or 1
    threads = {
        name: targets.threads_of(about.get("adapter"), about.get("effective") or {}, cores)
        for name, about in info.items()
        if name not in set(gpu)
    }
    busy = workers * sum(threads.values())
    return {
        "cores": cores,
        "workers_per_runtime": workers,
        "workers_chosen": chosen,
        "threads_per_worker": threads,
        "threads_at_most": busy,
        "oversubscribed": busy > cores,
    }


class _Models:
    """Serialized one-node models, shared by every case with the same model key."""

    def __init__(self) -> None:
        self._cache: dict[tuple, tuple[bytes, bytes, tuple[bytes, bytes] | None]] = {}

    def get(
        self, case: Case, variant: str, key: tuple | None = None
    ) -> tuple[bytes, bytes, tuple[bytes, bytes] | None]:
        """(session key: the model's digest, serialized model or its head, its
        large tail: models.serialized); ``key``: the case's models.model_key
        when the caller has it already (None: computed here)."""
        if key is None:
            key = models.model_key(
                case.op, case.opset, case.data, case.indices, case.axis, variant, case.updates,
                case.reduction,
            )  # fmt: skip
        if key is not None and key in self._cache:
            return self._cache[key]
        model, tail = models.serialized(case, variant)
        # A large tail is named by its digest: hashing its bytes again for each case costs.
        named = model if tail is None else model + tail[0]
        built = (hashlib.blake2b(named, digest_size=16).digest(), model, tail)
        if key is not None:
            if len(self._cache) >= MODEL_CACHE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = built
        return built


def _written(case: Case) -> dict:
    """A group's input fields of an operator that writes: its updates and
    reduction (absent for an operator that reads: its entries stay as they were)."""
    if case.updates is None:
        return {}
    return {"updates": tensors.to_json(case.updates), "reduction": case.reduction}


def run_cases(
    cases: Iterable[Case],
    out_dir: Path,
    options: Options,
    progress: Callable[[int, Summary], None] | None = None,
    command: list[str] | None = None,
    extra_header: dict | None = None,
) -> Summary:
    """Run every case on every runtime in every variant; write and return the results.

    ``progress(records_written, summary)`` is called after each batch.
    KeyboardInterrupt stops the run cleanly: what was recorded stays, and the
    summary says ``interrupted``.
    """
    with Run(out_dir, options, command, extra_header) as run:
        run.drive(((case, options.variants) for case in cases), progress)
        run.cut_reproducers()
    return run.summary


class SmallestInputs:
    """The smallest input of each discrepancy group, kept for the report.

    Saved as groups.json beside the results whenever it changes, so the
    report shows every group's inputs from the run folder alone, without
    reading case files (which may have moved or changed since). A value
    mismatch of a corpus case also gets its smallest reproducer
    (:mod:`conformance.engine.reproduce`) when the run ends.
    """

    def __init__(self) -> None:
        self._by_group: dict[GroupKey, tuple[int, dict, Case]] = {}
        self._reproducers: dict[GroupKey, dict] = {}
        self._entries: dict[GroupKey, str] = {}  # groups.json's entry (JSON), made once per change
        self._changed = False
        self._saved_at = 0.0
        self.run_id: str | None = None

    def offer(self, record: dict, case: Case) -> None:
        key = group_key(record)
        size = case.size
        held = self._by_group.get(key)
        if held is None or size < held[0]:
            self._by_group[key] = (size, record, case)
            self._entries.pop(key, None)
            self._changed = True

    def to_cut(self) -> list[tuple[GroupKey, dict, Case]]:
        """The value mismatches of corpus cases that may be cut smaller."""
        return [
            (key, record, case)
            for key, (_, record, case) in sorted(self._by_group.items())
            if key.kind == "value_mismatch"
            and not is_generated(record)
            and record.get("positions")
            and case.size > 2
        ]

    def reproduced(self, key: GroupKey, found: reproduce.Reproducer, outcome: Outcome) -> None:
        case = found.case
        self._reproducers[key] = {
            "axis": case.axis,
            "data": tensors.to_json(case.data),
            "indices": tensors.to_json(case.indices),
            **_written(case),
            "runs": found.tried,
            "message": outcome.message,
            **{
                name: outcome.details[name]
                for name in ("positions", "expected_values", "actual_values")
            },
        }
        self._entries.pop(key, None)
        self._changed = True

    def save(self, path: Path, now: bool = True) -> None:
        """Write groups.json if anything changed: ``now``, or at most every
        :data:`GROUPS_EVERY_S` (a fuzz campaign's groups are hundreds, and
        writing them after every batch of results took a third of its time).
        results.jsonl is written as results come; this file follows it."""
        if not self._changed:
            return
        if not now and time.monotonic() - self._saved_at < GROUPS_EVERY_S:
            return
        groups = []
        for key, (_, record, case) in sorted(self._by_group.items()):
            if key not in self._entries:  # its JSON text, indented as write_json indents
                entry = {
                    **key._asdict(),
                    "case_id": record["case_id"],
                    "variant": record["variant"],
                    "source": record["source"],
                    "axis": case.axis,
                    "data": tensors.to_json(case.data),
                    "indices": tensors.to_json(case.indices),
                    **_written(case),
                    **({"reproducer": self._reproducers[key]} if key in self._reproducers else {}),
                }
                text = json.dumps(entry, indent=2, ensure_ascii=False)
                self._entries[key] = text.replace("\n", "\n    ")
            groups.append(self._entries[key])
        # The same text as files.write_json(path, {...}), built from each
        # group's text, made once: a campaign has hundreds of groups.
        head = (
            f'{{\n  "format": {json.dumps(records.FORMAT)},\n'
            f'  "run_id": {json.dumps(self.run_id, ensure_ascii=False)},\n  "groups": '
        )
        listed = "[\n    " + ",\n    ".join(groups) + "\n  ]" if groups else "[]"
        text = head + listed + "\n}"
        files.write_text(path, text + "\n")
        self._changed = False
        self._saved_at = time.monotonic()


@dataclass(frozen=True)
class Recorded:
    """One result as the run wrote it, handed to ``Run.drive``'s ``recorded``.

    ``record`` is the line results.jsonl got (:func:`records.record`);
    ``verdict`` is None when nothing ran on that runtime (the memory guard
    refused the case, the time budget ran out first, or the target's worker
    never ran it)."""

    case: Case
    variant: str
    runtime: str
    verdict: Verdict | None
    outcome: Outcome
    raw: Raw
    record: dict

    @property
    def ran(self) -> bool:
        return self.verdict is not None


OnRecorded = Callable[[Recorded], None]


class Run:
    """One output folder and the engine that fills it; a context manager.

    ``drive`` may be called several times (the fuzz campaign runs in rounds
    and shrinks with ``run_one`` between them); results.jsonl and the summary cover
    them all. Leaving the block writes summary.json, also after Ctrl-C (which
    is swallowed and recorded as ``interrupted``) or an error (which is
    recorded and re-raised).
    """

    def __init__(
        self,
        out_dir: Path,
        options: Options,
        command: list[str] | None = None,
        extra_header: dict | None = None,
    ) -> None:
        self.out_dir = out_dir
        self.options = options
        self.command = command
        self.extra_header = extra_header or {}
        self.summary = Summary()
        self.pool = WorkerPool(
            options.runtimes,
            workers=options.workers,
            batch_size=options.batch_size,
            timeout=options.timeout,
            worker_memory=options.worker_memory,
            default_timeouts=options.default_timeouts,
            gpu_workers=options.gpu_workers,
        )
        self.models = _Models()
        self.smallest = SmallestInputs()
        self._checked: dict[tuple[str, str], list[str]] = {}  # (case id, source) -> problems
        self._started = 0.0
        self._writer: records.ResultsWriter | None = None
        self.pack_sizes: dict[str, int] = {}  # runtime -> cases per model (packs.sizes)
        self.shared_sizes: dict[str, int] = {}  # of cases sharing large data (packs.shared_sizes)
        self.model_keys = packs.ModelKeys()  # one-node models met: those run alone, cached

    def __enter__(self) -> Run:
        if self.out_dir.exists() and not self.out_dir.is_dir():  # mkdir would say "File exists"
            raise NotADirectoryError(
                errno.ENOTDIR, "a file is where the run's folder would go", str(self.out_dir)
            )
        self.out_dir.mkdir(parents=True, exist_ok=True)
        try:  # one run per folder at a time: a second one is refused, naming the first
            self._lock = files.FolderLock(self.out_dir).acquire()
        except files.FolderBusy as busy:
            raise EngineError(str(busy)) from None
        # An old verdict misleads: what a previous run left here goes first.
        for stale in (records.RESULTS, records.SUMMARY, records.GATE, records.GROUPS):
            (self.out_dir / stale).unlink(missing_ok=True)
        self._started = time.monotonic()
        self.run_id = uuid.uuid4().hex[:16]
        self.smallest.run_id = self.run_id
        self._writer = records.ResultsWriter(self.out_dir / records.RESULTS, self.run_id)
        try:
            self.pool.__enter__()
            self.summary.counts = {name: Counter() for name in self.pool.runtimes}
            options = self.options
            adapters = {name: about.get("adapter") for name, about in self.pool.info.items()}
            self.pack_sizes = packs.sizes(adapters, options.pack)
            self.shared_sizes = packs.shared_sizes(adapters, options.pack)
            settings = {
                "variants": list(options.variants),
                "workers_per_runtime": options.workers,
                "pack": self.pack_sizes,
                "batch_size": options.batch_size,
                "timeout_s": options.timeout,
                "timeouts_s": self.pool.timeouts,
                "worker_memory_bytes": options.worker_memory,
                "case_memory_bytes": options.case_memory,
                "cpu_budget": cpu_budget(
                    self.pool.info, options.workers, options.workers_chosen, self.pool.on_gpu
                ),
                "gpu_workers": dict(self.pool.on_gpu),
                **self.extra_header,
            }
            files.write_json(
                self.out_dir / records.HEADER,
                {"run_id": self.run_id, **records.header(self.pool.info, settings, self.command)},
            )
        except BaseException as error:
            self.__exit__(type(error), error, None)
            raise
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        summary = self.summary
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            summary.interrupted = True
        elif error is not None:
            summary.error = f"{kind.__name__}: {error}"
        try:
            self.pool.close()
            self.smallest.save(self.out_dir / records.GROUPS)
            assert self._writer is not None  # made by __enter__
            self._writer.close()
            summary.events = self.pool.events
            summary.duration_s = round(time.monotonic() - self._started, 3)
            finished = {"run_id": self.run_id, "finished": records.now(), **summary.to_json()}
            files.write_json(self.out_dir / records.SUMMARY, finished)
        except OSError:
            # A full disk that stopped the run stops the summary too: the first
            # error is the one to tell (the folder, without its summary, is
            # refused by gate and report as unfinished).
            if error is None:
                raise
        finally:
            self._lock.release()
        return summary.interrupted

    def drive(
        self,
        items: Iterable[Item],
        progress: Callable[[int, Summary], None] | None = None,
        recorded: OnRecorded | None = None,
        deadline: float | None = None,
        confirm: Confirm | None = None,
    ) -> list[Case]:
        """Run each (case, variants) on every runtime, or each (case, variants,
        runtimes) on those runtimes; record every result.

        ``recorded`` is handed each result (a :class:`Recorded`) after it is
        written. Past ``deadline`` (a ``time.monotonic()`` value) no job
        starts (see ``WorkerPool.run``): a case that got some of its results
        gets a "not run" record for each of the others
        (:meth:`Schedule.not_run`); returns the cases that got no result at all
        (those the workers never started, and those never taken from
        ``items``), which the summary does not count. ``confirm`` decides
        whether a discrepancy a pack showed (a :class:`Settled`) is re-run
        alone (:class:`Schedule`; None: always).
        """
        summary = self.summary
        first = summary.cases
        schedule = Schedule(
            self.pool.runtimes,
            self.pack_sizes,
            self.model_keys,
            self.options.case_memory,
            self._job,
            self.case_problems,
            first,
            confirm,
            self.shared_sizes,
        )
        finished = False
        try:
            for results in self.pool.run(schedule.jobs(items), deadline, schedule.more):
                self._record(schedule.refused(), recorded)
                for job, runtime, raw in results:
                    self._record(schedule.settle(job, runtime, raw), recorded)
                self._save(now=False)
                summary.cases = first + schedule.cases
                if progress:
                    progress(summary.records, summary)
            finished = True
        finally:
            self._record(schedule.unconfirmed(), recorded)
            self._record(schedule.refused(), recorded)
            if finished:  # not on an error or Ctrl-C: what a deadline left half run is said
                self._record(schedule.not_run(), recorded)
            summary.cases = first + schedule.cases
            self._save(now=False)  # the run's end saves it for good
        unstarted = schedule.unstarted()
        summary.cases -= len(unstarted)
        if progress:
            progress(summary.records, summary)
        return unstarted + schedule.untaken()

    def _record(self, settled: Iterable[Settled], recorded: OnRecorded | None) -> None:
        """Write each result, count it in the summary, tell ``recorded``."""
        summary = self.summary
        assert self._writer is not None  # a run records inside its `with` only
        for one in settled:
            case, runtime, outcome = one.case, one.runtime, one.outcome
            record = records.record(case, one.variant, runtime, one.verdict, outcome, one.raw)
            self._writer.write(record)
            if outcome.kind in DISCREPANCIES:
                self.smallest.offer(record, case)
            summary.records += 1
            summary.counts.setdefault(runtime, Counter())[outcome.kind] += 1
            if outcome.kind in DISCREPANCIES:
                summary.discrepancies += 1
                summary.groups[group_key(record)] += 1
            if record.get("harness_error"):
                summary.harness_errors += 1
                if len(summary.harness_error_examples) < HARNESS_ERRORS_KEPT:
                    lines = [x for x in (outcome.message or "").strip().splitlines() if x.strip()]
                    summary.harness_error_examples.append(
                        {
                            "runtime": runtime,
                            "case_id": case.id,
                            "variant": one.variant,
                            "error": lines[-1].strip() if lines else "",
                        }
                    )
            if recorded:
                verdict = one.verdict if one.ran else None
                recorded(Recorded(case, one.variant, runtime, verdict, outcome, one.raw, record))

    def _save(self, now: bool = True) -> None:
        assert self._writer is not None  # a run records inside its `with` only
        self._writer.flush()
        self.smallest.save(self.out_dir / records.GROUPS, now)

    def case_problems(self, case: Case, verdict: Verdict | None = None) -> list[str]:
        """Where the case's literal expectation disagrees with the oracle (empty
        for a case that leaves it to the oracle, as generated ones do). Checked
        once per case: the first time, each problem also goes to the summary's
        ``case_problems``. ``drive`` checks every case it runs."""
        if not literal(case):
            return []
        key = (case.id, str(case.source))
        if key not in self._checked:
            found = disagreements(case, verdict if verdict is not None else verdict_of(case))
            self._checked[key] = found
            self.summary.case_problems += [
                {"case_id": case.id, "source": str(case.source), "problem": problem}
                for problem in found
            ]
        return self._checked[key]

    def _job(
        self,
        case: Case,
        variant: str,
        tag,
        runtimes: Sequence[str] | None = None,
        model_key: tuple | None = None,
    ) -> Job:
        """The one way a case in a variant becomes a job for the workers."""
        session_key, model, tail = self.models.get(case, variant, model_key)
        feeds = models.feeds(case.data, case.indices, variant, case.updates)
        return Job(session_key, model, feeds, tag, runtimes, tail=tail)

    def cut_reproducers(self) -> None:
        """Cut each value mismatch of a corpus case down to its smallest
        reproducer, confirming every cut on the runtime; groups.json keeps it."""
        for key, record, case in self.smallest.to_cut():
            variant, runtime = record["variant"], key.runtime
            last: list[Outcome] = []  # the outcome of the last cut confirmed: the one kept

            def still_differs(cut: Case, variant=variant, runtime=runtime, last=last) -> bool:
                outcome = self.run_one(cut, variant, [runtime])[runtime]
                if outcome.kind == "value_mismatch":
                    last[:] = [outcome]
                return outcome.kind == "value_mismatch"

            found = reproduce.smallest(case, tuple(record["positions"][0]), still_differs)
            if found is not None:
                self.smallest.reproduced(key, found, last[0])
        self.smallest.save(self.out_dir / records.GROUPS)

    def run_one(
        self,
        case: Case,
        variant: str,
        runtimes: Sequence[str] | None = None,
        verdict: Verdict | None = None,
    ) -> dict[str, Outcome]:
        """Run one case in one variant on these runtimes (default all) now,
        and judge each result; nothing is recorded. The fuzz campaign shrinks
        with it; ``drive`` is the same path with records."""
        verdict = verdict if verdict is not None else verdict_of(case, self.options.case_memory)
        job = self._job(case, variant, None, runtimes)
        return {
            runtime: judge(verdict, raw, case)
            for results in self.pool.run([job])
            for _, runtime, raw in results
        }
