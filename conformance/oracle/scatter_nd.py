"""ScatterND (ONNX opsets 11, 13, 16, 18; spec document "ONNX ScatterND",
tables.decisions.S008, with "OpenVINO ScatterNDUpdate-3, -15" S011 for
OpenVINO's reading).

With k = indices.shape[-1] and r = rank(data):

    output = np.copy(data)
    for idx in np.ndindex(indices.shape[:-1]):     # in an order not specified
        output[tuple(indices[idx])] = f(output[tuple(indices[idx])], updates[idx])

each k-tuple selecting a slice of data.shape[k:], updates of shape
indices.shape[:-1] + data.shape[k:], f the reduction (16: add, mul; 18:
max, min) or plain assignment (none, and 11, 13).

The result is a set (:class:`conformance.oracle.admissible.Admissible`):
duplicate tuples make it depend on the order of the writes (decisions
``sc-duplicates-none``, ``sc-reduction-order``). The decisions are in
:mod:`conformance.tables.decisions` (ids ``sc-...``, ``snd-...`` and the
shared entries it raises); its row is ``tables.operators.SCATTER_ND``.

How it is fast: data is viewed as M rows of S elements (M the product of
its first k dimensions, S of the rest); each tuple becomes one row number
(its row-major offset, negatives moved by s first), and
:func:`conformance.oracle.reductions.scatter` writes whole rows, grouping
only the rows written more than once.
"""

from __future__ import annotations

import math

import numpy as np

from conformance.oracle import checks, reductions, scatter_elements
from conformance.oracle.admissible import Admissible
from conformance.oracle.errors import SpecViolation
from conformance.tables.operators import SCATTER_ND
from conformance.tables.spec import OpSpec
from conformance.tables.spec import op_spec as row_spec

OPERATOR = SCATTER_ND
NAME = OPERATOR.name
OPSETS = OPERATOR.opsets  # S008: "All versions: 11, 13, 16, 18"
# The reduction attribute's values per opset (S008: ScatterND-16 "none
# (default), add, mul", -18 "none (default), add, mul, max, min").
REDUCTIONS = OPERATOR.reductions
# OpenVINO ScatterNDUpdate-15's reductions (S011), by the ONNX name each
# computes as; sub is OpenVINO's own (decision sc-openvino-reductions).
OPENVINO_15 = {"none": "none", "sum": "add", "sub": "sub", "prod": "mul", "min": "min",
               "max": "max"}  # fmt: skip


def op_spec(opset: int) -> OpSpec:
    """ScatterND's types at ``opset``, from onnx.defs (indices: tensor(int64))."""
    return row_spec(NAME, opset)


def expected_updates_shape(data_shape, indices_shape) -> tuple[int, ...]:
    """indices.shape[0:q-1] ++ data.shape[k:r] (S008)."""
    return tuple(indices_shape[:-1]) + tuple(data_shape[indices_shape[-1] :])


def check_shapes(data_shape, indices_shape, updates_shape, *, single_element: bool = False) -> int:
    """q >= 1, k <= r, updates' shape the rule's; return k. ``single_element``:
    OpenVINO's "If expected updates rank is 0D it can be a tensor with single
    element" (ScatterNDUpdate-3, -15 only: decision snd-updates-shape)."""
    if len(indices_shape) == 0:
        raise SpecViolation(
            "snd-indices-rank-zero", "indices is a scalar (rank 0); the spec needs q >= 1"
        )
    k, r = indices_shape[-1], len(data_shape)
    if k > r:
        raise SpecViolation(
            "snd-last-dim-out-of-range",
            f"indices.shape[-1] = {k} is more than the rank of data, {r} (k must be at most r)",
        )
    expected = expected_updates_shape(data_shape, indices_shape)
    if tuple(updates_shape) != expected and not (
        single_element and expected == () and math.prod(updates_shape) == 1
    ):
        raise SpecViolation(
            "snd-updates-shape",
            f"updates shape {list(updates_shape)} is not indices.shape[:-1] + data.shape[k:] = "
            f"{list(expected)} (k = {k})",
        )
    return k


