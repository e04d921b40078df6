"""``--inputs``' capture run in a worker: each model run once on onnx.reference
with its Gather nodes keeping their inputs (:mod:`conformance.graphs.capture`),
bounded in time and memory as the whole-model runs are
(:mod:`conformance.engine.whole_model`).

The evaluator runs whatever the model says on whatever it is fed: a Loop of
2^62 iterations, a GatherElements index of 2^63 - 1 (NumPy's wrap loop) or an
allocation without bound would hold the command forever, or take the machine
down with it, where it ran in the command's own process. So it runs as a
runtime under test does: in a :class:`~conformance.engine.pool.WorkerPool`
worker (:class:`CaptureAdapter`), killed past the time limit or the worker
memory limit; what ran out is said (:func:`failure`), the model's nodes keep
their drawn cases, and the command goes on.

The worker sends back what it kept as plain arrays (:func:`packed`): a run's
failure cannot lose what was captured before it.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import onnx

from conformance.adapters import reference
from conformance.adapters.contract import Adapter, LoadError
from conformance.engine.pool import Job, Raw, WorkerPool
from conformance.engine.targets import Target
from conformance.engine.whole_model import WHOLE_TIMEOUT
from conformance.graphs import capture
from conformance.graphs.capture import Captured
from conformance.graphs.reading import GraphFile

TARGET = Target("", f"{__name__}:CaptureAdapter")
NAME = "capture"  # the worker's name for itself (no baseline: it is no target)


class CaptureAdapter(Adapter):
    """onnx.reference with capturing Gather and GatherElements (run in a worker)."""

    name = NAME

    def info(self) -> dict:
        return {
            "name": self.name,
            "version": onnx.__version__,
            "device": "CPU",
            "implementation": "onnx.reference.ReferenceEvaluator, Gather inputs kept",
            "effective": {},
        }

    def load(self, model: bytes):
        from onnx.reference import ReferenceEvaluator

        kept: dict[str, list] = {}
        # the reference adapter's GatherElements: a wrap loop that would never
        # end is counted and said, not waited for
        elements = reference.gather_elements() if reference.counts_wrap_loop() else None
        ops = capture.capturing_ops(kept, given=[elements] if elements is not None else [])
        try:
            return ReferenceEvaluator(onnx.load_model_from_string(model), new_ops=ops), kept
        except Exception as error:
            raise LoadError(capture.run_failure(error)) from None

    def execute(self, session, feeds):
        evaluator, kept = session
        kept.clear()
        try:
            evaluator.run(None, feeds)
            failure = ""
        except Exception as error:  # WouldNotFinish too: said as the run's failure
            failure = capture.run_failure(error)
        return packed(kept, failure)


def packed(kept: dict[str, list], failure: str) -> list[np.ndarray]:
    """What the worker sends: the failure's text (UTF-8 bytes, empty when the
    run ended), the mark of each kept pair, then each pair's data and indices."""
    marks = [(mark, pair) for mark, pairs in kept.items() for pair in pairs]
    numbers = np.array([int(m.removeprefix(capture.MARK)) for m, _ in marks], np.int64)
    flat = [array for _, pair in marks for array in pair]
    return [np.frombuffer(failure.encode(), np.uint8), numbers, *flat]


def unpacked(outputs: list[np.ndarray]) -> tuple[dict[str, list], str | None]:
    """:func:`packed`'s arrays read back: mark -> pairs, and the failure (None: none)."""
    failure = bytes(outputs[0]).decode(errors="replace") or None
    kept: dict[str, list] = {}
    for k, number in enumerate(outputs[1].tolist()):
        pair = (outputs[2 + 2 * k], outputs[3 + 2 * k])
        kept.setdefault(f"{capture.MARK}{number}", []).append(pair)
    return kept, failure


def limit_of(timeout: float | None) -> float:
    """The capture run's time limit: --timeout, but never below a whole model's."""
    return max(timeout or 0.0, WHOLE_TIMEOUT)


def failure(raw: Raw | None, model: str, limit: float, memory: int) -> str:
    """What stopped a model's capture run, said whole: what ran out, its limit,
    and how to raise it."""
    if raw is None:
        return "the capture run gave no result (its worker did not start)"
    if raw.status == "timeout":
        return (
            f"the capture run (onnx.reference, the whole of {model}) ran out of time: over "
            f"{limit:g} s, the limit of a whole-model run (raise it with --timeout SECONDS)"
        )
    if raw.status == "crash" and raw.signal == "memory limit":
        return (
            f"the capture run (onnx.reference, the whole of {model}) ran out of memory: over "
            f"the worker memory limit of {memory / 2**30:g} GiB, where it was stopped"
        )
    said = raw.message or raw.signal or raw.status
    return f"the capture run (onnx.reference) {raw.status}: {said}"[:300]


def run(
    files: list[GraphFile], arrays: dict[str, np.ndarray], limit: float, memory: int
) -> Captured:
    """Each model run once on ``arrays`` in a worker bounded by ``limit`` seconds
    (:func:`limit_of`) and ``memory`` bytes resident, every Gather node's inputs
    kept (:mod:`conformance.graphs.capture`). ``conformance model`` runs these jobs
    in the whole model's first pool instead, beside its runs (:func:`prepare`,
    :func:`settled`)."""
    result, jobs = prepare(files, arrays)
    if not jobs:
        return result
    got: dict[int, Raw] = {}
    with WorkerPool([TARGET], workers=1, batch_size=1, timeout=limit, worker_memory=memory) as pool:
        for batch in pool.run(jobs):
            for job, _, result_of_job in batch:
                got[id(job)] = result_of_job
    return settled(result, jobs, got, limit, memory)


def prepare(files: list[GraphFile], arrays: dict[str, np.ndarray]) -> tuple[Captured, list[Job]]:
    """The capture's jobs, one per model, for :data:`TARGET`; and the result that
    :func:`settled` completes (a model too large to run whole is settled here)."""
    result = Captured()
    jobs = []
    for found in files:
        proto, marks = capture.prepared(found)
        try:
            blob = proto.SerializeToString()
        except ValueError as error:  # over 2 GB: one protobuf message cannot hold it
            capture.settle(result, found, marks, {}, f"cannot run it whole: {error}"[:300])
            continue
        jobs.append(Job(None, blob, capture.feeds_of(found, arrays), tag=(found, marks)))
    return result, jobs


def settled(
    result: Captured, jobs: list[Job], got: dict[int, Raw], limit: float, memory: int
) -> Captured:
    """``result`` with what each of :func:`prepare`'s ``jobs`` kept (``got``: its
    Raw by ``id(job)``; a job missing there gave no result), or why its run failed."""
    for job in jobs:
        found, marks = cast("tuple[GraphFile, dict[str, tuple[str, str, str]]]", job.tag)
        raw = got.get(id(job))
        if raw is not None and raw.status == "ok" and raw.outputs is not None:
            kept, why = unpacked(raw.outputs)
        else:
            kept, why = {}, failure(raw, str(found.path), limit, memory)
        capture.settle(result, found, marks, kept, why)
    return result
