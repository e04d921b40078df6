"""The worker process: one runtime, one adapter, a loop over batches.

Started by :mod:`conformance.engine.pool` as ``python -m
conformance.engine.worker CONN_FD PROGRESS_FD WATCH_FD SCRATCH ADAPTER [PROPERTIES_JSON]``,
with the interpreter of the target's environment (which may be another
Python with other runtime versions: this module needs only the adapter's
runtime, numpy, ml_dtypes and onnx there), in a session (and process group)
of its own, with ``TMPDIR`` set to SCRATCH, a folder of its own; or forked,
in that same state, by the target's fork server
(:mod:`conformance.engine.forkserver`), which calls :func:`main` with the same
arguments (its parent is then the fork server, whose death it dies of).
It talks over an inherited pipe (never stdout, which a runtime may print
to), and before each job it bumps a counter in shared memory, so that when
this process dies or hangs the parent knows exactly which job was running.

When the parent dies, everything this worker started must die too, even
after ``kill -9`` and even while a job hangs in native code:
``PR_SET_PDEATHSIG`` kills this process, but it is not inherited across
fork, so before anything else runs here a **sentinel** is forked (twice, so
that it is not a child a runtime could reap by accident): it stays in this
process group, closes every descriptor but WATCH_FD, the read end of a pipe
whose only writer is the parent, and blocks on it. At end of file (the
parent died, or let the worker go) it kills the whole process group,
grandchildren included (leaving the group first, so that it lives on; a
process that left the group, by ``setsid``, is beyond its reach), then
removes SCRATCH.

Wire format (pickled):
  parent -> worker: one message per batch, [(session_key, model_bytes, feeds), ...],
                    where a model or a feed of at least SHARED_BYTES may come as
                    (KEEP, digest, size, value): hold it in the worker's
                    :class:`Blobs`; or (HELD, digest): the one held (below);
                    and a model ending with a large constant (models.serialized)
                    as (PARTS, head, its tail so wired): the two joined when
                    the adapter loads the model (not for a cached session)
  worker -> parent: first ("hello", info) or ("failed", message); then, per
                    batch, ("part", first, results) whenever FLUSH_S has passed
                    since the last message (so that a later crash or hang does
                    not throw away slow results already computed) and a final
                    ("done", first, results). ``first`` is the index in the
                    batch of the first result; ``results`` holds each result
                    pickled on its own (so that an output which cannot be
                    pickled here or unpickled in the parent spoils only its
                    own job), each one of:
      ("ok", outputs, load_s, run_s, cached)
      ("load_error" | "run_error", message, load_s, run_s)
      ("unsupported", message)
      ("timeout", message)         # the adapter knows the runtime would not finish
      ("harness_error", message)   # a bug in the adapter, not the runtime

An adapter is third-party code: whatever its ``execute`` returns is
untrusted, and goes through :func:`plain_outputs` (the one check between an
adapter and the judge, made here and again in the parent, which trusts no
worker): what is a faithful list of plain NumPy arrays after a conversion
that keeps every element's bits is judged, anything else is a
``harness_error`` of that job, as is whatever ``execute`` raises that is not
one of the adapter errors (KeyboardInterrupt included). ``sys.exit`` in an
adapter ends the worker at once with its exit status, which the parent
records as such. An ``info()`` that is not a dict with a
``name``, or not JSON, fails the start.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import mmap
import os
import pickle
import shutil
import signal
import struct
import sys
import time
import traceback
import warnings
import weakref
from collections import OrderedDict
from multiprocessing.connection import Connection

import numpy as np

from conformance.adapters import AdapterError, HarnessUnsupported, WouldNotFinish, instantiate
from conformance.messages import cause
from conformance.tables import dtypes

PROGRESS = struct.Struct("=Q")  # jobs started by this worker so far
FLUSH_S = 0.05  # send finished results at least this often within a batch
_PR_SET_PDEATHSIG = 1
# The pool tells each worker, in its environment, how many bytes one output
# may hold (its --worker-memory): a larger one cannot be a result the worker
# computed (it would have been killed first), only a view that pickling would
# make whole, here and again in the parent.
OUTPUT_LIMIT_ENV = "CONFORMANCE_OUTPUT_LIMIT"


# A model or feed this large crosses the pipe once per worker, then by its
# digest: a model node's constant (a 90 MB embedding table) is in every case
# of that node, in every variant, and pickling, piping and unpickling it on
# every job was most of `conformance model --inputs`'s time on a BERT-size
# model (docs/development.md, Benchmarks). Below it the digest costs more than
# the copy it saves.
SHARED_BYTES = 1 << 20
# What a worker holds at most (bytes), least recently used dropped: a quarter
# of its memory limit, so that what it holds never makes it the runaway
# allocation the pool kills it for.
BLOBS_BYTES = 512 << 20
KEEP, HELD, PARTS = "keep", "held", "parts"


def blobs_capacity(limit: int | None) -> int:
    """Bytes a worker's :class:`Blobs` holds, ``limit`` its memory limit (the
    pool's --worker-memory, :data:`OUTPUT_LIMIT_ENV`): both ends compute it."""
    return BLOBS_BYTES if limit is None else min(BLOBS_BYTES, limit // 4)


class Blobs:
    """Large values a worker holds by digest, least recently used dropped
    beyond ``capacity`` bytes. The parent keeps one per worker, sizes only,
    and applies the same steps in the same order as the worker (one message
    after the other, each message's values in order), so it knows what the
    worker holds without asking: what it holds goes as (HELD, digest)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._held: OrderedDict[bytes, tuple[int, object]] = OrderedDict()
        self._bytes = 0

    def wire(self, digest: bytes, size: int, value: object) -> object:
        """The parent's side: what to send for ``value`` (held or not)."""
        if digest in self._held:
            self._held.move_to_end(digest)
            return (HELD, digest)
        if size > self.capacity:
            return value  # never held: sent whole every time
        self._hold(digest, size, None)
        return (KEEP, digest, size, value)

    def resolve(self, wired: object) -> object:
        """The worker's side: the value a wired model or feed stands for."""
        if not isinstance(wired, tuple):
            return wired
        if wired[0] == HELD:
            self._held.move_to_end(wired[1])
            return self._held[wired[1]][1]
        _, digest, size, value = wired
        self._hold(digest, size, value)
        return value

    def _hold(self, digest: bytes, size: int, value: object) -> None:
        self._held[digest] = (size, value)
        self._bytes += size
        while self._bytes > self.capacity:
            _, (dropped, _) = self._held.popitem(last=False)
            self._bytes -= dropped


def resolved(blobs: Blobs, job: tuple) -> tuple:
    """A job with its wired values resolved (every one, in order, so that the
    worker's Blobs step with the parent's); a model in parts stays
    (PARTS, head, tail) until :func:`joined`."""
    key, model, feeds = job
    if isinstance(model, tuple) and model[0] == PARTS:  # (PARTS, head, its wired tail)
        model = (PARTS, model[1], blobs.resolve(model[2]))
    else:
        model = blobs.resolve(model)
    return key, model, {name: blobs.resolve(value) for name, value in feeds.items()}


def joined(adapter, job: tuple) -> tuple:
    """The job as the adapter takes it: a model in parts joined, unless the
    adapter's cached session serves its key (``Adapter.holds``: the join is
    a copy of a 90 MB table the cached session never reads)."""
    key, model, feeds = job
    if isinstance(model, tuple):
        _, head, tail = model
        held = getattr(adapter, "holds", None)
        model = head if callable(held) and held(key) else head + tail
    return key, model, feeds


# Digests of the large arrays sent so far, by the array's id while it lives:
# the same constant is in every job of its node, and hashing 90 MB costs a
# tenth of a second each time.
_DIGESTS: dict[int, tuple[weakref.ref, bytes]] = {}


def array_digest(array: np.ndarray) -> bytes:
    """The digest of an array's dtype, shape and bytes (the parent's side)."""
    known = _DIGESTS.get(id(array))
    if known is not None and known[0]() is array:
        return known[1]
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{array.dtype.str}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).reshape(-1).view(np.uint8).data)
    done = digest.digest()
    key = id(array)

    def forget(_: weakref.ref) -> None:  # the id may name another array next
        _DIGESTS.pop(key, None)

    _DIGESTS[key] = (weakref.ref(array, forget), done)
    return done


