"""Input features: the properties of an input that decide which code path a
runtime takes (negative or out-of-range indices, empty tensors, scalar
indices...). Every result record carries them (``features``), fuzz
signatures are built from them, and baseline entries match on them.

They are computed from the input itself (anything with ``op``, ``axis``,
``data`` and ``indices``: a case or a fuzz example), never from how it was
written or drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from conformance.tables.operators import GATHER, GATHER_ELEMENTS, OPERATORS, Operator

# name -> what it means; the order is the order in slugs and reports.
FEATURES: dict[str, str] = {
    "negative": "some index value is negative",
    "out_of_range": "some index value is outside [-s, s-1]",
    "beyond_int32": "some index value does not fit in int32",
    "empty_indices": "indices have no elements",
    "empty_data": "data has no elements",
    "zero_size_axis": "the gathered axis of data has size 0 (GatherND: a dimension its "
    "index tuples index)",
    "scalar_indices": "indices are a scalar (rank 0)",
    "smaller_off_axis": "GatherElements indices smaller than data off the axis",
    "axis_size_differs": "GatherElements indices differ from data in size on the axis",
    "block_copy": "Gather: each index selects more than one element (the dimensions "
    "after the axis hold more than one)",
}
_INT32 = (-(2**31), 2**31 - 1)


# The features only one operator's inputs have, each from the shapes and the
# axis (in [0, r-1]; paired indices have data's rank).
def _block_copy(data_shape, indices_shape, axis: int) -> bool:
    return math.prod(data_shape[axis + 1 :]) > 1


def _smaller_off_axis(data_shape, indices_shape, axis: int) -> bool:
    return any(indices_shape[d] < data_shape[d] for d in range(len(data_shape)) if d != axis)


def _axis_size_differs(data_shape, indices_shape, axis: int) -> bool:
    return indices_shape[axis] != data_shape[axis]


OWN: dict[str, tuple[Operator, Callable[..., bool]]] = {
    "block_copy": (GATHER, _block_copy),
    "smaller_off_axis": (GATHER_ELEMENTS, _smaller_off_axis),
    "axis_size_differs": (GATHER_ELEMENTS, _axis_size_differs),
}


def features(example) -> tuple[str, ...]:
    """The features of an input, in :data:`FEATURES` order."""
    data, indices = example.data, example.indices
    found: set[str] = set()
    operator = OPERATORS[example.op]
    rank = data.ndim
    axis = operator.value(example.axis)
    axis_ok = rank > 0 and -rank <= axis < rank
    sizes = operator.index_sizes(data.shape, indices.shape, axis)  # the axis; a tuple's dims
    if indices.size and indices.dtype.kind in "iu":
        low, high = int(indices.min()), int(indices.max())
        found.update(
            name
            for name, present in (
                ("negative", low < 0),
                ("beyond_int32", low < _INT32[0] or high > _INT32[1]),
            )
            if present
        )
        if sizes is not None and _out_of_range(indices, sizes, low, high):
            found.add("out_of_range")
    if indices.size == 0:
        found.add("empty_indices")
    if data.size == 0:
        found.add("empty_data")
    if sizes is not None and 0 in sizes:
        found.add("zero_size_axis")
    if indices.ndim == 0:
        found.add("scalar_indices")
    if axis_ok and (indices.ndim == rank or operator.indexing == "slice"):
        axis %= rank
        found.update(
            name
            for name, (owner, present) in OWN.items()
            if owner is operator and present(data.shape, indices.shape, axis)
        )
    return tuple(name for name in FEATURES if name in found)


def _out_of_range(indices, sizes: tuple[int, ...], low: int, high: int) -> bool:
    """Some index outside [-s, s-1] of its dimension (GatherND: each component
    of a tuple against the dimension it indexes, where m fits data)."""
    if len(sizes) == 1:
        size = sizes[0]
        return low < -size or high > size - 1
    columns = indices.reshape(-1, len(sizes)).astype("int64")
    return any(
        int(columns[:, i].min()) < -size or int(columns[:, i].max()) > size - 1
        for i, size in enumerate(sizes)
    )
