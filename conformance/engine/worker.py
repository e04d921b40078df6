"""The worker process: one runtime, one adapter, a loop over batches.

Started by :mod:`conformance.engine.pool` as
``python -m conformance.engine.worker CONN_FD PROGRESS_FD ADAPTER [PROPERTIES_JSON]``,
with the interpreter of the target's environment (which may be another
Python with other runtime versions: this module needs only the adapter's
runtime, numpy, ml_dtypes and onnx there).
It talks over an inherited pipe (never stdout, which a runtime may print
to), and before each job it bumps a counter in shared memory, so that when
this process dies or hangs the parent knows exactly which job was running.

Wire format (pickled):
  parent -> worker: one message per batch, [(model_key, model_bytes, feeds), ...]
  worker -> parent: first ("hello", info) or ("failed", message); then, per
                    batch, ("part", first, results) whenever FLUSH_S has passed
                    since the last message (so that a later crash or hang does
                    not throw away slow results already computed) and a final
                    ("done", first, results). ``first`` is the index in the
                    batch of the first result; each result is one of:
      ("ok", outputs, load_s, run_s, cached)
      ("load_error" | "run_error", message, load_s, run_s)
      ("unsupported", message)
      ("harness_error", message)   # a bug in the adapter, not the runtime
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import mmap
import os
import pickle
import signal
import struct
import sys
import time
import traceback
from multiprocessing.connection import Connection

from conformance.adapters import AdapterError, HarnessUnsupported, instantiate

PROGRESS = struct.Struct("=Q")  # jobs started by this worker so far
FLUSH_S = 0.05  # send finished results at least this often within a batch
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Be killed if the parent dies (kill -9 included), even in an endless loop."""
    # Not on Linux: EOF on the pipe still ends the loop, unless the job hangs.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the parent is already gone
        os._exit(0)


def run_job(adapter, job) -> tuple:
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
    except Exception:
        return ("harness_error", traceback.format_exc(limit=-3))
    return ("ok", timed.outputs, timed.load_s, timed.run_s, timed.cached)


def main(argv: list[str]) -> None:
    conn_fd, progress_fd, target, *rest = argv
    properties = json.loads(rest[0]) if rest else {}
    _die_with_parent()
    # Ctrl-C is for the parent, which decides what to keep and stops us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(int(conn_fd))
    progress = mmap.mmap(int(progress_fd), PROGRESS.size)
    try:
        adapter = instantiate(target, properties)
        info = {
            **adapter.info(),
            "python": sys.executable,
            "python_version": sys.version.split()[0],
        }
    except Exception as error:
        conn.send(("failed", f"{type(error).__name__}: {error}"))
        return
    conn.send(("hello", info))
    started = 0
    while True:
        try:
            batch = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        first, results = 0, []
        last_sent = time.perf_counter()
        for index, job in enumerate(batch):
            started += 1
            PROGRESS.pack_into(progress, 0, started)
            results.append(run_job(adapter, job))
            if index + 1 < len(batch) and time.perf_counter() - last_sent > FLUSH_S:
                _send(conn, "part", first, results)
                first, results = index + 1, []
                last_sent = time.perf_counter()
        _send(conn, "done", first, results)


def _send(conn: Connection, kind: str, first: int, results: list) -> None:
    try:
        reply = pickle.dumps((kind, first, results), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # an output the adapter failed to make picklable
        message = traceback.format_exc(limit=-3)
        reply = pickle.dumps((kind, first, [("harness_error", message)] * len(results)))
    conn.send_bytes(reply)


if __name__ == "__main__":
    main(sys.argv[1:])