def _die_with_parent(parent: int | None = None) -> None:
    """Be killed if the parent dies (kill -9 included), even in an endless loop.
    ``parent``: its pid, when known (a fork server's worker)."""
    # Not on Linux: EOF on the pipe still ends the loop, unless the job hangs.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1 or (parent is not None and os.getppid() != parent):
        os._exit(0)  # the parent is already gone


def run_job(adapter, job, limit: int | None = None) -> tuple:
    """One job's result in the wire format; ``limit``: bytes one output may hold."""
    key, model, feeds = job
    start = time.perf_counter()
    try:
        timed = adapter.run(model, feeds, key)
    except AdapterError as error:
        elapsed = time.perf_counter() - start
        kind = "load_error" if error.stage == "load" else "run_error"
        return (kind, str(error), elapsed if error.stage == "load" else None, None)
    except HarnessUnsupported as error:
        return ("unsupported", str(error))
    except WouldNotFinish as error:  # counted, not waited for: the same on any machine
        return ("timeout", str(error))
    except SystemExit as stop:  # the adapter asked to end the process: do so now
        _exit(stop.code)
    except BaseException:  # KeyboardInterrupt too: SIGINT is ignored, so the adapter raised it
        return ("harness_error", traceback.format_exc(limit=-3))
    try:  # the adapter's objects may raise in any method NumPy or we call
        outputs, problem = plain_outputs(timed.outputs, limit)
    except BaseException:
        outputs, problem = None, "an object that cannot be read:\n" + traceback.format_exc(limit=-3)
    if problem:
        return ("harness_error", f"the adapter's execute returned {problem}")
    return ("ok", outputs, timed.load_s, timed.run_s, timed.cached)


