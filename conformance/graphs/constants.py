"""Which values of a graph are constant, and what they hold.

A value is constant when it is an initializer that is not also an input of
its graph, the output of a Constant node, a constant of an enclosing graph
(a subgraph sees its parents' names), or the output of a node of the
default domain whose inputs are all constant and that draws nothing at
random: such a chain is folded with ``onnx.reference``, one node at a time.

Values are read when a node asks for them, and once, by
:func:`.tensors.value` (which checks each again): an external tensor is
read straight from its file at its offset (the proto keeps no copy), so a
model over 2 GB holds in memory only the constants its Gathers use. A node
folded with ``onnx.reference`` gets its attributes' external tensors inlined
first, checked (:func:`.tensors.inline`): onnx never opens a file of ours.
"""

from __future__ import annotations

import numpy as np
import onnx

from conformance.graphs import tensors
from conformance.tables import dtypes
from conformance.tables.spec import DEFAULT_DOMAINS  # the graphs' modules take it from here

# Ops that draw at random, or whose value is not theirs to fold.
NOT_FOLDED = frozenset(
    {
        "RandomNormal",
        "RandomUniform",
        "RandomNormalLike",
        "RandomUniformLike",
        "Multinomial",
        "Bernoulli",
        "Dropout",
    }
)
FOLD_LIMIT = 1 << 26  # elements a folded value may have: a chain is not meant to build a table


class Scope:
    """The names one graph (or function body) defines, and its enclosing scope's."""

    def __init__(self, found, graph: onnx.GraphProto | onnx.FunctionProto, parent: Scope | None):
        self.found = found
        self.parent = parent
        self._initializers: dict[str, onnx.TensorProto] = {}
        self._producers: dict[str, onnx.NodeProto] = {}
        self._defined: set[str] = set()
        self._values: dict[str, np.ndarray | None] = {}
        # every node of the graph, in its order: who consumes a value (sources' valid-run bounds)
        self.nodes: list[onnx.NodeProto] = list(graph.node)
        # name -> its type as shape inference gave it (reading sets it: a TensorType or None)
        self.types = lambda name: None
        inputs = (
            {v.name for v in graph.input}
            if isinstance(graph, onnx.GraphProto)
            else set(graph.input)
        )
        self._defined |= inputs
        self._inputs = inputs
        for tensor in getattr(graph, "initializer", ()):
            self._defined.add(tensor.name)
            if tensor.name not in inputs:  # an input may override it: not constant
                self._initializers[tensor.name] = tensor
        for node in graph.node:
            for output in node.output:
                if output:
                    self._defined.add(output)
                    self._producers[output] = node

    def owner(self, name: str) -> tuple[Scope | None, str | None]:
        """The scope that defines ``name`` and how: ``initializer``, ``input`` or
        ``node`` (None, None: no graph here defines it)."""
        if name in self._initializers:
            return self, "initializer"
        if name in self._inputs:
            return self, "input"
        if name in self._producers:
            return self, "node"
        if name in self._defined or self.parent is None:
            return None, None
        return self.parent.owner(name)

    def producer(self, name: str) -> onnx.NodeProto:
        return self._producers[name]

    def type_of(self, name: str):
        """``name``'s inferred type here or in an enclosing scope (None: unknown)."""
        found = self.types(name)
        if found is None and name not in self._defined and self.parent is not None:
            return self.parent.type_of(name)
        return found

    def value(self, name: str) -> np.ndarray | None:
        """The constant ``name`` holds, or None when it is computed at run time."""
        if not name:
            return None
        if name not in self._defined:
            return self.parent.value(name) if self.parent is not None else None
        if name not in self._values:
            self._values[name] = None  # a cycle reads as not constant
            self._values[name] = self._compute(name)
        return self._values[name]

    def _compute(self, name: str) -> np.ndarray | None:
        if name in self._initializers:
            return tensors.value(self._initializers[name], self.found.path)
        node = self._producers.get(name)
        if node is None:
            return None
        if node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS:
            attribute = node.attribute[0] if node.attribute else None
            if attribute is not None and attribute.HasField("t"):
                return tensors.value(attribute.t, self.found.path)
            return self._fold(node, name, [])
        if node.domain not in DEFAULT_DOMAINS or node.op_type in NOT_FOLDED:
            return None
        if any(a.HasField("g") or a.graphs for a in node.attribute):
            return None
        inputs = []
        for each in node.input:
            value = self.value(each) if each else None
            if each and value is None:
                return None
            inputs.append(value)
        return self._fold(node, name, inputs)

    def _fold(self, node: onnx.NodeProto, name: str, inputs: list) -> np.ndarray | None:
        from onnx.reference import ReferenceEvaluator

        named = [f"in{i}" for i in range(len(node.input))]
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        del copy.input[:]
        copy.input.extend([n if node.input[i] else "" for i, n in enumerate(named)])
        for attribute in copy.attribute:
            for tensor in tensors.attribute_tensors(attribute):
                tensors.inline(tensor, self.found.path)
        feeds = {n: v for n, v, given in zip(named, inputs, node.input, strict=False) if given}
        graph = onnx.helper.make_graph(
            [copy],
            "fold",
            [
                onnx.helper.make_tensor_value_info(n, _elem_type(v), v.shape)
                for n, v in feeds.items()
            ],
            [onnx.helper.make_tensor_value_info(o, 0, None) for o in copy.output if o],
        )
        model = onnx.helper.make_model(
            graph, opset_imports=[onnx.helper.make_opsetid("", self.found.opset)]
        )
        try:
            outputs = ReferenceEvaluator(model).run(None, feeds)
        except Exception:
            return None
        named_outputs = [o for o in copy.output if o]
        for output, value in zip(named_outputs, outputs, strict=False):
            array = np.asarray(value)
            if array.size > FOLD_LIMIT:
                return None
            if output == name:
                return array
        return None


def _elem_type(array: np.ndarray) -> int:
    return dtypes.of_array(array).proto if array.dtype != object else onnx.TensorProto.STRING
