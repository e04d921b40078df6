"""GatherND (ONNX opsets 11, 12, 13; spec documents "ONNX GatherND" S005 and
"OpenVINO GatherND-5, -8" S006).

With b = batch_dims, m = indices.shape[-1] and r = rank(data):

    output[i_0, ..., i_{q-2}, j_0, ..., j_{r-b-m-1}]
        = data[i_0, ..., i_{b-1}, k_0, ..., k_{m-1}, j_0, ..., j_{r-b-m-1}]
    with (k_0, ..., k_{m-1}) = indices[i_0, ..., i_{q-2}, :]

so the output has the shape indices.shape[:-1] + data.shape[b + m:], rank
q + r - m - 1 - b (S005's description; its Outputs line drops the b).

Its decisions (ids ``gnd-...``, and GatherND's clauses of the shared
entries) are in :mod:`conformance.tables.decisions`; its shape rule is its
row's (``tables.operators.GATHER_ND``).

How it is fast: the batch dims and the m indexed dims of data are viewed
as one axis of B * M rows, each row the S elements of a slice; each index
tuple becomes one row number (batch * M + the tuple's row-major offset,
negatives moved by s first) and ``np.take`` copies whole rows.
"""

from __future__ import annotations

import math

import numpy as np

from conformance.oracle import checks
from conformance.oracle.errors import SpecViolation
from conformance.tables.operators import GATHER_ND
from conformance.tables.spec import OpSpec
from conformance.tables.spec import op_spec as _op_spec

OPERATOR = GATHER_ND
NAME = OPERATOR.name
OPSETS = OPERATOR.opsets  # S005: "All versions: 11, 12, 13"


def op_spec(opset: int) -> OpSpec:
    """GatherND's types at ``opset`` (``tables.spec.op_spec``)."""
    return _op_spec(NAME, opset)


def output_shape(data_shape, indices_shape, batch_dims: int | None) -> tuple[int, ...] | None:
    """The shape rule alone, from shapes: indices.shape[:-1] + data.shape[b + m:]
    (decision gnd-batch-dims-kept); None when the shapes have no valid output."""
    return OPERATOR.output_shape(OPERATOR.shapes(data_shape, indices_shape), batch_dims)


def check_batch_dims(opset: int, batch_dims: int | None, rank: int, q: int) -> int:
    """b in [0, min(q, r)); None means absent (0)."""
    if batch_dims is None:
        return 0
    if isinstance(batch_dims, bool) or not isinstance(batch_dims, (int, np.integer)):
        raise TypeError(f"batch_dims must be an int or None, not {type(batch_dims).__name__}")
    b = int(batch_dims)
    if opset == 11:
        raise SpecViolation(
            "gnd-batch-dims-opset-11", f"batch_dims={b} is given, but {NAME}-11 has no batch_dims"
        )
    if not 0 <= b < min(q, rank):
        raise SpecViolation(
            "gnd-batch-dims-out-of-range",
            f"batch_dims {b} is outside [0, {min(q, rank) - 1}] = [0, min(q={q}, r={rank}) - 1]",
        )
    return b


def check_shapes(data: np.ndarray, indices: np.ndarray, b: int) -> int:
    """Raise on unequal batch dims or a last dimension outside [1, r - b]; return m."""
    if data.shape[:b] != indices.shape[:b]:
        raise SpecViolation(
            "gnd-batch-dims-unequal",
            f"the first {b} dimensions differ: data {list(data.shape[:b])}, "
            f"indices {list(indices.shape[:b])}",
        )
    m = indices.shape[-1]
    if not 1 <= m <= data.ndim - b:
        raise SpecViolation(
            "gnd-last-dim-out-of-range",
            f"indices.shape[-1] = {m} is outside [1, r - b] = [1, {data.ndim - b}] "
            f"(r={data.ndim}, b={b})",
        )
    return m


