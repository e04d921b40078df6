"""Hypothesis strategies for testing the oracle (the public fuzzing strategies
are a separate piece of work; these only need to reach every branch of the
oracle and be small enough for the slow reference)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.spec import OPSETS, op_spec


class OracleInput(NamedTuple):
    op: str
    opset: int
    data: np.ndarray
    indices: np.ndarray
    axis: int | None


@st.composite
def tensor_values(draw, dtype: dtypes.DType, shape: tuple[int, ...]) -> np.ndarray:
    """Values over the full range of the dtype: any bit pattern for numbers."""
    size = math.prod(shape)
    if dtype.kind == "string":
        words = draw(st.lists(st.text(max_size=4), min_size=size, max_size=size))
        return np.array([*words, ""], dtype=object)[:size].reshape(shape)
    if dtype.kind == "bool":
        bits = draw(st.lists(st.booleans(), min_size=size, max_size=size))
        return np.array(bits, dtype=bool).reshape(shape)
    raw = draw(
        st.binary(min_size=size * dtype.numpy.itemsize, max_size=size * dtype.numpy.itemsize)
    )
    return np.frombuffer(raw, dtype=np.uint8).view(dtype.numpy).reshape(shape).copy()


@st.composite
def oracle_inputs(draw, op: str | None = None, valid_only: bool = True) -> OracleInput:
    """Inputs for either operator; with valid_only=False, index values and
    off-axis sizes may step just outside what the spec allows."""
    op = op or draw(st.sampled_from(sorted(OPSETS)))
    opset = draw(st.sampled_from(OPSETS[op]))
    spec = op_spec(op, opset)
    dtype = dtypes.by_name(draw(st.sampled_from(spec.data_dtypes)))
    index_dtype = dtypes.by_name(draw(st.sampled_from(spec.index_dtypes)))
    rank = draw(st.integers(1, 8))
    largest = 4 if rank <= 4 else 2  # keeps the slow reference fast at rank 8
    shape = tuple(draw(st.lists(st.integers(0, largest), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    size = shape[axis]
    slack = 0 if valid_only else 2
    if op == "GatherElements":
        index_shape = tuple(
            draw(st.integers(0, 5))
            if dim == axis % rank
            else draw(st.integers(0, shape[dim] + (1 if not valid_only else 0)))
            for dim in range(rank)
        )
    else:
        index_shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    if size == 0 and valid_only:
        # Any index on a zero-size axis is out of range: keep indices empty.
        if op == "GatherElements":
            index_shape = tuple(0 if d == axis % rank else n for d, n in enumerate(index_shape))
        else:
            index_shape = (0, *index_shape[1:])
    count = math.prod(index_shape)
    low, high = -size - slack, size - 1 + slack
    if low > high:
        values = [0] * count  # only reachable with valid_only=False
    else:
        values = draw(st.lists(st.integers(low, high), min_size=count, max_size=count))
    indices = np.array(values, dtype=index_dtype.numpy).reshape(index_shape)
    data = draw(tensor_values(dtype, shape))
    axis_attr = None if axis == 0 and draw(st.booleans()) else axis
    return OracleInput(op, opset, data, indices, axis_attr)
