"""Property tests against the real runtimes, through the isolated workers.

The pattern a user's own test suite can copy: draw from conformance.strategies,
run through a WorkerPool (so a crash is an outcome, not a dead test session),
judge against the oracle. The example counts follow the Hypothesis profile
(tests/conftest.py: dev, ci, nightly).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from conformance import oracle, strategies
from conformance.engine import models
from conformance.engine.judge import KINDS, judge
from conformance.engine.pool import Job, WorkerPool
from conformance.tables import dtypes

RUNTIMES = ("onnxruntime", "openvino")
# The dtypes ONNX Runtime gets right (complex is refused, strings are
# mis-gathered on a non-last axis: both known, both found by the corpus).
ORT_EXACT = tuple(n for n in dtypes.NAMES if dtypes.by_name(n).kind not in ("complex", "string"))


@pytest.fixture(scope="module")
def engine():
    with WorkerPool(RUNTIMES, timeout=10.0) as running:
        yield running


def outcomes(engine: WorkerPool, example: strategies.Example, runtimes=RUNTIMES) -> dict:
    verdict = oracle.verdict(example.op, example.opset, example.data, example.indices, example.axis)
    model = models.build(
        example.op, example.opset, example.data, example.indices, example.axis, example.variant
    ).SerializeToString()
    feeds = models.feeds(example.data, example.indices, example.variant)
    job = Job(model, model, feeds, None, runtimes)
    return {
        runtime: judge(verdict, raw) for batch in engine.run([job]) for _, runtime, raw in batch
    }


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=strategies.examples(max_elements=64))
def test_every_runtime_gives_one_judged_outcome_and_no_harness_error(engine, example):
    judged = outcomes(engine, example)
    assert set(judged) == set(RUNTIMES)
    for runtime, outcome in judged.items():
        assert outcome.kind in KINDS
        assert not outcome.details.get("harness_error"), (runtime, outcome.message)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    example=strategies.valid_examples(op="Gather", opset=13, max_elements=64).filter(
        lambda e: e.dtype in ORT_EXACT
    )
)
def test_onnxruntime_gathers_numbers_exactly(engine, example):
    (outcome,) = outcomes(engine, example, ["onnxruntime"]).values()
    assert outcome.kind == "pass", outcome.message


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    example=strategies.invalid_examples(
        op="GatherElements", opset=13, clause="index-out-of-range", max_elements=64
    )
)
def test_onnxruntime_refuses_out_of_range_gather_elements(engine, example):
    (outcome,) = outcomes(engine, example, ["onnxruntime"]).values()
    assert outcome.kind == "both_rejected", outcome.message
