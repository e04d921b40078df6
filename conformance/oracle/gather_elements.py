"""GatherElements (ONNX opsets 11, 13; spec documents "ONNX GatherElements" and
its reference page, tables.decisions.S000 and S002, with "OpenVINO
GatherElements-6" S001 and S003 for OpenVINO's reading).

    out[i][j][k] = input[index[i][j][k]][j][k] if axis = 0  (and so on per axis)
    "Its output shape is the same as the shape of indices."

How it is fast: the problem is viewed as data (A, S, B) and indices (A, K, B)
around the axis, so out[a, k, b] = data[a, index[a, k, b], b]. Blocks of rows
of indices are turned into flat positions inside the matching block of data
(index * B + b, plus S * B where the index is negative) in a buffer that stays
in cache, and np.take copies the elements. This is several times faster than
np.take_along_axis, which builds full-size broadcast index arrays.
"""

from __future__ import annotations

import math

import numpy as np

from conformance.oracle import checks
from conformance.oracle.errors import SpecViolation
from conformance.tables.operators import GATHER_ELEMENTS
from conformance.tables.spec import op_spec

OPERATOR = GATHER_ELEMENTS

# Elements of indices handled per block: 128 Ki int64 positions = 1 MiB, which
# fits in L2 here. Measured: 2**15 and 2**19 are both slower on the benchmark.
BLOCK_ELEMENTS = 1 << 17


def check_shapes(data: np.ndarray, indices: np.ndarray, axis: int) -> bool:
    """Raise on rank or off-axis size errors; return whether indices is smaller off-axis."""
    smaller = False
    for dim, (d, i) in enumerate(zip(data.shape, indices.shape, strict=True)):
        if dim == axis:
            continue  # decision ge-indices-any-size-on-axis
        if i > d:
            raise SpecViolation(
                "ge-indices-larger-off-axis",
                f"indices shape {list(indices.shape)} exceeds data shape {list(data.shape)} "
                f"on dimension {dim} (not the axis {axis})",
            )
        smaller |= i < d
    return smaller


def evaluate(opset: int, data: np.ndarray, indices: np.ndarray, axis: int | None):
    """Return (output, disputed decision ids) or raise SpecViolation."""
    spec = op_spec(OPERATOR.name, opset)
    checks.check_dtypes(spec, data, indices)
    checks.check_data_rank(data)
    if indices.ndim != data.ndim:
        raise SpecViolation(
            "rank-mismatch", f"indices has rank {indices.ndim}, data has rank {data.ndim}"
        )
    axis = checks.normalize_axis(axis, data.ndim, spec.axis_default)
    smaller = check_shapes(data, indices, axis)
    output, has_negative = _gather(data, indices, axis, smaller)
    disputed = tuple(
        name
        for name, applies in (
            ("ge-indices-smaller-off-axis", smaller),
            ("ge-negative-indices", has_negative),
        )
        if applies
    )
    return output, disputed


def _gather(
    data: np.ndarray, indices: np.ndarray, axis: int, smaller: bool
) -> tuple[np.ndarray, bool]:
    """The output and whether any index was negative; raises on an out-of-range index.

    Bounds are checked block by block, on the block already in cache, rather
    than in two extra passes over the whole indices tensor.
    """
    out = np.empty(indices.shape, dtype=data.dtype)
    size = data.shape[axis]
    if indices.size == 0:
        return out, False
    if smaller:
        # Indices smaller off-axis: only the part of data the formula can reach,
        # made contiguous below so it can be viewed flat.
        data = data[
            tuple(
                slice(None) if dim == axis else slice(0, n) for dim, n in enumerate(indices.shape)
            )
        ]
    data = np.ascontiguousarray(data)
    contiguous = np.ascontiguousarray(indices)
    a_len = math.prod(indices.shape[:axis])
    k_len = indices.shape[axis]
    b_len = math.prod(indices.shape[axis + 1 :])
    data3 = data.reshape(a_len, size * b_len)
    index3 = contiguous.reshape(a_len, k_len, b_len)
    out3 = out.reshape(a_len, k_len, b_len)

    # Never more rows than there are: small inputs must not pay for a full block.
    rows = min(a_len, max(1, BLOCK_ELEMENTS // (k_len * b_len)))
    # Flat offset of (a, ., b) inside a block of data rows: a * S * B + b.
    base = (np.arange(rows, dtype=np.int64) * (size * b_len)).reshape(rows, 1, 1)
    if b_len > 1:
        base = base + np.arange(b_len, dtype=np.int64).reshape(1, 1, b_len)
    positions = np.empty((rows, k_len, b_len), dtype=np.int64)
    wrap = np.empty_like(positions)
    has_negative = False
    for a0 in range(0, a_len, rows):
        a1 = min(a_len, a0 + rows)
        n = a1 - a0
        block, pos = index3[a0:a1], positions[:n]
        low, high = int(block.min()), int(block.max())
        if low < -size or high > size - 1:
            checks.check_index_bounds(indices, size, axis)  # raises, naming the first bad index
        if b_len == 1:
            np.add(block, base[:n], out=pos, dtype=np.int64)
        else:
            np.multiply(block, b_len, out=pos, dtype=np.int64)
            np.add(pos, base[:n], out=pos)
        if low < 0:
            # Negative index i reads i + S: add S * B where i < 0.
            has_negative = True
            np.add(pos, checks.negative_offset(block, size * b_len, wrap[:n]), out=pos)
        # mode="raise" (the default) re-checks every position: a bug here can
        # never read outside data.
        np.take(data3[a0:a1].reshape(-1), pos, out=out3[a0:a1])
    return out, has_negative
