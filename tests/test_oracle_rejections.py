"""Each clause the oracle enforces raises SpecViolation with that clause's id."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from conformance import oracle
from conformance.oracle import SpecViolation
from conformance.tables import decisions

F32 = np.arange(6, dtype=np.float32).reshape(2, 3)
I64 = np.int64


def _clause(op, opset, data, indices, axis=None) -> str:
    with pytest.raises(SpecViolation) as raised:
        oracle.evaluate(op, opset, data, indices, axis)
    assert raised.value.clause in decisions.BY_ID
    return raised.value.clause


@pytest.mark.parametrize("op", ["Gather", "GatherElements"])
@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (2, I64),
        (-3, I64),
        (2**31 - 1, np.int32),
        (-(2**31), np.int32),
        (2**32, I64),
        (2**32 + 1, I64),
        (2**63 - 1, I64),
        (-(2**63), I64),
    ],
)
def test_index_out_of_range(op, value, dtype):
    indices = np.array([[0, value]], dtype=dtype)
    assert _clause(op, 13, np.ones((2, 2), np.float32), indices) == "index-out-of-range"


def test_out_of_range_message_says_where_and_what():
    with pytest.raises(SpecViolation) as raised:
        oracle.evaluate("GatherElements", 13, F32, np.array([[0, 1, 2], [0, 7, 0]]), 1)
    assert "index 7 at indices[1, 1]" in str(raised.value)
    assert "[-3, 2]" in str(raised.value)


@pytest.mark.parametrize("op", ["Gather", "GatherElements"])
def test_any_index_on_a_zero_size_axis_is_out_of_range(op):
    data = np.zeros((0, 3), np.float32)
    assert _clause(op, 13, data, np.zeros((1, 3), I64), 0) == "index-out-of-range"
    empty = np.zeros((0, 3), I64)
    assert oracle.evaluate(op, 13, data, empty, 0).size == 0


@pytest.mark.parametrize("op", ["Gather", "GatherElements"])
@pytest.mark.parametrize("axis", [2, -3, 100])
def test_axis_out_of_range(op, axis):
    assert _clause(op, 13, F32, np.zeros((2, 3), I64), axis) == "axis-out-of-range"


@pytest.mark.parametrize("op", ["Gather", "GatherElements"])
def test_rank_zero_data(op):
    assert _clause(op, 13, np.array(1.0, np.float32), np.array(0, I64)) == "data-rank-zero"


@pytest.mark.parametrize("indices", [np.array(0, I64), np.zeros(3, I64), np.zeros((1, 1, 1), I64)])
def test_gather_elements_rank_mismatch(indices):
    assert _clause("GatherElements", 13, F32, indices) == "rank-mismatch"


def test_gather_elements_indices_larger_off_axis():
    indices = np.zeros((3, 3), I64)  # dimension 0 is 3 > 2, and it is not the axis
    assert _clause("GatherElements", 13, F32, indices, 1) == "ge-indices-larger-off-axis"


@pytest.mark.parametrize("op", ["Gather", "GatherElements"])
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.uint32, np.uint64, np.float32])
def test_indices_dtype_outside_tind(op, dtype):
    assert _clause(op, 13, F32, np.zeros((1, 3), dtype)) == "indices-dtype"


@pytest.mark.parametrize(("op", "opset"), [("Gather", 1), ("Gather", 11), ("GatherElements", 11)])
def test_bfloat16_only_from_opset_13(op, opset):
    data = F32.astype(ml_dtypes.bfloat16)
    indices = np.zeros((1, 3), I64)
    assert _clause(op, opset, data, indices) == "data-dtype"
    assert oracle.evaluate(op, 13, data, indices).dtype == data.dtype


def test_dtype_without_onnx_type_is_a_data_dtype_violation():
    data = np.zeros(2, dtype="datetime64[s]")
    assert _clause("Gather", 13, data, np.zeros(1, I64)) == "data-dtype"


def test_unknown_opset_and_non_arrays_are_usage_errors_not_violations():
    with pytest.raises(ValueError, match="no opset 12"):
        oracle.evaluate("Gather", 12, F32, np.zeros(1, I64))
    with pytest.raises(TypeError, match=r"numpy\.ndarray"):
        oracle.evaluate("Gather", 13, [1.0, 2.0], np.zeros(1, I64))
    with pytest.raises(TypeError, match="axis"):
        oracle.evaluate("Gather", 13, F32, np.zeros(1, I64), axis=1.0)


def test_absent_axis_means_zero_never_flatten():
    indices = np.array([1], I64)
    absent = oracle.evaluate("Gather", 13, F32, indices)
    assert absent.shape == (1, 3)
    np.testing.assert_array_equal(absent, oracle.evaluate("Gather", 13, F32, indices, 0))


def test_gather_scalar_indices_give_rank_r_minus_1():
    out = oracle.evaluate("Gather", 13, np.array(["a", "b"], dtype=object), np.array(1, I64))
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == object
    assert out[()] == "b"


def test_negative_indices_disputed_only_where_the_table_says():
    data = np.arange(3, dtype=np.int32)
    negative = np.array([-1], I64)
    assert oracle.verdict("Gather", 1, data, negative).disputed == ("gather1-negative-indices",)
    assert oracle.verdict("Gather", 11, data, negative).disputed == ()
    assert oracle.verdict("GatherElements", 11, data, negative).disputed == ("ge-negative-indices",)
    assert oracle.verdict("Gather", 1, data, np.array([2], I64)).disputed == ()


def test_verdict_returns_the_violation_instead_of_raising():
    verdict = oracle.verdict("Gather", 13, F32, np.array([5], I64))
    assert not verdict.valid and verdict.output is None
    assert verdict.violation.clause == "index-out-of-range"


def test_spec_violation_survives_pickling():
    import pickle

    error = SpecViolation("index-out-of-range", "index 5")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.clause, copy.detail, str(copy)) == (error.clause, error.detail, str(error))


def test_oracle_does_not_modify_its_inputs():
    data = np.arange(12, dtype=np.int64).reshape(3, 4)
    indices = np.array([[-1, 0, 2, -3]], dtype=np.int32)
    before = (data.copy(), indices.copy())
    oracle.evaluate("GatherElements", 13, data, indices, 0)
    oracle.evaluate("Gather", 13, data, indices, 0)
    np.testing.assert_array_equal(data, before[0])
    np.testing.assert_array_equal(indices, before[1])
