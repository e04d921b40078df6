"""Isolated workers: crashes, hangs and runaway memory are recorded and survived.

The faulty adapter provokes what the real runtimes will not do on demand;
the real OpenVINO crash (Gather with empty indices) is tested as it is.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from conformance.engine import models, pool
from conformance.engine.pool import EngineError, Job, WorkerPool
from tests import faulty_adapter as faulty

FAULTY = "tests.faulty_adapter:FaultyAdapter"


def job(code: int, tag) -> Job:
    data = np.array([code, 1, 2, 3], dtype=np.int32)
    indices = np.array([1, 0], dtype=np.int64)
    model = models.build("Gather", 13, data, indices, 0, "dynamic").SerializeToString()
    return Job(b"gather-int32-dynamic", model, {"data": data, "indices": indices}, tag)


def run_all(engine, codes):
    """Every result, keyed by (tag, runtime); each must come exactly once."""
    results = {}
    for batch in engine.run(job(code, index) for index, code in enumerate(codes)):
        for done, runtime, raw in batch:
            key = (done.tag, runtime)
            assert key not in results, f"{key} reported twice"
            results[key] = raw
    assert len(results) == len(codes) * len(engine.runtimes), "a result was lost"
    return results


@pytest.mark.parametrize(
    "code, death",
    [
        (faulty.SEGV, "SIGSEGV"),
        (faulty.FPE, "SIGFPE"),
        (faulty.ABORT, "SIGABRT"),
        (faulty.EXIT, "exit status 3"),
    ],
)
def test_a_crash_is_pinned_on_its_case_and_the_rest_of_the_batch_still_runs(code, death):
    codes = [0, 0, 0, code, 0, faulty.WRONG, 0, 0]
    with WorkerPool([FAULTY], batch_size=8, timeout=20) as engine:
        results = run_all(engine, codes)
    crash = results[(3, "faulty")]
    assert (crash.status, crash.signal) == ("crash", death)
    assert "alone in a fresh worker" in crash.message
    for index in (0, 1, 2, 4, 6, 7):  # before and after the culprit, same batch
        assert results[(index, "faulty")].status == "ok"
        assert results[(index, "faulty")].outputs[0].tolist() == [1, 0]
    assert results[(5, "faulty")].outputs[0].tolist() == [1, faulty.WRONG + 1]
    assert any(death in event for event in engine.events)


def test_a_crash_keeps_the_start_of_a_long_stderr_where_a_panic_says_why_and_its_end():
    with WorkerPool([FAULTY], batch_size=4, timeout=20) as engine:
        results = run_all(engine, [0, faulty.PANIC, 0])
    crash = results[(1, "faulty")]
    assert (crash.status, crash.signal) == ("crash", "SIGABRT")
    assert faulty.PANIC_LINE in crash.message  # the start: why
    assert crash.message.rstrip().endswith("aborting.")  # the end: how
    assert "frame_100\n" not in crash.message and "\n…\n" in crash.message  # the middle goes
    assert len(crash.message) < 2 * pool.STDERR_TAIL


def test_a_crash_that_does_not_recur_alone_keeps_its_real_outcome_with_a_note():
    with WorkerPool([FAULTY], batch_size=4, timeout=20) as engine:
        results = run_all(engine, [0, faulty.FLAKY, 0])
    flaky = results[(1, "faulty")]
    assert flaky.status == "ok" and "crashed a worker once" in flaky.note
    assert results[(2, "faulty")].status == "ok"


@pytest.mark.xdist_group("timing")  # its time is asserted: tests/tiers.py
def test_an_endless_loop_times_out_and_the_run_goes_on():
    started = time.monotonic()
    with WorkerPool([FAULTY], batch_size=4, timeout=1.5) as engine:
        results = run_all(engine, [0, faulty.LOOP, 0, 0])
    assert results[(1, "faulty")].status == "timeout"
    assert "1.5 s" in results[(1, "faulty")].message
    assert [results[(i, "faulty")].status for i in (0, 2, 3)] == ["ok"] * 3
    assert time.monotonic() - started < 15


def test_a_runaway_allocation_is_killed_at_the_memory_limit():
    with WorkerPool([FAULTY], batch_size=4, timeout=60, worker_memory=300 << 20) as engine:
        results = run_all(engine, [0, faulty.ALLOCATE, 0])
    killed = results[(1, "faulty")]
    assert (killed.status, killed.signal) == ("crash", "memory limit")
    assert "--worker-memory" in killed.message
    assert results[(2, "faulty")].status == "ok"


def test_runtime_errors_are_typed():
    with WorkerPool([FAULTY], batch_size=4) as engine:
        results = run_all(engine, [faulty.FAIL, 0])
    assert results[(0, "faulty")].status == "run_error"
    assert results[(0, "faulty")].message == "faulty: failed at run time"


def test_several_runtimes_and_workers_each_get_every_job():
    codes = [0] * 50
    with WorkerPool([FAULTY, "onnxruntime"], workers=2, batch_size=8) as engine:
        results = run_all(engine, codes)
        assert set(engine.info) == {"faulty", "onnxruntime"}
    assert {raw.status for raw in results.values()} == {"ok"}
    # One model key for all 50 jobs: each worker builds its session once.
    built = [raw for (tag, rt), raw in results.items() if rt == "onnxruntime" and not raw.cached]
    assert 1 <= len(built) <= 2


def test_a_runtime_that_cannot_start_is_a_clear_error():
    with (
        pytest.raises(EngineError, match=r"did not start.*NoSuchAdapter"),
        WorkerPool(["tests.faulty_adapter:NoSuchAdapter"]),
    ):
        pass


def test_a_target_of_several_workers_that_cannot_start_is_lost_and_the_others_run():
    """The first of its workers to fail loses the target and closes the others
    (they were once read again after being closed: "handle is closed")."""
    with WorkerPool(["tests.faulty_adapter:NoSuchAdapter", FAULTY], workers=3) as engine:
        results = run_all(engine, [0])
    lost = [raw for (_, runtime), raw in results.items() if runtime != "faulty"]
    assert [raw.status for raw in lost] == ["harness_error"] and lost[0].lost
    assert results[(0, "faulty")].status == "ok"


def test_openvino_really_crashes_on_gather_with_empty_indices_and_the_run_survives():
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    empty = np.zeros((0,), dtype=np.int64)
    fine = np.array([2, 0], dtype=np.int64)
    jobs = []
    for tag, indices in (("before", fine), ("empty", empty), ("after", fine)):
        model = models.build("Gather", 13, data, indices, 0, "static").SerializeToString()
        jobs.append(Job(tag.encode(), model, {"data": data, "indices": indices}, tag))
    with WorkerPool(["openvino"], batch_size=8) as engine:
        results = {job.tag: raw for batch in engine.run(jobs) for job, _, raw in batch}
    assert results["empty"].status == "crash", (
        "OpenVINO 2026.4.1 dies with SIGFPE here; if it no longer does, it was fixed upstream"
    )
    assert results["empty"].signal == "SIGFPE"
    assert results["before"].outputs[0].tolist() == data[[2, 0]].tolist()
    assert results["after"].outputs[0].tolist() == data[[2, 0]].tolist()
