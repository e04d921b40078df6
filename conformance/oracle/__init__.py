"""The oracle: a strict NumPy reference implementation of Gather, GatherElements and GatherND.

One module per operator, pure functions, every decision tied to an id of
:mod:`conformance.tables.decisions`. Public entry points:

- :func:`evaluate` returns the output array or raises :class:`SpecViolation`.
- :func:`verdict` never raises for a spec violation; it returns a
  :class:`Verdict` that also lists the disputed decisions the case falls under.
- :func:`in_range` says, of an input whose only fault is out-of-range
  indices, what the spec defines at every output position the in-range
  indices select: what an explanation of a runtime's output for it
  (``out-of-range-reads-zero``) is checked against, position by position.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from conformance.oracle import gather, gather_elements, gather_nd
from conformance.oracle.checks import require_arrays
from conformance.oracle.errors import SpecViolation
from conformance.tables.operators import OPERATORS as ROWS
from conformance.tables.spec import op_spec

__all__ = [
    "OPERATORS",
    "Defined",
    "InRange",
    "SpecViolation",
    "Verdict",
    "Violated",
    "evaluate",
    "in_range",
    "output_shape",
    "verdict",
]

# Each operator's module, by the name its row (tables.operators) gives it.
OPERATORS: dict[str, Callable] = {
    module.OPERATOR.name: module.evaluate for module in (gather, gather_elements, gather_nd)
}


@dataclass(frozen=True)
class Defined:
    """A :data:`Verdict` on a valid input: the output the spec defines.

    ``disputed`` lists the ids of disputed decisions the input falls under.
    """

    output: np.ndarray
    violation: None = None
    disputed: tuple[str, ...] = ()

    @property
    def valid(self) -> Literal[True]:
        return True


@dataclass(frozen=True)
class Violated:
    """A :data:`Verdict` on an input that breaks the spec: the clause it breaks."""

    output: None
    violation: SpecViolation
    disputed: tuple[str, ...] = ()  # always empty

    @property
    def valid(self) -> Literal[False]:
        return False


# What the spec says about one input: an output, or the clause it breaks. Two
# classes, so that a type checker knows ``output`` is an array where ``valid``
# is true and ``violation`` is set where it is false.
Verdict = Defined | Violated


def _operator(op: str, opset: int) -> Callable:
    op_spec(op, opset)  # raises UnknownOpset with the known list
    return OPERATORS[op]


def evaluate(
    op: str, opset: int, data: np.ndarray, indices: np.ndarray, axis: int | None = None
) -> np.ndarray:
    """The output the spec defines for this input, or SpecViolation.

    ``axis=None`` means the attribute is absent (its default, 0, applies; the
    oracle never flattens).
    """
    require_arrays(data, indices)
    output, _ = _operator(op, opset)(opset, data, indices, axis)
    return output


def verdict(
    op: str, opset: int, data: np.ndarray, indices: np.ndarray, axis: int | None = None
) -> Verdict:
    """Like :func:`evaluate`, but a spec violation is returned, not raised."""
    require_arrays(data, indices)
    try:
        output, disputed = _operator(op, opset)(opset, data, indices, axis)
    except SpecViolation as violation:
        return Violated(None, violation)
    return Defined(output, None, disputed)


class InRange(NamedTuple):
    """An input with out-of-range indices, position by position (:func:`in_range`)."""

    output: np.ndarray  # the spec's output where ``outside`` is False (elsewhere: index 0's)
    outside: np.ndarray  # bool, the output's shape: the positions an out-of-range index selects
    # int64, the output's shape: the element of data (flat, row-major) each position
    # reads when no index is checked, a negative index wrapped once (+ its dimension's
    # size); outside [0, data.size) where that is past either end. None: data is empty.
    offsets: np.ndarray | None = None
    data: np.ndarray | None = None  # the input's data, flat


def in_range(
    op: str, opset: int, data: np.ndarray, indices: np.ndarray, axis: int | None = None
) -> InRange | None:
    """Of an input that breaks the spec only by out-of-range indices: the
    output the spec defines where an index is in range, and where one is
    not. None for an input that breaks anything else (or nothing).

    Computed by the oracle itself, each out-of-range index replaced by 0: the
    positions it selects are marked ``outside`` (every position when the axis
    has no element), and what index 0 read there means nothing."""
    require_arrays(data, indices)
    found = verdict(op, opset, data, indices, axis)
    if found.valid or found.violation.clause != "index-out-of-range":
        return None
    row = ROWS[op]
    at = row.value(axis) % data.ndim  # the violation says the attribute is in range
    bad, empty = _out_of_range(row.indexing, data.shape, indices, at)
    shape = output_shape(op, data.shape, indices.shape, axis)
    assert shape is not None  # only index-out-of-range is broken
    # An index's mark goes to the output dimensions its indices dimensions become.
    placed = [1] * len(shape)
    for out, ((tensor, dim), *_) in enumerate(row.dims(row.shapes(data.shape, indices.shape), at)):
        if tensor == "indices":
            placed[out] = indices.shape[dim]
    outside = np.broadcast_to(bad.reshape(placed), shape)
    if empty:  # nothing in range to read
        return InRange(np.zeros(shape, dtype=data.dtype), np.ones(shape, dtype=bool))
    wide = bad[..., None] if row.indexing == "tuple" else bad
    safe = np.where(wide, 0, indices).astype(indices.dtype)
    try:
        output = evaluate(op, opset, data, safe, axis)
        # Index 0's offsets, and each out-of-range index's own step from them.
        table = np.arange(data.size, dtype=np.int64).reshape(data.shape)
        base = evaluate(op, opset, table, safe, axis)
    except SpecViolation:  # another clause, hidden behind the first
        return None
    step = np.broadcast_to(
        _unchecked_step(row.indexing, data.shape, indices, at).reshape(placed), shape
    )
    offsets = np.where(outside, base + step, base)
    return InRange(output, np.array(outside, dtype=bool), offsets, data.ravel())


def _unchecked_step(indexing: str, data_shape, indices: np.ndarray, at: int) -> np.ndarray:
    """How far (in elements of data) each out-of-range index (tuple, for
    GatherND) moves the read from index 0's when nothing checks it, a
    negative index wrapped once; 0 for indices in range. Clamped to a step
    past either end of the data, which is where any larger one lands too."""
    size = int(np.prod(data_shape))
    strides = [int(np.prod(data_shape[d + 1 :])) for d in range(len(data_shape))]
    wide = indices.astype(np.int64)
    if indexing != "tuple":
        wide = wide[..., None]
    dims = np.array(data_shape[at : at + wide.shape[-1]], dtype=np.int64)
    # A tuple out of range is replaced whole by index 0's: each component steps.
    bad = ((wide < -dims) | (wide >= dims)).any(axis=-1)
    steps = np.zeros(wide.shape[:-1], dtype=np.int64)
    for k in range(wide.shape[-1]):
        component = wide[..., k]
        wrapped = np.where(component < 0, component + dims[k], component)
        wrapped = np.clip(np.where(bad, wrapped, 0), -size - 1, size + 1)
        steps += wrapped * strides[at + k]
    return steps


def _out_of_range(indexing: str, data_shape, indices: np.ndarray, at: int):
    """Which indices are out of range (per tuple for GatherND: indices' shape
    but its last dimension), and whether an indexed dimension has no element."""
    wide = indices.astype(np.int64)
    if indexing != "tuple":
        size = data_shape[at]
        return (wide < -size) | (wide >= size), size == 0
    sizes = np.array(data_shape[at : at + indices.shape[-1]], dtype=np.int64)
    bad = ((wide < -sizes) | (wide >= sizes)).any(axis=-1)
    return bad, bool((sizes == 0).any())


def output_shape(op: str, data_shape, indices_shape, axis: int | None) -> tuple[int, ...] | None:
    """The operator's shape rule alone, from shapes, without computing (or
    allocating) anything: None when the shapes have no valid output. What the
    memory guard and the model builder size things by; :func:`verdict` is the
    authority on whether the input is valid."""
    row = ROWS[op]
    return row.output_shape(row.shapes(data_shape, indices_shape), axis)
