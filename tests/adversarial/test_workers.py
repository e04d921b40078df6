"""Adversarial workers: whatever an adapter returns, raises or forks, the run goes on.

An adapter is third-party code running inside the worker; the parent never
trusts what a worker sends, and a worker's death is labelled as what it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from conformance import oracle
from conformance.engine.judge import judge
from conformance.engine.pool import EngineError, WorkerPool
from tests import faulty_adapter as faulty
from tests import leaky_adapter as leaky
from tests.conftest import REPO, conformance_here, dead
from tests.test_engine import FAULTY, run_all

VERDICT = oracle.verdict(
    "Gather", 13, np.array([0, 1, 2, 3], dtype=np.int32), np.array([1, 0], dtype=np.int64), 0
)


@pytest.mark.parametrize(
    "code, says",
    [
        (faulty.NONE, "None"),
        (faulty.NUMBER, "int"),
        (faulty.BARE, "ndarray"),
        (faulty.NOT_ARRAYS, "str"),
        (faulty.TWO, "2 outputs"),
        (faulty.UNPICKLABLE, "is a function, not a str"),  # refused before pickling
        (faulty.UNLOADABLE, "is a _Unloadable, not a str"),
        (faulty.INTERRUPT, "KeyboardInterrupt"),
    ],
)
def test_whatever_an_adapter_returns_or_raises_is_a_harness_error_of_that_job_only(code, says):
    codes = [0, code, 0, faulty.WRONG]
    with WorkerPool([FAULTY], batch_size=4, timeout=20) as engine:
        results = run_all(engine, codes)
    outcome = judge(VERDICT, results[(1, "faulty")])
    assert (outcome.kind, outcome.details) == ("harness_unsupported", {"harness_error": True})
    assert says in outcome.message
    assert judge(VERDICT, results[(0, "faulty")]).kind == "pass"
    assert judge(VERDICT, results[(2, "faulty")]).kind == "pass"
    assert results[(3, "faulty")].outputs[0].tolist() == [1, faulty.WRONG + 1]
    assert not engine.events, "no worker died"


def test_an_adapter_returning_none_spoils_nothing_of_a_run(tmp_path):
    out = tmp_path / "run"
    done = conformance_here(
        "run", "--runtime", "tests.faulty_adapter:NoneAdapter", "onnxruntime",
        "-k", "gather-empty-indices.op13.int32.int64", "--variants", "static", "--out", str(out),
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    kinds = {r["runtime"]: (r["kind"], r.get("harness_error")) for r in records}
    assert kinds == {"none": ("harness_unsupported", True), "onnxruntime": ("pass", None)}


@pytest.mark.parametrize(
    "adapter, says",
    [("NamelessAdapter", "without a 'name'"), ("ListInfoAdapter", "returned a list, not a dict")],
)
def test_an_adapter_whose_info_is_malformed_does_not_start(adapter, says, tmp_path):
    with pytest.raises(EngineError) as raised, WorkerPool([f"tests.faulty_adapter:{adapter}"]):
        pass
    assert says in str(raised.value) and "\n" not in str(raised.value)
    done = conformance_here("run", "--runtime", f"tests.faulty_adapter:{adapter}", "-k", "gather-",
                            "--out", str(tmp_path / "run"))  # fmt: skip
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr


def test_sys_exit_in_an_adapter_is_an_exit_with_its_code_not_a_kill():
    with WorkerPool([FAULTY], batch_size=4, timeout=20) as engine:
        results = run_all(engine, [0, faulty.SYS_EXIT, 0])
    exited = results[(1, "faulty")]
    assert (exited.status, exited.signal) == ("crash", "exit status 7")
    assert judge(VERDICT, exited).details == {"signal": "exit status 7"}
    assert [results[(i, "faulty")].status for i in (0, 2)] == ["ok", "ok"]
    assert "SIGKILL" not in " ".join(engine.events)


@pytest.mark.xdist_group("timing")  # its time is asserted: tests/tiers.py
def test_a_crash_whose_grandchild_holds_the_pipe_is_a_crash_and_the_grandchild_dies(
    tmp_path, monkeypatch
):
    pids = tmp_path / "grandchildren"
    pids.touch()
    monkeypatch.setenv(faulty.GRANDCHILD_PIDS, str(pids))
    started = time.monotonic()
    try:
        with WorkerPool([FAULTY], batch_size=4, timeout=30) as engine:
            results = run_all(engine, [0, faulty.FORK_CRASH, 0])
            crash = results[(1, "faulty")]
            assert (crash.status, crash.signal) == ("crash", "SIGSEGV")
            assert results[(0, "faulty")].status == results[(2, "faulty")].status == "ok"
            assert time.monotonic() - started < 20, "the crash was found by the timeout"
            grandchildren = [int(pid) for pid in pids.read_text().split()]
            assert len(grandchildren) == 2  # the crash in the batch, then confirmed alone
            assert all(dead(pid) for pid in grandchildren), "a grandchild outlived its worker"
    finally:  # whatever failed above: leave nothing running
        for pid in pids.read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), 9)


LEAKY = "tests.leaky_adapter"


def test_kill_9_of_a_run_kills_what_its_workers_started_and_their_temporary_files(tmp_path):
    """Before: the worker died with the parent (PR_SET_PDEATHSIG), but not a
    process it had started (the setting is not inherited across fork), nor
    was anything it left in the temporary folder removed."""
    pids, scratch, out = tmp_path / "grandchildren", tmp_path / "tmp", tmp_path / "run"
    pids.touch()
    scratch.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", "run", "--runtime", f"{LEAKY}:ForkingAdapter",
         "--batch-size", "4", "--no-progress", "--out", str(out)],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, leaky.GRANDCHILD_PIDS: str(pids), "TMPDIR": str(scratch)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            results = out / "results.jsonl"
            written = results.read_text().count("\n") if results.exists() else 0
            if pids.read_text().strip() and written > 8:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the run produced no results in time")
        (worker_scratch,) = scratch.iterdir()  # the worker's own, holding what it left
        assert any(worker_scratch.iterdir())
        process.kill()
        process.wait()
        worker = json.loads((out / "header.json").read_text())["runtimes"]["forking"]["pid"]
        assert dead(worker), "the worker outlived the killed parent"
        (grandchild,) = [int(pid) for pid in pids.read_text().split()]
        assert dead(grandchild), "a process the worker started outlived the killed parent"
        deadline = time.monotonic() + 5
        while any(scratch.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(scratch.iterdir()) == [], "the worker's temporary files outlived the run"
    finally:  # whatever failed above: leave nothing running
        process.kill()
        for pid in pids.read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), 9)


def test_what_a_worker_leaves_in_its_temporary_folder_goes_with_it(tmp_path, monkeypatch):
    """A runtime's temporary files, left at every job, at a crash and at the
    end: each worker writes them in a folder of its own, removed with it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with WorkerPool([f"{LEAKY}:TempFileAdapter"], batch_size=4, timeout=20) as engine:
        # Ends with a job that runs: the worker restarted after the last crash
        # may not have run one yet (when it starts is the pool's timing), and an
        # empty folder would prove nothing about where the files go.
        results = run_all(engine, [0, faulty.SEGV, 0, faulty.ABORT, 0])
        statuses = [results[(i, "tempfile")].status for i in range(5)]
        assert statuses == ["ok", "crash", "ok", "crash", "ok"]
        (scratch,) = tmp_path.iterdir()  # the live worker's: its files are there, not beside it
        assert scratch.name.startswith("conformance-worker-") and any(scratch.iterdir())
    assert list(tmp_path.iterdir()) == []


SUBREAPER = """
import ctypes, os, sys, time
from conformance.engine.pool import WorkerPool
from tests import faulty_adapter as faulty
from tests.test_engine import FAULTY, run_all

ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
with WorkerPool([FAULTY], batch_size=4, timeout=20) as engine:
    run_all(engine, [0, faulty.SEGV, 0, faulty.ABORT, faulty.SEGV, 0])
    time.sleep(0.5)
    zombies = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            zombies.append(pid)
    print(len(zombies))
"""


def test_a_run_that_reaps_orphans_is_not_left_their_zombies():
    """As PID 1 of a container (or a subreaper), the run inherits what its
    workers leave when they are killed (each worker's sentinel): reaped at
    each restart, not left as zombies (one more per restart, for as long as
    the run lasts)."""
    done = subprocess.run(
        [sys.executable, "-c", SUBREAPER], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
