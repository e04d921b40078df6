"""Isolated workers: one persistent process per runtime (or several), fed in batches.

The runtime under test may crash, hang or allocate without bound; only its
worker process suffers. The parent:

- sends jobs in batches (one message per job costs ~120 us, batched ~18 us),
  and receives results as the worker sends them (at least every 50 ms), so
  that a crash loses no finished result;
- watches a shared counter the worker bumps before each job, so it always
  knows which job was running when the worker died or stopped advancing;
- on a crash, re-runs the job that was running alone in a fresh worker to
  confirm it (a crash that does not recur alone is recorded with the outcome
  it then gives, and a note), and re-queues the other jobs of the batch,
  whose results died with the worker;
- on a job running longer than the timeout, kills the worker, records the
  timeout and re-queues the rest;
- on a worker whose resident memory passes the limit, kills it and records
  a crash of the job that was running (a runaway allocation must not take
  the machine down with it);
- restarts every dead worker and goes on.

A worker is killed with its whole process group (it starts a session of its
own), so that whatever the runtime forked dies with it; and its death is seen
from its pid, not only from the end of its pipe, which a forked grandchild
may hold open. If the parent itself dies (``kill -9`` included), the group
dies too: the worker dies by ``PR_SET_PDEATHSIG``, and a sentinel process in
its group (:mod:`conformance.engine.worker`), waiting on a pipe whose only
writer is the parent, sees it close and kills the group, grandchildren
included (``PR_SET_PDEATHSIG`` is not inherited across fork). Each worker has
a scratch folder of its own as ``TMPDIR``, removed when it is killed (by the
sentinel when the parent is), so that what a runtime leaves in temporary
files when it crashes does not pile up.

A worker start costs a fork, not an interpreter and an import: each target
has a fork server (:mod:`conformance.engine.forkserver`; one per interpreter
and adapter module, shared by the targets that use them), started with the
target's interpreter, which imports the worker's code and the adapter's
module once and forks each worker on request; the forked worker then
instantiates its adapter and runs as one started directly would. Every
guarantee above holds for it (its module says how: the server reports each
worker's wait status, reaping it only when asked, after the pool has killed
its group). Where forking is not safe (a thread the imports left running:
ONNX Runtime's), or the server cannot start or dies, the target's workers
are started directly, each as a new interpreter; a server that does not
answer at start-up (an import that hangs) loses its targets as a worker that
does not start does, after the same start-up bound.

Starts go a bounded number at a time (:func:`starts_at_once`), each bounded
from its own beginning, so that many targets on few cores do not time each
other's starts out. A target whose worker does not start, or fails to
restart :data:`MAX_STARTUP_FAILURES` times in a row, is *lost*: every job it
still owes is answered at once, without running, as a ``harness_error``
(``Raw.lost``, message ``not run: ...``), and the other targets go on; only
when no target starts at all does the pool raise :class:`EngineError`, and
when a GPU target does not start (no GPU, no driver, no provider: a fact of
the machine, which no case changes), it raises at once, before anything runs.

A GPU target (:attr:`conformance.engine.targets.Target.gpu`) runs its own
number of workers (:func:`conformance.engine.targets.gpu_workers`), not
``workers``. Its load or run that fails for lack of resources (the GPU's
memory or handles, a lost device: :func:`conformance.adapters.gpu.resource_failure`)
says nothing of the model: the job runs again alone in a fresh worker, as a
crash is confirmed (its own process: no other session of it holds the GPU's
handles); its result there is the record's, with a note, and a second
resource failure is a ``harness_error`` with the runtime's message, never a
refusal.

Nothing a worker sends is trusted: it is unpickled without loading any class
but NumPy's; a result that cannot be unpickled, is not what the wire format
says, or whose outputs :func:`conformance.engine.worker.plain_outputs` does
not pass becomes a ``harness_error`` of its job, and a worker whose
``info()`` lacks a name does not start.

:class:`WorkerPool` knows nothing of cases or outcomes: it runs :class:`Job`s and
yields :class:`Raw` results, which :mod:`conformance.engine.judge` judges.
"""

from __future__ import annotations

import contextlib
import io
import json
import mmap
import os
import pickle
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing import Pipe
from multiprocessing.connection import wait

import numpy as np

from conformance.adapters import gpu, registry
from conformance.engine import forkserver, targets
from conformance.engine.forkserver import ForkServer, ForkServerDown
from conformance.engine.targets import Target
from conformance.engine.worker import (
    OUTPUT_LIMIT_ENV,
    PARTS,
    PROGRESS,
    SHARED_BYTES,
    Blobs,
    array_digest,
    blobs_capacity,
    plain_outputs,
)
from conformance.errors import ConformanceError

# Seconds per job (load + run). The slowest legitimate job of the corpus takes
# well under a second; a hang costs a full timeout.
DEFAULT_TIMEOUT = 10.0
# ... unless the adapter file declares its own (Runtime.timeout, which says why):
# lower where its hangs are counted rather than waited for, higher where a job
# compiles a pack (docs/compilers.md, "Cost").
RUNTIME_TIMEOUTS = {r.name: r.timeout for r in registry.RUNTIMES if r.timeout is not None}


@dataclass(frozen=True)
class Timeouts:
    """Seconds a job may run on a target when no --timeout is given: its
    adapter's entry, else ``default`` (``run``'s: :data:`RUN_TIMEOUTS`; a fuzz
    campaign has its own, shorter ones: ``conformance.fuzz.campaign``)."""

    default: float
    by_adapter: Mapping[str, float]

    def of(self, adapter: str) -> float:
        return self.by_adapter.get(adapter, self.default)


