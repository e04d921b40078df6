"""One-node ONNX models for a case, in five variants.

The variants exercise different paths of a runtime: shapes known at load time
(``static``), symbolic shapes resolved at run time (``dynamic``), and constant
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


def _value_info(name: str, array_dtype: dtypes.DType, shape, symbolic: bool):
    if shape is None:
        return helper.make_tensor_value_info(name, array_dtype.proto, None)
    dims = [f"{name}_d{i}" for i in range(len(shape))] if symbolic else list(shape)
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
    updates=None,
    reduction: str | None = None,
):
    """One case's node, graph inputs, output and initializers, every name
    starting with ``prefix`` ("" for a one-node model; a pack gives each case
    its own, so no two cases' names can collide); ``left_out``: inputs baked
    but not made initializers here (:func:`serialized` appends them)."""
    if variant not in _INITIALIZERS:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    baked = _INITIALIZERS[variant]
    symbolic = variant == "dynamic"
    arrays = _arrays(op, data, indices, updates)
    types = {name: dtypes.of_array(array) for name, array in arrays.items()}
    row = OPERATORS[op]  # ``axis`` holds the operator's attribute (GatherND: batch_dims)
    attributes: dict[str, Any] = {}
    if axis is not None and row.attribute is not None:
        attributes[row.attribute] = int(axis)
    if reduction is not None:
        attributes["reduction"] = reduction
    names = [prefix + name for name in arrays]
    node = helper.make_node(op, names, [prefix + OUTPUT], **attributes)
    shape = oracle.output_shape(
        op, data.shape, indices.shape, axis, None if updates is None else updates.shape
    )
    inputs = [
        _value_info(prefix + name, types[name], array.shape, symbolic)
        for name, array in arrays.items()
        if name not in baked
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


def build_pack(cases, variant: str) -> onnx.ModelProto:
    """One model holding many cases of one opset, each with its own node,
    inputs, initializers and output (named ``c<position>_data`` and so on):
    the graph outputs come in the cases' order."""
    opsets = {case.opset for case in cases}
    if len(opsets) != 1:
        raise ValueError(f"a pack holds cases of one opset, not {sorted(opsets)}")
    nodes, inputs, outputs, initializers = [], [], [], []
    for position, case in enumerate(cases):
        node, fed, output, baked = _parts(
            pack_prefix(position),
            case.op,
            case.data,
            case.indices,
            case.axis,
            variant,
            updates=case.updates,
            reduction=case.reduction,
        )
        nodes.append(node)
        inputs += fed
        outputs.append(output)
        initializers += baked
    graph = helper.make_graph(nodes, f"pack_{variant}", inputs, outputs, initializer=initializers)
    return _model(graph, opsets.pop())


def pack_feeds(cases, variant: str) -> dict[str, np.ndarray]:
    """The inputs to feed at run time for a pack of this variant."""
    return {
        pack_prefix(position) + name: array
        for position, case in enumerate(cases)
        for name, array in feeds(case.data, case.indices, variant, case.updates).items()
    }


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
    depends on the shapes, the dynamic one only on the ranks. Models with an
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
            shapes = (data.ndim, indices.ndim, None if shape is None else len(shape))
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


def build_for_case(case, variant: str) -> onnx.ModelProto:
    return build(
        case.op, case.opset, case.data, case.indices, case.axis, variant, case.updates,
        case.reduction,
    )  # fmt: skip


# A large baked data array's serialized initializer, by its digest: the few
# last met (each as large as the array). A model node's cases share their
# constant, and building and serializing a 90 MB initializer again for each
# case's both_initializers model was a second a case (docs/development.md,
# Benchmarks).
_TAILS: OrderedDict[bytes, bytes] = OrderedDict()
TAILS_KEPT = 2


def serialized(case, variant: str) -> tuple[bytes, tuple[bytes, int] | None]:
    """A case's one-node model, serialized, and where it ends with a large
    baked data array: (its digest, the length of the bytes it takes at the
    model's end), or None. Its bytes are the model's with that initializer
    appended as a second ``graph`` field, which protobuf merges into the
    first (a repeated field's elements appended): the same model, the
    initializer built once for every case that bakes it and, in the pool,
    sent once per worker (:class:`conformance.engine.worker.Blobs`)."""
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
    head = _model(graph, case.opset).SerializeToString()
    digest = array_digest(data)
    tail = _TAILS.get(digest)
    if tail is None:
        table = onnx.GraphProto(initializer=[numpy_helper.from_array(data, "data")])
        tail = onnx.ModelProto(graph=table).SerializeToString()
        _TAILS[digest] = tail
        while len(_TAILS) > TAILS_KEPT:
            _TAILS.popitem(last=False)
    _TAILS.move_to_end(digest)
    return head + tail, (digest, len(tail))
