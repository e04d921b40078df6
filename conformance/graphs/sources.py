"""Where a node's inputs come from, and the values they can hold there.

A Gather's data or indices is, in the model as built, one of:

- ``initializer``: an initializer of its graph (or of an enclosing one);
- ``constant``: the output of a Constant node, or of a chain of
  constant-only nodes folded by :mod:`.constants`;
- ``input``: a graph input (of the main graph, or of a Loop/Scan body);
- ``producer``: the output of another node, computed at run time.

The first two are kept exactly. For the last two, the values the node can
receive are bounded two ways, and the tighter of both is kept:

- **forward**, from the producer (:func:`_bounds`, one rule per operator in
  :data:`RULES`): a bound contains every value the producer can yield under
  the spec, wraps and overflow included. Each rule's interval is held to its
  tensor's dtype (:func:`_held`): an integer result beyond the dtype (an
  int64 ``Add`` that overflows, a narrowing ``Cast`` that wraps, a float cast
  to an integer out of its range, which the spec leaves undefined) is then any
  value of that dtype, its whole range, which a later widening ``Cast`` keeps
  as a proof (int64 -> int32 -> int64: within int32); a float tensor is
  bounded only where its values are proven finite, never by arithmetic
  (rounding). Anything else is unprovable: drawn over the dtype's whole range.
- **backward**, from the consumers (:func:`_demand`): in every valid run a
  tensor that reaches a Gather's (or GatherElements') indices through ops
  that move every element it has (:data:`CARRIES`) lies within that axis'
  range ``[-s, s-1]``, since any other value is the spec's error; and the
  elements a Gather node moves into its output are bounded as its output is
  (the node's data). Which dims bound an operator's indices is its row's
  ``index_dims`` (:mod:`conformance.tables.operators`): where an index is a
  tuple (GatherND), the k-th component along indices' last dimension lies
  within data's dim ``b + k``, so a tensor that is those indices, or is moved
  to them with its layout kept (:data:`SAME_LAYOUT`), is bounded per component
  (``Source.components``, ``component_bounds``) within the hull of them all
  (``bounds``); through a Reshape or a Concat only the hull holds. Values
  beyond stay what-if; ``bounds_why`` and ``bounded_by`` say which consumer
  bounded them.

Bounds are intervals (integers for an integer tensor) and apply to integer
tensors only (a float tensor's values are never bounded here: NaN and the
rest stay in its draw).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from onnx import helper, numpy_helper

from conformance.graphs.constants import DEFAULT_DOMAINS
from conformance.tables import dtypes
from conformance.tables.operators import OPERATORS

INT32_MAX = (1 << 31) - 1
DEPTH = 64  # producers followed back at most: a chain longer proves nothing more

Interval = tuple[Any, Any]  # inclusive; ints for an integer tensor, finite floats for a float one

# Ops whose output elements are some of their first input's elements.
MOVES = frozenset(
    {
        "Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Transpose", "Expand",
        "Tile", "Slice", "Gather", "GatherElements", "GatherND", "Split", "Compress",
        "SpaceToDepth", "DepthToSpace",
    }
)  # fmt: skip
# Ops whose output elements are some of their inputs' elements (any input).
# Sum and Mean are not: they add (and Mean divides).
UNIONS = frozenset({"Concat", "Max", "Min"})
# Ops each of whose moved inputs' elements is, whole, in some output: a bound
# every output has holds for those inputs (input positions; None: every input).
# Expand and Tile are not: an output of no element moves nothing.
CARRIES: dict[str, tuple[int, ...] | None] = {
    "Identity": (0,),
    "Reshape": (0,),
    "Squeeze": (0,),
    "Unsqueeze": (0,),
    "Flatten": (0,),
    "Transpose": (0,),
    "Split": (0,),
    "Concat": None,
}
# Of those (and a widening Cast), the ops whose output is their input, element
# for element in the same place: a bound per position along the last dim (a
# tuple's components) holds for the input as for the output.
SAME_LAYOUT = frozenset({"Identity", "Cast"})


@dataclass(frozen=True)
class Source:
    """Where one input of a node comes from, and the bounds of its values."""

    kind: str  # initializer | constant | input | producer
    name: str  # the tensor's name in its graph
    op: str = ""  # producer: its operator
    output: int = 0  # producer: which of its outputs
    bounds: tuple[int, int] | None = None  # inclusive; None: unbounded (the dtype's range)
    why: str = ""  # how the bounds were proven, or why none could be
    bounded_by: dict | None = None  # the consumer whose valid range bounds it (backward)
    # per position k along the last dim (an index tuple's components), each within
    # ``bounds``: where a consumer bounds them apart; None: ``bounds`` for all
    components: tuple[tuple[int, int], ...] | None = None

    @property
    def constant(self) -> bool:
        return self.kind in ("initializer", "constant")

    def to_json(self) -> dict:
        found: dict = {"from": self.kind, "name": self.name}
        if self.kind == "producer":
            found.update(op=self.op, output=self.output)
        found["bounds"] = None if self.bounds is None else list(self.bounds)
        if self.components is not None:
            found["component_bounds"] = [list(c) for c in self.components]
        found["bounds_why"] = self.why
        if self.bounded_by is not None:
            found["bounded_by"] = dict(self.bounded_by)
        return found

    @property
    def said(self) -> str:
        """In words, for the terminal: ``Shape output 0``, ``input state``."""
        if self.kind == "producer":
            return f"{self.op} output {self.output}"
        if self.kind == "input":
            return f"input {self.name}"
        return self.kind


def node_sources(
    scope, op: str, data: str, indices: str, data_dtype: str, indices_dtype: str
) -> dict[str, Source]:
    """The sources of a Gather-like node's data and indices, each bounded
    forward by its producer and backward by its consumers: the data also by
    what the node's output may hold (the elements it moves are in its output),
    the indices by the other consumers (the node's own axis is the drawing's)."""
    graph = _graph(scope)
    key = (op, data, indices)
    if key not in graph.node_demands:
        # alike nodes (same op and inputs) give the same output: a bound on any holds for all
        nodes = graph.alike.get(key, [])
        data_demand = _tightest(
            [_demand(scope, data, DEPTH, nodes)]
            + [_demand(scope, out, DEPTH, ()) for n in nodes for out in n.output[:1] if out]
        )
        graph.node_demands[key] = (data_demand, _demand(scope, indices, DEPTH, nodes))
    data_demand, indices_demand = graph.node_demands[key]
    return {
        # a data tensor's positions are not an index tuple's: its hull alone
        "data": _bounded(source_of(scope, data, data_dtype), _hull_only(data_demand), data_dtype),
        "indices": _bounded(
            source_of(scope, indices, indices_dtype), indices_demand, indices_dtype
        ),
    }


def source_of(scope, name: str, dtype: str | None) -> Source:
    """The source of ``name`` as seen from ``scope``, its forward bounds for ``dtype``."""
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
    proven = _held(_bounds(owner, name, DEPTH), dtype)
    if proven is None or proven == _whole(dtype):
        return _with(found, None, f"{node.op_type} output: no bound proven, the dtype's range")
    return _with(found, proven, f"{node.op_type} output: values in [{proven[0]}, {proven[1]}]")


def _with(
    source: Source, bounds, why: str, bounded_by: dict | None = None, components=None
) -> Source:
    return Source(
        source.kind, source.name, source.op, source.output, bounds, why, bounded_by, components
    )


@dataclass(frozen=True)
class Demand:
    """A bound that holds in every valid run, and the consumer that sets it;
    where a consumer bounds each position along the last dim apart (an index
    tuple's components), those bounds too, each within ``bounds``."""

    bounds: Interval
    consumer: dict  # node, graph-free: {"node", "op", "input", "size"} (and "sizes")
    components: tuple[Interval, ...] | None = None

    @property
    def said(self) -> str:
        c = self.consumer
        if "sizes" in c:
            return (
                f"it reaches {c['op']} {c['node']}'s {c['input']}, its k-th component along "
                f"the last dim within the k-th dim it indexes, of sizes {c['sizes']}"
            )
        return f"it reaches {c['op']} {c['node']}'s {c['input']}, along a dim of {c['size']}"


def _hull_only(demand: Demand | None) -> Demand | None:
    if demand is None or demand.components is None:
        return demand
    return Demand(demand.bounds, demand.consumer)


def _bounded(source: Source, demand: Demand | None, dtype: str | None) -> Source:
    """``source`` with a valid-run bound laid over its forward one, when tighter
    (and its components' bounds, where the demand has them)."""
    if demand is None or source.constant or not _integer(dtype):
        return source
    lo, hi = demand.bounds
    forward = source.bounds if source.bounds is not None else _whole(dtype)
    both = (max(lo, forward[0]), min(hi, forward[1]))
    if both[0] > both[1]:  # no valid run reaches it
        return source
    components = None
    if demand.components is not None:
        each = tuple((max(a, both[0]), min(b, both[1])) for a, b in demand.components)
        if any(a > b for a, b in each):
            return source
        components = None if all(c == both for c in each) else each
    if both == forward and components is None:  # nothing narrower
        return source
    what = f"{source.op} output" if source.kind == "producer" else "a graph input"
    within = f"within [{both[0]}, {both[1]}]"
    if components is not None:
        listed = ", ".join(f"[{a}, {b}]" for a, b in components)
        within += f", its components along the last dim within {listed}"
    why = f"{what}, in every valid run {within}: {demand.said}"
    return _with(source, both, why, demand.consumer, components)


def _meet(found: list[Demand], lo, hi, narrowest: Demand) -> Demand | None:
    """``lo, hi`` (what every demand of ``found`` says at once) with the
    components they bound laid over it (those of one length: a tensor has one
    last dim); None when no value satisfies them all."""
    if lo > hi:
        return None
    parts = [d.components for d in found if d.components is not None]
    if not parts:
        return Demand((lo, hi), narrowest.consumer)
    width = len(parts[0])
    parts = [p for p in parts if len(p) == width]
    each = tuple(
        (max([lo, *(p[k][0] for p in parts)]), min([hi, *(p[k][1] for p in parts)]))
        for k in range(width)
    )
    if any(a > b for a, b in each):
        return None
    named = min(
        (d for d in found if d.components is not None),
        key=lambda d: sum(b - a for a, b in d.components or ()),
    )
    if narrowest.bounds[1] - narrowest.bounds[0] < named.bounds[1] - named.bounds[0]:
        named = narrowest
    return Demand((lo, hi), named.consumer, each)


def _tightest(demands: list[Demand | None]) -> Demand | None:
    """What every demand says at once (each holds in every valid run), named by
    the narrowest; None when none says anything, or nothing satisfies them all."""
    found = [d for d in demands if d is not None]
    if not found:
        return None
    lo, hi = max(d.bounds[0] for d in found), min(d.bounds[1] for d in found)
    narrowest = min(found, key=lambda d: d.bounds[1] - d.bounds[0])
    return _meet(found, lo, hi, narrowest)


class _Demands:
    """The bounds a tensor's consumers set, each in every valid run, ordered so
    that what all but a few of them say at once is read without a pass over
    all (a token input may feed thousands of Gathers)."""

    def __init__(self, found: list[tuple[Any, Demand]]):
        self.by_low = sorted(found, key=lambda e: -e[1].bounds[0])
        self.by_high = sorted(found, key=lambda e: e[1].bounds[1])
        self.by_width = sorted(found, key=lambda e: e[1].bounds[1] - e[1].bounds[0])
        # the few that bound a tuple's components apart, read whole
        self.apart = [e for e in found if e[1].components is not None]

    def without(self, skip) -> Demand | None:
        """What every consumer but those in ``skip`` says at once, named by the
        narrowest; None when none says anything, or nothing satisfies them all."""
        left_out = {id(n) for n in skip}
        kept = [
            next((d for n, d in entries if id(n) not in left_out), None)
            for entries in (self.by_low, self.by_high, self.by_width)
        ]
        low, high, narrowest = kept
        if low is None or high is None or narrowest is None:
            return None
        apart = [d for n, d in self.apart if id(n) not in left_out]
        return _meet(apart, low.bounds[0], high.bounds[1], narrowest)


class _Graph:
    """What sources remember of one graph: who consumes each value (only the
    graph's own nodes: a subgraph's, an If branch or a Loop body, need not run
    in a valid run), each node's place, and the bounds found so far."""

    def __init__(self, scope):
        self.consumers: dict[str, list[tuple[Any, int]]] = {}
        self.places: dict[int, int] = {}
        # the Gather-like nodes by (op, data, indices): alike nodes compute the same
        self.alike: dict[tuple[str, str, str], list] = {}
        self.node_demands: dict[tuple[str, str, str], tuple] = {}
        for place, node in enumerate(scope.nodes):
            self.places[id(node)] = place
            if node.op_type in OPERATORS and node.domain in DEFAULT_DOMAINS:
                key = (node.op_type, *_inputs(node))
                self.alike.setdefault(key, []).append(node)
            for position, name in enumerate(node.input):
                if name:
                    self.consumers.setdefault(name, []).append((node, position))
        self.demands: dict[str, _Demands] = {}
        self.bounds: dict[str, Interval | None] = {}


def _inputs(node) -> tuple[str, str]:
    names = [*node.input, "", ""]
    return names[0], names[1]


_GRAPHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _graph(scope) -> _Graph:
    found = _GRAPHS.get(scope)
    if found is None:
        found = _GRAPHS[scope] = _Graph(scope)
    return found


def _demand(scope, name: str, depth: int, skip) -> Demand | None:
    """What every valid run keeps ``name`` within, from its consumers (those in
    ``skip`` left out)."""
    if depth <= 0 or not name:
        return None
    graph = _graph(scope)
    demands = graph.demands.get(name)
    if demands is None:
        found = [
            (node, _consumer_demand(scope, node, position, depth))
            for node, position in graph.consumers.get(name, ())
            if node.domain in DEFAULT_DOMAINS
        ]
        demands = graph.demands[name] = _Demands([(n, d) for n, d in found if d is not None])
    return demands.without(skip)


def _consumer_demand(scope, node, position: int, depth: int) -> Demand | None:
    row = OPERATORS.get(node.op_type)
    if row is not None:
        return _index_demand(scope, node, row, position)
    if node.op_type in CARRIES:
        moved = CARRIES[node.op_type]
        if moved is not None and position not in moved:
            return None
        return _outputs_demand(scope, node, depth)
    if node.op_type == "Cast" and _widens(scope, node):
        return _outputs_demand(scope, node, depth)
    return None


def _outputs_demand(scope, node, depth: int) -> Demand | None:
    """A bound every output of ``node`` has (a Split's parts), as their hull;
    an op of :data:`SAME_LAYOUT` keeps its output's components' bounds too."""
    outputs = [o for o in node.output if o]
    found = [_demand(scope, o, depth - 1, ()) for o in outputs]
    if not found or any(d is None for d in found):
        return None
    known = [d for d in found if d is not None]
    if len(known) == 1 and node.op_type in SAME_LAYOUT:
        return known[0]
    lo, hi = min(d.bounds[0] for d in known), max(d.bounds[1] for d in known)
    return Demand((lo, hi), max(known, key=lambda d: d.bounds[1] - d.bounds[0]).consumer)


def _widens(scope, node) -> bool:
    """A Cast from an integer type to one that holds its every value: values kept."""
    source = _dtype(scope, node.input[0]) if node.input else None
    target = _cast_target(scope, node)
    if not _integer(source) or not _integer(target):
        return False
    a, b = _whole(source), _whole(target)
    return b[0] <= a[0] and a[1] <= b[1]


def _index_demand(scope, node, row, position: int) -> Demand | None:
    """A Gather-like consumer: its indices within [-s, s-1] for the dims its
    row names (their hull); where they are an index tuple's, one dim per
    component along indices' last dim, each component within its own; a dim
    the model does not fix, up to int32's max."""
    if position >= len(row.inputs) or row.inputs[position] != "indices":
        return None  # its data: only the elements it moves are bounded (node_sources)
    t = scope.type_of(node.input[0])
    data = scope.value(node.input[0])
    shape = tuple(data.shape) if data is not None else (t.shape if t is not None else None)
    if shape is None or not shape:
        return None
    value = scope.value(node.input[position])
    indices_type = scope.type_of(node.input[position])
    indices_shape = (
        tuple(value.shape)
        if value is not None
        else (tuple(indices_type.shape) if indices_type and indices_type.shape else ())
    )
    attribute = next((int(a.i) for a in node.attribute if a.name == row.attribute), None)
    axis = row.value(attribute)
    if axis not in row.attribute_range({"data": shape, "indices": indices_shape}):
        return None  # an axis, or batch_dims, out of its range: the node's error, not a bound
    dims = row.index_dims(len(shape), indices_shape, axis % len(shape))
    sizes = [shape[d] if isinstance(shape[d], int) else INT32_MAX for d in dims]
    if not sizes or any(s == 0 for s in sizes):
        return None  # an axis of 0: no index is valid, and an empty tensor bounds nothing
    size = max(sizes)
    label = node.name or f"#{_graph(scope).places[id(node)]}"
    consumer = {"node": label, "op": node.op_type, "input": "indices", "size": size}
    apart = len(sizes) > 1 and indices_shape and indices_shape[-1] == len(sizes)
    if not apart or len(set(sizes)) == 1:
        return Demand((-size, size - 1), consumer)
    consumer["sizes"] = sizes
    return Demand((-size, size - 1), consumer, tuple((-s, s - 1) for s in sizes))


_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _integer(dtype: str | None) -> bool:
    return dtype in _INTS


def _whole(dtype: str | None) -> tuple[int, int]:
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def _held(found: Interval | None, dtype: str | None) -> Interval | None:
    """An interval held to its tensor's dtype: an integer tensor's is integers
    within the dtype, and beyond it (a wrap, an overflow, an undefined cast) any
    value of the dtype; a float tensor's stays as found (its rules bound only
    finite values); an unknown dtype's as found too (its rules move values)."""
    if found is None:
        return None
    if _integer(dtype):
        lo, hi = _whole(dtype)
        if not lo - 1 < found[0] <= found[1] < hi + 1:
            return lo, hi
        return math.ceil(found[0]), math.floor(found[1])
    if dtype == "bool":
        return 0, 1
    return found


def _dtype(scope, name: str) -> str | None:
    value = scope.value(name)
    if value is not None:
        return dtypes.name_of(value)
    t = scope.type_of(name)
    return None if t is None else t.dtype


def _of_constant(value: np.ndarray) -> Interval | None:
    """A constant's values as an interval: None for an empty one, a float one
    with NaN or an infinity, or one not a number."""
    if value.size == 0:
        return None
    if value.dtype.kind in "iub":
        return int(value.min()), int(value.max())
    if dtypes.name_of(value) not in ("float16", "bfloat16", "float32", "float64"):
        return None
    wide = value.astype(np.float64)
    if not np.isfinite(wide).all():
        return None
    return float(wide.min()), float(wide.max())


def _bounds(scope, name: str, depth: int) -> Interval | None:
    """An interval holding every value ``name`` can hold, where the graph proves one."""
    if depth <= 0 or not name:
        return None
    value = scope.value(name)
    if value is not None:
        return _of_constant(value)
    owner, where = scope.owner(name)
    if owner is None or where != "node":
        return None
    known = _graph(owner).bounds
    if name not in known:  # once a value: a graph's diamonds would go exponential
        node = owner.producer(name)
        rule = RULES.get(node.op_type)
        found = None
        if node.domain in DEFAULT_DOMAINS and rule is not None:
            found = _held(rule(_At(owner, node, name, depth)), _dtype(owner, name))
        known[name] = found
    return known[name]


@dataclass(frozen=True)
class _At:
    """A producer as its rule sees it: its node, the output asked, its inputs' bounds."""

    scope: Any
    node: Any
    name: str  # the output asked for
    depth: int

    @property
    def inputs(self) -> list[str]:
        return list(self.node.input)

    @property
    def output(self) -> int:
        return list(self.node.output).index(self.name)

    def of(self, i: int) -> Interval | None:
        given = i < len(self.inputs) and self.inputs[i]
        return _bounds(self.scope, self.inputs[i], self.depth - 1) if given else None

    def given(self, i: int) -> bool:
        return i < len(self.inputs) and bool(self.inputs[i])

    def attribute(self, key: str, default: Any) -> Any:
        found = next((a for a in self.node.attribute if a.name == key), None)
        if found is None:
            return default
        value = helper.get_attribute_value(found)
        return value.decode() if isinstance(value, bytes) else value

    @property
    def integer(self) -> bool:
        """The output is of an integer type: arithmetic on it is exact until it
        wraps (:func:`_held`); on a float, rounding, so unbounded here."""
        return _integer(_dtype(self.scope, self.name))

    def whole_if_integer(self, i: int) -> Interval | None:
        """Input ``i``'s bounds, its dtype's whole range when none is proven."""
        found = self.of(i)
        if found is not None:
            return found
        dtype = _dtype(self.scope, self.inputs[i]) if self.given(i) else None
        return _whole(dtype) if _integer(dtype) else None


def _hull(*found: Interval | None) -> Interval | None:
    if not found or any(b is None for b in found):
        return None
    known = [b for b in found if b is not None]
    return min(b[0] for b in known), max(b[1] for b in known)


def _shape(at: _At) -> Interval:
    return 0, _largest_dim(at.scope, at.inputs[0], at.attribute)


def _size(at: _At) -> Interval:  # as Shape: only the dims the model fixes are known sizes
    t = at.scope.type_of(at.inputs[0])
    if t is None or t.shape is None or not all(isinstance(d, int) for d in t.shape):
        return 0, INT32_MAX
    return 0, min(math.prod(t.shape), INT32_MAX)


def _arg(at: _At) -> Interval | None:
    if at.node.op_type == "TopK" and at.output == 0:
        return at.of(0)  # its values are the input's
    axis = at.attribute("axis", -1 if at.node.op_type == "TopK" else 0)
    size = _axis_size(at.scope, at.inputs[0], axis)
    return 0, (size - 1 if size else INT32_MAX)


def _nonzero(at: _At) -> Interval:
    return 0, max(_largest_dim(at.scope, at.inputs[0], None) - 1, 0)


def _constant_of_shape(at: _At) -> Interval | None:
    """Its value, whatever its type (a float one is bounded only when finite);
    without one, float 0."""
    found = next((a for a in at.node.attribute if a.name == "value"), None)
    if found is None:
        return 0.0, 0.0
    return _of_constant(numpy_helper.to_array(found.t))


def _range(at: _At) -> Interval | None:
    """Between start and limit; on floats the last step may round past the limit."""
    if not at.integer:
        return None
    start, limit = at.of(0), at.of(1)
    return None if start is None or limit is None else _hull(start, limit)


def _cast_target(scope, node) -> str | None:
    if node.op_type == "CastLike":
        return _dtype(scope, node.input[1]) if len(node.input) > 1 else None
    to = next((int(a.i) for a in node.attribute if a.name == "to"), None)
    row = dtypes.BY_PROTO.get(to) if to is not None else None
    return row.name if row is not None else None


def _cast(at: _At) -> Interval | None:
    """To an integer type: truncated toward zero when every value fits; else
    (an integer narrowed, which wraps; a float out of range or NaN, which the
    spec leaves undefined) any value of the target type. To a float type: the
    ends rounded to it, one step outward, when finite. To bool: 0 and 1."""
    target = _cast_target(at.scope, at.node)
    found = at.of(0)
    if target == "bool":
        return 0, 1
    if _integer(target):
        lo, hi = _whole(target)
        if found is not None and lo - 1 < found[0] and found[1] < hi + 1:
            return math.trunc(found[0]), math.trunc(found[1])
        return lo, hi
    if target not in ("float16", "bfloat16", "float32", "float64") or found is None:
        return None
    kind = dtypes.by_name(target).numpy
    with np.errstate(over="ignore"):  # an end beyond the type is infinite: no bound
        ends = [np.asarray(float(x), np.float64).astype(kind) for x in found]
    lo_end = np.nextafter(ends[0], np.asarray(-np.inf, kind))
    hi_end = np.nextafter(ends[1], np.asarray(np.inf, kind))
    lo_f, hi_f = float(lo_end), float(hi_end)
    return (lo_f, hi_f) if math.isfinite(lo_f) and math.isfinite(hi_f) else None


def _moves(at: _At) -> Interval | None:
    return at.of(0)


def _rounds(function: Callable[[float], float]) -> Callable[[_At], Interval | None]:
    """Floor, Ceil, Round: monotone, so the ends rounded bound the values."""

    def rule(at: _At) -> Interval | None:
        found = at.of(0)
        return None if found is None else (function(found[0]), function(found[1]))

    return rule


def _reduce(at: _At) -> Interval | None:
    """ReduceMax/ReduceMin: the input's elements, or over an empty set the
    identity (the dtype's lowest, or highest, value) when the input may be empty."""
    found = at.of(0)
    t = at.scope.type_of(at.inputs[0])
    fixed = t is not None and t.shape is not None and all(isinstance(d, int) for d in t.shape)
    if found is None or (fixed and 0 not in t.shape):
        return found
    dtype = _dtype(at.scope, at.inputs[0])
    if not _integer(dtype):
        return None
    lo, hi = _whole(dtype)
    return (lo, found[1]) if at.node.op_type == "ReduceMax" else (found[0], hi)


def _pad(at: _At) -> Interval | None:
    """Its input's elements and, in constant mode, its constant value: input 2
    (opset 11 on; absent: 0) or the ``value`` attribute (before)."""
    found = at.of(0)
    if at.attribute("mode", "constant") != "constant":
        return found
    if at.given(2):
        value = at.whole_if_integer(2)
    else:
        said = float(at.attribute("value", 0.0))
        value = (said, said) if math.isfinite(said) else None
    return _hull(found, value)


def _unions(at: _At) -> Interval | None:
    return _hull(*(at.of(i) for i in range(len(at.inputs))))


def _where(at: _At) -> Interval | None:
    return _hull(at.of(1), at.of(2))


def _arithmetic(combine: Callable[[list[Interval]], Interval]) -> Callable[[_At], Interval | None]:
    """An integer op on intervals, exactly (a result beyond the dtype wraps:
    :func:`_held`); on a float, None."""

    def rule(at: _At) -> Interval | None:
        if not at.integer:
            return None
        found = [at.of(i) for i in range(len(at.inputs))]
        if not found or any(b is None for b in found):
            return None
        return combine([b for b in found if b is not None])

    return rule


def _add(found: list[Interval]) -> Interval:
    return sum(b[0] for b in found), sum(b[1] for b in found)


def _sub(found: list[Interval]) -> Interval:
    a, b = found[0], found[1]
    return a[0] - b[1], a[1] - b[0]


def _mul(found: list[Interval]) -> Interval:
    corners = [x * y for x in found[0] for y in found[1]]
    return min(corners), max(corners)


def _neg(found: list[Interval]) -> Interval:
    return -found[0][1], -found[0][0]


def _abs(found: list[Interval]) -> Interval:
    lo, hi = found[0]
    return (0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))


