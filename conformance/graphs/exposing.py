"""A user's model with every Gather/GatherElements node's inputs and output
made graph outputs, so that a runtime running the whole model shows what each
node was given and what it computed (docs/models.md, "In situ").

Each value is copied by an ``Identity`` node into a new graph output, after
the model's own outputs, which keep their places. A node in the main graph is
exposed directly. A node inside an ``If`` branch (at any depth) is carried
out through its ``If``: the branch gets the copy as an extra output, the
other branch an empty tensor of the same type and rank, and the ``If`` a
flag saying which branch ran, so that a node whose branch did not run reads
*not reached*, never a value. What cannot be carried out is *not exposed*,
with why: a node in a ``Loop`` or ``Scan`` body (ONNX carries a body's values
out only as per-iteration scan outputs of one shape), and a node in a
model-local function (its values are the function's, not the graph's).

Exposing a value keeps it computed: a runtime fusion that would have removed
it does not happen, which the docs say; the node is judged as computed when
its inputs and output are observed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper

from conformance.graphs.constants import DEFAULT_DOMAINS
from conformance.graphs.reading import OURS, GraphFile
from conformance.tables import dtypes
from conformance.tables.operators import OPERATORS

PREFIX = "__conformance_exposed_"
ROLES = ("data", "indices", "output")
BODIES = {"Loop": "a Loop body", "Scan": "a Scan body"}


@dataclass
class Export:
    """One value a graph now has as an extra output."""

    name: str  # its name in the graph it is an output of
    elem_type: int
    rank: int | None
    key: tuple | None  # ((model, graph, node), role); None for a branch flag
    origin: int  # the same through every If it is carried out of
    conditions: list[tuple[int, bool]] = field(default_factory=list)  # (flag's origin, wanted)


@dataclass
class Exposed:
    """The model with its nodes exposed, and how to read its outputs back."""

    model: onnx.ModelProto
    originals: list[str]  # the model's own outputs, first in the outputs
    # (model, graph, node) -> {role: output index}
    nodes: dict[tuple[str, str, str], dict[str, int]] = field(default_factory=dict)
    # (model, graph, node) -> [(output index of a flag, the value it must have)]
    conditions: dict[tuple[str, str, str], list[tuple[int, bool]]] = field(default_factory=dict)
    not_exposed: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def reached(self, key, outputs: list[np.ndarray]) -> bool:
        return all(
            bool(np.asarray(outputs[i]).reshape(-1)[:1].all()) == wanted
            for i, wanted in self.conditions.get(key, [])
        )


class _Names:
    """Fresh value names, none of them a name the model already uses: a model's own
    output called as an exposed copy would be overwritten by it (issue 44)."""

    def __init__(self, taken: set[str]) -> None:
        self.count = 0
        self.taken = taken

    def __call__(self, what: str) -> str:
        while True:
            self.count += 1
            name = f"{PREFIX}{self.count}_{what}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def names_in(proto: onnx.ModelProto) -> set[str]:
    """Every name a value has anywhere in the model: the graphs' inputs, outputs,
    initializers and value infos, and every node's inputs and outputs, in every
    subgraph and model-local function."""
    taken: set[str] = set()

    def graph_names(graph: onnx.GraphProto) -> None:
        for values in (graph.input, graph.output, graph.value_info):
            taken.update(v.name for v in values)
        taken.update(t.name for t in graph.initializer)
        taken.update(t.values.name for t in graph.sparse_initializer)
        nodes(graph.node)

    def nodes(listed) -> None:
        for node in listed:
            taken.update(node.input)
            taken.update(node.output)
            for attribute in node.attribute:
                for sub in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                    graph_names(sub)

    graph_names(proto.graph)
    for function in proto.functions:
        taken.update(function.input)
        taken.update(function.output)
        nodes(function.node)
    return taken


def _elem_type(tensor) -> int:
    """A node input's element type as a TensorProto code, 0 where it is unknown."""
    if tensor.elem_type:
        return tensor.elem_type
    known = dtypes.BY_NAME.get(tensor.dtype or "")
    return known.proto if known is not None else 0