def _output_limit() -> int | None:
    """Bytes one output may hold (the pool sets it: its --worker-memory); None:
    no limit. Read before the adapter starts (it may change the environment)."""
    try:
        return int(os.environ[OUTPUT_LIMIT_ENV])
    except (KeyError, ValueError):
        return None


def plain_outputs(outputs, limit: int | None = None) -> tuple[list[np.ndarray] | None, str]:
    """Outputs as the judge takes them, or why they cannot be judged:
    ``(list of plain arrays, "")`` or ``(None, what is wrong)``.

    The one check of what an adapter returns, made in the worker (so that no
    adapter's own class crosses the pipe) and again in the parent (which
    trusts no worker: it may be another environment's copy of this code).
    Judged, after a conversion that keeps every element's bits (dtype, shape
    and bytes as the judge compares them):

    - a list or a tuple of outputs (a tuple: its elements, in order);
    - a NumPy scalar: the 0-d array of its dtype (a Python runtime returns one);
    - an ndarray subclass (``np.memmap``, ``np.matrix``, any other): the plain
      array over the same memory, its dtype and shape (a matrix's are 2-D);
    - a masked array none of whose elements is masked: its data;
    - a byte order that is not the machine's: the same elements byte-swapped
      into the machine's (each element's value and bits kept);
    - an object array whose elements are all ``str`` (an ONNX string tensor),
      ``np.str_`` elements made ``str`` (the same characters);
    - a 0-d or non-contiguous array: as it is (it is a plain array).

    Not judged (a harness error of the job): not a list or tuple (a bare
    array included: which outputs would it hold?); an element that is not a
    NumPy array or scalar (a Python list, number, None...); a masked array
    with a masked element (that element has no value); an object array
    holding anything but strings; a dtype that is neither the harness's
    (:data:`conformance.tables.dtypes.DTYPES`) nor NumPy text (``<U``,
    ``S``, which a runtime may return for a string tensor, and is then
    judged a ``dtype_mismatch``): a record, a date, a ``longdouble``...;
    an output of more than ``limit`` bytes (a broadcast view of a huge
    shape, which the pipe would have to carry whole).
    """
    if not isinstance(outputs, (list, tuple)):
        return None, f"{type(outputs).__name__}, not a list of NumPy arrays"
    plain: list[np.ndarray] = []
    for index, output in enumerate(list(outputs)):
        array, problem = _plain_array(output, limit)
        if problem or array is None:  # (no array comes with a problem)
            return None, f"a list whose element {index} is {problem}"
        plain.append(array)
    return plain, ""


