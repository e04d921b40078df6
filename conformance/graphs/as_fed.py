"""The values a node's input holds when the model runs as fed: where the input
is a graph input of the main graph, or reaches one through ops that only move
its elements (docs/models.md, "The input as the runtime saw it").

``conformance model --inputs`` judges each node in situ on the inputs the
target gave it. A target that changes a graph input on entry (OpenVINO
narrowing int64 inputs to 32 bits) then computes every node exactly on values
that are not the ones fed; comparing the node's exposed input with the fed
value, moved as the model moves it, shows that. :func:`path_to_input` finds
the graph input and the moving nodes; :func:`replay` applies those nodes to
the fed value with ``onnx.reference`` (each only moves elements: no rounding,
nothing a runtime may legitimately compute otherwise).
"""

from __future__ import annotations

import numpy as np
import onnx

from conformance.graphs import tensors
from conformance.graphs.constants import DEFAULT_DOMAINS
from conformance.tables import dtypes

# Ops whose first output holds some of their first input's elements, unchanged,
# when every other input is a constant (a Gather with constant indices): a
# value through them is still the fed value, moved.
KEEPS_VALUES = frozenset(
    {
        "Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Transpose", "Expand",
        "Tile", "Slice", "Gather", "GatherElements", "GatherND", "Compress",
        "SpaceToDepth", "DepthToSpace",
    }
)  # fmt: skip
DEPTH = 64  # moving nodes followed back at most, as graphs.sources does


def path_to_input(scope, name: str, fed: set[str]) -> tuple[str, list[onnx.NodeProto]] | None:
    """The main graph's input (one of ``fed``) that ``name`` is, or is moved from,
    and the moving nodes from it to ``name`` in order; None when it is neither."""
    nodes: list[onnx.NodeProto] = []
    for _ in range(DEPTH):
        owner, where = scope.owner(name)
        if owner is None:
            return None
        if where == "input":
            # a function's or a body's input is not what the user fed
            fed_here = owner.parent is None and name in fed
            return (name, nodes[::-1]) if fed_here else None
        if where != "node":
            return None
        node = owner.producer(name)
        moves = node.domain in DEFAULT_DOMAINS and node.op_type in KEEPS_VALUES
        if not moves or not node.input or node.output[0] != name:
            return None
        if any(i and owner.value(i) is None for i in node.input[1:]):
            return None  # indices, shape or axes computed at run time: not a plain move
        if any(a.HasField("g") or a.graphs for a in node.attribute):
            return None
        nodes.append(node)
        scope, name = owner, node.input[0]
    return None


def replay(scope, nodes: list[onnx.NodeProto], name: str, value: np.ndarray) -> np.ndarray | None:
    """``value`` (fed as graph input ``name``) through ``nodes`` as the spec
    computes them (``onnx.reference``); None where the reference refuses."""
    if not nodes:
        return value
    from onnx.reference import ReferenceEvaluator

    constants = {}
    for node in nodes:
        for each in node.input[1:]:
            if each and each not in constants:
                array = scope.value(each)
                if array is None:
                    return None
                constants[each] = onnx.numpy_helper.from_array(np.asarray(array), each)
    copies = []
    for node in nodes:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        for attribute in copy.attribute:
            for tensor in tensors.attribute_tensors(attribute):
                tensors.inline(tensor, scope.found.path)
        copies.append(copy)
    last = nodes[-1].output[0]
    graph = onnx.helper.make_graph(
        copies,
        "as_fed",
        [onnx.helper.make_tensor_value_info(name, _elem_type(value), value.shape)],
        [onnx.helper.make_tensor_value_info(last, 0, None)],
        initializer=list(constants.values()),
    )
    model = onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", scope.found.opset)]
    )
    try:
        outputs = ReferenceEvaluator(model).run(None, {name: value})
    except Exception:  # the moves refuse the fed value: nothing to compare with
        return None
    return np.asarray(outputs[0]) if isinstance(outputs, list) else None


def _elem_type(array: np.ndarray) -> int:
    return dtypes.of_array(array).proto if array.dtype != object else onnx.TensorProto.STRING
