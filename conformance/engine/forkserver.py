"""Fork servers ("zygotes"): a worker start at the cost of a fork.

A worker started as a new interpreter pays for Python, NumPy, onnx and its
runtime's import every time (a restart of an OpenVINO worker: ~0.4 s of CPU;
forked: ~0.06 s, most of it the adapter's own start, its Core and probe
model); a run restarts one after every crash, and again to confirm each
crash alone. A **fork server**
is started once per target, with the target's interpreter (``python -m
conformance.engine.forkserver``): it imports the worker's code and the
adapter's module, does *not* instantiate the adapter (a runtime's Core or
session starts thread pools, and a process forked with live threads may
inherit their locks held), and then forks a fresh worker on each request.
The forked worker makes its own session, takes its descriptors, its
environment (``TMPDIR``: its scratch folder) and its working folder from the
request, and runs :func:`conformance.engine.worker.main` exactly as a worker
started directly does: the adapter is instantiated there.

**Is a fork safe?** Checked in the server before every fork, from
``/proc/self/task``: every thread but the main one must be either one that
existed once the harness's own modules were imported (NumPy's OpenBLAS
servers, which OpenBLAS itself stops before a fork through
``pthread_atfork``), or a Python thread of a ``concurrent.futures`` pool idle
in its queue (OpenVINO's import starts one, for its telemetry). Anything else
(ONNX Runtime's import starts native threads on some machines; a third-party
module may start anything) and the server refuses: at start-up, it is stopped and that
target's workers start directly, as before; later, it forks no more (and
still reaps the workers it forked), and the next ones start directly.

**Exit status: the server reports it.** A forked worker is the server's
child, not the pool's; of the two ways to get its status (the server waits
for it and reports; or the pool becomes a child subreaper, the server forks
twice and the pool waits for its reparented workers) the first is taken.
``PR_SET_CHILD_SUBREAPER`` is a property of the whole process: every orphan
of anything the pool's process ever started (a pytest session's, when the
pytest plugin runs the pool) would become the pool's zombie, to be reaped by
code that does not know them. Here the server reaps a worker only when the
pool asks (``reap``, after it has killed the worker's group), and replies its
wait status: until then the worker is at worst a zombie, so its pid, which
names its process group, cannot be reused, and the pool may ``killpg`` it
as it does a child of its own (once the server is dead, it may have been
reaped elsewhere: the worker alone is then killed, through its pidfd). The
pool sees a worker end from a pidfd
(``pidfd_open``, readable once the process ended: no pid reuse either), and
reads its resident memory from ``/proc/<pid>/statm`` as before.

**When the parent dies** (``kill -9`` included): the server dies by
``PR_SET_PDEATHSIG``, and every worker it forked dies by its own
``PR_SET_PDEATHSIG`` (its parent being the server); each worker's sentinel
(:mod:`conformance.engine.worker`), which watches a pipe whose write end only
the pool holds (the read end is passed to the server with ``SCM_RIGHTS``,
which forks it into the worker and closes its own copy), kills the worker's
group and removes its scratch folder. The server has a sentinel of its own
too, for whatever an import started.

**When the server dies** (it runs no runtime code, but an OOM killer may
pick it), its workers die with it (their ``PR_SET_PDEATHSIG``) and their
statuses are lost: the pool re-queues what they were running, blaming no
case, and the target's workers start directly from then on. A server that
hangs or misbehaves (no reply in :data:`REPLY_S`) is killed and treated the
same way. A server that does not answer at all at start-up (an adapter module
whose import hangs) costs the start-up bound, and its targets are lost as a
target whose worker does not start is (:mod:`conformance.engine.pool`); one
that dies at start-up, or cannot be started (an interpreter of another
environment whose copy of this package has no fork server), leaves the
target to direct starts, which report the failure as before. A server may
serve several targets (the same interpreter and adapter module): each fork
request names its adapter and properties.

**What differs from a direct start**, and does not matter here: the
adapter's module was imported in the server, with the environment of the
pool's start (the worker's own environment is set before its adapter is
instantiated, but a variable an import reads then was read earlier); what
that import printed is in the server's output, not each worker's; a forked
worker ends with ``os._exit`` once :func:`~conformance.engine.worker.main`
returns (the parent let it go: it is being killed), without the atexit
handlers an interpreter would run; its CPU time is counted in the server's,
which the pool reaps when it closes.

Wire format: JSON over a ``SOCK_SEQPACKET`` socket pair, one message each way.
  server -> pool, once:  {"ready": PROTOCOL, "unsafe": "" or why not}
  pool -> server:        {"fork": [SCRATCH, ADAPTER, PROPERTIES_JSON], "env": {...}, "cwd": str}
                         with four descriptors: the worker's end of its pipe,
                         its progress counter, its watch, its log
                         -> {"pid": n} or {"refused": why}
  pool -> server:        {"reap": pid} -> {"status": wait status, or null}
End of file on the socket stops the server (its workers with it).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings

PROTOCOL = 1
REPLY_S = 10.0  # seconds a fork or a reap may take before the server is given up
_MESSAGE = 1 << 20  # bytes of one message, at most (the environment is the largest part)
_FDS = 4  # descriptors passed with a fork request


class ForkServerDown(Exception):
    """The server cannot fork this worker: start it directly."""


def usable() -> bool:
    """Whether this platform has what the pool side needs (Linux, Python >= 3.9)."""
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "pidfd_open")
        and hasattr(signal, "pidfd_send_signal")
        and hasattr(socket, "send_fds")
    )


class Forked:
    """A worker the server forked: what :class:`~conformance.engine.pool.Worker`
    needs of its process (``pid``, :meth:`exited`, :meth:`kill_group`, :meth:`wait`)."""

    def __init__(self, server: ForkServer, pid: int, pidfd: int) -> None:
        self.server = server
        self.pid = pid
        self.pidfd = pidfd
        self.returncode: int | None = None
        self.done = False  # reaped (or lost with its server)

    def exited(self) -> bool:
        """Whether the process has ended (its pidfd is readable), without reaping it."""
        return self.done or bool(select.select([self.pidfd], [], [], 0)[0])

    def kill_group(self) -> None:
        """SIGKILL to its process group: while the server lives, the worker is
        not reaped, so its pid still names the group. Once the server is gone
        (the worker was reaped by someone else), the worker alone, through its
        pidfd; the rest of its group is its sentinel's to kill."""
        if self.done:
            return
        if self.server.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        else:
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)

    def wait(self) -> int | None:
        """Its return code as ``Popen`` gives it (-N: signal N), once it has
        ended; None when it was lost with its server."""
        if not self.done:
            self.returncode = self.server.reap(self.pid)
            self.done = True
            os.close(self.pidfd)
        return self.returncode


