"""One-node ONNX models for a case, in five variants.

The variants exercise different paths of a runtime: shapes known at load time
(``static``), symbolic shapes resolved at run time (``dynamic``: every dim a
name but those that set the output's rank, the operator row's ``fixed_dims``,
as every exporter writes them), and constant
folding or initializer handling when an input is baked into the model (the
three ``*_initializer(s)`` variants).

An operator with a third input (``updates``: ScatterElements, ScatterND)
keeps the five variants as storage choices of its three inputs: ``updates``
is fed in every variant but ``both_initializers``, where every input is
baked (the whole node constant: the constant-folding path).
``indices_initializer`` is a KV-cache write (constant positions, cache and
new values fed), ``data_initializer`` a one-hot or segment build (a
constant buffer, values fed). The other mixes (updates baked alone, or with
one of the two) take no path these do not: a runtime folds a node only when
every input is constant, and binds a fed input the same whichever it is
(docs/oracle.md, "ScatterElements and ScatterND").
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from conformance import oracle
from conformance.engine.worker import array_digest
from conformance.tables import dtypes
from conformance.tables.operators import INPUTS, OPERATORS
from conformance.tables.variants import VARIANTS as VARIANTS  # the names: a table

# The inputs each variant bakes; an input the operator lacks is left out.
_INITIALIZERS = {
    "static": (),
    "dynamic": (),
    "indices_initializer": ("indices",),
    "data_initializer": ("data",),
    "both_initializers": ("data", "indices", "updates"),  # every input
}

# onnx 1.23 writes IR version 14 by default, which ONNX Runtime 1.31 and older
# refuse ("Unsupported model IR version: 14, max supported IR version: 13"); 1.32
# reads it, but the oldest version pyproject allows (1.20) does not. IR 10
# (onnx 1.16) is read by every runtime version this project supports and has
# everything these models need.
IR_VERSION = 10

OUTPUT = "output"


def _value_info(name: str, array_dtype: dtypes.DType, shape, symbolic: bool, fixed=()):
    """A graph input's or output's type: its dims as numbers, or (``symbolic``) as
    names but for the dims in ``fixed`` (the operator's ``fixed_dims``)."""
    if shape is None:
        return helper.make_tensor_value_info(name, array_dtype.proto, None)
    kept = {d % len(shape) for d in fixed} if shape else set()
    dims = [f"{name}_d{i}" if symbolic and i not in kept else size for i, size in enumerate(shape)]
    return helper.make_tensor_value_info(name, array_dtype.proto, dims)


def _arrays(op: str, data, indices, updates) -> dict[str, np.ndarray]:
    """The node's inputs by name, in its row's order (``updates``: the third
    input of an operator that writes, None for the others)."""
    given = {"data": data, "indices": indices, "updates": updates}
    return {name: given[name] for name in OPERATORS[op].inputs}


def _parts(
    prefix: str,
    op: str,
    data,
    indices,
    axis: int | None,
    variant: str,
    left_out: tuple = (),
    data_name: str | None = None,
    updates=None,
    reduction: str | None = None,
):
    """One case's node, graph inputs, output and initializers, every name
    starting with ``prefix`` ("" for a one-node model; a pack gives each case
    its own, so no two cases' names can collide); ``left_out``: inputs baked
    but not made initializers here (:func:`serialized` appends them);
    ``data_name``: the data is that tensor of the pack, shared by its cases
    (:func:`build_pack`), neither a graph input nor an initializer of this case."""
    if variant not in _INITIALIZERS:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    baked = _INITIALIZERS[variant]
    symbolic = variant == "dynamic"
    arrays = _arrays(op, data, indices, updates)
    types = {name: dtypes.of_array(array) for name, array in arrays.items()}
    row = OPERATORS[op]  # ``axis`` holds the operator's attribute (GatherND: batch_dims)
    fixed = {name: tuple(d for tensor, d in row.fixed_dims if tensor == name) for name in arrays}
    attributes: dict[str, Any] = {}
    if axis is not None and row.attribute is not None:
        attributes[row.attribute] = int(axis)
    if reduction is not None:
        attributes["reduction"] = reduction
    names = [prefix + name for name in arrays]
    if data_name is not None:
        names[list(arrays).index("data")] = data_name
        left_out = (*left_out, "data")
    node = helper.make_node(op, names, [prefix + OUTPUT], **attributes)
    shape = oracle.output_shape(
        op, data.shape, indices.shape, axis, None if updates is None else updates.shape
    )
    inputs = [
        _value_info(prefix + name, types[name], array.shape, symbolic, fixed[name])
        for name, array in arrays.items()
        if name not in baked and name not in left_out
    ]
    output = _value_info(prefix + OUTPUT, types["data"], shape, symbolic)
    initializers = [
        numpy_helper.from_array(arrays[name], prefix + name)
        for name in baked
        if name in arrays and name not in left_out
    ]
    return node, inputs, output, initializers


def _model(graph: onnx.GraphProto, opset: int) -> onnx.ModelProto:
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        ir_version=IR_VERSION,
        producer_name="onnx-gather-conformance",
    )


