"""Reading an ONNX file: its graphs walked, every node of our operators found
(Gather, GatherElements, GatherND: :data:`OURS`, from the operators table).

The file is parsed without its external data (``load_external_data=False``):
a model over 2 GB keeps its tensors on disk, and only the constants a node
needs are read later, each once (:mod:`.constants`, through
:mod:`.tensors`, the one reader). Every tensor of the model, wherever it
stands, is checked up front by :func:`.tensors.check` (its dims, its bytes,
its external file: inside the model's folder, a regular file, long enough),
so a broken tensor is an error naming it, not a failure half-way.

Shapes and element types come from onnx's shape inference with data
propagation (in memory, or through ``infer_shapes_path`` when the proto
itself is too large to serialise in memory).
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import onnx
import onnx.defs
import onnx.shape_inference
from google.protobuf.message import DecodeError, Message

from conformance.errors import ConformanceError
from conformance.graphs import tensors
from conformance.graphs.constants import DEFAULT_DOMAINS, Scope
from conformance.tables import dtypes
from conformance.tables.operators import OPERATORS
from conformance.tables.spec import OPS, OPSETS

OURS = OPS  # the nodes a model is read for
# An operator that writes (a third input, updates: ScatterElements, ScatterND):
# `run` judges its cases; this command does not read its nodes yet (issue 47).
NOT_JUDGED_WRITES = (
    "{op}: an operator that writes (a third input, updates) is not judged by this version "
    "of conformance model; listed only (its cases are judged by conformance run)"
)
# Protobuf cannot serialise a message over 2 GB: such a model is inferred through a file.
IN_MEMORY_LIMIT = (1 << 31) - (1 << 20)
# Protobuf's limit on nested messages when it parses (upb's and the pure-Python
# decoder's default), and how each says it was reached.
PROTOBUF_DEPTH = 100
_TOO_DEEP = ("MaxDepth", "levels of nesting")


class GraphFileError(ConformanceError, ValueError):
    """A model file that cannot be read: ``error: FILE: REASON``, exit 2."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"error: {path}: {reason}")
        self.path = Path(path)
        self.reason = reason


@dataclass(frozen=True)
class TensorType:
    """An element type (the project's dtype name; None when unknown or not
    one of ours) and a shape: per dim an int, a symbolic name, or None when
    unknown; the shape None when even the rank is unknown."""

    dtype: str | None
    shape: tuple[int | str | None, ...] | None
    elem_type: int = 0  # onnx.TensorProto element type, 0 unknown

    def to_json(self) -> dict:
        return {
            "dtype": self.dtype or onnx.TensorProto.DataType.Name(self.elem_type).lower(),
            "shape": None if self.shape is None else list(self.shape),
        }


UNKNOWN = TensorType(None, None)


@dataclass
class Site:
    """One Gather or GatherElements node of a graph file, where it is and what it takes."""

    model: str  # the file, as given
    graph: str  # "" the main graph; "If_3/then_branch"; "function:<domain>:<name>"
    node: str  # its name, or #<index> in its graph
    op: str
    domain: str
    opset: int | None  # the operator version the model's default-domain import selects
    axis: int | None  # the attribute as written (None: absent)
    data: TensorType = UNKNOWN
    indices: TensorType = UNKNOWN
    data_name: str = ""
    indices_name: str = ""
    scope: Scope | None = None  # where the node's inputs resolve (set on a judged site)
    not_judged: str | None = None
    cases: list[str] = field(default_factory=list)
    indices_constant: bool = False
    data_constant: bool = False
    # where data and indices come from in the model as built (graphs.sources.Source)
    sources: dict = field(default_factory=dict)
    variant: str | None = None  # the model variant that stores them as the model does
    as_built_cases: list[str] = field(default_factory=list)  # of ``cases``: receivable values

    @property
    def where(self) -> dict:
        return {"model": self.model, "graph": self.graph, "node": self.node}

    @property
    def label(self) -> str:
        return f"{self.graph}/{self.node}" if self.graph else self.node


@dataclass
class GraphFile:
    """A parsed model: the proto (external tensors still on disk), its folder, its opsets."""

    path: Path
    proto: onnx.ModelProto
    inferred: onnx.ModelProto
    opset: int  # the default-domain import
    sites: list[Site] = field(default_factory=list)
    dim_names: set[str] = field(default_factory=set)
    inference_s: float = 0.0  # seconds shape inference took

    @property
    def folder(self) -> Path:
        return self.path.parent


def op_version(op: str, opset: int) -> int | None:
    """The version of ``op`` in force at ``opset`` (Gather-13 at opset 15); None: none yet."""
    known = [v for v in OPSETS[op] if v <= opset]
    return max(known) if known else None


