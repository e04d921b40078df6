"""Fork servers: workers forked from a process that imported their runtime
once, with every guarantee of a worker started directly.

The engine's own tests (test_engine, adversarial/test_workers, test_run) run
through the fork servers already (the faulty adapter is fork-safe); these
check what is new: who forks, what a forked worker holds, and what happens
when a server dies or cannot serve.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile

import pytest

from conformance.engine import forkserver
from conformance.engine.pool import WorkerPool
from conformance.engine.targets import Target
from tests import faulty_adapter as faulty
from tests.conftest import REPO, dead
from tests.faulty_adapter import FaultyAdapter
from tests.test_engine import FAULTY, job, run_all

pytestmark = pytest.mark.skipif(not forkserver.usable(), reason="no fork server on this platform")

LOUD = "tests.test_forkserver:LoudAdapter"
THREADED = "tests.threaded_adapter:ThreadedAdapter"


class LoudAdapter(FaultyAdapter):
    """FaultyAdapter that says which process it is, on stdout and stderr, and
    where its temporary files go, at every job."""

    name = "loud"

    def execute(self, session, feeds):
        print(f"loud worker {os.getpid()} on stdout", flush=True)
        print(f"loud worker {os.getpid()} in {tempfile.gettempdir()}", flush=True)
        print(f"loud worker {os.getpid()} on stderr", file=sys.stderr, flush=True)
        return super().execute(session, feeds)


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return int(stat.read().rpartition(")")[2].split()[1])


def test_workers_are_forked_where_it_is_safe_each_in_a_session_and_folder_of_its_own():
    with WorkerPool([FAULTY, "onnxruntime"], workers=2) as engine:
        forked = engine.lanes["faulty"].workers
        servers = {server.label: server for server in engine.servers}
        for worker in forked:
            assert isinstance(worker.proc, forkserver.Forked)
            assert _parent(worker.proc.pid) == servers[FAULTY].popen.pid
            assert worker.info["pid"] == worker.proc.pid
            assert os.getsid(worker.proc.pid) == os.getpgid(worker.proc.pid) == worker.proc.pid
        # ONNX Runtime's import starts native threads on some machines and not
        # on others: its workers are forked where its server found none, and
        # started directly, with the reason kept, where it found some.
        ort = servers["onnxruntime"]
        parent = ort.popen.pid if ort.ready else os.getpid()
        assert ort.ready or "thread" in ort.unsafe
        assert all(_parent(w.proc.pid) == parent for w in engine.lanes["onnxruntime"].workers)
        results = run_all(engine, [0, faulty.SEGV, 0])
    assert results[(1, "faulty")].signal == "SIGSEGV"


def test_a_module_that_starts_a_thread_as_it_is_imported_gets_workers_started_directly():
    with WorkerPool([THREADED], workers=2) as engine:
        (server,) = engine.servers
        assert not server.ready
        assert "Python thread 'busy at import'" in server.unsafe
        for worker in engine.lanes["threaded"].workers:
            assert not isinstance(worker.proc, forkserver.Forked)
            assert _parent(worker.proc.pid) == os.getpid()
        results = run_all(engine, [0, faulty.SEGV, 0])
    assert results[(1, "threaded")].signal == "SIGSEGV"
    assert results[(0, "threaded")].status == results[(2, "threaded")].status == "ok"


def _pipes(pid: int) -> list[tuple[int, int]]:
    """(inode, access mode) of each pipe the process holds."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as info:
                flags = int(info.read().split("flags:")[1].split()[0], 8)
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if link.startswith("pipe:["):
            found.append((int(link[6:-1]), flags & 3))
    return found


