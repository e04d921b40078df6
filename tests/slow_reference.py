"""An independent, deliberately naive implementation of both operators.

Written straight from the spec formulas with a Python loop over output
positions, sharing no code with the oracle, so that the two can check each
other. Raises IndexError where the oracle must raise SpecViolation for an
index or shape reason. Only for small inputs.
"""

from __future__ import annotations

import numpy as np


def _index(value: int, size: int) -> int:
    # 000/004: "within bounds [-s, s-1] along axis of size s"
    if not -size <= value <= size - 1:
        raise IndexError(f"index {value} outside [-{size}, {size - 1}]")
    return value + size if value < 0 else value


def gather_elements(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """out[i][j][k] = input[index[i][j][k]][j][k] if axis = 0 (000), for any rank and axis."""
    rank = data.ndim
    axis = axis + rank if axis < 0 else axis
    if indices.ndim != rank:
        raise IndexError("rank mismatch")
    for dim in range(rank):
        if dim != axis and indices.shape[dim] > data.shape[dim]:
            raise IndexError("indices larger than data off the axis")
    out = np.empty(indices.shape, dtype=data.dtype)
    for position in np.ndindex(*indices.shape):
        source = list(position)
        source[axis] = _index(int(indices[position]), data.shape[axis])
        out[position] = data[tuple(source)]
    return out


def gather(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """output[j_0.., i_0, ..., i_{q-1}, ..j_{r-2}] = data[j_0.., k, ..j_{r-2}] (004)."""
    rank, q = data.ndim, indices.ndim
    axis = axis + rank if axis < 0 else axis
    shape = data.shape[:axis] + indices.shape + data.shape[axis + 1 :]
    out = np.empty(shape, dtype=data.dtype)
    for value in indices.ravel():  # every index is checked, even if nothing is read
        _index(int(value), data.shape[axis])
    for position in np.ndindex(*shape):
        before, index, after = position[:axis], position[axis : axis + q], position[axis + q :]
        k = _index(int(indices[index]), data.shape[axis])
        out[position] = data[(*before, k, *after)]
    return out