def build(
    op: str,
    opset: int,
    data: np.ndarray,
    indices: np.ndarray,
    axis: int | None,
    variant: str,
    updates: np.ndarray | None = None,
    reduction: str | None = None,
) -> onnx.ModelProto:
    """A model computing ``op`` on (data, indices) or (data, indices,
    updates); invalid inputs still get a model."""
    node, inputs, output, initializers = _parts(
        "", op, data, indices, axis, variant, updates=updates, reduction=reduction
    )
    graph = helper.make_graph(
        [node], f"{op.lower()}_{variant}", inputs, [output], initializer=initializers
    )
    return _model(graph, opset)


def pack_prefix(position: int) -> str:
    return f"c{position}_"


# The one data tensor of a pack whose cases share their large data array
# (:func:`shared_data`): the name a one-node model gives its data, so that a
# baked one is the very tail its cases' one-node models end with (tail_of).
SHARED_DATA = "data"


def shared_data(cases) -> np.ndarray | None:
    """The large data array (:data:`SHARED_BAKED_BYTES` or more) that every
    case of a pack holds, equal in dtype, shape and bytes (a model node's
    constant: its embedding table), or None."""
    first = cases[0].data
    if first.nbytes < SHARED_BAKED_BYTES or first.dtype.hasobject:
        return None
    digest = array_digest(first)
    for case in cases[1:]:
        data = case.data
        if data is first:
            continue
        if data.dtype != first.dtype or data.shape != first.shape or data.dtype.hasobject:
            return None
        if array_digest(data) != digest:
            return None
    return first


def build_pack(cases, variant: str, left_out: bool = False) -> onnx.ModelProto:
    """One model holding many cases of one opset, each with its own node,
    inputs, initializers and output (named ``c<position>_data`` and so on):
    the graph outputs come in the cases' order. Cases that share a large data
    array (:func:`shared_data`) share one data tensor, :data:`SHARED_DATA`,
    fed or baked once: the pack carries the table once, not once a case;
    ``left_out``: that baked table is not made an initializer here
    (:func:`serialized_pack` appends it)."""
    opsets = {case.opset for case in cases}
    if len(opsets) != 1:
        raise ValueError(f"a pack holds cases of one opset, not {sorted(opsets)}")
    shared = shared_data(cases) if len(cases) > 1 else None
    name = None if shared is None else SHARED_DATA
    nodes, inputs, outputs, initializers = [], [], [], []
    for position, case in enumerate(cases):
        node, fed, output, baked = _parts(
            pack_prefix(position),
            case.op,
            case.data,
            case.indices,
            case.axis,
            variant,
            data_name=name,
            updates=case.updates,
            reduction=case.reduction,
        )
        nodes.append(node)
        inputs += fed
        outputs.append(output)
        initializers += baked
    if shared is not None and "data" not in _INITIALIZERS[variant]:
        dtype = dtypes.of_array(shared)
        inputs.insert(0, _value_info(SHARED_DATA, dtype, shared.shape, variant == "dynamic"))
    elif shared is not None and not left_out:
        initializers.insert(0, numpy_helper.from_array(shared, SHARED_DATA))
    graph = helper.make_graph(nodes, f"pack_{variant}", inputs, outputs, initializer=initializers)
    return _model(graph, opsets.pop())


