"""Adapters against the real runtimes: every dtype goes in and comes back exactly.

An adapter bug must never be reported as a runtime discrepancy, so the
bindings' conversions are tested on full-range values on their own, and the
whole path (model, session, feeds, outputs) through each real runtime.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from conformance import adapters
from conformance.adapters import HarnessUnsupported, LoadError
from conformance.cases.case import Case
from conformance.engine import models
from conformance.oracle import compare
from conformance.tables import dtypes

RUNTIMES = ("onnxruntime", "openvino", "reference", "tract")

# What a runtime itself refuses, at load time, whatever the adapter does.
REFUSED = {
    ("onnxruntime", "complex64"),
    ("onnxruntime", "complex128"),
    ("openvino", "complex64"),
    ("openvino", "complex128"),
    # tract's ONNX loader: "Unknown DatumType Bfloat16", "... Complex64".
    ("tract", "bfloat16"),
    ("tract", "complex64"),
    ("tract", "complex128"),
}
# What a binding cannot carry at all, in any variant (harness_unsupported, with
# these words in the reason): tract runs string Gathers, but libtract's C API,
# which its Python binding goes through, has no string datum type, so a string
# input cannot go in (fed variants) and a string output cannot come out
# (initializer variants). tests/test_tract.py holds both messages.
UNCARRIED = {("tract", "string"): "libtract's C API"}
# OpenVINO changes values in its own computation, depending on the variant:
# int64/uint64 are computed in 32 bits and float64 in float32 (even by
# Identity), uint32 above 2**31-1 saturates when the data is an initializer,
# subnormals are flushed to zero when constants are folded, and float64 ±inf
# saturates to ±FLT_MAX. Those are
# runtime discrepancies that the run reports; here OpenVINO's whole path is
# tested on modest values, and its binding on full-range values on its own.
MODEST = {"openvino"}


def modest(name: str) -> np.ndarray:
    """Values every runtime's computation carries: small integers, plain floats, -0.0."""
    dtype = dtypes.by_name(name).numpy
    if dtype.kind in "iu":
        return np.array([0, 1, 100, 7, 42, 99], dtype=dtype)
    if dtype.kind == "f" or name == "bfloat16":
        return np.array([-0.0, 1.5, -2.25, 3.0, -4.0, 0.5], dtype=dtype)
    return full_range(name)


# Three cases of one model (a pack) and what each output must be: the adapters
# that run packs are tested with them (tract, the compilers).
PACK_CASES = [
    Case("Gather", 13, 0, np.arange(6, dtype=np.float32).reshape(3, 2), np.array([2, 0])),
    Case("GatherElements", 13, 1, np.arange(4, dtype=np.float32).reshape(2, 2),
         np.array([[1, 1], [0, 1]])),
    Case("Gather", 13, 0, np.array([-0.0, 7.5], dtype=np.float32), np.array(1)),
]  # fmt: skip
PACK_OUTPUTS = [[[4, 5], [0, 1]], [[1, 1], [2, 3]], 7.5]


def full_range(name: str) -> np.ndarray:
    """Values that expose a lossy conversion: extremes, NaN payloads, -0.0, subnormals."""
    dtype = dtypes.by_name(name).numpy
    if name == "string":
        values = ["", "a", "<script>alert(1)</script>", "é中😀", "tab\there", "nul\x00inside"]
        return np.array(values, dtype=object)
    if name == "bool":
        return np.array([True, False, False, True, True, False])
    if name.startswith("complex"):
        part = np.finfo(dtype).max
        return np.array([complex(part, -part), complex(-0.0, np.inf), complex(np.nan, 1)], dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=dtype)
    width = dtype.itemsize * 8
    bits = np.dtype(f"uint{width}")
    info = ml_dtypes.finfo(dtype)
    specials = [info.max, -info.max, info.smallest_subnormal, -0.0, np.inf]
    array = np.array([*specials, np.nan], dtype=dtype)
    quiet_nan_with_payload = {16: 0x7E01, 32: 0x7FC00001, 64: 0x7FF8000000000001}[width]
    array.view(bits)[-1] = quiet_nan_with_payload
    return array


@pytest.fixture(scope="module", params=RUNTIMES)
def adapter(request):
    return adapters.instantiate(adapters.resolve(request.param))


@pytest.mark.parametrize("variant", models.VARIANTS)
@pytest.mark.parametrize("name", dtypes.NAMES)
def test_every_dtype_comes_back_exactly(adapter, name, variant):
    data = modest(name) if adapter.name in MODEST else full_range(name)
    indices = np.arange(data.size - 1, -1, -1, dtype=np.int64)  # reversed: every element moves
    model = models.build("Gather", 13, data, indices, 0, variant).SerializeToString()
    feeds = models.feeds(data, indices, variant)
    if (adapter.name, name) in REFUSED:
        with pytest.raises(LoadError):
            adapter.run(model, feeds)
        return
    if (adapter.name, name) in UNCARRIED:
        with pytest.raises(HarnessUnsupported, match=UNCARRIED[adapter.name, name]):
            adapter.run(model, feeds)
        return
    try:
        (output,) = adapter.run(model, feeds).outputs
    except HarnessUnsupported:
        # Only one thing is allowed here: OpenVINO strings ending in NUL (none above).
        pytest.fail(f"{adapter.name} cannot carry {name}")
    assert compare.difference(data[indices], output) is None