def test_the_watch_pipes_write_ends_are_the_parent_s_alone():
    """Each sentinel wakes when the parent dies only if no other process
    holds the write end of its pipe: not a server, not a worker, not a sentinel."""
    with WorkerPool([FAULTY, "reference"], workers=2) as engine:
        workers = [w for lane in engine.lanes.values() for w in lane.workers]
        watched = {os.fstat(w.watch).st_ino for w in workers}
        watched |= {os.fstat(server.watch).st_ino for server in engine.servers if server.watch}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            if int(pid) == os.getpid():
                continue
            with contextlib.suppress(FileNotFoundError, PermissionError, ProcessLookupError):
                held = [inode for inode, mode in _pipes(int(pid)) if mode != os.O_RDONLY]
                assert not watched & set(held), f"process {pid} holds a watch pipe's write end"
        for worker in workers:
            sockets = [
                link
                for fd in os.listdir(f"/proc/{worker.proc.pid}/fd")
                if (link := os.readlink(f"/proc/{worker.proc.pid}/fd/{fd}")).startswith("socket:")
            ]
            assert len(sockets) == 1, "a worker holds its pipe to the parent, nothing else"


def test_each_forked_worker_s_output_is_captured_on_its_own_and_its_tmpdir_is_its_own(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the pool makes scratch folders
    with WorkerPool([LOUD], workers=2, batch_size=2, timeout=20) as engine:
        results = run_all(engine, [0, faulty.SEGV, 0, 0, 0, faulty.ABORT])
        scratch = {str(tmp_path / name) for name in os.listdir(tmp_path)}
        assert len(scratch) == 2  # the live workers' (the servers have none)
    for index in (1, 5):
        crash = results[(index, "loud")]
        assert crash.status == "crash" and "on stdout" in crash.message
        lines = [line for line in crash.message.splitlines() if line.startswith("loud worker")]
        assert len({line.split()[2] for line in lines}) == 1, crash.message  # its own, no other's
        (folder,) = {line.split(" in ")[1] for line in lines if " in " in line}
        assert folder.startswith(str(tmp_path / "conformance-worker-"))
    assert os.listdir(tmp_path) == []


def test_a_fork_server_that_dies_blames_no_case_and_the_run_goes_on():
    slow = "tests.faulty_adapter:SlowAdapter"
    codes = [0] * 40 + [faulty.SEGV] + [0] * 10
    with WorkerPool([slow], workers=2, batch_size=4, timeout=20) as engine:
        (server,) = engine.servers
        results = {}
        for batch in engine.run(job(code, index) for index, code in enumerate(codes)):
            for done, _, raw in batch:
                assert done.tag not in results
                results[done.tag] = raw
            if len(results) >= 8 and server.popen.returncode is None:  # under way: kill it
                os.kill(server.popen.pid, signal.SIGKILL)
        workers = engine.lanes["faulty"].workers
        assert all(not isinstance(w.proc, forkserver.Forked) for w in workers)
    assert len(results) == len(codes)
    assert [i for i, raw in results.items() if raw.status != "ok"] == [40]
    assert results[40].signal == "SIGSEGV"  # a crash after that is seen as before
    assert any("fork server stopped (it died)" in event for event in engine.events)


def test_a_target_whose_interpreter_has_no_fork_server_starts_its_workers_directly(tmp_path):
    python = tmp_path / "python"
    python.write_text(
        "#!/bin/sh\n"
        '[ "$2" = conformance.engine.forkserver ] && exit 1\n'
        f'exec "{sys.executable}" "$@"\n'
    )
    python.chmod(0o755)
    target = Target("old", "reference", python=str(python))
    with WorkerPool([target], workers=2) as engine:
        assert not engine.servers[0].ready
        assert all(_parent(w.proc.pid) == os.getpid() for w in engine.lanes["old"].workers)
        assert engine.info["old"]["version"]
    assert not engine.events


HOLD = """
import json, sys, time
from conformance.engine.pool import WorkerPool
with WorkerPool(["tests.faulty_adapter:FaultyAdapter", "openvino", "reference"], workers=2) as pool:
    pids = [server.popen.pid for server in pool.servers]
    pids += [w.proc.pid for lane in pool.lanes.values() for w in lane.workers]
    print(json.dumps(pids), flush=True)
    time.sleep(600)
"""


def test_kill_9_of_the_parent_kills_the_fork_servers_and_their_workers():
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        pids = json.loads(process.stdout.readline())
        assert len(pids) == 3 + 6
        process.kill()
        process.wait()
        assert all(dead(pid) for pid in pids), "a server or worker outlived the killed parent"
    finally:
        process.kill()
        process.wait()
