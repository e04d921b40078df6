"""The operators this project covers, one row each: every fact about an
operator that code would otherwise branch on by its name.

A row holds the operator's name and opsets (:mod:`.spec` reads their type
constraints from ``onnx.defs``), its inputs (``data``, ``indices`` and, for
the operators that write, ``updates``), its int attribute (``axis`` or
``batch_dims``: its name, default and range; ScatterND has none), its
``reduction`` values per opset (the Scatter operators' string attribute;
``tests/test_spec_model.py`` holds the inputs, defaults and reductions to
``onnx.defs``), the kind of indexing (what one index selects: ``slice``,
``element`` or ``tuple``), whether indices address the output (``writes``)
or data's values read, the shape rules its inputs must fit, and its
output-shape rule, as the input dimensions each output dimension follows,
from the inputs' shapes by name.
Everything else derives from the rows: ``spec.OPSETS``, the decisions of
every operator, the model reader's list of nodes, the oracle's output shape,
the reproducer's cuts, the strategies' index shapes, the inputs the model
builder and the backend reader name, the scoreboard's rows. (The input features
only one operator's inputs have are :mod:`.features`' to say: ``OWN``.)"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

# An input's dimension: ("data", 0), ("indices", 2).
InputDim = tuple[str, int]
INPUTS = ("data", "indices")  # the inputs of every operator that reads, in the node's order
# The inputs of an operator that writes: updates written where indices say.
WRITE_INPUTS = ("data", "indices", "updates")
# Each input's shape, by the input's name.
Shapes = Mapping[str, tuple[int, ...]]
# Per output dimension, the input dimensions whose coordinate it is, the one
# that gives its size first.
Dims = tuple[tuple[InputDim, ...], ...]
# What one index selects: a slice along the axis (Gather), one element of an
# indices-shaped output (GatherElements: indices pair with data dimension by
# dimension), or a slice at the tuple of coordinates in indices' last
# dimension (GatherND).
Indexing = Literal["slice", "element", "tuple"]


def _gather_dims(shapes: Shapes, axis: int) -> Dims:
    """Gather (004): "concatenates them in an output tensor of rank q + (r - 1)",
    "the q dimensions taking the place of the original axis": data's
    dimensions before the axis, then indices', then data's after the axis."""
    data, indices = INPUTS
    return (
        tuple(((data, d),) for d in range(axis))
        + tuple(((indices, d),) for d in range(len(shapes[indices])))
        + tuple(((data, d),) for d in range(axis + 1, len(shapes[data])))
    )


def _elements_dims(shapes: Shapes, axis: int) -> Dims:
    """GatherElements (000): "Its output shape is the same as the shape of
    indices"; off the axis an output coordinate is data's coordinate too
    (``out[i][j][k] = input[index[i][j][k]][j][k]`` for axis 0)."""
    data, indices = INPUTS
    return tuple(
        ((indices, d),) if d == axis else ((indices, d), (data, d))
        for d in range(len(shapes[indices]))
    )


def _nd_dims(shapes: Shapes, batch_dims: int) -> Dims:
    """GatherND (005): the output is indices.shape[:-1] + data.shape[b + m:]
    (decision gnd-batch-dims-kept); a batch dimension's coordinate is data's
    and indices' both, indices' last dimension (the tuple) and data's m
    indexed dimensions are no output dimension's."""
    data, indices = INPUTS
    q, r = len(shapes[indices]), len(shapes[data])
    m = shapes[indices][-1]
    return tuple(
        ((indices, d), (data, d)) if d < batch_dims else ((indices, d),) for d in range(q - 1)
    ) + tuple(((data, d),) for d in range(batch_dims + m, r))


def _data_dims(shapes: Shapes, attribute: int) -> Dims:
    """ScatterElements (007), ScatterND (008): "The output of the operation is
    produced by creating a copy of the input `data`": data's shape."""
    return tuple((("data", d),) for d in range(len(shapes["data"])))


def _any_fit(shapes: Shapes, attribute: int) -> bool:
    return True


def _paired_fit(shapes: Shapes, axis: int) -> bool:
    """GatherElements: "tensor of rank r >= 1 (same rank as input)"."""
    return len(shapes["indices"]) == len(shapes["data"])


def _nd_fit(shapes: Shapes, batch_dims: int) -> bool:
    """GatherND (005): q >= 1, equal batch dims (decision gnd-batch-dims-unequal)
    and indices.shape[-1] in [1, r - b] (gnd-last-dim-out-of-range)."""
    data, indices = shapes["data"], shapes["indices"]
    if not indices:
        return False
    return tuple(data[:batch_dims]) == tuple(indices[:batch_dims]) and (
        1 <= indices[-1] <= len(data) - batch_dims
    )