def test_openvino_refuses_strings_with_a_trailing_nul_as_harness_unsupported():
    adapter = adapters.instantiate(adapters.resolve("openvino"))
    data = np.array(["ends\x00", "b"], dtype=object)
    indices = np.array([1, 0], dtype=np.int64)
    model = models.build("Gather", 13, data, indices, 0, "static").SerializeToString()
    with pytest.raises(HarnessUnsupported, match="trailing NUL"):
        adapter.run(model, {"data": data, "indices": indices})


# Strings have their own test above; OpenVINO has no complex element type (its
# ONNX reader refuses such models, which the run records as the runtime's refusal).
OV_BINDING_DTYPES = [n for n in dtypes.NAMES if n != "string" and not n.startswith("complex")]


@pytest.mark.parametrize("name", OV_BINDING_DTYPES)
def test_openvino_binding_carries_full_range_values(name):
    """ov.Tensor in and out without inference: the adapter's own conversions."""
    from conformance.adapters import ov as ov_adapter

    data = full_range(name).reshape(2, -1)
    back = ov_adapter._from_tensor(ov_adapter._to_tensor(data))
    assert compare.difference(data, back) is None


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)])
def test_bindings_carry_empty_and_scalar_bfloat16(shape):
    from conformance.adapters import ort as ort_adapter
    from conformance.adapters import ov as ov_adapter

    data = np.full(shape, -0.0, dtype=ml_dtypes.bfloat16)
    assert compare.difference(data, ov_adapter._from_tensor(ov_adapter._to_tensor(data))) is None
    value = ort_adapter._to_ort_value(data)
    assert compare.difference(data, ort_adapter._bfloat16_from(value)) is None


def test_sessions_are_cached_by_key(adapter):
    data = np.arange(4, dtype=np.float32)
    indices = np.array([1], dtype=np.int64)
    model = models.build("Gather", 13, data, indices, 0, "dynamic").SerializeToString()
    first = adapter.run(model, {"data": data, "indices": indices}, key=b"k")
    again = adapter.run(model, {"data": data[::-1].copy(), "indices": indices}, key=b"k")
    assert (first.cached, again.cached) == (False, True)
    assert again.load_s == 0.0 and again.outputs[0].tolist() == [2.0]


def test_load_and_run_errors_are_told_apart(adapter):
    data = np.arange(4, dtype=np.float32)
    bad_model = b"not an onnx model"
    with pytest.raises(LoadError):
        adapter.run(bad_model, {})
    indices = np.array([7], dtype=np.int64)  # out of range: refused at run time, or not
    # tract's Gather panics on it, which aborts the process (a crash, run in a
    # worker by tests/test_tract.py); its GatherElements on the last axis refuses it.
    op = "GatherElements" if adapter.name == "tract" else "Gather"
    model = models.build(op, 13, data, indices, 0, "static").SerializeToString()
    try:
        adapter.run(model, {"data": data, "indices": indices})
    except adapters.AdapterError as error:
        assert error.stage == "run"


def test_registry_knows_the_builtins_and_targets():
    assert set(RUNTIMES) <= set(adapters.installed())
    assert adapters.resolve("openvino") == "conformance.adapters.ov:OpenVinoAdapter"
    assert adapters.resolve("tests.faulty_adapter:FaultyAdapter").endswith(":FaultyAdapter")
    with pytest.raises(adapters.UnknownRuntime, match="known: "):
        adapters.resolve("tensorrt")


def test_openvino_shares_a_large_feed_and_leaves_it_as_fed():
    """A feed of SHARE_BYTES or more goes to OpenVINO without a copy a run (a
    read-only one, as a worker's feeds are, through one copy mapped read-only):
    the outputs stay bit-exact, own their bytes (even an output that is the
    input itself), and the array fed is not written, whether a node reads it or
    computes from it."""
    from onnx import TensorProto as T
    from onnx import helper as h

    from conformance.adapters import ov as ov_adapter

    rows = ov_adapter.SHARE_BYTES // (4 * 8) + 1
    graph = h.make_graph(
        [
            h.make_node("Gather", ["data", "indices"], ["g"], axis=0),
            h.make_node("Identity", ["data"], ["same"]),
            h.make_node("Relu", ["data"], ["relu"]),
        ],
        "shared",
        [
            h.make_tensor_value_info("data", T.FLOAT, [rows, 8]),
            h.make_tensor_value_info("indices", T.INT64, [3]),
        ],
        [h.make_tensor_value_info(name, T.FLOAT, None) for name in ("g", "same", "relu")],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    data = np.random.default_rng(0).standard_normal((rows, 8), np.float32)
    assert data.nbytes >= ov_adapter.SHARE_BYTES
    writable = data.copy()
    read_only = np.frombuffer(data.tobytes(), np.float32).reshape(data.shape)
    indices = np.array([rows - 1, 0, -1], np.int64)
    assert np.shares_memory(ov_adapter._to_tensor(writable).data, writable)  # not copied
    shared = ov_adapter._to_tensor(read_only).data
    assert np.shares_memory(shared, ov_adapter._to_tensor(read_only).data)  # copied once
    adapter = adapters.instantiate(adapters.resolve("openvino"))
    session = adapter.load(model.SerializeToString())
    for fed in (writable, writable, read_only, read_only):  # again: a request holding it
        g, same, relu = adapter.execute(session, {"data": fed, "indices": indices})
        assert compare.difference(data, fed) is None  # not written
        assert compare.difference(data, shared) is None
        assert compare.difference(data[indices], g) is None
        assert compare.difference(data, same) is None
        assert compare.difference(np.maximum(data, 0), relu) is None
        assert not any(np.shares_memory(x, out) for x in (fed, shared) for out in (g, same, relu))