def check_index_bounds(columns: np.ndarray, sizes: tuple[int, ...], b: int) -> bool:
    """Raise unless column i of ``columns`` (N, m) is in [-s_i, s_i - 1]; return
    whether any index is negative. Raw values: nothing is truncated first."""
    negative = False
    for i, size in enumerate(sizes):
        column = columns[:, i]
        low, high = int(column.min()), int(column.max())
        if low < -size or high > size - 1:
            _raise_out_of_range(columns, sizes, b)
        negative |= low < 0
    return negative


def _raise_out_of_range(columns: np.ndarray, sizes: tuple[int, ...], b: int) -> None:
    bounds = np.array(sizes, dtype=np.int64)
    bad = (columns < -bounds) | (columns > bounds - 1)
    row, i = (int(x) for x in np.argwhere(bad)[0])
    size = sizes[i]
    count = int(np.count_nonzero(bad))
    raise SpecViolation(
        "index-out-of-range",
        f"index {int(columns[row, i])} (tuple {row}, component {i}) is outside "
        f"[-{size}, {size - 1}] for data dimension {b + i} of size {size}"
        + (f" ({count} indices out of range)" if count > 1 else ""),
    )


def evaluate(opset: int, data: np.ndarray, indices: np.ndarray, batch_dims: int | None):
    """Return (output, disputed decision ids) or raise SpecViolation.

    The checks run in a fixed order (dtypes, data rank, indices rank,
    batch_dims, batch dims, last dimension, index bounds), so an input that
    breaks several clauses always reports the same one."""
    checks.require_arrays(data, indices)  # called directly: no oracle.evaluate checks first
    spec = op_spec(opset)
    checks.check_dtypes(spec, data, indices, "gnd-indices-dtype", f"{NAME}'s indices type")
    checks.check_data_rank(data)
    if indices.ndim == 0:
        raise SpecViolation(
            "gnd-indices-rank-zero", "indices is a scalar (rank 0); the spec needs q >= 1"
        )
    b = check_batch_dims(opset, batch_dims, data.ndim, indices.ndim)
    m = check_shapes(data, indices, b)
    sizes = tuple(data.shape[b : b + m])
    out = np.empty(indices.shape[:-1] + data.shape[b + m :], dtype=data.dtype)
    columns = indices.reshape(-1, m)
    if columns.shape[0] == 0:
        return out, ()  # no index tuple: nothing is read, nothing is out of range
    negative = check_index_bounds(columns, sizes, b)
    disputed = ("gnd-negative-indices",) if negative else ()
    if out.size == 0:
        return out, disputed  # every slice is empty
    rows = _rows(columns, sizes, math.prod(data.shape[:b]), negative)
    slices = data.reshape(-1, math.prod(data.shape[b + m :]))
    # mode="clip": "raise" buffers ``out`` (a second full copy, 4x slower on
    # benchmarks/gather_nd_speed.py); every row is in range by construction
    # (the bounds were checked above) and clip can never read outside data.
    np.take(slices, rows, axis=0, out=out.reshape(rows.shape[0], -1), mode="clip")
    return out, disputed


def _rows(columns: np.ndarray, sizes: tuple[int, ...], batches: int, negative: bool) -> np.ndarray:
    """Each tuple's row of data viewed as (B * M, S): its batch * M plus its
    row-major offset among the M = prod(sizes) indexed positions."""
    rows = np.zeros(columns.shape[0], dtype=np.int64)
    scratch = np.empty_like(rows)
    for i, size in enumerate(sizes):
        stride = math.prod(sizes[i + 1 :])
        column = columns[:, i]
        if negative:
            np.add(rows, checks.negative_offset(column, size * stride, scratch), out=rows)
        if stride == 1:
            np.add(rows, column, out=rows)
        else:
            np.multiply(column, stride, out=scratch)
            np.add(rows, scratch, out=rows)
    if batches > 1:
        per_batch = columns.shape[0] // batches
        rows.reshape(batches, per_batch)[...] += (
            np.arange(batches, dtype=np.int64) * math.prod(sizes)
        )[:, None]
    return rows
