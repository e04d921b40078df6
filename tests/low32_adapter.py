"""A test adapter whose Gather keeps the low 32 bits of int64 data, in every
model it runs, one-node or whole: what no real runtime does on demand inside a
whole model, so that the in-situ check of `conformance model` is shown to fail
(tests/test_model_as_built.py). Passed as ``tests.low32_adapter:Low32Adapter``.
It refuses a model that has a node named ``refuse-me``, as a runtime refuses a
model it cannot load."""

from __future__ import annotations

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator
from onnx.reference.ops.op_gather import Gather as _Gather

from conformance.adapters import LoadError
from conformance.adapters.reference import ReferenceAdapter


class Gather(_Gather):
    def _run(self, x, indices, axis=None):
        (out,) = super()._run(x, indices, axis=axis)
        if out.dtype == np.int64:
            out = out.astype(np.int32).astype(np.int64)
        return (out,)


class Low32Adapter(ReferenceAdapter):
    name = "low32"

    def info(self) -> dict:
        return {**super().info(), "name": self.name}

    def load(self, model: bytes):
        proto = onnx.load_model_from_string(model)
        if any(node.name == "refuse-me" for node in proto.graph.node):
            raise LoadError("this runtime refuses node refuse-me")
        return ReferenceEvaluator(proto, new_ops=[Gather])
