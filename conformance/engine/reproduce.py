"""The smallest reproducer of a value mismatch: the case cut down to one
differing element, each cut confirmed on the runtime.

A corpus case is written to test a clause, not to be small: a 2x300 tensor
where two elements differ tells a runtime engineer little. A wrong output
element depends on one index value (GatherND: one index tuple) and the data
it addresses, so the case can be cut, dimension by dimension, to the slice
holding the first differing element: the index tensor shrinks to that one
index (or tuple), the data to the slice it reads from (whole along ``axis``,
and along the dimensions a GatherND tuple indexes, so every index keeps its
meaning and the case stays valid). The dimensions come from the operator's
output-shape rule (``dims`` of its row in ``conformance/tables/operators.py``).
Each cut is kept only if the runtime still returns a wrong value
(``still_differs``): a discrepancy that needs the whole input (a stride, a
thread split, a size threshold) keeps what it needs.

Cuts keep ranks and the attribute, and cut data and indices alike on the
dimensions they share (GatherElements off the axis, GatherND's batch
dimensions), so the cut case never becomes one of the shape cases the
documents disagree on (``smaller_off_axis``, unequal batch dimensions).
The operators that write (ScatterElements, ScatterND) are not cut: their
indices address the output, so no output element is one index's read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from conformance.cases.case import Case
from conformance.tables.operators import OPERATORS

# Hypothesis draws strings from the short literals of the modules loaded too
# (conformance/fuzz/strategies.py says more): this module spelt "both" when its
# steps were keyed by operator, and a seeded campaign, which loads it, draws
# the same examples only while the literal is here.
_SEEDED_LITERALS = ("both",)


@dataclass(frozen=True)
class Cut:
    """One dimension of one tensor cut to a single slice."""

    tensor: str  # "data" or "indices"
    dim: int
    at: int  # the index kept on that dimension


@dataclass(frozen=True)
class Reproducer:
    case: Case  # the cut case, confirmed on the runtime
    tried: int  # runs spent confirming cuts


def _steps(case: Case, position: tuple[int, ...]) -> list[tuple[Cut, ...]]:
    """Every cut that keeps the output element at ``position`` (an index into
    the output), grouped into steps: one per output dimension, cutting every
    input dimension whose coordinate it is (a GatherElements dimension off the
    axis is cut in data and indices at once: cutting only one would make the
    shapes differ off the axis). Data's dimensions come first, then indices'."""
    operator = OPERATORS[case.op]
    rank = case.data.ndim
    shapes = operator.shapes(case.data.shape, case.indices.shape)
    dims = operator.dims(shapes, operator.value(case.axis) % rank)
    output_dim = {source: out for out, sources in enumerate(dims) for source in sources}
    steps: dict[int, list[Cut]] = {}
    for tensor, array in zip(operator.inputs, (case.data, case.indices), strict=True):
        for dim in range(array.ndim):
            out = output_dim.get((tensor, dim))
            if out is not None:  # data's axis: kept whole, every index keeps its meaning
                steps.setdefault(out, []).append(Cut(tensor, dim, position[out]))
    return [tuple(step) for step in steps.values()]


def _apply(case: Case, cuts: tuple[Cut, ...]) -> Case:
    arrays = {"data": case.data, "indices": case.indices}
    for cut in cuts:
        array = arrays[cut.tensor]
        if array.shape[cut.dim] > 1:
            taken = np.take(array, [cut.at], axis=cut.dim)
            arrays[cut.tensor] = np.ascontiguousarray(taken)
    return replace(case, data=arrays["data"], indices=arrays["indices"])


def smallest(
    case: Case, position: tuple[int, ...], still_differs: Callable[[Case], bool]
) -> Reproducer | None:
    """The case cut down around the differing output element at ``position``.

    First the whole cut (one element) is tried, then one step at a time,
    keeping each step the runtime confirms. None when no cut reproduces (the
    discrepancy needs the whole input, or did not recur), and for an
    operator that writes: an output element there is the sum of every
    update whose index lands on it, which no cut of one dimension keeps.
    """
    if OPERATORS[case.op].writes:
        return None
    steps = _steps(case, position)
    everything = tuple(cut for step in steps for cut in step)
    tried = 1
    if still_differs(whole := _apply(case, everything)):
        return Reproducer(whole, tried)
    # A cut keeps one slice of one dimension and leaves the coordinates of
    # every other dimension as they were: the steps need no remapping.
    current, kept = case, False
    for step in steps:
        candidate = _apply(current, step)
        if candidate.data.shape == current.data.shape and (
            candidate.indices.shape == current.indices.shape
        ):
            continue  # already one slice there
        tried += 1
        if still_differs(candidate):
            current, kept = candidate, True
    if not kept:
        return None
    return Reproducer(current, tried)
