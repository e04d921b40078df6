"""Explanations: a value-mismatch family covers only outputs its model
explains exactly; a new mechanism (a regression's garbage) is NEW.

The OpenVINO 2025.0 outputs below were recorded on that version (no old
runtime is needed here): they must not be covered by the shipped baselines,
which describe 2026.4.1.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from conformance.engine.judge import judge
from conformance.engine.pool import Raw
from conformance.engine.records import record
from conformance.fuzz.strategies import Example
from conformance.gate import baseline
from conformance.gate.baseline import Where
from conformance.gate.check import check
from conformance.oracle import compare, verdict
from conformance.tables import explanations

F16 = np.float16
BF16 = np.dtype(ml_dtypes.bfloat16)


def _bits(values, dtype):
    return np.array(
        values, {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]
    ).view(dtype)


# (expected, actual, the models that explain it) -- observed OpenVINO 2026.4.1 outputs
A, I64, U64, U32, F32 = np.array, np.int64, np.uint64, np.uint32, np.float32
EXPLAINED = [
    (A([-3969639491437192498, 5], I64), A([579214030, 5], I64), ["int64-low32"]),
    (A([6630147816760228827], U64), A([18446744072406383579], U64), ["int64-low32"]),
    (A([-3969639491437192498, 7], I64), A([-2147483648, 7], I64), ["saturate-int32"]),
    (A([2991799259, 1], U32), A([2147483647, 1], U32), ["saturate-int32"]),
    (A([-1.7427669194160004e43, 8.14330606359755e-32]),
     A([-3.4028234663852886e38, 8.14330588174092e-32]),
     ["float64-as-float32", "float64-constant-as-float32"]),  # nothing subnormal: both fit
    # an input keeps the sign of a zero; a constant of Gather does too, GatherElements' flushes
    (A([-4.0142789159234407e-196]), A([-0.0]),
     ["float64-as-float32", "float64-constant-as-float32",
      "float64-constant-as-float32-bf16-clamp"]),
    (A([-4.0142789159234407e-196]), A([0.0]), ["float64-constant-as-float32",
                                               "float64-constant-as-float32-bf16-clamp"]),
    (A([1.727772063235033e135, -6.49920057970323e-170, 3.4159001523211667e-43]),
     A([3.3895313892515355e38, 0.0, 0.0]), ["float64-constant-as-float32-bf16-clamp"]),
    # infinities saturate too (an input, and a constant on an avx512_bf16 CPU)
    (A([np.inf, -np.inf, 1.5]), A([3.4028234663852886e38, -3.4028234663852886e38, 1.5]),
     ["float64-as-float32", "float64-constant-as-float32"]),
    (A([np.inf, -np.inf, 1.5]), A([3.3895313892515355e38, -3.3895313892515355e38, 1.5]),
     ["float64-constant-as-float32-bf16-clamp"]),
    (A([1.0115052960869793e-38, -6.633043478284593e-39, -0.0, 2.5], F32),
     A([0.0, 0.0, 0.0, 2.5], F32), ["subnormals-flushed", "float32-constant-bf16-clamp"]),
    # a float32 constant where the inference precision is bf16 (a fuzz campaign on an
    # avx512_bf16 EPYC): beyond bfloat16's max clamped to it, infinities kept, subnormals flushed
    (_bits([0x7F7F574A, 0xFF7FFFFF, 0x7F800000, 0x00000001, 0x3F800000], F32),
     _bits([0x7F7F0000, 0xFF7F0000, 0x7F800000, 0x00000000, 0x3F800000], F32),
     ["float32-constant-bf16-clamp"]),
    (_bits([0xFD55, 0x7C01, 0x3C00], F16), _bits([0xFF55, 0x7E01, 0x3C00], F16), ["nan-quieted"]),
    (A(["a", "b", "c"], object), A(["a", "", "c"], object), ["strings-emptied"]),
    # onnx.reference reads string initializers as NumPy fixed-width strings (a fuzz campaign)
    (A(["-l$\0", "c\0d\0", "x"], object), A(["-l$", "c\0d", "x"], object),
     ["strings-trailing-nul-dropped"]),
    (A(["\0\0", "b"], object), A(["", "b"], object),
     ["strings-emptied", "strings-trailing-nul-dropped"]),
]  # fmt: skip


@pytest.mark.parametrize(("expected", "actual", "models"), EXPLAINED)
def test_each_model_explains_what_it_describes_and_nothing_else(expected, actual, models):
    assert compare.explained_by(expected, actual) == models


def test_an_output_that_differs_elsewhere_is_not_explained():
    expected = np.array([-3969639491437192498, 5], np.int64)
    # the low 32 bits, and one element wrong in another way: no model
    assert compare.explained_by(expected, np.array([579214030, 6], np.int64)) == []
    # -0.0 is not the +0.0 a flush gives
    tiny = np.array([1e-40], np.float32)
    assert compare.explained_by(tiny, np.array([-0.0], np.float32)) == []
    # an infinity that comes back infinite is not a narrowing (nothing differs there)
    assert compare.explained_by(np.array([np.inf, 2.0]), np.array([np.inf, 3.0])) == []
    # a NUL dropped from the middle, or a character other than NUL, is not the model
    nul = np.array(["c\0d\0"], object)
    assert compare.explained_by(nul, np.array(["cd"], object)) == []
    assert compare.explained_by(np.array(["ab"], object), np.array(["a"], object)) == []
    # a float32 clamped to bfloat16's max, not to FLT_MAX nor rounded to bfloat16
    big = _bits([0x7F7F574A, 0x7F7F574A], F32)
    assert compare.explained_by(big, _bits([0x7F7F0000, 0x7F7FFFFF], F32)) == []
    assert compare.explained_by(_bits([0x7F000001], F32), _bits([0x7F000000], F32)) == []
    # a quieted NaN with another payload is not the same NaN quieted
    assert compare.explained_by(_bits([0xFD55], F16), _bits([0xFF56], F16)) == []


def test_every_model_is_exact_on_its_own_transform():
    """A model's transform of any value is explained by it (a round trip over
    random bit patterns of every dtype it names)."""
    rng = np.random.default_rng(7)
    numpy = {"int64": np.int64, "uint64": np.uint64, "uint32": np.uint32, "float16": F16,
             "float32": np.float32, "float64": np.float64, "bfloat16": BF16}  # fmt: skip
    for model in explanations.EXPLANATIONS:
        if model.transform is None:
            continue
        for name in model.dtypes:
            dtype = np.dtype(numpy[name])
            raw = rng.integers(0, 256, size=64 * dtype.itemsize, dtype=np.uint8)
            expected = raw.view(dtype)
            actual = model.transform(expected)
            assert model.name in compare.explained_by(expected, actual), (model.name, name)


OV_2025 = Where(version="2025.0.0", profile="default", cpu_flags=None)
OV_2026 = Where(version="2026.4.1", profile="default", cpu_flags=None)


def _gate(example: Example, output: np.ndarray, where: Where):
    oracle = verdict(example.op, example.opset, example.data, example.indices, example.axis)
    judged = judge(oracle, Raw("ok", outputs=[output]))
    result = record(example, example.variant, "openvino", oracle, judged, Raw("ok"))
    entries = baseline.load("cases/known", ["openvino"])
    return result, check([result], entries, {"openvino": where})


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint64, np.float64])
def test_openvino_2025_negative_indices_garbage_is_new_under_the_shipped_baseline(dtype):
    """OpenVINO 2025.0.0, GatherElements axis 0, data [[1..9]] as 3x3, indices
    [[-1,-2,0],[-2,0,0]]: it returned [[3.06e-41, 0, 3], [0, 2, 3]] (float32
    bits; the same garbage in every dtype). 2026.4.1 is right."""
    data = np.arange(1, 10, dtype=dtype).reshape(3, 3)
    indices = np.array([[-1, -2, 0], [-2, 0, 0]], np.int64)
    garbage = np.array([[3.06e-41, 0, 3], [0, 2, 3]], np.float32).astype(dtype)
    for variant in ("static", "data_initializer"):
        example = Example("GatherElements", 13, 0, data, indices, variant=variant)
        result, gate = _gate(example, garbage, OV_2025)
        assert result["kind"] == "value_mismatch" and result["explained_by"] == []
        assert gate.unexpected == [result], (dtype, variant)


def test_uint32_saturating_outside_a_constant_is_new():
    """2025.0 saturates uint32 above 2^31-1 in every variant; the family
    covers only the constant path, where 2026.4.1 does it."""
    data = np.array([2991799259, 1], np.uint32)
    indices = np.array([0, 1], np.int64)
    saturated = np.array([2147483647, 1], np.uint32)
    static = Example("GatherElements", 13, 0, data, indices, variant="static")
    _, gate = _gate(static, saturated, OV_2025)
    assert len(gate.unexpected) == 1
    constant = Example("GatherElements", 13, 0, data, indices, variant="data_initializer")
    _, gate = _gate(constant, saturated, OV_2026)
    assert not gate.unexpected


UNCHECKED = "out-of-range-reads-unchecked-offset"


@pytest.mark.parametrize(
    ("op", "data", "indices", "attribute", "read", "fits"),
    [
        # GatherElements index 3 on axis 1 reads the next row's first element
        ("GatherElements", np.arange(1, 10, dtype=np.float32).reshape(3, 3),
         [[0, 3], [3, 1]], 1, [[1, 4], [7, 5]], True),
        # -4 wraps once to -1: the previous row's last element
        ("GatherElements", np.arange(1, 10, dtype=np.float32).reshape(3, 3),
         [[0, 1], [-4, 1]], 1, [[1, 2], [3, 5]], True),
        # past the end of the data: zero, or data's last element (a clamped read)
        ("GatherND", np.arange(24, dtype=np.int32).reshape(2, 3, 4), [[1, 3]], 0,
         [[0, 0, 0, 0]], True),
        ("GatherND", np.arange(24, dtype=np.int32).reshape(2, 3, 4), [[1, 3]], 0,
         [[23, 23, 23, 23]], True),
        # (0, 3) of data (2, 3, 4): the row (1, 0), not zeros
        ("GatherND", np.arange(24, dtype=np.int32).reshape(2, 3, 4), [[0, 3]], 0,
         [[12, 13, 14, 15]], True),
        ("GatherND", np.arange(24, dtype=np.int32).reshape(2, 3, 4), [[0, 3]], 0,
         [[0, 0, 0, 0]], False),
        # a value from nowhere the index leads
        ("Gather", np.arange(1, 10, dtype=np.float32).reshape(3, 3), [3], 1,
         [[4], [7], [1]], False),
        ("Gather", np.arange(1, 10, dtype=np.float32).reshape(3, 3), [3], 1,
         [[4], [7], [0]], True),
    ],
)  # fmt: skip
def test_an_unchecked_offset_reads_the_neighbouring_row(op, data, indices, attribute, read, fits):
    """out-of-range-reads-unchecked-offset: each out-of-range position holds
    data at the offset its index gives unchecked, or past either end zero or
    data's last element; anything else is not it (onnxruntime-web's WebGPU
    shaders, issue 48)."""
    from conformance import oracle

    reads = oracle.in_range(op, 13, data, np.array(indices, np.int64), attribute)
    assert reads is not None
    actual = np.array(read, dtype=data.dtype)
    assert (UNCHECKED in compare.explained_invalid(reads, actual)) is fits