RUN_TIMEOUTS = Timeouts(DEFAULT_TIMEOUT, RUNTIME_TIMEOUTS)
DEFAULT_BATCH = 32
# Resident memory a worker may reach before it is killed. Watched from the
# parent, not set as an rlimit: OpenVINO reserves ~17 MB of address space
# (two thread stacks) per compiled model, so an address-space or data limit
# starves it of threads ("Resource temporarily unavailable") long before it
# uses real memory.
DEFAULT_WORKER_MEMORY = 4 << 30
_PAGE = os.sysconf("SC_PAGE_SIZE")
# A worker's start-up (interpreter, adapter import, the probe model whose
# compiled properties info() reads back) is bounded by the per-job timeout
# too, so an adapter that hangs in its import costs one timeout; but never
# less than this floor: six workers of three runtimes start in ~1 s on two
# cores, and a timeout chosen for fast cases must not fail a slow start.
STARTUP_FLOOR = 5.0
MAX_STARTUP_FAILURES = 3  # in a row, per runtime, before the target is given up
QUEUE_JOBS = 2048  # jobs read ahead of the slowest runtime
QUEUE_BYTES = 256 << 20  # and their feeds' bytes
STDERR_TAIL = 2000  # characters of a dead worker's stderr kept in the message
# Seconds a worker whose pipe closed may take to finish exiting before it is
# killed: its own exit status or signal is what the record says.
EXIT_GRACE = 2.0


class EngineError(ConformanceError, RuntimeError):
    """The harness cannot go on (a worker does not start, a runtime is unknown)."""


@dataclass(eq=False)
class Job:
    session_key: bytes | None  # sessions are cached per worker under this key (None: not kept)
    model: bytes
    feeds: dict[str, np.ndarray]
    tag: object = None  # the caller's handle, returned untouched
    runtimes: Sequence[str] | None = None  # run on these runtimes only (None: all)
    # (digest, bytes) of the model's last bytes, a large constant's that other
    # jobs' models end with too (models.serialized): ``model`` is then the
    # head, the model being the two joined; the tail is sent once per worker.
    tail: tuple[bytes, bytes] | None = None
    # Bookkeeping of WorkerPool.run: results still to come, bytes held in the queues.
    pending: int = field(default=0, init=False, repr=False)
    size: int = field(default=0, init=False, repr=False)


@dataclass(frozen=True)
class Raw:
    """What one runtime did with one job.

    ``status``: ok, load_error, run_error, unsupported, harness_error, crash, timeout.
    """

    status: str
    outputs: list[np.ndarray] | None = None
    message: str = ""
    load_s: float | None = None
    run_s: float | None = None
    cached: bool = False
    signal: str | None = None  # crash: the signal's name, "exit status N" or "memory limit"
    note: str = ""
    # Packed execution (conformance.engine.packs): whether the case first ran in
    # a model holding other cases; whether what a pack showed was re-run alone
    # (None: nothing to confirm); the kind the pack gave when the alone run differs.
    packed: bool = False
    confirmed: bool | None = None
    packed_kind: str | None = None
    # The target's worker never ran it (it did not start, or stopped restarting):
    # status "harness_error", message "not run: ..." (WorkerPool._drain_lost).
    lost: bool = False


def _seconds(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


# What a worker's message may hold besides Python's own values: NumPy arrays,
# dtypes and scalars (ml_dtypes' too). Nothing else is imported or called here:
# an adapter's own class (a subclass of ndarray, an object in an object array)
# would make the parent import the adapter's module, which may hang or fail;
# the worker sends plain arrays (worker.plain_outputs), another copy of it may not.
_WIRE_MODULES = ("numpy", "ml_dtypes")


class _WireUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if module.partition(".")[0] in _WIRE_MODULES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"it holds a {module}.{name}, which the harness does not load "
            "(only NumPy arrays and Python values cross from a worker)"
        )


def _loads(data: bytes):
    """A worker's message, unpickled without loading any class but NumPy's."""
    return _WireUnpickler(io.BytesIO(data)).load()


def _raw_from_wire(packed) -> Raw:
    """One result as the worker sent it (pickled on its own); whatever does not
    unpickle here or is not of the wire format is a harness error of its job,
    and so are outputs :func:`~conformance.engine.worker.plain_outputs` does
    not pass (the judge compares only plain arrays of known dtypes)."""
    try:
        result = _loads(packed)
    except Exception as error:
        return Raw(
            "harness_error",
            message="the worker's result for this case cannot be unpickled here: "
            f"{type(error).__name__}: {error}",
        )
    status = result[0] if isinstance(result, tuple) and result else None
    if status == "ok" and len(result) == 5:
        _, outputs, load_s, run_s, cached = result
        if _seconds(load_s) and _seconds(run_s) and isinstance(cached, bool):
            try:
                plain, problem = plain_outputs(outputs)
            except Exception as error:  # NumPy objects made odd by a hostile pickle
                plain, problem = None, f"an unreadable object ({type(error).__name__}: {error})"
            if problem:
                return Raw("harness_error", message=f"the adapter's execute returned {problem}")
            return Raw("ok", plain, load_s=load_s, run_s=run_s, cached=cached)
    elif status in ("load_error", "run_error") and len(result) == 4:
        _, message, load_s, run_s = result
        if isinstance(message, str) and _seconds(load_s) and _seconds(run_s):
            return Raw(status, message=message, load_s=load_s, run_s=run_s)
    elif (
        status in ("unsupported", "harness_error", "timeout")
        and len(result) == 2
        and isinstance(result[1], str)
    ):
        return Raw(status, message=result[1])
    shown = repr(result)
    return Raw(
        "harness_error",
        message="the worker sent a malformed result for this case: "
        + (shown if len(shown) <= 300 else shown[:300] + "..."),
    )