def _scatter_elements_fit(shapes: Shapes, axis: int) -> bool:
    """ScatterElements (007): indices "of rank r >= 1 (same rank as input)",
    updates "of rank r >=1 (same rank and shape as indices)", indices no
    larger than data off the axis (decision se-indices-larger-off-axis)."""
    data, indices, updates = shapes["data"], shapes["indices"], shapes["updates"]
    return (
        len(indices) == len(data)
        and tuple(updates) == tuple(indices)
        and all(i <= d for dim, (d, i) in enumerate(zip(data, indices, strict=True)) if dim != axis)
    )


def _scatter_nd_fit(shapes: Shapes, attribute: int) -> bool:
    """ScatterND (008): q >= 1, k = indices.shape[-1] <= r, updates of shape
    indices.shape[0:q-1] ++ data.shape[k:r] (snd-indices-rank-zero,
    snd-last-dim-out-of-range, snd-updates-shape)."""
    data, indices = shapes["data"], shapes["indices"]
    if not indices or indices[-1] > len(data):
        return False
    return tuple(shapes["updates"]) == tuple(indices[:-1]) + tuple(data[indices[-1] :])


# An indices shape as a model may declare it: a dim a size, a name, or unknown.
DeclaredShape = tuple[int | str | None, ...]


def _the_axis(data_rank: int, indices_shape: DeclaredShape, axis: int) -> tuple[int, ...]:
    """Gather (004) and GatherElements (000): "All index values are expected to
    be within bounds [-s, s-1] along axis of size s": every index, one dim."""
    return (axis,)


def _nd_index_dims(
    data_rank: int, indices_shape: DeclaredShape, batch_dims: int
) -> tuple[int, ...]:
    """GatherND (005): "-data_shape[i] <= indices[...,i] <= data_shape[i] - 1", the
    k-th component of indices' last dimension against data dimension b + k: one
    dim per component where m = indices.shape[-1] is known and fits data; with m
    unknown (or not fitting), any dim from b on, whose hull bounds every component."""
    m = indices_shape[-1] if indices_shape else None
    if isinstance(m, int) and 1 <= m <= data_rank - batch_dims:
        return tuple(range(batch_dims, batch_dims + m))
    return tuple(range(batch_dims, data_rank))


@dataclass(frozen=True)
class Operator:
    """One operator's facts."""

    name: str
    opsets: tuple[int, ...]
    # The output-shape rule: per output dimension, its input dimensions (Dims),
    # from the inputs' shapes and the attribute, normalised and in range.
    dims: Callable[[Shapes, int], Dims]
    indexing: Indexing
    inputs: tuple[str, ...] = INPUTS
    # The int attribute's name in the node (the ``Case``'s ``axis`` carries
    # it), None for an operator without one (ScatterND: ``axis`` stays None).
    attribute: str | None = "axis"
    attribute_default: int = 0  # what an absent attribute means
    # Whether a negative attribute counts from the back (axis) or is out of
    # range (batch_dims: decision gnd-batch-dims-out-of-range).
    wraps: bool = True
    # The shape rules beyond the attribute's range (ranks, equal dimensions).
    fits: Callable[[Shapes, int], bool] = _any_fit
    # The data dimensions whose sizes bound the index values, each index lying
    # in [-s, s-1] for one of them: (data rank, indices' declared shape, the
    # attribute, normalised). One dim bounds every index (the axis); where the
    # indexing is a tuple and indices' last dimension is m, m dims, the k-th
    # bounding the k-th component along it (GatherND: data dim b + k), which
    # :meth:`index_sizes` reads. The valid-run bounds of a model's tensors
    # (graphs/sources.py) and the drawing of a node's indices (graphs/drawing.py)
    # read it.
    index_dims: Callable[[int, DeclaredShape, int], tuple[int, ...]] = _the_axis
    # The input dims the dynamic variant keeps fixed, (input, dim) pairs (a
    # negative dim counts from the back): a dim that sets the output's rank,
    # which every exporter fixes and shape inference needs to know the rank at
    # all (GatherND's indices.shape[-1]: decision dynamic-variant-fixed-dims).
    fixed_dims: tuple[tuple[str, int], ...] = ()
    # Whether indices address the output, updates written there (the
    # Scatter operators), rather than data's values read: no output element
    # is one index's read, so nothing cuts a reproducer around one, nor
    # reads the in-range part of an out-of-range input (oracle.in_range).
    writes: bool = False
    # The ``reduction`` attribute's values per opset (an opset without the
    # attribute: none); empty for an operator that has none at any opset.
    reductions: Mapping[int, tuple[str, ...]] = field(default_factory=dict)

    def value(self, attribute: int | None) -> int:
        """The attribute's value (its default when absent), not normalised."""
        return self.attribute_default if attribute is None else attribute

    axis = value  # the name callers written for an axis use

    def index_sizes(
        self, data_shape: tuple[int, ...], indices_shape: tuple[int, ...], attribute: int | None
    ) -> tuple[int, ...] | None:
        """The sizes bounding each index, per component along indices' last
        dimension: the element at flat position p lies in [-s, s-1] for
        ``s = sizes[p % len(sizes)]`` (one size: every index; a tuple's m sizes:
        its k-th component, in C order the positions p = k mod m). None where the
        attribute is out of range or a tuple's m does not fit data."""
        rank = len(data_shape)
        value = self.value(attribute)
        shapes = {"data": tuple(data_shape), "indices": tuple(indices_shape)}
        if not rank or value not in self.attribute_range(shapes):
            return None
        dims = self.index_dims(rank, tuple(indices_shape), value % rank)
        if self.indexing == "tuple" and (not indices_shape or indices_shape[-1] != len(dims)):
            return None  # a tuple whose m does not fit data: no component has a dim
        return tuple(int(data_shape[d]) for d in dims)

    def attribute_range(self, shapes: Shapes) -> range:
        """The attribute's valid values for these shapes: an axis in [-r, r-1],
        batch_dims in [0, min(q, r) - 1]."""
        rank = len(shapes["data"])
        if self.wraps:
            return range(-rank, rank)
        return range(min(rank, len(shapes["indices"])))

    def output_shape(self, shapes: Shapes, attribute: int | None) -> tuple[int, ...] | None:
        """The shape rule alone, from shapes: None when the shapes have no
        valid output (data of rank 0, an attribute out of its range, shapes
        that do not fit)."""
        rank = len(shapes["data"])
        value = self.value(attribute)
        if rank == 0 or (self.attribute is not None and value not in self.attribute_range(shapes)):
            return None
        value %= rank
        if not self.fits(shapes, value):
            return None
        return tuple(shapes[tensor][dim] for (tensor, dim), *_ in self.dims(shapes, value))

    def shapes(self, *arrays_shapes) -> dict[str, tuple[int, ...]]:
        """The inputs' shapes (in the node's order) by the inputs' names."""
        return {name: tuple(shape) for name, shape in zip(self.inputs, arrays_shapes, strict=True)}