class ForkServer:
    """The pool's side of one target's fork server."""

    def __init__(
        self,
        python: str,
        modules: list[str],
        label: str,
        events: list[str],
        begin: bool = True,
    ) -> None:
        """``begin`` False: the process starts at :meth:`begin` (the pool
        starts a bounded number of processes at a time)."""
        self.python = python
        self.modules = modules
        self.label = label
        self.events = events
        # "starting", then "ready"; "retired": it forks no more, but still reaps
        # the workers it forked; "down": dead or killed (its workers with it).
        self.state = "starting"
        self.last_words = ""
        self.unsafe = ""  # why the server would not fork, as it said
        self.popen: subprocess.Popen | None = None
        self.bound = 0.0  # seconds its start may take (the pool's start-up bound)
        self.started_at = time.monotonic()
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the server
        self.sock: socket.socket
        self._theirs: socket.socket | None
        self.sock, self._theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # The server's sentinel reads this pipe; only this process holds its write end.
        self.watch: int | None
        self._watch_fd, self.watch = os.pipe()
        if begin:
            self.begin()

    def begin(self) -> None:
        """Start the server process (its start-up time runs from now). Once."""
        if self._theirs is None:
            return
        theirs, watch_fd = self._theirs, self._watch_fd
        self._theirs = None
        try:
            self.popen = subprocess.Popen(
                [
                    self.python,
                    "-m",
                    "conformance.engine.forkserver",
                    str(theirs.fileno()),
                    str(watch_fd),
                    str(os.getpid()),
                    *self.modules,
                ],
                pass_fds=(theirs.fileno(), watch_fd),
                stdin=subprocess.DEVNULL,
                stdout=self.log,
                stderr=self.log,
                start_new_session=True,
            )
        except OSError:
            self.state = "down"  # a direct start reports the same error, as before
        finally:
            theirs.close()
            os.close(watch_fd)
        self.started_at = time.monotonic()
        if self.popen is None:
            self.close()

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def await_ready(self, timeout: float) -> bool | None:
        """Wait for the server's greeting, ``timeout`` seconds from its start:
        True (it forks), False (it will not: workers start directly), None (no
        answer in time: it was killed)."""
        if self.state != "starting":
            return self.ready
        left = timeout - (time.monotonic() - self.started_at)
        try:
            message = self._receive(max(left, 0.0))
        except ForkServerDown:
            self._down("")
            return False
        if message is None:
            self._down("")
            return None
        if message.get("ready") != PROTOCOL or message.get("unsafe"):
            self.unsafe = str(message.get("unsafe") or f"protocol {message.get('ready')!r}")
            self._down("")  # another version's server, or forking is not safe there
            return False
        self.state = "ready"
        return True

    def tail(self) -> str:
        """The end of what the server wrote to stdout and stderr (kept when it stops)."""
        if not self.log.closed:
            self.log.seek(0)
            self.last_words = self.log.read().decode("utf-8", "replace").strip()[-2000:]
        return self.last_words

    def alive(self) -> bool:
        return self.state != "down" and self.popen is not None and self.popen.poll() is None

    def fork(self, fds: list[int], arguments: list[str], env: dict[str, str]) -> Forked:
        """A new worker, given its descriptors and ``[SCRATCH, ADAPTER, PROPERTIES]``;
        ForkServerDown if this server cannot (it then forks no more: it
        refused, and is retired, or it failed, and is down)."""
        if not self.ready:
            raise ForkServerDown(self.label)
        try:
            cwd = os.getcwd()
        except OSError:
            cwd = None
        request = json.dumps({"fork": arguments, "env": env, "cwd": cwd}).encode()
        try:
            socket.send_fds(self.sock, [request], fds)
        except OSError as error:
            self._down(f"it cannot be written to ({error})")
            raise ForkServerDown(self.label) from None
        reply = self._reply()
        pid = reply.get("pid")
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
            # Its live workers stay: it still reaps them.
            self.state = "retired"
            self.events.append(
                f"{self.label}: the fork server refused to fork "
                f"({str(reply.get('refused', reply))[:200]}); workers start directly"
            )
            raise ForkServerDown(self.label)
        try:
            pidfd = os.pidfd_open(pid)
        except OSError as error:
            self._down(f"its worker {pid} cannot be watched ({error})")
            raise ForkServerDown(self.label) from None
        if not self.alive():  # then the pid may have been reaped elsewhere and reused
            os.close(pidfd)
            self._down("it died")
            raise ForkServerDown(self.label)
        return Forked(self, pid, pidfd)

    def reap(self, pid: int) -> int | None:
        """Have the server wait for its worker ``pid`` (killed by now); its
        return code, or None when the server is gone (and the status with it)."""
        if not self.alive():
            self._down("it died")
            return None
        try:
            self.sock.send(json.dumps({"reap": pid}).encode())
            status = self._reply().get("status")
        except (OSError, ForkServerDown):
            self._down("it died")
            return None
        if not isinstance(status, int) or isinstance(status, bool):
            return None
        try:
            return os.waitstatus_to_exitcode(status)
        except ValueError:
            return None

    def _reply(self) -> dict:
        message = self._receive(REPLY_S)
        if message is None:
            self._down(f"it did not answer in {REPLY_S:g} s")
            raise ForkServerDown(self.label)
        return message

    def _receive(self, timeout: float) -> dict | None:
        """One message; None if none came in time; ForkServerDown at its end."""
        if not select.select([self.sock], [], [], timeout)[0]:
            return None
        try:
            data = self.sock.recv(_MESSAGE)
            message = json.loads(data) if data else None
        except (OSError, ValueError):
            message = None
        if not isinstance(message, dict):
            assert self.popen is not None  # a message comes only from a begun server
            self._down("it died" if self.popen.poll() is not None else "it sent garbage")
            raise ForkServerDown(self.label)
        return message

    def _down(self, why: str) -> None:
        """Give the server up: kill it (and the workers it forked, by their
        PR_SET_PDEATHSIG). ``why``: what the run's events say ("": nothing,
        it never served)."""
        if self.state == "down":
            return
        if why and self.state in ("ready", "retired"):
            self.events.append(
                f"{self.label}: the fork server stopped ({why}); workers start directly"
            )
        self.state = "down"
        self.close()

    def close(self) -> None:
        """Stop the server for good (whatever workers it forked die with it). Once."""
        self.state = "down"
        if self._theirs is not None:  # never begun
            self._theirs.close()
            os.close(self._watch_fd)
            self._theirs = None
        if self.watch is None:
            return
        if self.popen is not None:
            if self.popen.returncode is None:  # not reaped: its pid still names its group
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()
            _reap_group(self.popen.pid)
        self.sock.close()
        os.close(self.watch)  # its sentinel, if still there, kills what is left of its group
        self.watch = None
        self.tail()
        self.log.close()