def _plain_array(output, limit: int | None) -> tuple[np.ndarray | None, str]:
    if isinstance(output, np.generic):
        output = np.asarray(output)
    if not isinstance(output, np.ndarray):
        return None, f"a {type(output).__name__}, not a NumPy array"
    masked_arrays = sys.modules.get("numpy.ma")  # none exists unless numpy.ma was imported
    if masked_arrays is not None and isinstance(output, masked_arrays.MaskedArray):
        masked = int(np.count_nonzero(masked_arrays.getmaskarray(output)))
        if masked:
            return None, (
                f"a masked array with {masked} of {output.size} elements masked "
                "(a masked element has no value to judge)"
            )
        output = masked_arrays.getdata(output)
    if type(output) is not np.ndarray:
        output = output.view(np.ndarray)
    if limit is not None and output.nbytes > limit:
        return None, (
            f"an array of {output.nbytes:,} bytes (shape {list(output.shape)}), over the "
            f"{limit:,} a worker may hold (--worker-memory)"
        )
    if not output.dtype.isnative and output.dtype.kind not in "OV":
        output = output.byteswap().view(output.dtype.newbyteorder("="))
    dtype = output.dtype
    if dtype.kind == "O":
        return _strings(output)
    if dtype.kind in "US" or any(dtype == known.numpy for known in dtypes.DTYPES):
        return output, ""
    return None, (
        f"an array of dtype {dtype}, no tensor type the harness knows "
        f"({', '.join(dtypes.NAMES)}; or NumPy text)"
    )


def _strings(output: np.ndarray) -> tuple[np.ndarray | None, str]:
    """An object array as a string tensor: every element a str (np.str_ made str)."""
    flat = output.ravel()
    converted = False
    for position, element in enumerate(flat):
        if type(element) is str:
            continue
        if type(element) is np.str_:
            converted = True
            continue
        where = [int(i) for i in np.unravel_index(position, output.shape)]
        return None, (
            f"an object array whose element {where} is a {type(element).__name__}, not a str "
            "(the one object tensor the harness knows is a string tensor)"
        )
    if not converted:
        return output, ""
    strings = np.empty(output.shape, dtype=object)
    strings.ravel()[:] = [str(element) for element in flat]
    return strings, ""