def evaluate(
    opset: int,
    data: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    reduction: str | None = None,
) -> tuple[Admissible, tuple[str, ...]]:
    """Return (the admissible outputs, disputed decision ids) or raise SpecViolation.

    ``reduction=None`` means the attribute is absent (none). The checks run
    in a fixed order (dtypes, data rank, reduction, indices rank, last
    dimension, updates shape, index bounds). Raises
    :class:`~conformance.oracle.admissible.TooManyOrders` for an input whose
    set is beyond the oracle's bound."""
    checks.require_arrays(data, indices)
    spec = op_spec(opset)
    checks.check_dtypes(spec, data, indices, "snd-indices-dtype", f"{NAME}'s indices type")
    scatter_elements.check_updates(data, updates)
    checks.check_data_rank(data)
    chosen = scatter_elements.check_reduction(opset, reduction, data, NAME)
    k = check_shapes(data.shape, indices.shape, updates.shape)
    return _scatter(data, indices, updates, k, chosen)


def openvino_15(
    data: np.ndarray, indices: np.ndarray, updates: np.ndarray, reduction: str = "none"
) -> tuple[Admissible, tuple[str, ...]]:
    """OpenVINO's ScatterNDUpdate-15 (S011), for its own texts' examples only:
    reductions none, sum, sub, prod, min, max (sub is OpenVINO's own: decision
    sc-openvino-reductions); no run judges it. Indices int32 or int64."""
    checks.require_arrays(data, indices)
    scatter_elements.check_updates(data, updates)
    checks.check_data_rank(data)
    if reduction not in OPENVINO_15:
        raise SpecViolation(
            "sc-openvino-reductions", f"ScatterNDUpdate-15 has no reduction {reduction!r}"
        )
    chosen = scatter_elements.check_reduction_type(OPENVINO_15[reduction], data)
    k = check_shapes(data.shape, indices.shape, updates.shape, single_element=True)
    return _scatter(data, indices.astype(np.int64), updates, k, chosen)


def _scatter(data, indices, updates, k, reduction):
    sizes = tuple(data.shape[:k])
    columns = indices.reshape(math.prod(indices.shape[:-1]), k)
    negative = check_index_bounds(columns, sizes) if columns.shape[0] else False
    rows = _rows(columns, sizes, negative)
    s = math.prod(data.shape[k:])
    result, flags = reductions.scatter(
        data,
        rows,
        updates.reshape(rows.shape[0], s),
        reduction,
        True,
    )
    found = scatter_elements.disputed(flags, reduction, data, negative)
    if k == 0 and rows.size:
        found = (*found, "snd-empty-tuple")
    return result, found


def check_index_bounds(columns: np.ndarray, sizes: tuple[int, ...]) -> bool:
    """Raise unless component i of every tuple is in [-s_i, s_i - 1]; return
    whether any is negative. Raw values: nothing is truncated first."""
    negative = False
    for i, size in enumerate(sizes):
        column = columns[:, i]
        low, high = int(column.min()), int(column.max())
        if low < -size or high > size - 1:
            bounds = np.array(sizes, dtype=np.int64)
            bad = (columns < -bounds) | (columns > bounds - 1)
            row, j = (int(x) for x in np.argwhere(bad)[0])
            count = int(np.count_nonzero(bad))
            raise SpecViolation(
                "index-out-of-range",
                f"index {int(columns[row, j])} (tuple {row}, component {j}) is outside "
                f"[-{sizes[j]}, {sizes[j] - 1}] for data dimension {j} of size {sizes[j]}"
                + (f" ({count} indices out of range)" if count > 1 else ""),
            )
        negative |= low < 0
    return negative


def _rows(columns: np.ndarray, sizes: tuple[int, ...], negative: bool) -> np.ndarray:
    """Each tuple's row of data viewed as (M, S): its row-major offset."""
    rows = np.zeros(columns.shape[0], dtype=np.int64)
    scratch = np.empty_like(rows)
    for i, size in enumerate(sizes):
        stride = math.prod(sizes[i + 1 :])
        column = columns[:, i].astype(np.int64)
        if negative:
            np.add(rows, checks.negative_offset(column, size * stride, scratch), out=rows)
        np.multiply(column, stride, out=scratch)
        np.add(rows, scratch, out=rows)
    return rows
