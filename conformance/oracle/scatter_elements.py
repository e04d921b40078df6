"""ScatterElements (ONNX opsets 11, 13, 16, 18; spec document "ONNX
ScatterElements", tables.decisions.S007, with "OpenVINO ScatterElementsUpdate-3,
-12" S010 for OpenVINO's reading and the deprecated Scatter S009 for reference).

    output = copy(data)
    output[i][indices[i][j]] = f(output[i][indices[i][j]], updates[i][j])  (axis = 1, and so on)

"the index-value for dimension = axis is obtained from the value of the
corresponding entry in `indices` and the index-value for dimension != axis
is obtained from the index of the entry itself"; f is the reduction (16:
add, mul; 18: max, min), or plain assignment (none, and 11, 13).

The result is a set (:class:`conformance.oracle.admissible.Admissible`):
duplicate indices make it depend on the order of the writes, which no text
fixes (decisions ``sc-duplicates-none``, ``sc-reduction-order``). The
decisions are in :mod:`conformance.tables.decisions` (ids ``sc-...``,
``se-...`` and the shared entries it raises); its row is
``tables.operators.SCATTER_ELEMENTS``.

How it is fast: each entry of ``indices`` becomes a flat position of data
(index * B + the off-axis offset, negatives moved by S * B), and
:func:`conformance.oracle.reductions.scatter` writes them, grouping only
the positions written more than once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from conformance.oracle import checks, reductions
from conformance.oracle.admissible import Admissible
from conformance.oracle.errors import SpecViolation
from conformance.tables import dtypes
from conformance.tables.operators import SCATTER_ELEMENTS
from conformance.tables.spec import OpSpec
from conformance.tables.spec import op_spec as row_spec

OPERATOR = SCATTER_ELEMENTS
NAME = OPERATOR.name
OPSETS = OPERATOR.opsets  # S007: "All versions: 11, 13, 16, 18"
# The reduction attribute's values per opset (S007: ScatterElements-16 "none
# (default), add, mul", -18 "none (default), add, mul, max, min"; 11 and 13
# have no reduction attribute): the row's.
REDUCTIONS: Mapping[int, tuple[str, ...]] = OPERATOR.reductions
# OpenVINO ScatterElementsUpdate-12's reductions (S010), by the ONNX name
# each computes as; mean is OpenVINO's own (decision sc-openvino-reductions).
OPENVINO_12 = {"none": "none", "sum": "add", "prod": "mul", "min": "min", "max": "max",
               "mean": "mean"}  # fmt: skip


def op_spec(opset: int) -> OpSpec:
    """ScatterElements' types at ``opset``, from onnx.defs."""
    return row_spec(NAME, opset)


def check_reduction(opset: int, reduction: str | None, data: np.ndarray, name: str = NAME) -> str:
    """The reduction to apply ("none" when absent); raises where the opset
    lacks it (sc-reduction-opset) or the data's type has no such operation
    (sc-reduction-string, sc-reduction-complex)."""
    if reduction is None:
        return "none"
    if not isinstance(reduction, str):
        raise TypeError(f"reduction must be a str or None, not {type(reduction).__name__}")
    allowed = REDUCTIONS[opset]
    if reduction not in allowed:
        raise SpecViolation(
            "sc-reduction-opset",
            f"reduction={reduction!r} is given, but {name}-{opset} "
            + (
                f"allows only {', '.join(allowed)}"
                if allowed
                else "has no reduction attribute (from opset 16)"
            ),
        )
    return check_reduction_type(reduction, data)


def check_reduction_type(reduction: str, data: np.ndarray) -> str:
    """String data: none and add (concatenation) only; complex: no max or min."""
    name = dtypes.name_of(data)
    if name == "string" and reduction not in ("none", "add"):
        raise SpecViolation(
            "sc-reduction-string",
            f"reduction {reduction!r} on string data: strings have no {reduction} "
            "(only none, and add as concatenation)",
        )
    if name.startswith("complex") and reduction in ("max", "min"):
        raise SpecViolation(
            "sc-reduction-complex",
            f"reduction {reduction!r} on {name} data: complex numbers have no order",
        )
    return reduction


def check_updates(data: np.ndarray, updates: np.ndarray) -> None:
    """updates is of T, the data's type (S007: "updates (differentiable) : T")."""
    if not isinstance(updates, np.ndarray):
        raise TypeError(f"updates must be a numpy.ndarray, not {type(updates).__name__}")
    if dtypes.name_of(updates) != dtypes.name_of(data):
        raise SpecViolation(
            "sc-updates-dtype",
            f"updates dtype {dtypes.name_of(updates)} is not data's {dtypes.name_of(data)} "
            "(both are T)",
        )


def check_shapes(data_shape, indices_shape, updates_shape, axis: int) -> None:
    """updates has indices' shape; indices no larger than data off the axis
    (any size on it: decision se-indices-size)."""
    if tuple(updates_shape) != tuple(indices_shape):
        raise SpecViolation(
            "se-updates-shape",
            f"updates shape {list(updates_shape)} is not indices' {list(indices_shape)}",
        )
    for dim, (d, i) in enumerate(zip(data_shape, indices_shape, strict=True)):
        if dim != axis and i > d:
            raise SpecViolation(
                "se-indices-larger-off-axis",
                f"indices shape {list(indices_shape)} exceeds data shape {list(data_shape)} "
                f"on dimension {dim} (not the axis {axis}): an update would land outside data",
            )