def expose(found: GraphFile, proto: onnx.ModelProto, only: set | None = None) -> Exposed:
    """``proto`` (the model with its external data loaded: changed in place) with
    every Gather node ``found`` judged made readable from its outputs (of ``only``
    those whose (model, graph, node) it holds, when given). A node whose values
    cannot be declared graph outputs (an element type shape inference left
    unknown) is *not exposed*, saying why; the others are exposed all the same."""
    model = str(found.path)
    sites = {(s.graph, s.node): s for s in found.sites}
    names = _Names(names_in(proto))
    result = Exposed(proto, [o.name for o in proto.graph.output])
    ranks = {(s.graph, s.node): _ranks(s) for s in found.sites}

    def walk(graph: onnx.GraphProto, path: str, inside: str | None) -> list[Export]:
        made: list[Export] = []
        for index, node in enumerate(list(graph.node)):
            label = node.name or f"#{index}"
            if node.op_type in OURS and node.domain in DEFAULT_DOMAINS:
                where = (model, path, label)
                site = sites.get((path, label))
                if only is not None and where not in only:
                    pass
                elif inside is not None:
                    result.not_exposed[where] = inside
                elif site is not None and len(node.input) >= 2 and node.output:
                    elem, index_elem = _elem_type(site.data), _elem_type(site.indices)
                    values = (node.input[0], node.input[1], node.output[0])
                    types = (elem, index_elem, elem)
                    if not elem or not index_elem:
                        role = "data" if not elem else "indices"
                        result.not_exposed[where] = (
                            f"its {role} element type is unknown (shape inference could not "
                            "tell it): its values cannot be declared graph outputs"
                        )
                        continue
                    for role, value, elem_type, rank in zip(
                        ROLES, values, types, ranks[(path, label)], strict=True
                    ):
                        copy = names(role)
                        graph.node.append(helper.make_node("Identity", [value], [copy]))
                        made.append(Export(copy, elem_type, rank, (where, role), names.count))
            if node.domain not in DEFAULT_DOMAINS:
                continue
            subs = [(a.name, a.g) for a in node.attribute if a.HasField("g")]
            if not subs:
                continue
            here = f"{path}/{label}" if path else label
            if node.op_type == "If" and inside is None and len(subs) == 2:
                branches = dict(subs)
                then = walk(branches["then_branch"], f"{here}/then_branch", None)
                other = walk(branches["else_branch"], f"{here}/else_branch", None)
                made += _lift(node, branches, then, other, names)
            else:
                why = BODIES.get(node.op_type, f"a {node.op_type} subgraph")
                for name, sub in subs:
                    walk(sub, f"{here}/{name}", inside or f"inside {why}: not carried out")
        return made

    exported = walk(proto.graph, "", None)
    first = len(proto.graph.output)
    position = {}
    for n, export in enumerate(exported):
        proto.graph.output.append(
            helper.make_tensor_value_info(export.name, export.elem_type, None)
        )
        position[export.origin] = first + n
    for export in exported:
        if export.key is None:
            continue
        where, role = export.key
        result.nodes.setdefault(where, {})[role] = position[export.origin]
        result.conditions[where] = [(position[flag], wanted) for flag, wanted in export.conditions]
    for found_site in found.sites:
        if found_site.graph.startswith("function:"):
            result.not_exposed[found_site.model, found_site.graph, found_site.node] = (
                "inside a model-local function: its values are the function's, not the graph's"
            )
    return result


def _lift(node, branches, then: list[Export], other: list[Export], names) -> list[Export]:
    """Carry the branches' exports out through their If: each becomes an output of
    the If (the other branch giving an empty tensor), with a flag of which ran."""
    if not then and not other:
        return []
    flag_name = names("then_ran")
    flag = Export(flag_name, onnx.TensorProto.BOOL, 0, None, names.count)
    lifted: list[Export] = []
    outputs: list[str] = []
    for taken, branch_name, exports in ((True, "then_branch", then), (False, "else_branch", other)):
        for export in exports:
            outer = names("lifted")
            outputs.append(outer)
            for name in ("then_branch", "else_branch"):
                branch = branches[name]
                if name == branch_name:
                    branch.output.append(
                        helper.make_tensor_value_info(export.name, export.elem_type, None)
                    )
                else:
                    branch.output.append(_empty(branch, export, names))
            conditions = [*export.conditions]
            if export.key is not None:  # a value: read only where its branch ran
                conditions.append((flag.origin, taken))
            lifted.append(
                Export(outer, export.elem_type, export.rank, export.key, export.origin, conditions)
            )
    for name, value in (("then_branch", True), ("else_branch", False)):
        branch = branches[name]
        constant = names("ran")
        branch.node.append(
            helper.make_node(
                "Constant", [], [constant], value=numpy_helper.from_array(np.array(value))
            )
        )
        branch.output.append(helper.make_tensor_value_info(constant, onnx.TensorProto.BOOL, None))
    outputs.append(flag_name)
    node.output.extend(outputs)
    return [*lifted, flag]


def _empty(branch: onnx.GraphProto, export: Export, names) -> onnx.ValueInfoProto:
    """A Constant in ``branch`` of ``export``'s type and rank holding no element (a
    flag: a scalar false), and the output naming it."""
    numpy = _numpy_of(export.elem_type)
    rank = export.rank if export.rank is not None else 1
    value = np.zeros((), numpy) if rank == 0 else np.zeros((0,) * rank, numpy)
    name = names("absent")
    tensor = numpy_helper.from_array(value)
    branch.node.append(helper.make_node("Constant", [], [name], value=tensor))
    return helper.make_tensor_value_info(name, export.elem_type, None)


def _numpy_of(elem_type: int):
    known = dtypes.BY_PROTO.get(elem_type)
    if known is None:
        return np.float32
    return object if known.kind == "string" else known.numpy


def _ranks(site) -> tuple[int | None, int | None, int | None]:
    data = None if site.data.shape is None else len(site.data.shape)
    indices = None if site.indices.shape is None else len(site.indices.shape)
    if data is None or indices is None:
        output = None
    elif OPERATORS[site.op].indexing == "element":
        output = indices  # the output has indices' shape
    elif OPERATORS[site.op].indexing == "tuple":
        output = None  # GatherND's rank depends on indices.shape[-1]: left undeclared
    else:
        output = data + indices - 1  # indices' dimensions take the axis's place
    return data, indices, output
