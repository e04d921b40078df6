"""The precise profiles are precise (issue 49, "What to build" 6): OpenVINO's
``f32``, which ``conformance model`` reruns a differing model in, turns off
the CPU plugin's dynamic quantization of activations, so that a MatMul of
int8 weights computes what onnx.reference does; the profile says so in what
it sets and what the worker reads back."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

from conformance.adapters.registry import PRECISE
from conformance.engine import targets
from conformance.engine.pool import WorkerPool

ov = pytest.importorskip("conformance.adapters.ov")


def _int8_weights(depth: int = 256):
    """x @ DequantizeLinear(int8 weights): what a weight-compressed encoder's
    MatMuls are (onnx.reference runs it)."""
    rng = np.random.default_rng(0)
    weights = rng.integers(-127, 128, (depth, 64), dtype=np.int8)
    nodes = [
        h.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=1),
        h.make_node("MatMul", ["x", "wf"], ["y"]),
    ]
    graph = h.make_graph(
        nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [4, depth])],
        [h.make_tensor_value_info("y", T.FLOAT, [4, 64])],
        [nh.from_array(weights, "w"), nh.from_array(np.full(64, 0.01, np.float32), "s")],
    )  # fmt: skip
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])
    return model, rng.standard_normal((4, depth)).astype(np.float32)


def test_openvino_s_precise_profile_computes_int8_weights_as_the_reference():
    assert "f32" in PRECISE["openvino"]
    model, x = _int8_weights()
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    adapter = ov.OpenVinoAdapter(targets.parse("openvino:f32").properties)
    got = adapter.execute(adapter.load(model.SerializeToString()), {"x": x})[0]
    scale = float(np.abs(expected).max())
    # float32 sums in another order: a few ULP of the scale, never int8 activations' 0.5%
    assert float(np.abs(got - expected).max()) <= 1e-5 * scale


def test_the_precise_profile_reads_back_without_dynamic_quantization():
    with WorkerPool(["openvino:f32"]) as pool:
        effective = pool.info["openvino:f32"]["effective"]
    assert effective["INFERENCE_PRECISION_HINT"] == "f32"
    assert effective["DYNAMIC_QUANTIZATION_GROUP_SIZE"] == "0"