def _hello_info(message, target: Target) -> tuple[dict | None, str]:
    """A worker's first message: (its info, "") or (None, why it did not start,
    the target's own refusal of the info included: :meth:`Target.refusal`)."""
    if not isinstance(message, tuple) or len(message) != 2:
        return None, f"it sent {type(message).__name__} instead of a greeting"
    kind, body = message
    if kind == "failed":
        return None, str(body)
    if kind != "hello":
        return None, f"it sent {kind!r} instead of a greeting"
    if not isinstance(body, dict):
        return None, f"its adapter's info is a {type(body).__name__}, not a dict"
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        return None, f"its adapter's info has no 'name' (a non-empty string; got {name!r})"
    try:  # it goes into header.json and every report: strict JSON or nothing
        json.dumps(body, allow_nan=False)
    except (TypeError, ValueError) as error:
        return None, f"its adapter's info is not JSON ({error})"
    refused = target.refusal(body)
    return (None, refused) if refused else (body, "")


def _death(returncode: int | None) -> str:
    if returncode is None:
        return "lost with its fork server"
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


class _Spawned:
    """A worker started directly: a child of this process."""

    def __init__(self, popen: subprocess.Popen) -> None:
        self.popen = popen
        self.pid = popen.pid

    @property
    def done(self) -> bool:
        return self.popen.returncode is not None

    def exited(self) -> bool:
        """Whether the process has ended (without reaping it: its pid, which
        names its process group, stays ours until :meth:`wait`)."""
        if self.popen.returncode is not None:
            return True
        try:
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def kill_group(self) -> None:
        # Before reaping: until then the group id cannot name anyone else.
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)

    def wait(self) -> int:
        return self.popen.wait()


class Worker:
    """One worker process and the batch it is running: forked by the
    target's fork server when it has a usable one, else started directly."""

    def __init__(
        self, target: Target, server: ForkServer | None = None, output_limit: int | None = None
    ) -> None:
        self.target = target
        self.server = server
        self.output_limit = output_limit  # bytes one output may hold (worker.OUTPUT_LIMIT_ENV)
        self.proc: _Spawned | forkserver.Forked  # set by _start (or there is no worker)
        self._spawn()

    def _spawn(self) -> None:
        if self.server is not None and self.server.ready:
            try:
                self._start(self.server)
                return
            except ForkServerDown:
                pass  # the server is down for good (it said why in the events)
        self._start(None)

    def _start(self, server: ForkServer | None) -> None:
        self.conn, child = Pipe()
        progress_fd = os.memfd_create("conformance-progress")
        os.ftruncate(progress_fd, PROGRESS.size)
        self.progress_map = mmap.mmap(progress_fd, PROGRESS.size)
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the worker
        # The worker's sentinel reads this pipe; only this process holds its
        # write end (not inheritable), so it closes when this process dies.
        self.watch: int | None  # None once released
        watch_fd, self.watch = os.pipe()
        self.scratch = tempfile.mkdtemp(prefix="conformance-worker-")
        arguments = [self.scratch, *self.target.worker_arguments()]
        env = {**os.environ, "TMPDIR": self.scratch}
        env.pop(OUTPUT_LIMIT_ENV, None)
        if self.output_limit is not None:
            env[OUTPUT_LIMIT_ENV] = str(self.output_limit)
        try:
            if server is not None:
                self.proc = server.fork(
                    [child.fileno(), progress_fd, watch_fd, self.log.fileno()], arguments, env
                )
            else:
                popen = subprocess.Popen(
                    [
                        self.target.python or sys.executable,
                        "-m",
                        "conformance.engine.worker",
                        str(child.fileno()),
                        str(progress_fd),
                        str(watch_fd),
                        *arguments,
                    ],
                    pass_fds=(child.fileno(), progress_fd, watch_fd),
                    stdin=subprocess.DEVNULL,
                    stdout=self.log,
                    stderr=self.log,
                    env=env,
                    start_new_session=True,  # Ctrl-C in the terminal reaches the parent only
                )
                self.proc = _Spawned(popen)
        except BaseException:
            os.close(self.watch)
            self.watch = None
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.conn.close()
            self.progress_map.close()
            self.log.close()
            raise
        finally:
            child.close()
            os.close(progress_fd)
            os.close(watch_fd)
        self.state = "starting"
        self.spawned_at = time.monotonic()
        # What this process holds of the large models and feeds sent to it:
        # each crosses the pipe once (worker.Blobs), a fresh process holds nothing.
        self.blobs = Blobs(blobs_capacity(self.output_limit))
        self.info: dict | None = None
        self.batch: list[Job] | None = None
        self.solo = False  # the batch is one suspect job, run to confirm a crash
        self.alone = False  # the batch is one job in a fresh worker
        self.delivered = 0  # results of the batch received so far
        self.base = 0  # progress counter when the batch was sent
        self.last_progress = 0
        self.last_change = 0.0
        self.log_offset = 0
        self.fresh = True  # has run nothing yet

    def progress(self) -> int:
        return PROGRESS.unpack_from(self.progress_map, 0)[0]

    def send(self, batch: list[Job], solo: bool = False) -> None:
        """Send a batch; a worker already dead is found by the watch, not here."""
        wire = [self._wired(job) for job in batch]
        self.base = self.last_progress = self.progress()
        self.delivered = 0
        self.last_change = time.monotonic()
        self.log_offset = self.log.seek(0, os.SEEK_END)
        # One job in a worker that ran nothing before: a crash needs no confirming.
        self.alone = solo or (len(batch) == 1 and self.fresh)
        self.batch, self.solo, self.state, self.fresh = batch, solo, "busy", False
        with contextlib.suppress(OSError):
            self.conn.send_bytes(pickle.dumps(wire, protocol=pickle.HIGHEST_PROTOCOL))

    def _wired(self, job: Job) -> tuple:
        """A job as it crosses the pipe: a large model (one that repeats: it
        has a session key) or feed this worker holds goes by its digest."""
        model: object = job.model
        if job.tail is not None:
            digest, tail = job.tail
            model = (PARTS, job.model, self.blobs.wire(b"tail:" + digest, len(tail), tail))
        elif job.session_key is not None and len(job.model) >= SHARED_BYTES:
            model = self.blobs.wire(b"model:" + job.session_key, len(job.model), job.model)
        feeds = {
            name: self.blobs.wire(array_digest(array), array.nbytes, array)
            if array.nbytes >= SHARED_BYTES and not array.dtype.hasobject
            else array
            for name, array in job.feeds.items()
        }
        return (job.session_key, model, feeds)

    def stderr_tail(self, since: int = 0) -> str:
        """What the worker wrote to stderr since ``since``: its start and its
        end when it wrote more than :data:`STDERR_TAIL` characters. The start
        says why it died (a Rust panic's message and place, before the
        backtrace that follows it), the end how."""
        self.log.seek(since)
        text = self.log.read().decode("utf-8", "replace").strip()
        if len(text) <= STDERR_TAIL:
            return text
        head = STDERR_TAIL // 4
        return f"{text[:head].rstrip()}\n…\n{text[-(STDERR_TAIL - head) :].lstrip()}"

    def resident(self) -> int:
        """Resident memory in bytes (0 when it cannot be read)."""
        try:
            with open(f"/proc/{self.proc.pid}/statm", encoding="ascii") as statm:
                return int(statm.read().split()[1]) * _PAGE
        except (OSError, IndexError, ValueError):
            return 0

    def lost(self, culprit: int) -> list[Job]:
        """The batch's jobs whose results died with the worker, except the culprit."""
        assert self.batch is not None  # asked of a worker running a batch
        return self.batch[self.delivered : culprit] + self.batch[culprit + 1 :]

    def exited(self) -> bool:
        """Whether the process has ended (without reaping it: its pid, which
        names its process group, stays ours until :meth:`kill`)."""
        return self.proc.exited()

    def kill(self, grace: float = 0.0) -> int | None:
        """Stop the process and everything it started (its process group) for
        good; its return code (None: lost with its fork server, which died).
        ``grace``: seconds it may take to end on its own first (it is exiting:
        its own status, not our SIGKILL, is recorded)."""
        if not self.proc.done:
            deadline = time.monotonic() + grace
            while not self.exited() and time.monotonic() < deadline:
                time.sleep(0.002)
            self.proc.kill_group()
        returncode = self.proc.wait()
        self._reap_group()
        self._release()
        return returncode

    def _reap_group(self) -> None:
        """Where this process reaps orphans (PID 1 of a container, a
        subreaper), the members of the worker's group that were reparented to
        it (its sentinel, what the runtime started) end as its zombies, one
        more at every restart: reaped here, as they die of the group's SIGKILL
        (waited for at most EXIT_GRACE). Only that group: a worker's own
        status is left to its ``Popen``. Elsewhere none is a child of ours:
        nothing to wait for."""
        deadline = time.monotonic() + EXIT_GRACE
        with contextlib.suppress(ChildProcessError):  # none (left) in the group
            while True:
                reaped = os.waitid(os.P_PGID, self.proc.pid, os.WEXITED | os.WNOHANG)
                if reaped is None:
                    if time.monotonic() > deadline:
                        return
                    time.sleep(0.001)

    def _release(self) -> None:
        """What the worker held here: its pipes, its progress counter, its
        scratch folder (what the runtime left in it goes with it). Once."""
        if self.watch is None:
            return
        self.conn.close()
        self.progress_map.close()
        os.close(self.watch)  # its sentinel, if still there, kills what is left of the group
        self.watch = None
        shutil.rmtree(self.scratch, ignore_errors=True)

    def restart(self) -> None:
        self.kill()
        self.log.close()
        self._spawn()

    def close(self) -> None:
        self.kill()
        self.log.close()


