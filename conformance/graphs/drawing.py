"""Node cases: the nodes of graph files turned into ordinary cases, deduplicated.

For each node judged:

- symbolic dims take their sizes from ``dims`` (``--dims``, then the shapes
  of ``--inputs``), else :data:`DEFAULT_DIM`; a dim or rank that shape
  inference left unknown makes the node *not judged*, with the reason;
- constant data and indices are the model's own, exactly;
- indices computed at run time are drawn over the whole range ``[-s, s-1]``
  of the node's axis (``s`` its size): ``-s``, ``s-1``, ``-1`` and ``0`` in
  every node's "bounds" cases, then :data:`DEFAULT_DRAWS` (``--draws``)
  tensors drawn uniformly in that range, then two out-of-range cases (``s``
  and ``-s-1`` at the first position) whose expectation is the spec's error;
  where an index is a tuple (GatherND), each component along indices' last
  dim over its own dim's range (the operator's ``index_sizes``), the same way;
- data computed at run time is drawn as the case files' ``random``
  generator draws it (:func:`conformance.cases.values.build`: values over
  the dtype's whole range, floats as random bit patterns, so NaN payloads,
  infinities, -0.0 and subnormals occur), seeded from the node's signature;
- the memory guard applies to each node: a node whose case would declare
  more than the limit is not judged.

Nodes with the same op, opset, normalised axis, dtypes, shapes, constness
and constant values share their cases; each case keeps every node it stands
for (:attr:`conformance.cases.case.Case.nodes`).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from conformance import oracle
from conformance.cases.case import Case, Source, concrete_id
from conformance.cases.check import STRING_ELEMENT_BYTES
from conformance.cases.values import MAX_ELEMENTS, ValueProblem, build
from conformance.graphs import sources
from conformance.graphs.reading import GraphFile, Site, TensorType
from conformance.tables import dtypes
from conformance.tables.operators import OPERATORS

DEFAULT_DIM = 3  # a symbolic dim's size when neither --dims nor --inputs gives one
DEFAULT_DRAWS = 3  # random index tensors per node computed at run time (--draws)
TAG = "model-node"


@dataclass
class NodeGroup:
    """Nodes that are one case: their shared key, where they are, their cases."""

    key: tuple
    sites: list[Site]
    op: str
    opset: int
    axis: int | None
    data_shape: tuple[int, ...]
    indices_shape: tuple[int, ...]
    data_dtype: str
    indices_dtype: str
    data: np.ndarray | None  # the model's constant, else None (drawn)
    indices: np.ndarray | None
    seed: int = 0
    variant: str | None = None  # as built (sources.as_built_variant)
    data_bounds: tuple[int, int] | None = None  # the values the node can receive (sources)
    indices_bounds: tuple[int, int] | None = None
    # an index tuple's components' bounds, each within indices_bounds (sources)
    indices_components: tuple[tuple[int, int], ...] | None = None
    cases: list[Case] = field(default_factory=list)
    as_built: set[str] = field(default_factory=set)  # ids of the cases of receivable values
    # per case id: how the case's tensors came to be (saving writes them back);
    # capture adds "__captured__": the set of captured inputs it has seen
    made: dict[str, Any] = field(default_factory=dict)

    @property
    def nodes(self) -> tuple[tuple[str, str, str], ...]:
        return tuple((s.model, s.graph, s.node) for s in self.sites)


ID_PART = 48  # characters of a node's name in a case id (graph paths run to hundreds)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "node"


def base_of(site: Site) -> str:
    """``<model stem>-<node name>``: the node's name (not its graph path), its end
    kept when long (where exporters put what tells nodes apart)."""
    name = _slug(site.node)
    return f"{_slug(Path(site.model).stem)[:ID_PART]}-{name[-ID_PART:].strip('-') or 'node'}"


def concrete(
    kind: str, t: TensorType, value: np.ndarray | None, dims: dict[str, int]
) -> tuple[tuple[int, ...] | None, str | None]:
    """The node's shape for one input, or the reason it is unknown."""
    if value is not None:
        return tuple(value.shape), None
    if t.shape is None:
        return None, f"the rank of {kind} is unknown (shape inference gave none)"
    shape = []
    for i, dim in enumerate(t.shape):
        if dim is None:
            return None, f"dim {i} of {kind} is unknown (no size, no name)"
        shape.append(dims.get(dim, DEFAULT_DIM) if isinstance(dim, str) else dim)
    return tuple(shape), None