GATHER = Operator(
    name="Gather",
    opsets=(1, 11, 13),  # 004: "All versions: 1, 11, 13"
    dims=_gather_dims,
    indexing="slice",
)
GATHER_ELEMENTS = Operator(
    name="GatherElements",
    opsets=(11, 13),  # 000: "All versions: 11, 13"
    dims=_elements_dims,
    indexing="element",
    fits=_paired_fit,
)
# The reduction attribute's values per opset (007, 008: ScatterElements-16
# and ScatterND-16 "none (default), add, mul", -18 "none (default), add,
# mul, max, min"; 11 and 13 have no reduction attribute).
SCATTER_REDUCTIONS: dict[int, tuple[str, ...]] = {
    11: (),
    13: (),
    16: ("none", "add", "mul"),
    18: ("none", "add", "mul", "max", "min"),
}
GATHER_ND = Operator(
    name="GatherND",
    opsets=(11, 12, 13),  # 005: "All versions: 11, 12, 13"
    dims=_nd_dims,
    indexing="tuple",
    attribute="batch_dims",  # absent at 11 (decision gnd-batch-dims-opset-11): 0
    wraps=False,
    fits=_nd_fit,
    index_dims=_nd_index_dims,
    fixed_dims=(("indices", -1),),  # m sets the output's rank, q + r - m - 1 - b
)
SCATTER_ELEMENTS = Operator(
    name="ScatterElements",
    opsets=(11, 13, 16, 18),  # 007: "All versions: 11, 13, 16, 18"
    dims=_data_dims,
    indexing="element",
    inputs=WRITE_INPUTS,
    fits=_scatter_elements_fit,
    writes=True,
    reductions=SCATTER_REDUCTIONS,
)
SCATTER_ND = Operator(
    name="ScatterND",
    opsets=(11, 13, 16, 18),  # 008: "All versions: 11, 13, 16, 18"
    dims=_data_dims,
    indexing="tuple",
    inputs=WRITE_INPUTS,
    attribute=None,
    fits=_scatter_nd_fit,
    # "-data_shape[i] <= indices[...,i] <= data_shape[i] - 1" from dimension 0 (no batch dims)
    index_dims=_nd_index_dims,
    writes=True,
    reductions=SCATTER_REDUCTIONS,
)
# In the order every listing of operators keeps (the strategies shrink
# toward the first).
OPERATORS: dict[str, Operator] = {
    op.name: op for op in (GATHER, GATHER_ELEMENTS, GATHER_ND, SCATTER_ELEMENTS, SCATTER_ND)
}
