"""Where a node's inputs come from, and the values they can hold there.

A Gather's data or indices is, in the model as built, one of:

- ``initializer``: an initializer of its graph (or of an enclosing one);
- ``constant``: the output of a Constant node, or of a chain of
  constant-only nodes folded by :mod:`.constants`;
- ``input``: a graph input (of the main graph, or of a Loop/Scan body);
- ``producer``: the output of another node, computed at run time.

The first two are kept exactly. For the last two, the values the node can
receive are bounded where the graph proves it (:func:`bounds`), from the
producer's operator: ``Shape`` and ``Size`` give sizes (``[0, the largest
dim]``, a symbolic dim up to int32's max: a tensor dim never passes it),
``ArgMax``/``ArgMin``/``TopK`` indices within their axis, ``NonZero``
positions within the largest dim, ``Range`` between its start and limit,
``ConstantOfShape`` its value; casts keep what the target type holds, and
element-moving ops (Reshape, Squeeze, Unsqueeze, Concat, Slice, Gather, ...)
and the arithmetic Add, Sub, Mul, Neg, Abs, Min, Max, Clip carry bounds
through as intervals. Anything else is unprovable: the node's values are
then drawn over the dtype's whole range, and ``bounds_why`` says so.

Bounds are integer intervals and apply to integer tensors only (a float
tensor's values are never bounded here: NaN and the rest stay in its draw).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from conformance.graphs.constants import DEFAULT_DOMAINS

INT32_MAX = (1 << 31) - 1
DEPTH = 64  # producers followed back at most: a chain longer proves nothing more

# Ops whose output elements are some of their first input's elements.
MOVES = frozenset(
    {
        "Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Transpose", "Expand",
        "Tile", "Slice", "Gather", "GatherElements", "GatherND", "Split", "ReduceMax",
        "ReduceMin", "Floor", "Ceil", "Round", "Compress", "SpaceToDepth", "DepthToSpace",
        "Pad",
    }
)  # fmt: skip
# Ops whose output elements are some of their inputs' elements (any input).
UNIONS = frozenset({"Concat", "Max", "Min", "Sum", "Mean"})


@dataclass(frozen=True)
class Source:
    """Where one input of a node comes from, and the bounds of its values."""

    kind: str  # initializer | constant | input | producer
    name: str  # the tensor's name in its graph
    op: str = ""  # producer: its operator
    output: int = 0  # producer: which of its outputs
    bounds: tuple[int, int] | None = None  # inclusive; None: unbounded (the dtype's range)
    why: str = ""  # how the bounds were proven, or why none could be

    @property
    def constant(self) -> bool:
        return self.kind in ("initializer", "constant")

    def to_json(self) -> dict:
        found: dict = {"from": self.kind, "name": self.name}
        if self.kind == "producer":
            found.update(op=self.op, output=self.output)
        found["bounds"] = None if self.bounds is None else list(self.bounds)
        found["bounds_why"] = self.why
        return found

    @property
    def said(self) -> str:
        """In words, for the terminal: ``Shape output 0``, ``input state``."""
        if self.kind == "producer":
            return f"{self.op} output {self.output}"
        if self.kind == "input":
            return f"input {self.name}"
        return self.kind


def source_of(scope, name: str, dtype: str | None, dims: dict[str, int]) -> Source:
    """The source of ``name`` as seen from ``scope``, its bounds for ``dtype``."""
    owner, where = scope.owner(name)
    if where == "initializer":
        return Source("initializer", name, why="the model's constant, kept exactly")
    if scope.value(name) is not None:
        return Source("constant", name, why="the model's constant, kept exactly")
    if where == "input" or owner is None:
        return Source("input", name, why="a graph input: any value of its dtype")
    node = owner.producer(name)
    output = list(node.output).index(name)
    found = Source("producer", name, node.op_type, output)
    if not _integer(dtype):
        return _with(found, None, "not an integer tensor: its dtype's whole range")
    proven = _bounds(owner, name, dims, DEPTH)
    if proven is None:
        return _with(found, None, f"{node.op_type} output: no bound proven, the dtype's range")
    lo, hi = _fit(proven, dtype)
    if lo > hi:
        return _with(found, None, f"{node.op_type} output: bounds outside {dtype}")
    return _with(found, (lo, hi), f"{node.op_type} output: values in [{lo}, {hi}]")


def _with(source: Source, bounds, why: str) -> Source:
    return Source(source.kind, source.name, source.op, source.output, bounds, why)


_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _integer(dtype: str | None) -> bool:
    return dtype in _INTS


def _fit(bounds: tuple[int, int], dtype: str | None) -> tuple[int, int]:
    info = np.iinfo(np.dtype(dtype)) if dtype in _INTS else None
    lo, hi = bounds
    if info is None:
        return lo, hi
    return max(lo, int(info.min)), min(hi, int(info.max))


def _bounds(scope, name: str, dims: dict[str, int], depth: int) -> tuple[int, int] | None:
    """Inclusive integer bounds of ``name``'s values, where the graph proves them."""
    if depth <= 0 or not name:
        return None
    value = scope.value(name)
    if value is not None:
        if value.size == 0 or value.dtype.kind not in "iub":
            return None
        return int(value.min()), int(value.max())
    owner, where = scope.owner(name)
    if owner is None or where != "node":
        return None
    node = owner.producer(name)
    if node.domain not in DEFAULT_DOMAINS:
        return None
    op, inputs = node.op_type, list(node.input)

    def of(i: int) -> tuple[int, int] | None:
        return _bounds(owner, inputs[i], dims, depth - 1) if i < len(inputs) else None

    def attribute(key: str, default: int) -> int:
        return next((int(a.i) for a in node.attribute if a.name == key), default)

    if op == "Shape":
        return 0, _largest_dim(owner, inputs[0], dims, attribute)
    if op == "Size":  # as Shape: only the dims the model fixes are known sizes
        t = owner.type_of(inputs[0])
        if t is None or t.shape is None or not all(isinstance(d, int) for d in t.shape):
            return 0, INT32_MAX
        return 0, min(math.prod(t.shape), INT32_MAX)
    if op in ("ArgMax", "ArgMin") or (op == "TopK" and list(node.output).index(name) == 1):
        size = _axis_size(owner, inputs[0], dims, attribute("axis", -1 if op == "TopK" else 0))
        return 0, (size - 1 if size else INT32_MAX)
    if op == "NonZero":
        return 0, max(_largest_dim(owner, inputs[0], dims, None) - 1, 0)
    if op == "ConstantOfShape":
        for a in node.attribute:
            if a.name == "value":
                from onnx import numpy_helper

                array = numpy_helper.to_array(a.t)
                if array.size and array.dtype.kind in "iub":
                    return int(array.min()), int(array.max())
        return 0, 0  # its default value is a float 0, as an integer 0
    if op == "Range":
        start, limit = of(0), of(1)
        if start is None or limit is None:
            return None
        return min(start[0], limit[0]), max(start[1], limit[1])
    if op in ("Cast", "CastLike") or op in MOVES:
        return of(0)
    if op in UNIONS:
        found = [of(i) for i in range(len(inputs))]
        if not found or any(b is None for b in found):
            return None
        return min(b[0] for b in found if b), max(b[1] for b in found if b)
    if op == "Where":
        a, b = of(1), of(2)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if op == "Neg":
        a = of(0)
        return None if a is None else (-a[1], -a[0])
    if op == "Abs":
        a = of(0)
        if a is None:
            return None
        return (0 if a[0] <= 0 <= a[1] else min(abs(a[0]), abs(a[1]))), max(abs(a[0]), abs(a[1]))
    if op in ("Add", "Sub", "Mul"):
        a, b = of(0), of(1)
        if a is None or b is None:
            return None
        if op == "Add":
            return a[0] + b[0], a[1] + b[1]
        if op == "Sub":
            return a[0] - b[1], a[1] - b[0]
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)
    if op == "Clip":
        a, low, high = of(0), of(1), of(2)
        if a is None and (low is None or high is None):
            return None
        lo = max(a[0], low[0]) if a and low else (low[0] if low else a[0] if a else 0)
        hi = min(a[1], high[1]) if a and high else (high[1] if high else a[1] if a else 0)
        return lo, hi
    return None


def _largest_dim(scope, name: str, dims: dict[str, int], attribute) -> int:
    """The largest size a dim of ``name`` can have (a Shape's ``start``/``end`` kept):
    a dim the model fixes is that size; any other (symbolic, even one ``--dims``
    sets: the model runs with other sizes too) may be up to int32's max."""
    t = scope.type_of(name)
    if t is None or t.shape is None:
        return INT32_MAX
    shape = list(t.shape)
    if attribute is not None:
        rank = len(shape)
        start, end = attribute("start", 0), attribute("end", rank)
        start, end = (start + rank if start < 0 else start), (end + rank if end < 0 else end)
        shape = shape[max(start, 0) : max(min(end, rank), 0)]
    if not shape:
        return 0
    if all(isinstance(d, int) for d in shape):
        return max(int(d) for d in shape if isinstance(d, int))
    return INT32_MAX


def _axis_size(scope, name: str, dims: dict[str, int], axis: int) -> int | None:
    t = scope.type_of(name)
    if t is None or t.shape is None or not t.shape:
        return None
    rank = len(t.shape)
    if not -rank <= axis < rank:
        return None
    size = t.shape[axis]
    return size if isinstance(size, int) and size > 0 else None