def load(path: Path) -> GraphFile:
    """Parse ``path`` (GraphFileError for anything wrong), infer its shapes and find its nodes."""
    proto = _parse(path)
    _check_tensors(proto, path)
    opset = _default_opset(proto, path)
    name_unnamed_dims(proto)
    start = time.perf_counter()
    inferred = infer(proto, path)
    found = GraphFile(path, proto, inferred, opset)
    found.inference_s = time.perf_counter() - start
    found.dim_names = _dim_names(inferred.graph)
    from conformance.graphs import constants  # the walk builds their scopes

    found.sites = list(_walk_all(found, constants))
    for site in found.sites:
        _no_negative_dim(path, site)
    return found


def _no_negative_dim(path: Path, site: Site) -> None:
    """A Gather's data or indices whose shape (as declared, or inferred from
    what is declared) has a negative dim: a broken model, named by the tensor."""
    if site.not_judged is not None:
        return
    for name, given in ((site.data_name, site.data), (site.indices_name, site.indices)):
        for i, dim in enumerate(given.shape or ()):
            if isinstance(dim, int) and dim < 0:
                raise tensors.BrokenTensor(
                    path, name, f"dim {i} of its shape is {dim}: a dim is never negative"
                )


def _parse(path: Path) -> onnx.ModelProto:
    try:
        size = path.stat().st_size
    except OSError as error:
        raise GraphFileError(path, f"cannot read: {error.strerror or error}") from None
    if size == 0:
        raise GraphFileError(path, "empty file: not an ONNX model")
    try:
        proto = onnx.load(str(path), load_external_data=False)
    except DecodeError as error:
        if any(said in str(error) for said in _TOO_DEEP):
            raise GraphFileError(
                path,
                f"nested too deep: protobuf reads at most {PROTOBUF_DEPTH} levels of nested "
                "messages, and each If, Loop or Scan body takes 3 (node, attribute, graph: "
                "about 30 bodies one inside another); this file nests deeper",
            ) from None
        raise GraphFileError(
            path, f"not an ONNX model, or a truncated or corrupt one (protobuf: {error})"
        ) from None
    except (OSError, ValueError, RuntimeError) as error:
        raise GraphFileError(path, f"cannot read as an ONNX model: {error}") from None
    if proto.ir_version < 1 or not proto.HasField("graph") or not proto.opset_import:
        raise GraphFileError(
            path, "not an ONNX model (no IR version, graph or opset import: is it truncated?)"
        )
    # onnx.checker is not asked: it refuses models runtimes load (a graph input
    # without a shape); a file cut inside the graph fails to parse, one cut after
    # it has no opset import (ModelProto's opset_import follows its graph).
    escape_text(proto)
    return proto


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def escaped(value: str | bytes) -> str:
    """A string field as text: bytes that are not UTF-8 (protobuf gives such a
    field as ``bytes``) and lone surrogates shown as escapes (``\\xff``,
    ``\\udcff``); text that is UTF-8 comes back as it is."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def escape_text(message: Message) -> None:
    """Every string field of ``message``, at any depth, made text (:func:`escaped`):
    a name that is not UTF-8 is shown escaped wherever it goes (case ids, the
    terminal, nodes.json) and names the same value everywhere, since the same
    bytes escape alike. Strings are rare in a model (names, domains, doc
    strings); the walk skips every numeric and bytes field, tensors' data included."""
    for kind, value in message.ListFields():
        if kind.type == kind.TYPE_MESSAGE:
            for each in [value] if isinstance(value, Message) else value:
                escape_text(each)
        elif kind.type == kind.TYPE_STRING:
            if isinstance(value, (str, bytes)):
                if isinstance(value, bytes) or _SURROGATE.search(value):
                    setattr(message, kind.name, escaped(value))
                continue
            for i, each in enumerate(value):
                if isinstance(each, bytes) or _SURROGATE.search(each):
                    value[i] = escaped(each)


def name_unnamed_dims(proto: onnx.ModelProto) -> None:
    """Give each dim of a graph input that has neither a size nor a name the
    name ``<input>[<i>]``: it is as symbolic as ``batch`` (exporters leave
    such dims unnamed), so shape inference carries it on, and ``--dims``,
    ``--inputs`` or the default give it a size."""
    initializers = {t.name for t in proto.graph.initializer}
    for value in proto.graph.input:
        if value.name in initializers or value.type.WhichOneof("value") != "tensor_type":
            continue
        tensor = value.type.tensor_type
        if not tensor.HasField("shape"):
            continue
        for i, dim in enumerate(tensor.shape.dim):
            if not dim.HasField("dim_value") and not dim.dim_param:
                dim.dim_param = f"{value.name}[{i}]"