def _reap_group(pgid: int, within: float = 2.0) -> None:
    """Members of the group ``pgid`` that were reparented to this process
    (where it reaps orphans): reaped as they die, for at most ``within`` s."""
    deadline = time.monotonic() + within
    with contextlib.suppress(ChildProcessError):
        while os.waitid(os.P_PGID, pgid, os.WEXITED | os.WNOHANG) is None:
            if time.monotonic() > deadline:
                return
            time.sleep(0.001)


# -- the server process ------------------------------------------------------------


def _threads() -> set[int]:
    return {int(tid) for tid in os.listdir("/proc/self/task")}


def _idle(frame) -> bool:
    """A Python thread of a concurrent.futures pool, waiting for work that will not come."""
    pool = sys.modules.get("concurrent.futures.thread")
    code = getattr(getattr(pool, "_worker", None), "__code__", None)
    if frame is None or code is None or frame.f_code is not code:
        return False
    queue = frame.f_locals.get("work_queue")
    return queue is not None and queue.empty()


def unsafe(known: set[int]) -> str:
    """Why forking now is not safe ("" when it is): a thread other than this
    one, those in ``known`` (started by the harness's own imports: NumPy's
    OpenBLAS, which stops them before a fork) and idle concurrent.futures
    threads."""
    python = {thread.native_id: thread for thread in threading.enumerate()}
    frames = sys._current_frames()
    others = []
    for tid in sorted(_threads() - known - {threading.get_native_id()}):
        thread = python.get(tid)
        if thread is None:
            others.append(f"native thread {tid}")
        elif not _idle(None if thread.ident is None else frames.get(thread.ident)):
            others.append(f"Python thread {thread.name!r}")
    return f"threads running: {', '.join(others)}" if others else ""