def serialized_pack(cases, variant: str) -> tuple[bytes, tuple[bytes, bytes] | None]:
    """A pack's model serialized, as :func:`serialized` gives a case's: (its
    bytes, None), or, where its cases share a baked large data array, (its
    head, (the array's digest, the tail its cases' one-node models end with too))."""
    shared = shared_data(cases) if len(cases) > 1 else None
    if shared is None or "data" not in _INITIALIZERS[variant]:
        return build_pack(cases, variant).SerializeToString(), None
    head = build_pack(cases, variant, left_out=True).SerializeToString()
    return head, tail_of(shared, SHARED_DATA)


def pack_feeds(cases, variant: str) -> dict[str, np.ndarray]:
    """The inputs to feed at run time for a pack of this variant (a data
    array its cases share, once: :func:`build_pack`)."""
    shared = shared_data(cases) if len(cases) > 1 else None
    if shared is None:
        return {
            pack_prefix(position) + name: array
            for position, case in enumerate(cases)
            for name, array in feeds(case.data, case.indices, variant, case.updates).items()
        }
    fed = {SHARED_DATA: shared} if "data" not in _INITIALIZERS[variant] else {}
    for position, case in enumerate(cases):
        for name, array in feeds(case.data, case.indices, variant, case.updates).items():
            if name != "data":
                fed[pack_prefix(position) + name] = array
    return fed