@dataclass
class _Lane:
    """The work of one runtime: its workers and what they have yet to run."""

    name: str
    workers: list[Worker]
    queue: deque = field(default_factory=deque)  # jobs not yet sent
    retry: deque = field(default_factory=deque)  # survivors of a dead batch, sent first
    suspects: deque = field(default_factory=deque)  # jobs that crashed a worker once
    startup_failures: int = 0
    timeout: float = DEFAULT_TIMEOUT  # seconds a job may run on this runtime
    # Why the target's workers do not run ("": they do): each of its jobs is then
    # answered at once with a harness error saying so (WorkerPool._drain_lost).
    lost: str = ""
    gpu: bool = False  # a GPU target's: its resource failures are run again (_receive)
    # jobs that failed for lack of GPU resources, run again alone -> what said so
    resourced: dict[Job, str] = field(default_factory=dict)

    def has_work(self) -> bool:
        return bool(self.queue or self.retry or self.suspects)

    def busy(self) -> bool:
        return any(w.state == "busy" for w in self.workers)


@dataclass(eq=False)
class _Plan:
    """One target's start: its fork server (None: started directly), its
    workers as they start, and why it is lost ("" while it is not)."""

    target: Target
    server: ForkServer | None = None
    workers: list[Worker] = field(default_factory=list)
    lost: str = ""
    tail: str = ""  # what its worker (or server) wrote to stderr, when lost

    @property
    def label(self) -> str:
        return self.target.name or self.target.adapter

    @property
    def usable_server(self) -> ForkServer | None:
        return self.server if self.server is not None and self.server.ready else None

    def lose(self, why: str, tail: str = "") -> None:
        if not self.lost:
            self.lost, self.tail = why, tail


