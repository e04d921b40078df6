"""The operators this project covers, one row each: every fact about an
operator that code would otherwise branch on by its name.

A row holds the operator's name and opsets (:mod:`.spec` reads their type
constraints from ``onnx.defs``), its inputs, the default of its ``axis``
attribute (``tests/test_spec_model.py`` holds both to ``onnx.defs``),
whether its indices pair with data dimension by dimension, and its
output-shape rule, as the input dimensions each output dimension follows.
Everything else derives from the rows: ``spec.OPSETS``, the decisions of
every operator, the model reader's list of nodes, the oracle's output shape,
the reproducer's cuts, the strategies' index shapes, the inputs the model
builder and the backend reader name, the scoreboard's rows. (The input features
only one operator's inputs have are :mod:`.features`' to say: ``OWN``.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# An input's dimension: ("data", 0), ("indices", 2).
InputDim = tuple[str, int]
INPUTS = ("data", "indices")  # every operator's inputs, in the node's order


def _gather_dims(data_rank: int, indices_rank: int, axis: int) -> tuple[tuple[InputDim, ...], ...]:
    """Gather (004): "concatenates them in an output tensor of rank q + (r - 1)",
    "the q dimensions taking the place of the original axis": data's
    dimensions before the axis, then indices', then data's after the axis."""
    data, indices = INPUTS
    return (
        tuple(((data, d),) for d in range(axis))
        + tuple(((indices, d),) for d in range(indices_rank))
        + tuple(((data, d),) for d in range(axis + 1, data_rank))
    )


def _elements_dims(
    data_rank: int, indices_rank: int, axis: int
) -> tuple[tuple[InputDim, ...], ...]:
    """GatherElements (000): "Its output shape is the same as the shape of
    indices"; off the axis an output coordinate is data's coordinate too
    (``out[i][j][k] = input[index[i][j][k]][j][k]`` for axis 0)."""
    data, indices = INPUTS
    return tuple(
        ((indices, d),) if d == axis else ((indices, d), (data, d)) for d in range(indices_rank)
    )


def _the_axis(data_rank: int, indices_rank: int, axis: int) -> tuple[int, ...]:
    """Gather (004) and GatherElements (000): "All index values are expected to
    be within bounds [-s, s-1] along axis of size s"."""
    return (axis,)


@dataclass(frozen=True)
class Operator:
    """One operator's facts."""

    name: str
    opsets: tuple[int, ...]
    # Per output dimension, the input dimensions whose coordinate it is, the
    # one that gives its size first: (data rank, indices rank, axis in [0, r-1]).
    dims: Callable[[int, int, int], tuple[tuple[InputDim, ...], ...]]
    # Indices have data's rank and pair with it dimension by dimension, each
    # index selecting one element (GatherElements); unpaired, indices have any
    # rank and each index selects a slice of data (Gather).
    paired: bool
    inputs: tuple[str, ...] = INPUTS
    axis_default: int = 0  # what an absent ``axis`` attribute means
    # The data dimensions whose sizes bound the index values, each index lying
    # in [-s, s-1] for one of them: (data rank, indices rank, axis in [0, r-1]).
    # The valid-run bounds of a model's tensors read it (graphs/sources.py: the
    # hull over the dims named bounds every index); an operator whose index is
    # a tuple (GatherND: its k-th component within the k-th dim after the batch
    # dims) names the dims its components may index.
    index_dims: Callable[[int, int, int], tuple[int, ...]] = _the_axis

    def axis(self, attribute: int | None) -> int:
        """The axis the attribute says (its default when absent), not normalised."""
        return self.axis_default if attribute is None else attribute

    def output_shape(
        self, data_shape, indices_shape, attribute: int | None
    ) -> tuple[int, ...] | None:
        """The shape rule alone, from shapes: None when the shapes have no
        valid output (data of rank 0, an axis outside [-r, r-1], paired
        indices of another rank)."""
        rank = len(data_shape)
        axis = self.axis(attribute)
        if rank == 0 or not -rank <= axis < rank:
            return None
        if self.paired and len(indices_shape) != rank:
            return None
        shapes = dict(zip(self.inputs, (tuple(data_shape), tuple(indices_shape)), strict=True))
        dims = self.dims(rank, len(indices_shape), axis % rank)
        return tuple(shapes[tensor][dim] for (tensor, dim), *_ in dims)


GATHER = Operator(
    name="Gather",
    opsets=(1, 11, 13),  # 004: "All versions: 1, 11, 13"
    dims=_gather_dims,
    paired=False,
)
GATHER_ELEMENTS = Operator(
    name="GatherElements",
    opsets=(11, 13),  # 000: "All versions: 11, 13"
    dims=_elements_dims,
    paired=True,
)
# In the order every listing of operators keeps (the strategies shrink
# toward the first).
OPERATORS: dict[str, Operator] = {op.name: op for op in (GATHER, GATHER_ELEMENTS)}