def _dtype_of(kind: str, t: TensorType, value: np.ndarray | None) -> tuple[str | None, str | None]:
    if value is not None:
        name = dtypes.name_of(value)
        return (
            (name, None)
            if name in dtypes.NAMES
            else (None, f"{kind} dtype {name} is not one of ours")
        )
    if t.dtype is None:
        what = "unknown" if not t.elem_type else f"element type {t.elem_type}, not one of ours"
        return None, f"the {kind} element type is {what}"
    return t.dtype, None


def declared_bytes(op: str, data_shape, indices_shape, axis, dtype: str, indices_dtype: str) -> int:
    """What a case of these shapes declares, as the memory guard counts it
    (:func:`conformance.cases.check.declared_bytes`), before anything is drawn."""
    itemsize = STRING_ELEMENT_BYTES if dtype == "string" else dtypes.by_name(dtype).numpy.itemsize
    out = oracle.output_shape(op, data_shape, indices_shape, axis)
    elements = 0 if out is None else math.prod(out)
    index_size = dtypes.by_name(indices_dtype).numpy.itemsize
    return (math.prod(data_shape) + elements) * itemsize + math.prod(indices_shape) * index_size


def as_built_variant(data_constant: bool, indices_constant: bool, declared) -> str:
    """The model variant (:data:`conformance.engine.models.VARIANTS`) that stores
    a node's inputs as the model does: a constant as an initializer, a value
    computed or fed at run time as a graph input, with symbolic dims
    (``dynamic``) unless the model fixes every dim of both (``static``)."""
    if data_constant and indices_constant:
        return "both_initializers"
    if data_constant:
        return "data_initializer"
    if indices_constant:
        return "indices_initializer"
    fixed = all(shape is not None and all(isinstance(d, int) for d in shape) for shape in declared)
    return "static" if fixed else "dynamic"


def _digest(array: np.ndarray | None) -> str:
    if array is None:
        return ""
    hashed = hashlib.blake2b(digest_size=12)
    hashed.update(f"{array.dtype}{array.shape}".encode())
    hashed.update(
        "\x00".join(map(str, array.ravel())).encode() if array.dtype == object else array.tobytes()
    )
    return hashed.hexdigest()


def group_nodes(files: list[GraphFile], dims: dict[str, int], case_memory: int) -> list[NodeGroup]:
    """The nodes of every file, each judged one put in its group (the not
    judged get their reason in ``Site.not_judged``)."""
    groups: dict[tuple, NodeGroup] = {}
    for found in files:
        for site in found.sites:
            if site.not_judged is not None:
                continue
            reason = _place(site, dims, case_memory, groups)
            if reason:
                site.not_judged = reason
    return list(groups.values())


def _place(site: Site, dims: dict[str, int], case_memory: int, groups: dict) -> str | None:
    scope, opset = site.scope, site.opset
    assert scope is not None and opset is not None  # reading sets both on a judged site
    data = scope.value(site.data_name)
    indices = scope.value(site.indices_name)
    site.data_constant, site.indices_constant = data is not None, indices is not None
    if data is not None:
        site.data = TensorType(dtypes.name_of(data), tuple(data.shape), site.data.elem_type)
    if indices is not None:
        site.indices = TensorType(
            dtypes.name_of(indices), tuple(indices.shape), site.indices.elem_type
        )
    declared = (site.data.shape, site.indices.shape)
    dtype, why = _dtype_of("data", site.data, data)
    if dtype is None:  # (each of these gives a value or why not)
        return why
    indices_dtype, why = _dtype_of("indices", site.indices, indices)
    if indices_dtype is None:
        return why
    data_shape, why = concrete("data", site.data, data, dims)
    if data_shape is None:
        return why
    indices_shape, why = concrete("indices", site.indices, indices, dims)
    if indices_shape is None:
        return why
    site.data = TensorType(dtype, data_shape, site.data.elem_type)  # as judged
    site.indices = TensorType(indices_dtype, indices_shape, site.indices.elem_type)
    rank = len(data_shape)
    axis = site.axis
    normalised = axis % rank if axis is not None and rank and -rank <= axis < rank else axis
    size = declared_bytes(site.op, data_shape, indices_shape, axis, dtype, indices_dtype)
    if size > case_memory:
        return (
            f"memory guard: its case declares {size:,} bytes of inputs and output, over the "
            f"limit of {case_memory:,} (--case-memory)"
        )
    drawn = math.prod(data_shape) if data is None else 0
    if drawn > MAX_ELEMENTS:
        return (
            f"its data would be drawn with {drawn:,} elements, over the limit of {MAX_ELEMENTS:,}"
        )
    site.sources = sources.node_sources(
        scope, site.op, site.data_name, site.indices_name, dtype, indices_dtype
    )
    site.variant = as_built_variant(data is not None, indices is not None, declared)
    key = (
        site.op,
        site.opset,
        normalised if axis is not None else None,
        dtype,
        indices_dtype,
        data_shape,
        indices_shape,
        data is not None,
        indices is not None,
        _digest(data),
        _digest(indices),
        site.variant,
        site.sources["data"].bounds,
        site.sources["indices"].bounds,
        site.sources["indices"].components,
    )
    group = groups.get(key)
    if group is None:
        seed = int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=7).digest(), "big")
        group = groups[key] = NodeGroup(
            key,
            [],
            site.op,
            opset,
            axis,
            data_shape,
            indices_shape,
            dtype,
            indices_dtype,
            data,
            indices,
            seed,
            variant=site.variant,
            data_bounds=site.sources["data"].bounds,
            indices_bounds=site.sources["indices"].bounds,
            indices_components=site.sources["indices"].components,
        )
    group.sites.append(site)
    return None