def starts_at_once() -> int:
    """Processes (fork servers, workers) starting at a time: a start is an
    interpreter importing a runtime, or a fork instantiating an adapter, bound
    by the CPU. 64 at once on two cores timed the later ones out; twice the
    cores keeps each start to a fraction of a core (an ONNX Runtime worker's
    ~0.7 s of CPU: seconds, not the 5 s floor), and starts the built-in
    runtimes no slower than all at once did."""
    return 2 * max(1, os.cpu_count() or 1)


class WorkerPool:
    """Workers for a set of runtimes. Use as a context manager.

    ``runtimes`` are :class:`~conformance.engine.targets.Target` s, or what
    ``--runtime`` takes (``onnxruntime``, ``openvino:1thread``, ``module:Class``).
    After start, ``info`` maps each target's name (which results carry; a
    ``module:Class`` target takes its adapter's own name) to what its worker
    reported: adapter, profile, version, device, requested and effective
    properties, interpreter.
    """

    def __init__(
        self,
        runtimes: Sequence[str | Target],
        workers: int = 1,
        batch_size: int = DEFAULT_BATCH,
        timeout: float | None = DEFAULT_TIMEOUT,
        worker_memory: int = DEFAULT_WORKER_MEMORY,
        default_timeouts: Timeouts = RUN_TIMEOUTS,
        gpu_workers: int = targets.DEFAULT_GPU_WORKERS,
    ) -> None:
        if workers < 1 or batch_size < 1 or (timeout is not None and timeout <= 0):
            raise ValueError("workers and batch_size must be >= 1 and timeout > 0")
        if gpu_workers < 1:
            raise ValueError("gpu_workers must be >= 1")
        self.targets = [
            spec if isinstance(spec, Target) else targets.parse(spec) for spec in runtimes
        ]
        self.workers_per_runtime = workers
        self.gpu_workers = targets.gpu_workers(self.targets, gpu_workers)
        self.batch_size = batch_size
        self.timeout = timeout  # None: each adapter's default (default_timeouts)
        self.default_timeouts = default_timeouts
        self.worker_memory = worker_memory
        self.lanes: dict[str, _Lane] = {}
        self.info: dict[str, dict] = {}
        self.on_gpu: dict[str, int] = {}  # name of each GPU target -> its workers (once started)
        self.events: list[str] = []  # crashes, restarts: what the summary should mention
        self.servers: list[ForkServer] = []  # one per interpreter and adapter module
        self._starting: list[Worker] = []  # workers started before their lanes exist

    # -- lifetime -------------------------------------------------------------
    def __enter__(self) -> WorkerPool:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def workers_of(self, target: Target) -> int:
        """Worker processes of the target: its GPU share, or ``workers``."""
        return self.gpu_workers.get(target, self.workers_per_runtime)

    def timeout_of(self, target: Target) -> float:
        """Seconds a job may run on this target: --timeout, or its adapter's default."""
        if self.timeout is not None:
            return self.timeout
        return self.default_timeouts.of(target.adapter)

    def startup_timeout(self, target: Target) -> float:
        return max(self.timeout_of(target), STARTUP_FLOOR)

    @property
    def timeouts(self) -> dict[str, float]:
        """Seconds per job, by runtime name (once started)."""
        return {name: lane.timeout for name, lane in self.lanes.items()}

    def start(self) -> None:
        """Start every target's workers: at most :func:`starts_at_once` starts
        (a fork server's or a worker's) at a time, each bounded by
        :meth:`startup_timeout` from its own beginning, so that many targets on
        few cores do not time each other's starts out. A target whose worker
        does not start is *lost*: it keeps a lane, which answers each of its
        jobs with a harness error saying why (:meth:`_drain_lost`), and the
        others run; when no target starts, EngineError says why the first did not."""
        plans = [_Plan(target) for target in self.targets]
        servers = self._fork_servers(plans)
        self._starting = []  # every worker started: closed by close() on a failure
        at_once = starts_at_once()
        queued = deque(servers)  # servers not yet started, then their targets' workers
        spawn = deque(plan for plan in plans if plan.server is None)
        running: list[ForkServer] = []
        starting: list[tuple[Worker, _Plan]] = []
        while queued or spawn or running or starting:
            while len(running) + len(starting) < at_once and (spawn or queued):
                if spawn:  # a worker first: its target is ready to start
                    plan = spawn[0]
                    worker = Worker(plan.target, plan.usable_server, self.worker_memory)
                    plan.workers.append(worker)
                    self._starting.append(worker)
                    starting.append((worker, plan))
                    if len(plan.workers) == self.workers_of(plan.target):
                        spawn.popleft()
                    continue
                server = queued.popleft()
                server.begin()
                if server.state == "down":  # it could not be started: direct starts
                    spawn.extend(plan for plan in plans if plan.server is server)
                else:
                    running.append(server)
            waiting = [server.sock for server in running] + [w.conn for w, _ in starting]
            wait(waiting, timeout=self._next_deadline(running, starting))
            now = time.monotonic()
            for server in list(running):
                answered = bool(select.select([server.sock], [], [], 0)[0])
                if not answered and now - server.started_at < server.bound:
                    continue
                running.remove(server)
                ready = server.await_ready(server.bound)
                for plan in plans:
                    if plan.server is not server:
                        continue
                    if ready is None:  # its import hangs: so would its workers'
                        plan.lose(self._no_answer(plan.target), server.tail())
                    else:
                        spawn.append(plan)
            for worker, plan in list(starting):
                if plan.lost:  # another of its workers failed first: this one is closed
                    continue
                timed_out = now - worker.spawned_at > self.startup_timeout(plan.target)
                if not worker.conn.poll(0) and not timed_out:
                    continue
                starting.remove((worker, plan))
                why = self._hello(worker)
                if not why:
                    continue
                plan.lose(why, worker.stderr_tail())
                for other in plan.workers:  # a target starts whole or not at all
                    other.close()
                starting = [(w, p) for w, p in starting if p is not plan]
                with contextlib.suppress(ValueError):
                    spawn.remove(plan)
        self._starting = []
        self._lanes_of(plans)

    def _lanes_of(self, plans: list[_Plan]) -> None:
        """The lanes of the started targets and of the lost ones, in the targets' order."""
        lanes = {}
        for index, plan in enumerate(plans):
            if plan.lost:
                lane = _Lane(plan.label, [], timeout=self.timeout_of(plan.target))
                lane.lost = f"not run: the {plan.label} worker did not start: {plan.lost}"
            else:
                lane = _Lane(plan.label, plan.workers, timeout=self.timeout_of(plan.target))
            lanes[str(index)] = lane  # by index until named: all are closed on failure
        self.lanes = lanes
        for plan in plans:
            if plan.lost and plan.target.gpu:  # the machine's fact: no case would run there
                raise EngineError(
                    f"{plan.label} runs on an NVIDIA GPU and its worker did not start: "
                    f"{plan.lost}" + (f"\n{plan.tail}" if plan.tail else "")
                )
        if all(plan.lost for plan in plans):
            first = plans[0]
            more = f" (and {len(plans) - 1} other target(s))" if len(plans) > 1 else ""
            raise EngineError(
                f"the {first.label} worker did not start: {first.lost}{more}"
                + (f"\n{first.tail}" if first.tail else "")
            )
        named = {}
        for plan, lane in zip(plans, lanes.values(), strict=True):
            if plan.lost:
                name = plan.label
                about = {
                    **plan.target.describe(),
                    "name": name,
                    "version": "",
                    "device": "",
                    "effective": {},
                    "python": plan.target.python or sys.executable,
                    "python_version": "",
                    "not_started": plan.lost,
                }
                self.events.append(
                    f"{name}: the worker did not start ({plan.lost}); its results are "
                    "recorded as harness errors, not run" + (f"\n{plan.tail}" if plan.tail else "")
                )
            else:
                info = plan.workers[0].info
                assert info is not None  # a started worker said what it runs
                name = plan.target.name or info["name"]
                about = plan.target.recorded(name, info)  # the harness's, then the adapter's
            if name in named:
                raise EngineError(f"two runtimes are both named {name!r}")
            self.info[name] = about
            if plan.target.gpu:
                self.on_gpu[name] = self.workers_of(plan.target)
            lane.gpu = plan.target.gpu
            lane.name = name
            named[name] = lane
        self.lanes = named

    def _fork_servers(self, plans: list[_Plan]) -> list[ForkServer]:
        """One fork server per interpreter and adapter module, shared by the
        targets that use them (a targets file may name one adapter 64 times:
        one server imports it once and forks every target's workers, each
        with its own properties); not started yet (:meth:`ForkServer.begin`)."""
        if not forkserver.usable():
            return []
        made: dict[tuple[str, str], ForkServer] = {}
        for plan in plans:
            python = plan.target.python or sys.executable
            module = plan.target.adapter_class.partition(":")[0]
            server = made.get((python, module))
            if server is None:
                server = ForkServer(python, [module], plan.label, self.events, begin=False)
                server.bound = self.startup_timeout(plan.target)
                made[(python, module)] = server
                self.servers.append(server)
            server.bound = max(server.bound, self.startup_timeout(plan.target))
            plan.server = server
        return list(made.values())

    def _next_deadline(self, running: list[ForkServer], starting: list) -> float:
        """Seconds until the first start in flight runs out of time (at least 0)."""
        now = time.monotonic()
        ends = [server.started_at + server.bound for server in running]
        ends += [w.spawned_at + self.startup_timeout(plan.target) for w, plan in starting]
        return max(0.0, min(ends) - now) if ends else 0.0

    def _hello(self, worker: Worker) -> str:
        """Read a starting worker's greeting (it has one, or its time is up):
        "" when it is ready, else why it did not start."""
        if worker.conn.poll(0):
            try:
                message = _loads(worker.conn.recv_bytes())
            except (EOFError, OSError):
                message = None
            except Exception as error:
                message = ("failed", f"its greeting cannot be unpickled: {error}")
            if message is None:
                return f"it died ({_death(worker.kill(EXIT_GRACE))})"
            info, why = _hello_info(message, worker.target)
            if info is not None:
                worker.info, worker.state = info, "idle"
                return ""
            return why
        return self._no_answer(worker.target)

    def _no_answer(self, target: Target) -> str:
        return (
            f"no answer in {self.startup_timeout(target):g} s (start-up is bounded by the "
            f"timeout, at least {STARTUP_FLOOR:g} s)"
        )

    def close(self) -> None:
        for worker in self._starting:  # a start that failed before its lane was made
            worker.close()
        self._starting = []
        for lane in self.lanes.values():
            for worker in lane.workers:
                worker.close()
        self.lanes = {}
        for server in self.servers:  # after their workers, which they reaped
            server.close()
        self.servers = []

    @property
    def runtimes(self) -> list[str]:
        return list(self.lanes)

    # -- running --------------------------------------------------------------
    def run(
        self, jobs: Iterable[Job], deadline: float | None = None, more: deque | None = None
    ) -> Iterator[list[tuple[Job, str, Raw]]]:
        """Run every job on every runtime (or on the job's ``runtimes``); yield
        results as each batch comes back.

        ``more``: jobs the caller adds while it handles results (a pack split,
        a discrepancy confirmed alone); they go before the rest, and the run
        ends only when ``jobs`` and ``more`` are both done.

        Each yielded list is one batch's worth of (job, runtime name, Raw).
        Results of one runtime come in job order, except for jobs that were
        re-run after a crash or timeout.

        ``deadline`` (a ``time.monotonic()`` value): once it passes, no job
        starts; the jobs not started are dropped without a result, and the
        jobs running finish (or time out). A time budget then overruns by at
        most one timeout, however many jobs hang.
        """
        source = iter(jobs)
        more = more if more is not None else deque()
        exhausted = False
        lanes = list(self.lanes.values())
        queued_bytes = 0

        def enqueue(job: Job, first: bool = False) -> None:
            nonlocal queued_bytes
            targets = [lane for lane in lanes if job.runtimes is None or lane.name in job.runtimes]
            job.pending = len(targets)
            job.size = (
                len(job.model)
                + len(job.tail[1] if job.tail else b"")
                + sum(a.nbytes for a in job.feeds.values())
            )
            queued_bytes += job.size if targets else 0
            for lane in targets:
                (lane.queue.appendleft if first else lane.queue.append)(job)

        while True:
            late = deadline is not None and time.monotonic() >= deadline
            if late:
                exhausted = True
                more.clear()
                for lane in lanes:  # suspects stay: each is a crash seen, confirmed alone
                    lane.queue.clear()
                    lane.retry.clear()
            while more:  # follow-ups first: they finish what is already under way
                enqueue(more.pop(), first=True)
            while not exhausted and (
                max(len(lane.queue) for lane in lanes) < QUEUE_JOBS and queued_bytes < QUEUE_BYTES
            ):
                job = next(source, None)
                if job is None:
                    exhausted = True
                    break
                enqueue(job)
            drained = [self._drain_lost(lane) for lane in lanes if lane.lost]
            drained = [results for results in drained if results]
            for lane in lanes:
                self._dispatch(lane)
            if (
                exhausted
                and not drained
                and not any(lane.has_work() or lane.busy() for lane in lanes)
            ):
                return
            waiting = {
                worker.conn: (lane, worker)
                for lane in lanes
                for worker in lane.workers
                if worker.state in ("busy", "starting")
            }
            ready = wait(list(waiting), timeout=0 if drained else self._tick())
            # (typeshed: wait gives a Connection, socket or int; it gives back what it was given)
            batches = drained + [self._receive(*waiting[conn]) for conn in ready]  # type: ignore[index]
            batches += [self._watch(lane) for lane in lanes]
            for results in batches:
                if results:
                    for job, _, _ in results:
                        job.pending -= 1
                        if not job.pending:
                            queued_bytes -= job.size
                    yield results

    def _tick(self) -> float:
        return min(0.25, min(lane.timeout for lane in self.lanes.values()) / 4)

    def _dispatch(self, lane: _Lane) -> None:
        for worker in lane.workers:
            if worker.state != "idle" or not lane.has_work():
                continue
            if lane.suspects:
                if worker.fresh:
                    worker.send([lane.suspects.popleft()], solo=True)
                else:  # a suspect is only judged in a worker that ran nothing before it
                    worker.restart()
                continue
            batch: list[Job] = []
            while len(batch) < self.batch_size and (lane.retry or lane.queue):
                batch.append((lane.retry or lane.queue).popleft())
            worker.send(batch)

    def _receive(self, lane: _Lane, worker: Worker) -> list[tuple[Job, str, Raw]]:
        if worker.state == "closed":  # its target was given up while this was read
            return []
        try:
            message = _loads(worker.conn.recv_bytes())
        except (EOFError, OSError):
            return self._died(lane, worker)
        if worker.state == "starting":
            info, why = _hello_info(message, worker.target)
            if info is None:
                return self._failed_start(lane, worker, why)
            worker.info, worker.state = info, "idle"
            lane.startup_failures = 0
            return []
        kind, first, wire = message
        batch, solo = worker.batch, worker.solo
        assert batch is not None  # results come from a worker running a batch
        worker.delivered = first + len(wire)
        if kind == "done":
            worker.batch, worker.state = None, "idle"
        results = []
        for job, result in zip(batch[first : first + len(wire)], wire, strict=True):
            raw = _raw_from_wire(result)
            short = lane.gpu and raw.status in ("load_error", "run_error")
            resource = gpu.resource_failure(raw.message) if short else None
            if solo and job in lane.resourced:
                raw = self._retried(lane, job, raw, resource)
            elif resource:  # never the runtime's verdict: again where nothing else holds the GPU
                lane.resourced[job] = resource
                lane.suspects.append(job)
                self.events.append(
                    f"{lane.name}: a GPU resource failure ({resource}); running that job again "
                    "alone in a fresh worker"
                )
                continue
            elif solo:
                raw = replace(
                    raw,
                    note="this case crashed a worker once, in a batch after other cases; "
                    "run alone in a fresh worker it gave this outcome",
                )
            results.append((job, lane.name, raw))
        return results

    def _retried(self, lane: _Lane, job: Job, raw: Raw, why: str | None) -> Raw:
        """The result of a job run again after a GPU resource failure: a second
        one is a harness error; anything else stands, with a note of the first."""
        first = lane.resourced.pop(job)
        if why:
            self.events.append(f"{lane.name}: a GPU resource failure again, alone ({why})")
            return Raw(
                "harness_error",
                message="the GPU ran out of resources (or lost its device) twice, the second "
                "time alone in a fresh worker: not the runtime's verdict on this case; "
                f"{raw.message}",
            )
        return replace(
            raw,
            note=f"it failed once for lack of GPU resources ({first}); run again alone in a "
            "fresh worker it gave this outcome",
        )

    def _failed_start(self, lane: _Lane, worker: Worker, why: str) -> list:
        lane.startup_failures += 1
        tail = worker.stderr_tail()
        if lane.startup_failures >= MAX_STARTUP_FAILURES:
            self._lose(
                lane,
                f"the {lane.name} worker failed to restart {lane.startup_failures} times "
                f"in a row: {why}",
                tail,
            )
            return []
        self.events.append(f"{lane.name}: a worker failed to start ({why}); retrying")
        worker.restart()
        return []

    def _lose(self, lane: _Lane, why: str, tail: str) -> None:
        """Give a target up for the rest of the run: its workers are stopped,
        and what it had yet to run, or was running, is answered as not run
        (:meth:`_drain_lost`); the other targets go on."""
        for worker in lane.workers:
            if worker.batch:
                lane.retry.extend(worker.batch[worker.delivered :])
            worker.close()
            worker.state = "closed"
        lane.workers = []
        lane.lost = f"not run: {why}"
        self.events.append(
            f"{lane.name}: {why}; its remaining results are recorded as harness errors, not run"
            + (f"\n{tail}" if tail else "")
        )

    def _drain_lost(self, lane: _Lane) -> list[tuple[Job, str, Raw]]:
        """Each job of a lost target answered at once: a harness error that
        says why it did not run (``Raw.lost``: nothing ran)."""
        raw = Raw("harness_error", message=lane.lost, lost=True)
        results = []
        for waiting in (lane.suspects, lane.retry, lane.queue):
            while waiting:
                results.append((waiting.popleft(), lane.name, raw))
        return results

    def _died(self, lane: _Lane, worker: Worker) -> list[tuple[Job, str, Raw]]:
        if worker.state == "closed":  # its target was given up: nothing of it is read
            return []
        if worker.state == "starting":
            returncode = worker.kill(EXIT_GRACE)
            if returncode is None:  # its fork server died, not its adapter: start it again
                worker.restart()
                return []
            return self._failed_start(lane, worker, f"it died ({_death(returncode)})")
        started = worker.progress() - worker.base
        returncode = worker.kill(EXIT_GRACE)
        if returncode is None:
            return self._lost(lane, worker)
        death = _death(returncode)
        tail = worker.stderr_tail(worker.log_offset)
        batch, alone = worker.batch or [], worker.alone
        if not batch:  # died while idle: nothing is lost, the restart suffices
            worker.restart()
            self.events.append(f"{lane.name}: an idle worker died ({death}); restarted")
            return []
        # The job that was running when it died; if it died before starting
        # any (while reading the batch), the first undelivered one is suspect.
        culprit = max(started - 1, worker.delivered)
        others = worker.lost(culprit)
        worker.restart()
        lane.retry.extendleft(reversed(others))
        if alone:
            message = f"the worker died ({death}) running this case alone in a fresh worker"
            self.events.append(f"{lane.name}: crash ({death}) confirmed alone")
            raw = Raw("crash", message=message + (f"\n{tail}" if tail else ""), signal=death)
            return [(batch[culprit], lane.name, raw)]
        self.events.append(
            f"{lane.name}: worker died ({death}) at job {culprit + 1} of a batch of "
            f"{len(batch)}; re-running that job alone and re-queueing {len(others)}"
        )
        lane.suspects.append(batch[culprit])
        return []

    def _lost(self, lane: _Lane, worker: Worker) -> list[tuple[Job, str, Raw]]:
        """A worker that died with its fork server (its status died with it):
        nothing is blamed on a case; what it had not delivered is run again."""
        left = (worker.batch or [])[worker.delivered :]
        if worker.solo:
            lane.suspects.extendleft(reversed(left))
        else:
            lane.retry.extendleft(reversed(left))
        worker.restart()
        self.events.append(
            f"{lane.name}: a worker died with its fork server; {len(left)} job(s) re-queued"
        )
        return []

    def _dead(self, lane: _Lane, worker: Worker) -> list[tuple[Job, str, Raw]]:
        """A worker whose process ended, though a grandchild may hold its pipe
        open (no EOF): what it sent before dying counts, then its death."""
        proc, results = worker.proc, []

        def same() -> bool:  # neither restarted nor closed (its target given up) meanwhile
            return worker.proc is proc and worker.state != "closed"

        while same() and worker.conn.poll(0):
            results += self._receive(lane, worker)  # at EOF, records the death itself
        if same():
            results += self._died(lane, worker)
        return results

    def _watch(self, lane: _Lane) -> list[tuple[Job, str, Raw]]:
        """Kill workers stuck on one job past the timeout or over the memory limit."""
        now = time.monotonic()
        results = []
        for worker in lane.workers:
            if worker.state in ("busy", "starting") and worker.exited():
                results += self._dead(lane, worker)
                continue
            if worker.state == "starting" and now - worker.spawned_at > self.startup_timeout(
                worker.target
            ):
                self._failed_start(lane, worker, self._no_answer(worker.target))
                continue
            if worker.state != "busy":
                continue
            progress = worker.progress()
            resident = worker.resident()
            if resident > self.worker_memory:
                raw = Raw(
                    "crash",
                    message=f"the worker's resident memory reached {resident:,} bytes, over "
                    f"the limit of {self.worker_memory:,} (--worker-memory); it was killed",
                    signal="memory limit",
                )
                self.events.append(f"{lane.name}: worker killed at {resident:,} bytes resident")
            elif progress != worker.last_progress:
                worker.last_progress, worker.last_change = progress, now
                continue
            elif now - worker.last_change > lane.timeout:
                raw = Raw(
                    "timeout",
                    message=f"no result after {lane.timeout:g} s; the worker was killed "
                    "and restarted",
                )
                self.events.append(f"{lane.name}: timeout after {lane.timeout:g} s")
            else:
                continue
            culprit = max(progress - worker.base - 1, worker.delivered)
            assert worker.batch is not None  # a busy worker's
            job, others = worker.batch[culprit], worker.lost(culprit)
            worker.restart()
            lane.retry.extendleft(reversed(others))
            results.append((job, lane.name, raw))
        return results
