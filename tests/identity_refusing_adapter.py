"""A test adapter that keeps the low 32 bits of int64 Gather data (as
``tests.low32_adapter``) and refuses any model with an ``Identity`` node, as a
runtime refuses an op it lacks: `conformance model` exposes a node's values
through Identity copies, so this target refuses the model with its nodes
exposed and runs the model as it is, where its outputs differ from the
reference's; what no real runtime does on demand (tests/test_model_verdict.py).
Passed as ``tests.identity_refusing_adapter:IdentityRefusingAdapter``."""

from __future__ import annotations

import onnx

from conformance.adapters import LoadError
from tests.low32_adapter import Low32Adapter


class IdentityRefusingAdapter(Low32Adapter):
    name = "no-identity"

    def load(self, model: bytes):
        proto = onnx.load_model_from_string(model)
        if any(node.op_type == "Identity" for node in proto.graph.node):
            raise LoadError("this runtime has no Identity")
        return super().load(model)