def _clip(at: _At) -> Interval | None:
    """min(max(x, low), high), monotone in each: the ends from the ends (a
    low above high gives high, as the spec's reference computes)."""
    if not at.integer:
        return None
    x = at.whole_if_integer(0)
    low = at.whole_if_integer(1) if at.given(1) else (-math.inf, -math.inf)
    high = at.whole_if_integer(2) if at.given(2) else (math.inf, math.inf)
    if x is None or low is None or high is None:
        return None
    return min(max(x[0], low[0]), high[0]), min(max(x[1], low[1]), high[1])


# One rule per producer: what it can yield, from its inputs' bounds (None: unprovable).
RULES: dict[str, Callable[[_At], Interval | None]] = {
    "Shape": _shape,
    "Size": _size,
    "ArgMax": _arg,
    "ArgMin": _arg,
    "TopK": _arg,
    "NonZero": _nonzero,
    "ConstantOfShape": _constant_of_shape,
    "Range": _range,
    "Cast": _cast,
    "CastLike": _cast,
    **dict.fromkeys(MOVES, _moves),
    "Floor": _rounds(math.floor),
    "Ceil": _rounds(math.ceil),
    "Round": _rounds(lambda x: float(np.round(x))),
    "ReduceMax": _reduce,
    "ReduceMin": _reduce,
    "Pad": _pad,
    **dict.fromkeys(UNIONS, _unions),
    "Where": _where,
    "Add": _arithmetic(_add),
    "Sum": _arithmetic(_add),
    "Sub": _arithmetic(_sub),
    "Mul": _arithmetic(_mul),
    "Neg": _arithmetic(_neg),
    "Abs": _arithmetic(_abs),
    "Clip": _clip,
}


def _largest_dim(scope, name: str, attribute) -> int:
    """The largest size a dim of ``name`` can have (a Shape's ``start``/``end`` kept):
    a dim the model fixes is that size; any other (symbolic, even one ``--dims``
    sets: the model runs with other sizes too) may be up to int32's max."""
    t = scope.type_of(name)
    if t is None or t.shape is None:
        return INT32_MAX
    shape = list(t.shape)
    if attribute is not None:
        rank = len(shape)
        start, end = int(attribute("start", 0)), int(attribute("end", rank))
        start, end = (start + rank if start < 0 else start), (end + rank if end < 0 else end)
        shape = shape[max(start, 0) : max(min(end, rank), 0)]
    if not shape:
        return 0
    if all(isinstance(d, int) for d in shape):
        return max(int(d) for d in shape if isinstance(d, int))
    return INT32_MAX


def _axis_size(scope, name: str, axis: int) -> int | None:
    t = scope.type_of(name)
    if t is None or t.shape is None or not t.shape:
        return None
    rank = len(t.shape)
    if not -rank <= axis < rank:
        return None
    size = t.shape[axis]
    return size if isinstance(size, int) and size > 0 else None