def _exit(code) -> None:
    """End the process as the interpreter would on SystemExit(code), without
    its clean-up (which a runtime's threads may hang)."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xFF
    else:
        print(code, file=sys.stderr)
        status = 1
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


def checked_info(adapter) -> dict:
    """The adapter's ``info()``; ValueError with one line if it is unusable."""
    info = adapter.info()
    if not isinstance(info, dict):
        raise ValueError(
            f"{type(adapter).__name__}.info() returned a {type(info).__name__}, not a dict"
        )
    name = info.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(
            f"{type(adapter).__name__}.info() returned a dict without a 'name' "
            f"(a non-empty string; got {name!r})"
        )
    try:  # it goes into header.json and every report: strict JSON or nothing
        text = json.dumps(info, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{type(adapter).__name__}.info() is not JSON ({error})") from None
    # What crosses to the parent is the JSON's plain copy: a runtime's own str
    # subclass (TVM's version string) would pickle as its class, which the
    # parent does not load (pool._WireUnpickler).
    return json.loads(text)


def _sentinel(watch_fd: int, scratch: str | None) -> None:
    """Fork the sentinel (see the module's docstring); this process goes on.
    ``scratch`` None: no folder to remove (a fork server's sentinel)."""
    with warnings.catch_warnings():  # Python 3.12 warns of fork with threads (NumPy's, idle)
        warnings.simplefilter("ignore", DeprecationWarning)
        first = os.fork()
    if first:
        os.close(watch_fd)
        os.waitpid(first, 0)  # the middle process exits at once: the sentinel is no child of ours
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            if os.fork():
                os._exit(0)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.closerange(3, watch_fd)
        os.closerange(watch_fd + 1, os.sysconf("SC_OPEN_MAX"))
        while True:
            try:
                if not os.read(watch_fd, 4096):
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        # The group dies first and the folder goes after: removed while the
        # worker (its own SIGKILL comes by PR_SET_PDEATHSIG, a step later) or
        # a process it started still writes, it would outlive us. Leaving the
        # group lets us kill it and live on to remove the folder.
        group = os.getpgrp()
        os.setpgid(0, 0)
        os.killpg(group, signal.SIGKILL)
        if scratch is not None:
            _remove(scratch)
    finally:
        os._exit(0)


def _remove(folder: str, patience_s: float = 5.0) -> None:
    """Remove ``folder``, again while a process killed a moment ago may still
    finish a write into it (SIGKILL ends it at its next return from the
    kernel, not within a call)."""
    deadline = time.monotonic() + patience_s
    while True:
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.lexists(folder) or time.monotonic() > deadline:
            return
        time.sleep(0.01)


def main(argv: list[str], parent: int | None = None) -> None:
    """``parent``: the pid of the fork server that forked this worker
    (:mod:`conformance.engine.forkserver`); None when started directly."""
    conn_fd, progress_fd, watch_fd, scratch, target, *rest = argv
    properties = json.loads(rest[0]) if rest else {}
    _die_with_parent(parent)
    _sentinel(int(watch_fd), scratch)
    # Ctrl-C is for the parent, which decides what to keep and stops us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(int(conn_fd))
    progress = mmap.mmap(int(progress_fd), PROGRESS.size)
    limit = _output_limit()
    blobs = Blobs(blobs_capacity(limit))
    try:
        adapter = instantiate(target, properties)
        info = {
            **checked_info(adapter),
            "python": sys.executable,
            "python_version": sys.version.split()[0],
        }
        hello = pickle.dumps(("hello", info), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        # Its cause, not its first line: OpenVINO's first says only where it was raised.
        why = cause(error)
        conn.send(("failed", f"{type(error).__name__}: {why}" if why else type(error).__name__))
        return
    conn.send_bytes(hello)
    started = 0
    while True:
        try:
            batch = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        batch = [resolved(blobs, job) for job in batch]  # in order, as the parent wired them
        first, results = 0, []
        last_sent = time.perf_counter()
        for index, job in enumerate(batch):
            started += 1
            PROGRESS.pack_into(progress, 0, started)
            results.append(run_job(adapter, joined(adapter, job), limit))
            if index + 1 < len(batch) and time.perf_counter() - last_sent > FLUSH_S:
                _send(conn, "part", first, results)
                first, results = index + 1, []
                last_sent = time.perf_counter()
        _send(conn, "done", first, results)


def _pack(result: tuple) -> bytes:
    try:
        return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:  # an output the adapter failed to make picklable
        message = "the adapter's outputs cannot be pickled:\n" + traceback.format_exc(limit=-3)
        return pickle.dumps(("harness_error", message), protocol=pickle.HIGHEST_PROTOCOL)


def _send(conn: Connection, kind: str, first: int, results: list) -> None:
    packed = [_pack(result) for result in results]
    conn.send_bytes(pickle.dumps((kind, first, packed), protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    main(sys.argv[1:])