def feeds(
    data: np.ndarray, indices: np.ndarray, variant: str, updates: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """The inputs to feed at run time for a model of this variant
    (``updates``: the third input of an operator that writes)."""
    arrays = {"data": data, "indices": indices, "updates": updates}
    return {
        name: array
        for name, array in arrays.items()
        if array is not None and name not in _INITIALIZERS[variant]
    }


def model_key(
    op, opset, data, indices, axis, variant, updates=None, reduction=None
) -> tuple | None:
    """The model key: equal for every input that gets the same one-node
    model, or None.

    Models of the fed variants do not depend on the values: the static model
    depends on the shapes, the dynamic one on the ranks and the dims it keeps
    fixed (the operator's ``fixed_dims``). Models with an
    initializer carry their values, so no two inputs share one (None), unless
    what they bake is large (:data:`SHARED_BAKED_BYTES`): then its digest is
    part of the key. (Not a
    fuzz signature, :class:`conformance.engine.groups.Signature`, which says
    what makes two discrepancies the same class.)
    """
    shape = oracle.output_shape(
        op, data.shape, indices.shape, axis, None if updates is None else updates.shape
    )
    if _INITIALIZERS[variant]:
        if updates is not None and "updates" in _INITIALIZERS[variant]:
            return None  # every input baked: no two inputs share one
        key = _baked_key(op, opset, data, indices, axis, variant, shape)
    else:
        if variant == "dynamic":
            fixed = tuple(
                {"data": data, "indices": indices}[tensor].shape[dim:][:1]
                for tensor, dim in OPERATORS[op].fixed_dims
            )  # the dims the dynamic model keeps (``Operator.fixed_dims``) are part of it
            shapes: tuple = (data.ndim, indices.ndim, None if shape is None else len(shape), fixed)
        else:
            shapes = (data.shape, indices.shape, shape is None)
        key = (op, opset, dtypes.name_of(data), dtypes.name_of(indices), axis, variant, shapes)
    if updates is None or key is None:
        return key
    # A third input, fed: its shape (its rank for dynamic), type and the reduction.
    fed = updates.ndim if variant == "dynamic" else updates.shape
    return (*key, fed, dtypes.name_of(updates), reduction)


# Baked values at least this large give their model a key: a model node's
# cases share its constant (an embedding table of 90 MB, conformance model),
# so its one-node model is built, sent to a worker's session and loaded once,
# not once a case (docs/development.md, Benchmarks). Below it no two inputs
# are worth the digest.
SHARED_BAKED_BYTES = 1 << 20


def _baked_key(op, opset, data, indices, axis, variant, shape) -> tuple | None:
    """A model key of an initializer variant, by the digest of what it bakes,
    when that is large; None (no two inputs share the model) otherwise."""
    arrays = dict(zip(INPUTS, (data, indices), strict=True))
    baked = [arrays[name] for name in _INITIALIZERS[variant] if name in arrays]
    if sum(array.nbytes for array in baked) < SHARED_BAKED_BYTES:
        return None
    if any(array.dtype.hasobject for array in baked):
        return None  # strings: their bytes are not the array's
    # Each array's digest is kept while the array lives (worker.array_digest):
    # a node's cases hold the same constant, hashed once, not once a variant.
    digest = hashlib.blake2b(digest_size=16)
    for array in baked:
        digest.update(array_digest(array))
    shapes = (data.shape, indices.shape, shape is None)
    names = (dtypes.name_of(data), dtypes.name_of(indices))
    return (op, opset, *names, axis, variant, shapes, digest.hexdigest())


def shared_by_key(variant: str) -> bool:
    """Whether the variant's one-node model bakes the data alone: the same
    model, by its key, for every indices of a shape on a large data array."""
    return _INITIALIZERS[variant] == ("data",)


def build_for_case(case, variant: str) -> onnx.ModelProto:
    return build(
        case.op, case.opset, case.data, case.indices, case.axis, variant, case.updates,
        case.reduction,
    )  # fmt: skip


# A large baked data array's serialized initializer, by its digest and name: the few
# last met (each as large as the array). A model node's cases share their
# constant, and building and serializing a 90 MB initializer again for each
# case's both_initializers model was a second a case (docs/development.md,
# Benchmarks).
_TAILS: OrderedDict[bytes, bytes] = OrderedDict()
TAILS_KEPT = 2


def serialized(case, variant: str) -> tuple[bytes, tuple[bytes, bytes] | None]:
    """A case's one-node model, serialized: (its bytes, None), or, where it
    bakes a large data array, (its head, (the array's digest, its tail)),
    the model being the head and the tail joined. The tail is that array's
    initializer serialized as a second ``graph`` field, which protobuf merges
    into the first (a repeated field's elements appended): the same model,
    the initializer built once for every case that bakes it, never copied
    into each case's bytes here and, in the pool, sent once per worker
    (:class:`conformance.engine.worker.Blobs`), where it is joined to a head
    only when the model is loaded."""
    data = case.data
    large = data.nbytes >= SHARED_BAKED_BYTES and not data.dtype.hasobject
    if "data" not in _INITIALIZERS[variant] or not large:
        return build_for_case(case, variant).SerializeToString(), None
    node, inputs, output, initializers = _parts(
        "", case.op, data, case.indices, case.axis, variant, ("data",), case.updates,
        case.reduction,
    )  # fmt: skip
    graph = helper.make_graph(
        [node], f"{case.op.lower()}_{variant}", inputs, [output], initializer=initializers
    )
    return _model(graph, case.opset).SerializeToString(), tail_of(data, "data")


def tail_of(data: np.ndarray, name: str) -> tuple[bytes, bytes]:
    """(the array's digest, a model's tail baking it as initializer ``name``):
    kept for the few arrays last met (:data:`TAILS_KEPT`)."""
    digest = array_digest(data)
    key = digest + name.encode()
    tail = _TAILS.get(key)
    if tail is None:
        table = onnx.GraphProto(initializer=[numpy_helper.from_array(data, name)])
        tail = onnx.ModelProto(graph=table).SerializeToString()
        _TAILS[key] = tail
        while len(_TAILS) > TAILS_KEPT:
            _TAILS.popitem(last=False)
    _TAILS.move_to_end(key)
    return key, tail