def _default_opset(proto: onnx.ModelProto, path: Path) -> int:
    known = onnx.defs.onnx_opset_version()
    versions = [o.version for o in proto.opset_import if o.domain in DEFAULT_DOMAINS]
    if not versions:
        raise GraphFileError(path, "imports no default-domain opset: no node of it can be judged")
    version = max(versions)
    if version > known:
        raise GraphFileError(
            path,
            f"default-domain opset {version} is newer than the installed onnx "
            f"{onnx.__version__} knows (up to {known}): upgrade onnx",
        )
    return version


def _check_tensors(proto: onnx.ModelProto, path: Path) -> None:
    """Every tensor of the model, wherever it stands, checked (:func:`.tensors.check`:
    its dims, its bytes, its external file inside the model's folder and long enough)."""
    for tensor in tensors.every_tensor(proto):
        tensors.check(tensor, path)


def infer(proto: onnx.ModelProto, path: Path) -> onnx.ModelProto:
    """Shape inference with data propagation; a model too large for memory goes through a file."""
    try:
        if proto.ByteSize() < IN_MEMORY_LIMIT:
            return onnx.shape_inference.infer_shapes(proto, strict_mode=False, data_prop=True)
        return _infer_through_file(path)
    except Exception:  # each node whose shapes stay unknown says so
        return proto


def _infer_through_file(path: Path) -> onnx.ModelProto:
    with tempfile.TemporaryDirectory(prefix="conformance-shapes-") as scratch:
        out = os.path.join(scratch, "inferred.onnx")
        onnx.shape_inference.infer_shapes_path(str(path), out, strict_mode=False, data_prop=True)
        return onnx.load(out, load_external_data=False)


def tensor_type(value: onnx.ValueInfoProto | onnx.TypeProto | None) -> TensorType:
    if value is None:
        return UNKNOWN
    proto = value.type if isinstance(value, onnx.ValueInfoProto) else value
    if proto.WhichOneof("value") != "tensor_type":
        return UNKNOWN
    tensor = proto.tensor_type
    known = dtypes.BY_PROTO.get(tensor.elem_type)
    name = known.name if known else None
    if not tensor.HasField("shape"):
        return TensorType(name, None, tensor.elem_type)
    dims: list[int | str | None] = []
    for dim in tensor.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(int(dim.dim_value))
        elif dim.HasField("dim_param") and dim.dim_param:
            dims.append(dim.dim_param)
        else:
            dims.append(None)
    return TensorType(name, tuple(dims), tensor.elem_type)


def _dim_names(graph: onnx.GraphProto) -> set[str]:
    names: set[str] = set()
    for value in (*graph.input, *graph.output, *graph.value_info):
        shape = tensor_type(value).shape or ()
        names |= {d for d in shape if isinstance(d, str)}
    for node in graph.node:
        for attribute in node.attribute:
            for sub in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                names |= _dim_names(sub)
    return names


def _types(graph: onnx.GraphProto) -> dict[str, TensorType]:
    found = {}
    for value in (*graph.input, *graph.output, *graph.value_info):
        found[value.name] = tensor_type(value)
    for tensor in graph.initializer:
        known = dtypes.BY_PROTO.get(tensor.data_type)
        found[tensor.name] = TensorType(
            known.name if known else None, tuple(int(d) for d in tensor.dims), tensor.data_type
        )
    return found


def _label(node: onnx.NodeProto, index: int) -> str:
    return node.name or f"#{index}"


def _walk_all(found: GraphFile, constants) -> Iterator[Site]:
    model = str(found.path)
    proto, inferred = found.proto, found.inferred
    root = constants.Scope(found, proto.graph, None)
    yield from _walk(found, proto.graph, inferred.graph, "", root, [{}], constants)
    if not proto.functions:
        return
    body_types = _function_types(inferred)
    for function in proto.functions:
        path = f"function:{function.domain}:{function.name}"
        opsets = {o.domain: o.version for o in function.opset_import}
        scope = constants.Scope(found, function, None)
        types = body_types.get((function.domain, function.name, ""), {})
        scope.types = types.get
        for index, node in enumerate(function.node):
            site = _site(model, path, node, index, opsets.get("", found.opset), found.opset)
            if site is None:
                continue
            if site.not_judged is None:
                site.data_name, site.indices_name = _inputs(node)
                site.data = types.get(site.data_name, UNKNOWN)
                site.indices = types.get(site.indices_name, UNKNOWN)
                site.scope = scope
            yield site
        # a function's nested graphs are walked with no inferred types (none are inferred there)
        for index, node in enumerate(function.node):
            for attribute in node.attribute:
                for sub in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                    sub_path = f"{path}/{_label(node, index)}/{attribute.name}"
                    yield from _walk(
                        found,
                        sub,
                        sub,
                        sub_path,
                        constants.Scope(found, sub, scope),
                        [{}],
                        constants,
                    )


