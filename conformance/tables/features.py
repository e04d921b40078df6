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

from conformance.tables.operators import GATHER, GATHER_ELEMENTS, GATHER_ND, OPERATORS, Operator

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
    "batched": "GatherND: batch_dims > 0 (data and indices share their leading dimensions)",
    "tuple_slices": "GatherND: index tuples shorter than r - b (indices.shape[-1] < r - b): "
    "each selects a slice of data's trailing dimensions, not one element",
}
_INT32 = (-(2**31), 2**31 - 1)


# The features only one operator's inputs have, each from the shapes and the
# attribute (normalised), for shapes the operator's shape rules accept (an
# attribute in range, paired indices of data's rank, GatherND's batch dims
# equal and its tuples no longer than r - b).
def _block_copy(data_shape, indices_shape, axis: int) -> bool:
    return math.prod(data_shape[axis + 1 :]) > 1


def _smaller_off_axis(data_shape, indices_shape, axis: int) -> bool:
    return any(indices_shape[d] < data_shape[d] for d in range(len(data_shape)) if d != axis)


def _axis_size_differs(data_shape, indices_shape, axis: int) -> bool:
    return indices_shape[axis] != data_shape[axis]


def _batched(data_shape, indices_shape, batch_dims: int) -> bool:
    return batch_dims > 0


def _tuple_slices(data_shape, indices_shape, batch_dims: int) -> bool:
    return indices_shape[-1] < len(data_shape) - batch_dims


OWN: dict[str, tuple[Operator, Callable[..., bool]]] = {
    "block_copy": (GATHER, _block_copy),
    "smaller_off_axis": (GATHER_ELEMENTS, _smaller_off_axis),
    "axis_size_differs": (GATHER_ELEMENTS, _axis_size_differs),
    "batched": (GATHER_ND, _batched),
    "tuple_slices": (GATHER_ND, _tuple_slices),
}


def features(example) -> tuple[str, ...]:
    """The features of an input, in :data:`FEATURES` order."""
    data, indices = example.data, example.indices
    found: set[str] = set()
    operator = OPERATORS[example.op]
    rank = data.ndim
    axis = operator.value(example.axis)
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
    # The operator's own features, of inputs whose shapes its rules accept (every
    # input of its row: ScatterElements' and ScatterND's updates too).
    given = {"data": data, "indices": indices, "updates": getattr(example, "updates", None)}
    shapes = {name: tuple(given[name].shape) for name in operator.inputs if given[name] is not None}
    if len(shapes) == len(operator.inputs) and operator.output_shape(shapes, axis) is not None:
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
