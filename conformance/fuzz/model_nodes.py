"""``conformance fuzz --model``: examples that stay within a model's node signatures.

A signature is what a node case group of :mod:`conformance.graphs.drawing`
fixes: op, opset, axis (GatherND: batch_dims), data and index dtypes, and
the shapes. The strategy draws a signature (weighted by how many nodes share
it), then shapes around the model's (each dim within two of the model's, the
rank and the axis kept, within the element cap; GatherND's batch dimensions
shared and its tuple's length kept), data over the dtype's whole range with its
edge values (:func:`conformance.fuzz.strategies.tensors`), indices in range
nine times in ten and out of range the tenth, and a model variant: a fuzz
budget goes to what the model uses, not to every dtype and rank.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hypothesis import strategies as st

from conformance.fuzz import strategies
from conformance.fuzz.strategies import Example
from conformance.tables.operators import OPERATORS
from conformance.tables.spec import op_spec

NEAR = 2  # how far a drawn dim may stray from the model's
WEIGHT_CAP = 20  # a signature shared by more nodes is drawn no more often than this many


@dataclass(frozen=True)
class NodeSignature:
    op: str
    opset: int
    axis: int | None
    dtype: str
    indices_dtype: str
    data_shape: tuple[int, ...]
    indices_shape: tuple[int, ...]
    nodes: int = 1  # how many nodes share it

    @classmethod
    def of(cls, group) -> NodeSignature:
        """The signature of a node case group (conformance.graphs.drawing.NodeGroup)."""
        return cls(
            group.op,
            group.opset,
            group.axis,
            group.data_dtype,
            group.indices_dtype,
            group.data_shape,
            group.indices_shape,
            len(group.sites),
        )

    def to_json(self) -> dict:
        return {
            "op": self.op,
            "opset": self.opset,
            "axis": self.axis,
            "dtype": self.dtype,
            "indices_dtype": self.indices_dtype,
            "data_shape": list(self.data_shape),
            "indices_shape": list(self.indices_shape),
            "nodes": self.nodes,
        }


def fuzzable(signature: NodeSignature) -> bool:
    """Whether the strategy can draw around it: an operator and opset the
    strategies draw, data of rank >= 1 whose axis (batch_dims) is in its range,
    an index dtype the opset allows; GatherND's shapes fit its rules (batch
    dimensions equal, tuples of 1 to r - b) and batch_dims is absent at 11."""
    if signature.opset not in strategies.OPSETS.get(signature.op, ()):
        return False
    row = OPERATORS[signature.op]
    spec = op_spec(signature.op, signature.opset)
    shapes = row.shapes(signature.data_shape, signature.indices_shape)
    axis = row.value(signature.axis)
    return (
        len(signature.data_shape) >= 1
        and axis in row.attribute_range(shapes)
        and signature.indices_dtype in spec.index_dtypes
        and (row.indexing != "tuple" or row.fits(shapes, axis))
        and (spec.takes_attribute or signature.axis is None)
    )


def _near(draw, shape: tuple[int, ...], low: int, cap: int, keep: int | None = None) -> tuple:
    drawn = [draw(st.integers(max(low, d - NEAR), max(low, d + NEAR))) for d in shape]
    while drawn and math.prod(drawn) > cap:  # the largest dim halves until it fits
        largest = max(range(len(drawn)), key=lambda i: drawn[i] if i != keep else -1)
        if drawn[largest] <= low:
            break
        drawn[largest] = max(low, drawn[largest] // 2)
    return tuple(drawn)


@st.composite
def near(draw, signature: NodeSignature, max_elements: int) -> Example:
    """One example around one node signature."""
    rank = len(signature.data_shape)
    axis = (0 if signature.axis is None else signature.axis) % rank
    data_shape = _near(draw, signature.data_shape, 1, max_elements)
    if OPERATORS[signature.op].indexing == "tuple":
        indices = draw(_near_tuples(signature, data_shape, axis, max_elements))
        data = draw(strategies.tensors(signature.dtype, data_shape))
        variant = draw(strategies.variants())
        return Example(signature.op, signature.opset, signature.axis, data, indices, variant)
    size = data_shape[axis]
    if OPERATORS[signature.op].indexing == "element":
        index_shape = draw(strategies.ge_indices_shapes(data_shape, axis, "equal", max_elements))
    else:
        index_shape = _near(draw, signature.indices_shape, 0, max_elements)
    invalid = math.prod(index_shape) > 0 and draw(st.integers(0, 9)) == 9
    if invalid:
        indices = draw(strategies.indices_out_of_range(signature.indices_dtype, index_shape, size))
    else:
        indices = draw(strategies.indices_in_range(signature.indices_dtype, index_shape, size))
    data = draw(strategies.tensors(signature.dtype, data_shape))
    variant = draw(strategies.variants())
    return Example(signature.op, signature.opset, signature.axis, data, indices, variant)


@st.composite
def _near_tuples(draw, signature: NodeSignature, data_shape: tuple, batch_dims: int, cap: int):
    """GatherND indices around the model's: data's batch dimensions, the
    others within two of the model's, the tuple's length kept; in range nine
    times in ten, a component out of range the tenth."""
    length = signature.indices_shape[-1]
    per_tuple = math.prod(data_shape[:batch_dims]) * length
    own = _near(draw, signature.indices_shape[batch_dims:-1], 0, max(1, cap // per_tuple))
    index_shape = (*data_shape[:batch_dims], *own, length)
    sizes = data_shape[batch_dims : batch_dims + length]
    dtype = signature.indices_dtype
    if math.prod(index_shape) > 0 and draw(st.integers(0, 9)) == 9:
        return draw(strategies.tuples_out_of_range(dtype, index_shape, sizes))
    return draw(strategies.tuples_in_range(dtype, index_shape, sizes))


def examples(signatures: list[NodeSignature], max_elements: int) -> st.SearchStrategy[Example]:
    """Examples around the signatures, each drawn as often as nodes share it (capped)."""
    weighted = [s for s in signatures for _ in range(min(s.nodes, WEIGHT_CAP))]
    return st.sampled_from(weighted).flatmap(lambda s: near(s, max_elements))
