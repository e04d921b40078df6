"""A large model or feed crosses the pipe to a worker once, then goes by its
digest (conformance/engine/worker.py's Blobs; issue 49 item 7): counted in
the bytes the worker's process read (/proc/PID/io), never timed."""

from __future__ import annotations

import numpy as np
import onnx

from conformance.cases.case import Case
from conformance.engine import models
from conformance.engine.pool import Job, WorkerPool
from conformance.engine.run import _Models
from conformance.engine.worker import HELD, KEEP, SHARED_BYTES, Blobs

ROWS = 4096
TABLE_BYTES = ROWS * 512 * 4  # 8 MiB: far over SHARED_BYTES
JOBS = 6


def _table() -> np.ndarray:
    return np.arange(ROWS * 512, dtype=np.float32).reshape(ROWS, 512)


def _read_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/io", encoding="ascii") as io:
        fields = dict(line.split(": ") for line in io.read().splitlines())
    return int(fields["rchar"])


def _run(engine: WorkerPool, jobs: list[Job]) -> tuple[dict, int]:
    """Each job's outputs by tag, and the bytes the one worker read meanwhile."""
    (lane,) = engine.lanes.values()
    (worker,) = lane.workers
    before = _read_bytes(worker.proc.pid)
    outputs = {}
    for batch in engine.run(jobs):
        for job, _, raw in batch:
            assert raw.status == "ok", raw.message
            outputs[job.tag] = raw.outputs
    assert worker.proc.pid == lane.workers[0].proc.pid  # the same process read them all
    return outputs, _read_bytes(worker.proc.pid) - before


def test_a_large_feed_crosses_the_pipe_once_per_worker_and_every_job_gets_it():
    table = _table()
    jobs = []
    for tag in range(JOBS):
        indices = np.array([tag, ROWS - 1 - tag], dtype=np.int64)
        model = models.build("Gather", 13, table, indices, 0, "static").SerializeToString()
        jobs.append(Job(b"static", model, {"data": table, "indices": indices}, tag))
    with WorkerPool(["onnxruntime"], workers=1, batch_size=2) as engine:
        outputs, read = _run(engine, jobs)
    for tag in range(JOBS):
        (output,) = outputs[tag]
        np.testing.assert_array_equal(output, table[[tag, ROWS - 1 - tag]])
    # Once: one table's bytes and the small rest; every job would be JOBS tables.
    assert TABLE_BYTES <= read < 2 * TABLE_BYTES


def test_a_large_model_that_repeats_crosses_the_pipe_once_per_worker():
    table = _table()
    model = models.build(
        "Gather", 13, table, np.array([0], np.int64), 0, "data_initializer"
    ).SerializeToString()
    jobs = [
        Job(b"baked", model, {"indices": np.array([tag], dtype=np.int64)}, tag)
        for tag in range(JOBS)
    ]
    with WorkerPool(["reference"], workers=1, batch_size=1) as engine:
        outputs, read = _run(engine, jobs)
    for tag in range(JOBS):
        np.testing.assert_array_equal(outputs[tag][0], table[[tag]])
    assert TABLE_BYTES <= read < 2 * TABLE_BYTES


def _case(table: np.ndarray, indices: np.ndarray):
    return Case(op="Gather", opset=13, data=table, indices=indices, axis=0, id="rows")


def test_a_model_baking_a_large_table_is_the_model_built_whole():
    """models.serialized appends the table's initializer to the rest: protobuf
    merges it into the graph, the same model as one built whole."""
    table = _table()
    for variant in ("data_initializer", "both_initializers"):
        case = _case(table, np.array([3, 1], np.int64))
        head, tail = models.serialized(case, variant)
        assert tail is not None and tail[1] is models._TAILS[tail[0]]
        read, whole = onnx.load_from_string(head + tail[1]), models.build_for_case(case, variant)
        by_name = {t.name: t for t in read.graph.initializer}
        assert by_name == {t.name: t for t in whole.graph.initializer}
        del read.graph.initializer[:], whole.graph.initializer[:]
        assert read == whole


def test_the_models_of_cases_sharing_a_large_table_carry_it_once_per_worker():
    """both_initializers bakes each case's indices beside the table: a model
    per case, whose table crosses the pipe once."""
    table = _table()
    built = _Models()
    jobs = []
    for tag in range(JOBS):
        case = _case(table, np.array([tag, 2 * tag], np.int64))
        session_key, model, tail = built.get(case, "both_initializers")
        jobs.append(Job(session_key, model, {}, tag, tail=tail))
    with WorkerPool(["onnxruntime"], workers=1, batch_size=1) as engine:
        outputs, read = _run(engine, jobs)
    for tag in range(JOBS):
        np.testing.assert_array_equal(outputs[tag][0], table[[tag, 2 * tag]])
    assert TABLE_BYTES <= read < 2 * TABLE_BYTES


def test_both_ends_hold_the_same_values_as_the_oldest_are_dropped():
    """The parent's Blobs (sizes only) and the worker's, stepped alike, agree
    on what is held: a value dropped for room is sent whole again."""
    parent, worker = Blobs(3 * SHARED_BYTES), Blobs(3 * SHARED_BYTES)
    values = {name: name * SHARED_BYTES for name in (b"a", b"b", b"c", b"d")}
    sent = []
    for name in (b"a", b"b", b"a", b"c", b"d", b"b", b"a", b"d"):
        wired = parent.wire(name, len(values[name]), values[name])
        sent.append(wired[0])
        assert worker.resolve(wired) == values[name]
    # a, b held; a used again; c; d drops b (the least recently used); b drops
    # a; a drops c; d is still held.
    assert sent == [KEEP, KEEP, HELD, KEEP, KEEP, KEEP, KEEP, HELD]


def test_a_value_larger_than_a_worker_holds_is_sent_whole_each_time():
    parent = Blobs(SHARED_BYTES)
    big = b"x" * (2 * SHARED_BYTES)
    assert parent.wire(b"big", len(big), big) is big
    assert parent.wire(b"big", len(big), big) is big


def test_a_model_in_parts_is_joined_only_when_the_adapter_loads_it():
    """The worker joins a model's head and its large tail (a 90 MB copy) only
    for a load: a cached session (Adapter.holds) never reads the model."""
    from conformance.adapters.contract import Adapter
    from conformance.engine.worker import PARTS, joined, resolved

    adapter = Adapter()
    tail = b"t" * SHARED_BYTES
    wired = (PARTS, b"head", Blobs(2 * SHARED_BYTES).wire(b"tail", len(tail), tail))
    job = resolved(Blobs(2 * SHARED_BYTES), (b"key", wired, {}))
    assert joined(adapter, job)[1] == b"head" + tail  # not held: loaded from the whole model
    adapter._sessions[b"key"] = object()
    assert adapter.holds(b"key") and not adapter.holds(None)
    assert joined(adapter, job)[1] == b"head"  # held: the session runs, the model unread