def check_rank(data: np.ndarray, indices: np.ndarray) -> None:
    if indices.ndim != data.ndim:
        raise SpecViolation(
            "se-rank-mismatch", f"indices has rank {indices.ndim}, data has rank {data.ndim}"
        )


def evaluate(
    opset: int,
    data: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    axis: int | None = None,
    reduction: str | None = None,
) -> tuple[Admissible, tuple[str, ...]]:
    """Return (the admissible outputs, disputed decision ids) or raise SpecViolation.

    ``axis=None`` and ``reduction=None`` mean the attribute is absent (axis
    0, no reduction). The checks run in a fixed order (dtypes, data rank,
    reduction, indices rank, axis, updates shape, off-axis sizes, index
    bounds), so an input that breaks several clauses always reports the
    same one. Raises :class:`~conformance.oracle.admissible.TooManyOrders`
    for an input whose set is beyond the oracle's bound."""
    checks.require_arrays(data, indices)
    spec = op_spec(opset)
    checks.check_dtypes(spec, data, indices)
    check_updates(data, updates)
    checks.check_data_rank(data)
    chosen = check_reduction(opset, reduction, data)
    check_rank(data, indices)
    at = checks.normalize_axis(axis, data.ndim, spec.axis_default)
    check_shapes(data.shape, indices.shape, updates.shape, at)
    return _scatter(data, indices, updates, at, chosen, True)


def openvino_12(
    data: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    axis: int,
    reduction: str = "none",
    use_init_val: bool = True,
) -> tuple[Admissible, tuple[str, ...]]:
    """OpenVINO's ScatterElementsUpdate-12 (S010), for its own texts' examples
    only: reductions none, sum, prod, min, max, mean and ``use_init_val``,
    which no ONNX node carries (decision sc-openvino-reductions); no run
    judges them. Types: T is "any supported type", indices any integer type."""
    checks.require_arrays(data, indices)
    check_updates(data, updates)
    checks.check_data_rank(data)
    if reduction not in OPENVINO_12 or (reduction == "mean" and data.dtype == np.bool_):
        raise SpecViolation(
            "sc-openvino-reductions",
            f"ScatterElementsUpdate-12 has no reduction {reduction!r} for {dtypes.name_of(data)}",
        )
    chosen = check_reduction_type(OPENVINO_12[reduction], data)
    check_rank(data, indices)
    at = checks.normalize_axis(axis, data.ndim, 0)
    check_shapes(data.shape, indices.shape, updates.shape, at)
    return _scatter(data, indices, updates, at, chosen, use_init_val)


def _scatter(data, indices, updates, axis, reduction, use_init):
    size = data.shape[axis]
    negative = checks.check_index_bounds(indices, size, axis)
    positions = _positions(data.shape, indices, axis, negative)
    result, flags = reductions.scatter(
        data,
        positions,
        updates.reshape(-1, 1),
        reduction,
        use_init,
    )
    return result, disputed(flags, reduction, data, negative)


def disputed(flags: reductions.Flags, reduction: str, data: np.ndarray, negative: bool):
    """The disputed decisions an evaluation falls under, in the table's order."""
    name = dtypes.name_of(data)
    applies = (
        ("sc-negative-indices", negative),
        ("sc-duplicates-none", flags.duplicates and reduction == "none"),
        ("sc-reduction-order", flags.ordered and reduction != "none"),
        ("sc-reduction-in-t", flags.ordered and name in ("float16", "bfloat16")),
        ("sc-nan-max-min", flags.nan_max_min),
        ("sc-reduction-bool", name == "bool" and reduction != "none"),
        ("sc-reduction-string", name == "string" and reduction == "add"),
    )
    return tuple(decision for decision, holds in applies if holds)


def _positions(data_shape, indices: np.ndarray, axis: int, negative: bool) -> np.ndarray:
    """Each entry's flat position in data: its own coordinates off the axis,
    its value (i + s where negative) on it."""
    strides = [math.prod(data_shape[d + 1 :]) for d in range(len(data_shape))]
    size = data_shape[axis]
    positions = indices.astype(np.int64)
    if negative:
        np.add(positions, checks.negative_offset(positions, size, np.empty_like(positions)),
               out=positions)  # fmt: skip
    if strides[axis] != 1:
        np.multiply(positions, strides[axis], out=positions)
    # The off-axis offset, built small (1 on the axis) and broadcast once.
    base_shape = [1 if d == axis else n for d, n in enumerate(indices.shape)]
    base = np.zeros(base_shape, dtype=np.int64)
    for d, n in enumerate(indices.shape):
        if d != axis and n > 1:
            shape = [1] * indices.ndim
            shape[d] = n
            base = base + np.arange(n, dtype=np.int64).reshape(shape) * strides[d]
    if base.any():
        np.add(positions, base, out=positions)
    return positions.reshape(-1)