def settled(known: set[int], within: float) -> str:
    """:func:`unsafe`, after waiting up to ``within`` seconds for busy Python
    threads to go idle (OpenVINO's telemetry sends its event as it is
    imported); a native thread is not waited for (ONNX Runtime's stays)."""
    deadline = time.monotonic() + within
    while True:
        why = unsafe(known)
        if not why or "native thread" in why or time.monotonic() > deadline:
            return why
        time.sleep(0.01)


def _send(sock: socket.socket, message: dict) -> None:
    sock.send(json.dumps(message).encode())


def _child(sock: socket.socket, fds: list[int], request: dict, server: int) -> int:
    """In the forked worker: become what a worker started directly is, then run it."""
    from conformance.engine import worker

    sock.close()  # the server's channel is none of the worker's business
    conn_fd, progress_fd, watch_fd, log_fd = fds
    os.setsid()
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # from TMPDIR, as a new interpreter would
    if request.get("cwd"):
        os.chdir(request["cwd"])
    arguments = [str(conn_fd), str(progress_fd), str(watch_fd), *request["fork"]]
    sys.argv = [worker.__file__, *arguments]
    worker.main(arguments, parent=server)
    return 0


def _fork(sock: socket.socket, fds: list[int], request: dict) -> int:
    server = os.getpid()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with warnings.catch_warnings():  # Python 3.12 warns of fork with threads (checked idle)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        code = _child(sock, fds, request, server)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code & 0xFF)
    return 0  # not reached


def serve(sock: socket.socket, known: set[int]) -> None:
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, _MESSAGE, _FDS)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return  # the pool closed its end: stop (the workers die with this process)
        try:
            request = json.loads(data)
        except ValueError:
            request = {}
        if "fork" in request:
            why = "" if len(fds) == _FDS else f"{len(fds)} descriptors, not {_FDS}"
            why = why or settled(known, 0.2)
            reply = {"refused": why} if why else {"pid": _fork(sock, fds, request)}
            for fd in fds:
                os.close(fd)
            _send(sock, reply)
        elif "reap" in request:
            for fd in fds:
                os.close(fd)
            try:
                _, status = os.waitpid(int(request["reap"]), 0)
            except (ChildProcessError, ValueError, TypeError):
                status = None
            _send(sock, {"status": status})
        else:
            for fd in fds:
                os.close(fd)
            _send(sock, {"refused": "unknown request"})


def main(argv: list[str]) -> None:
    sock_fd, watch_fd, parent, *modules = argv
    # The harness's own modules first: the threads they start (NumPy's BLAS) are known.
    from conformance.adapters import contract
    from conformance.engine import worker

    known = _threads() - {threading.get_native_id()}
    worker._die_with_parent(int(parent))
    worker._sentinel(int(watch_fd), None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the pool's to handle
    sock = socket.socket(fileno=int(sock_fd))
    for module in modules:
        # A module that fails to import fails in the worker too, which reports it.
        with contextlib.suppress(BaseException):
            # and the runtime the adapter's module imports on first use
            contract.preload(importlib.import_module(module))
    _send(sock, {"ready": PROTOCOL, "unsafe": settled(known, 1.0)})
    serve(sock, known)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
