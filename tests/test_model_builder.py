"""Models of every valid case pass onnx.checker, and both real runtimes load them."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import pytest

from conformance import oracle
from conformance.cases import load
from conformance.cases.check import verdict_of
from conformance.engine import models
from conformance.oracle import compare
from tests.conftest import CASES

VALID = [c for c in load([CASES]) if verdict_of(c).valid]


@pytest.mark.parametrize("variant", models.VARIANTS)
def test_every_valid_case_passes_the_full_checker(variant):
    for case in VALID:
        model = models.build_for_case(case, variant)
        onnx.checker.check_model(model, full_check=True)


def test_variants_feed_and_bake_the_right_inputs():
    data, indices = np.zeros((2, 3), np.float32), np.zeros((1, 3), np.int64)
    for variant in models.VARIANTS:
        model = models.build("GatherElements", 13, data, indices, 1, variant)
        fed = set(models.feeds(data, indices, variant))
        graph_inputs = {i.name for i in model.graph.input}
        baked = {t.name for t in model.graph.initializer}
        assert graph_inputs == fed and fed | baked == {"data", "indices"} and not fed & baked
        assert model.ir_version == models.IR_VERSION
        assert model.opset_import[0].version == 13
    dynamic = models.build("GatherElements", 13, data, indices, 1, "dynamic")
    dims = dynamic.graph.input[0].type.tensor_type.shape.dim
    assert all(d.dim_param and not d.dim_value for d in dims)


def test_a_third_input_is_fed_but_where_every_input_is_baked():
    """updates (ScatterElements, ScatterND): fed in every variant but
    both_initializers, which bakes every input (docs/oracle.md)."""
    data, indices, updates = (
        np.zeros(3, np.float32),
        np.zeros((1, 1), np.int64),
        np.ones(1, np.float32),
    )
    for variant in models.VARIANTS:
        model = models.build("ScatterND", 18, data, indices, None, variant, updates, "add")
        fed = set(models.feeds(data, indices, variant, updates))
        assert {i.name for i in model.graph.input} == fed
        assert ("updates" in fed) == (variant != "both_initializers")
        assert fed | {t.name for t in model.graph.initializer} == {"data", "indices", "updates"}
        node = model.graph.node[0]
        assert list(node.input) == ["data", "indices", "updates"]
        assert [(a.name, a.s) for a in node.attribute] == [("reduction", b"add")]


def test_absent_axis_is_left_out_of_the_node():
    data, indices = np.zeros(2, np.float32), np.zeros(1, np.int64)
    node = models.build("Gather", 13, data, indices, None, "static").graph.node[0]
    assert [a.name for a in node.attribute] == []
    node = models.build("Gather", 13, data, indices, 0, "static").graph.node[0]
    assert [(a.name, a.i) for a in node.attribute] == [("axis", 0)]


def _run_ort(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def _run_openvino(model, feeds):
    core = ov.Core()
    compiled = core.compile_model(core.read_model(model.SerializeToString()), "CPU")
    return compiled(feeds)[0]


@pytest.mark.parametrize("run", [_run_ort, _run_openvino], ids=["onnxruntime", "openvino"])
@pytest.mark.parametrize("variant", models.VARIANTS)
@pytest.mark.parametrize(
    ("op", "opset", "axis"),
    [("Gather", 1, None), ("Gather", 13, 1), ("GatherElements", 11, 1), ("GatherElements", 13, -1)],
)
def test_runtimes_accept_the_ir_version_and_compute_the_model(run, variant, op, opset, axis):
    """Both real runtimes load every variant at every opset and return the oracle's bytes
    on plain float32 input (the full dtype round trip belongs to the adapters)."""
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    indices = np.array(
        [[2, 0], [1, 0]] if op == "Gather" else [[3, 0], [1, 2], [0, 0]], dtype=np.int64
    )
    expected = oracle.evaluate(op, opset, data, indices, axis)
    model = models.build(op, opset, data, indices, axis, variant)
    actual = run(model, models.feeds(data, indices, variant))
    assert compare.difference(expected, np.asarray(actual)) is None


def test_output_shape_rule():
    assert oracle.output_shape("Gather", (3, 4), (2, 5), 1) == (3, 2, 5)
    assert oracle.output_shape("Gather", (3,), (), None) == ()
    assert oracle.output_shape("GatherElements", (3, 4), (2, 4), 0) == (2, 4)
    assert oracle.output_shape("GatherElements", (3, 4), (2,), 0) is None
    assert oracle.output_shape("Gather", (3, 4), (2,), 2) is None