Span = tuple[int, int]  # inclusive


def index_plan(
    sizes: Sequence[int], count: int, draws: int, receivable: Sequence[Span] | None = None
) -> list[tuple[str, dict]]:
    """How a run-time indices tensor of ``count`` elements is filled for an
    axis of size ``s`` (``sizes``: ``(s,)``): (name, recipe) per case. Bounds cases take ``-s``,
    ``s-1``, ``-1``, ``0`` in turn (as many cases as a tensor that small
    needs), then ``draws`` uniform draws, then the two out-of-range cases.
    ``receivable``: the indices the node can receive (its source's bounds:
    the producer's, within its consumers' in a valid run), when narrower than
    the axis' range: its ends and ``draws`` draws within it come first
    (``built``, ``built-draw<k>``).

    ``sizes`` holds one size per component of an index tuple (the element at
    flat position p is component ``p % len(sizes)``, :meth:`Operator.index_sizes`),
    and ``receivable`` one span per component: each component is filled from
    its own values, and the out-of-range cases step out of the first's."""
    spans = None if receivable is None else tuple(receivable)
    if count == 0:
        return [("empty", {"fill": []})]
    tuples = max(count // len(sizes), 1)
    plan: list[tuple[str, dict]] = []
    valid = all(s > 0 for s in sizes)
    if spans is not None and valid:
        plan.append(("built", _fill([list(dict.fromkeys(span)) for span in spans])))
        for k in range(draws):
            plan.append((f"built-draw{k + 1}", {"draw": k, "spans": [list(x) for x in spans]}))
    if valid:
        each = [list(dict.fromkeys([-s, s - 1, -1, 0])) for s in sizes]
        cases = math.ceil(max(len(b) for b in each) / tuples)
        for k in range(cases):
            parts = [(b[k * tuples : (k + 1) * tuples] or [0]) if cases > 1 else b for b in each]
            plan.append((f"bounds{k + 1}" if cases > 1 else "bounds", _fill(parts)))
        for k in range(draws):
            plan.append((f"draw{k + 1}", {"draw": k, "spans": [[-s, s - 1] for s in sizes]}))
    base = next((r for n, r in plan if n.startswith("bounds")), _fill([[0]] * len(sizes)))
    plan.append(("oob-high", {**base, "first": sizes[0]}))
    plan.append(("oob-low", {**base, "first": -sizes[0] - 1}))
    return plan


def _fill(parts: list[list[int]]) -> dict:
    """A fill recipe: one component's values (a list of ints), or per component."""
    return {"fill": parts[0] if len(parts) == 1 else parts}


def run_time_indices(
    recipe: dict, shape: tuple[int, ...], sizes: Sequence[int], dtype: str, seed: int
) -> np.ndarray:
    """The indices tensor a recipe of :func:`index_plan` makes (``sizes``: as
    the plan was made for, one per component of an index tuple)."""
    count = math.prod(shape)
    width = len(sizes)
    if "draw" in recipe:
        rng = np.random.default_rng([seed, recipe["draw"]])
        spans = recipe.get("spans") or [[-s, s - 1] for s in sizes]
        if len(spans) == 1:  # one range for every element (as drawn before tuples)
            low, high = spans[0]
            flat = rng.integers(low, high, size=count, dtype=np.int64, endpoint=True)
        else:
            lows = np.resize(np.array([a for a, _ in spans], np.int64), count)
            highs = np.resize(np.array([b for _, b in spans], np.int64), count)
            flat = rng.integers(lows, highs, dtype=np.int64, endpoint=True)
    else:
        fill = recipe["fill"] or [0]
        if fill and isinstance(fill[0], list):  # per component: tuple j takes each's j-th
            tuples = count // width if width else 0
            columns = [np.resize(np.array(part or [0], np.int64), tuples) for part in fill]
            flat = np.stack(columns, axis=-1).reshape(-1) if tuples else np.zeros(0, np.int64)
        else:
            flat = np.resize(np.array(fill, dtype=np.int64), count)
    if "first" in recipe and count:
        flat = flat.copy()
        flat[0] = recipe["first"]
    numpy = dtypes.by_name(dtype).numpy
    if dtypes.by_name(dtype).kind not in ("int", "uint"):
        return flat.astype(np.float64).astype(numpy).reshape(shape)
    info = np.iinfo(numpy)
    return np.clip(flat, info.min, info.max).astype(numpy).reshape(shape)


def drawn_data(
    shape: tuple[int, ...], dtype: str, seed: int, bounds: tuple[int, int] | None = None
) -> np.ndarray:
    """Data as the case files' ``random`` generator draws it: the dtype's full
    range (bit patterns), or uniform integers within ``bounds`` (inclusive)."""
    spec: dict = {"shape": list(shape), "seed": seed}
    if bounds is not None:
        spec.update(low=bounds[0], high=bounds[1])
    return build({"random": spec}, dtypes.by_name(dtype))


def receivable_indices(group: NodeGroup) -> tuple[Span, ...] | None:
    """The indices a node can receive as built, per component (one span where
    one range bounds every index), when its source's bounds (its producer's,
    within its other consumers' in every valid run; per component where they
    bound an index tuple's apart) prove them narrower than the valid ranges
    ``[-s, s-1]`` of the dims they index (None: those whole ranges)."""
    sizes = _index_sizes(group)
    if group.indices_bounds is None or sizes is None:
        return None
    parts = group.indices_components
    if parts is None or len(parts) != len(sizes):
        parts = (group.indices_bounds,) * len(sizes)
    found = tuple((max(a, -s), min(b, s - 1)) for (a, b), s in zip(parts, sizes, strict=True))
    if any(lo > hi for lo, hi in found) or found == tuple((-s, s - 1) for s in sizes):
        return None
    return found


def _narrower(bounds: tuple[int, int] | None, dtype: str) -> bool:
    if bounds is None or dtypes.by_name(dtype).kind not in ("int", "uint"):
        return False
    info = np.iinfo(dtypes.by_name(dtype).numpy)
    return (bounds[0], bounds[1]) != (int(info.min), int(info.max))


def _within(indices: np.ndarray, spans: Sequence[Span]) -> bool:
    """Every index within its component's span (one span: every index)."""
    if indices.size == 0:
        return True
    values = indices.astype(np.float64) if indices.dtype.kind == "f" else indices
    columns = values.reshape(-1, len(spans))
    return all(
        bool((columns[:, k] >= lo).all() and (columns[:, k] <= hi).all())
        for k, (lo, hi) in enumerate(spans)
    )


def make_cases(groups: list[NodeGroup], draws: int = DEFAULT_DRAWS) -> list[Case]:
    """Every group's cases (also kept on the group and its sites' ``cases``).

    A case is *as built* (``group.as_built``) when its values are ones the node
    can receive in the model as built: constants exactly, run-time data within
    its bounds (:mod:`.sources`: what its producer yields, within what its
    consumers accept in every valid run; the dtype's range when nothing is
    proven), indices within both their bounds and the axis' range. The others
    are the *what if* cases: data beyond its bounds (``-wide``), indices
    beyond theirs, and the out-of-range indices the spec
    forbids."""
    taken: set[str] = set()
    every: list[Case] = []
    for group in groups:
        base = base_of(group.sites[0])
        data_seed = group.seed
        narrow = group.data is None and _narrower(group.data_bounds, group.data_dtype)
        datas: list[tuple[str, Any, bool]] = []  # (suffix, recipe, as built)
        if group.data is not None:
            datas.append(("", "model", True))
        elif narrow:
            assert group.data_bounds is not None
            lo, hi = group.data_bounds
            datas.append(("", {"random": data_seed, "low": lo, "high": hi}, True))
            datas.append(("-wide", {"random": data_seed}, False))
        else:
            datas.append(("", {"random": data_seed}, True))
        try:
            tensors = [
                group.data
                if recipe == "model"
                else drawn_data(
                    group.data_shape,
                    group.data_dtype,
                    data_seed,
                    (recipe["low"], recipe["high"]) if "low" in recipe else None,
                )
                for _, recipe, _ in datas
            ]
        except ValueProblem as error:
            for site in group.sites:
                site.not_judged = f"its data cannot be drawn: {error}"
            continue
        sizes = _index_sizes(group)
        receivable = receivable_indices(group)
        span = receivable or (tuple((-s, s - 1) for s in sizes) if sizes is not None else None)
        plan: Sequence[tuple[str, dict | None]]
        if group.indices is not None:
            plan = [("const", None)]
        elif sizes is None:  # the axis is outside the rank: the oracle says which error
            plan = [("bounds", {"fill": [0]})]
        else:
            plan = index_plan(sizes, math.prod(group.indices_shape), draws, receivable)
        for (suffix, data_recipe, data_built), data in zip(datas, tensors, strict=True):
            assert data is not None  # the model's constant, or drawn
            for name, recipe in plan:
                if recipe is None:
                    assert group.indices is not None  # the "const" plan: the model's constant
                    indices = group.indices
                    built = True
                else:
                    indices = run_time_indices(
                        recipe, group.indices_shape, sizes or (0,), group.indices_dtype, group.seed
                    )
                    built = span is not None and _within(indices, span)
                if not data_built and not built:
                    continue  # beyond the bounds twice over: one what-if at a time
                case = node_case(group, f"{base}-{name}{suffix}", data, indices, name, taken)
                group.cases.append(case)
                group.made[case.id] = {"data": data_recipe, "indices": recipe or "model"}
                if built and data_built:
                    group.as_built.add(case.id)
                every.append(case)
                if not data_built:
                    break  # the wide data once, beside the first receivable indices
        for site in group.sites:
            site.cases = [c.id for c in group.cases]
            site.as_built_cases = [c.id for c in group.cases if c.id in group.as_built]
    return every


def _index_sizes(group: NodeGroup) -> tuple[int, ...] | None:
    """The sizes of the dims the node's indices index: its axis's, or an index
    tuple's one per component (None: the attribute or the shapes name none)."""
    return OPERATORS[group.op].index_sizes(group.data_shape, group.indices_shape, group.axis)


def node_case(
    group: NodeGroup, base: str, data: np.ndarray, indices: np.ndarray, how: str, taken: set[str]
) -> Case:
    """One case of a group, its base id made unique among ``taken``."""
    base_id, n = base, 1
    while base_id in taken:
        n += 1
        base_id = f"{base}-{n}"
    taken.add(base_id)
    first = group.sites[0]
    said = {"const": "the model's constant indices", "empty": "empty indices"}.get(
        how,
        "indices drawn over the axis' range"
        if not how.startswith(("oob", "captured"))
        else ("out-of-range indices" if how.startswith("oob") else "indices captured from a run"),
    )
    description, spec = texts(group, said)
    return Case(
        group.op,
        group.opset,
        group.axis,
        data,
        indices,
        id=concrete_id(base_id, group.opset, group.data_dtype, group.indices_dtype),
        base_id=base_id,
        description=description,
        spec=spec,
        tags=(TAG,),
        source=Source(Path(first.model), 0),
        nodes=group.nodes,
    )


def texts(group: NodeGroup, said: str, shown: Callable[[str], str] = str) -> tuple[str, str]:
    """A case's description and spec: the nodes it stands for, each model's
    path as ``shown`` (as given; ``--save-cases``: relative to the saved file)."""
    first = group.sites[0]
    more = f" and {len(group.sites) - 1} more node(s)" if len(group.sites) > 1 else ""
    where = ", ".join(f"{shown(s.model)}: {s.label}" for s in group.sites[:20])
    return (
        f"{group.op}-{group.opset} node {first.label} of {shown(first.model)}{more}; {said}",
        f"{group.op}-{group.opset} as {where} uses it",
    )