def _function_types(inferred: onnx.ModelProto) -> dict[tuple[str, str, str], dict]:
    """Types of the values inside each model-local function, by (domain, name):
    its body inferred as a graph whose inputs take the types of the function's
    first call in the main graph (a function called only from a subgraph, or
    not at all, gets none: its nodes' shapes stay unknown)."""
    types = _types(inferred.graph)
    found: dict[tuple[str, str, str], dict] = {}
    functions = {(f.domain, f.name): f for f in inferred.functions}
    for node in inferred.graph.node:
        key = (node.domain, node.op_type)
        function = functions.get(key)
        if function is None or (*key, "") in found:
            continue
        inputs = []
        for formal, actual in zip(function.input, node.input, strict=False):
            known = types.get(actual)
            if known is None or known.shape is None or not known.elem_type:
                break
            shape = [d if d is not None else None for d in known.shape]
            inputs.append(onnx.helper.make_tensor_value_info(formal, known.elem_type, shape))
        else:
            graph = onnx.helper.make_graph(
                list(function.node),
                "function",
                inputs,
                [onnx.helper.make_value_info(o, onnx.TypeProto()) for o in function.output],
            )
            body = onnx.helper.make_model(
                graph, opset_imports=list(function.opset_import), ir_version=inferred.ir_version
            )
            try:
                body = onnx.shape_inference.infer_shapes(body, strict_mode=False, data_prop=True)
            except Exception:
                continue
            found[(*key, "")] = _types(body.graph)
    return found


def _inputs(node: onnx.NodeProto) -> tuple[str, str]:
    names = [*node.input, "", ""]
    return names[0], names[1]


def _site(
    model: str, graph: str, node: onnx.NodeProto, index: int, default_opset: int, model_opset: int
) -> Site | None:
    if node.op_type not in OURS:
        return None
    label = _label(node, index)
    attribute = OPERATORS[node.op_type].attribute  # axis, or GatherND's batch_dims
    axis = next((a.i for a in node.attribute if a.name == attribute), None)
    if node.domain not in DEFAULT_DOMAINS:
        return Site(
            model,
            graph,
            label,
            node.op_type,
            node.domain,
            None,
            axis,
            not_judged=f"domain {node.domain!r}: not the ONNX operator; listed only",
        )
    version = op_version(node.op_type, default_opset)
    site = Site(model, graph, label, node.op_type, node.domain, version, axis)
    if version is None:
        site.not_judged = f"{node.op_type} does not exist at opset {default_opset}"
    elif OPERATORS[node.op_type].writes:  # listed, as GatherND's were before they were read
        site.not_judged = NOT_JUDGED_WRITES.format(op=node.op_type)
    elif len(node.input) < 2 or not node.input[0] or not node.input[1]:
        site.not_judged = "the node lacks an input"
    return site


def _walk(
    found: GraphFile,
    graph: onnx.GraphProto,
    inferred: onnx.GraphProto,
    path: str,
    scope,
    outer: list[dict],
    constants,
) -> Iterator[Site]:
    types = [*outer, _types(inferred)]
    model = str(found.path)
    scope.types = types[-1].get  # this level's; the scope asks its parent for the rest

    def lookup(name: str) -> TensorType:
        for level in reversed(types):
            if name in level:
                return level[name]
        return UNKNOWN

    inferred_nodes = list(inferred.node) if len(inferred.node) == len(graph.node) else graph.node
    for index, node in enumerate(graph.node):
        site = _site(model, path, node, index, found.opset, found.opset)
        if site is not None:
            if site.not_judged is None:
                site.data_name, site.indices_name = _inputs(node)
                site.data, site.indices = lookup(site.data_name), lookup(site.indices_name)
                site.scope = scope
            yield site
        twin = inferred_nodes[index]
        for attribute, twin_attribute in zip(node.attribute, twin.attribute, strict=False):
            subs = [attribute.g] if attribute.HasField("g") else list(attribute.graphs)
            twins = (
                [twin_attribute.g] if twin_attribute.HasField("g") else list(twin_attribute.graphs)
            )
            for k, (sub, sub_twin) in enumerate(zip(subs, twins, strict=False)):
                name = attribute.name if len(subs) == 1 else f"{attribute.name}[{k}]"
                sub_path = (
                    f"{path}/{_label(node, index)}/{name}"
                    if path
                    else f"{_label(node, index)}/{name}"
                )
                yield from _walk(
                    found,
                    sub,
                    sub_twin,
                    sub_path,
                    constants.Scope(found, sub, scope),
                    types,
                    constants,
                )
