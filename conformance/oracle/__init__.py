"""The oracle: a strict NumPy reference implementation of Gather, GatherElements,
GatherND, ScatterElements and ScatterND.

One module per operator, pure functions, every decision tied to an id of
:mod:`conformance.tables.decisions`. Public entry points:

- :func:`evaluate` returns the output array (an operator that writes: the
  set of admissible outputs, :class:`~conformance.oracle.admissible.Admissible`)
  or raises :class:`SpecViolation`.
- :func:`verdict` never raises for a spec violation; it returns a
  :class:`Verdict` that also lists the disputed decisions the case falls under,
  and judges an output (:meth:`Defined.difference`): bit for bit against the
  one output, or against the admissible set where the spec leaves it open.
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

from conformance.oracle import (
    admissible,
    compare,
    gather,
    gather_elements,
    gather_nd,
    scatter_elements,
    scatter_nd,
)
from conformance.oracle.admissible import Admissible
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
    module.OPERATOR.name: module.evaluate
    for module in (gather, gather_elements, gather_nd, scatter_elements, scatter_nd)
}


@dataclass(frozen=True)
class Defined:
    """A :data:`Verdict` on a valid input: the output the spec defines.

    ``disputed`` lists the ids of disputed decisions the input falls under.
    """

    output: np.ndarray  # where the spec leaves the output open: one member of the set
    violation: None = None
    disputed: tuple[str, ...] = ()
    # The admissible outputs, where the spec leaves the output open (an
    # operator that writes); None where ``output`` is the only one.
    admissible: Admissible | None = None

    @property
    def valid(self) -> Literal[True]:
        return True

    def difference(self, actual: np.ndarray) -> compare.Difference | None:
        """None when ``actual`` is the output, or a member of the admissible
        set, bit for bit; else what differs first."""
        if self.admissible is None:
            return compare.difference(self.output, actual)
        return admissible.difference(self.admissible, actual)

    def expected_at(self, position: tuple[int, ...]) -> str:
        """What the spec admits at one element, as a record shows it: the
        value, or ``one of ...`` where several are admissible."""
        if self.admissible is None:
            return compare.format_element(self.output[position])
        return admissible.told(self.admissible, position)


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


def _evaluated(
    op: str,
    opset: int,
    data: np.ndarray,
    indices: np.ndarray,
    axis: int | None,
    updates: np.ndarray | None,
    reduction: str | None,
) -> tuple[np.ndarray | Admissible, tuple[str, ...]]:
    """The operator's module on the inputs its row names, in the node's
    order, then its attributes: the int one where the row has one, the
    reduction where the row has one at any opset."""
    require_arrays(data, indices)
    evaluate_op = _operator(op, opset)
    row = ROWS[op]
    given = {"data": data, "indices": indices, "updates": updates}
    missing = [name for name in row.inputs if given[name] is None]
    extra = [name for name, array in given.items() if array is not None and name not in row.inputs]
    if missing or extra:
        raise TypeError(
            f"{op}'s inputs are {', '.join(row.inputs)}"
            + (f"; {', '.join(missing)} not given" if missing else "")
            + (f"; {', '.join(extra)} is not one" if extra else "")
        )
    if row.attribute is None and axis is not None:
        raise TypeError(f"{op} has no int attribute; axis must be None, not {axis!r}")
    if not row.reductions and reduction is not None:
        raise TypeError(f"{op} has no reduction attribute; reduction must be None")
    arguments: list = [given[name] for name in row.inputs]
    if row.attribute is not None:
        arguments.append(axis)
    if row.reductions:
        arguments.append(reduction)
    return evaluate_op(opset, *arguments)


def evaluate(
    op: str,
    opset: int,
    data: np.ndarray,
    indices: np.ndarray,
    axis: int | None = None,
    *,
    updates: np.ndarray | None = None,
    reduction: str | None = None,
) -> np.ndarray | Admissible:
    """The output the spec defines for this input, or SpecViolation: an
    array for an operator that reads, the set of admissible outputs
    (:class:`Admissible`) for one that writes.

    ``axis=None`` means the attribute is absent (its default, 0, applies; the
    oracle never flattens); ``updates`` is the third input of an operator
    that has one, ``reduction`` its string attribute (None: absent).
    """
    output, _ = _evaluated(op, opset, data, indices, axis, updates, reduction)
    return output


def verdict(
    op: str,
    opset: int,
    data: np.ndarray,
    indices: np.ndarray,
    axis: int | None = None,
    *,
    updates: np.ndarray | None = None,
    reduction: str | None = None,
) -> Verdict:
    """Like :func:`evaluate`, but a spec violation is returned, not raised."""
    try:
        output, disputed = _evaluated(op, opset, data, indices, axis, updates, reduction)
    except SpecViolation as violation:
        return Violated(None, violation)
    if isinstance(output, Admissible):
        return Defined(output.output, None, disputed, output)
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


# The offsets of an out-of-range input's reads come from the operator applied to
# a table of every data element's offset, int64 the size of data: beyond this
# many elements (an embedding table of 23 M: 187 MB a record, judged once per
# record of `conformance model`) they are not computed, and the explanation that
# needs them (out-of-range-reads-unchecked-offset) is not tried.
UNCHECKED_OFFSETS_MAX = 1 << 22


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
    row = ROWS[op]
    if row.writes:  # indices address the output: no output position is one index's read
        return None
    found = verdict(op, opset, data, indices, axis)
    if found.valid or found.violation.clause != "index-out-of-range":
        return None
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
        assert isinstance(output, np.ndarray)  # an operator that reads: one output
        if data.size > UNCHECKED_OFFSETS_MAX:  # too large a table: no offsets
            return InRange(output, np.array(outside, dtype=bool))
        # Index 0's offsets, and each out-of-range index's own step from them.
        table = np.arange(data.size, dtype=np.int64).reshape(data.shape)
        base = evaluate(op, opset, table, safe, axis)
    except SpecViolation:  # another clause, hidden behind the first
        return None
    assert isinstance(base, np.ndarray)
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


def output_shape(
    op: str, data_shape, indices_shape, axis: int | None, updates_shape=None
) -> tuple[int, ...] | None:
    """The operator's shape rule alone, from shapes, without computing (or
    allocating) anything: None when the shapes have no valid output.
    ``updates_shape``: the third input's, for an operator that has one. What
    the memory guard and the model builder size things by; :func:`verdict`
    is the authority on whether the input is valid."""
    row = ROWS[op]
    shapes = (data_shape, indices_shape) if updates_shape is None else (
        data_shape, indices_shape, updates_shape)  # fmt: skip
    return row.output_shape(row.shapes(*shapes), axis)
