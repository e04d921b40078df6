"""A test adapter that refuses a model with any of its Gather values exposed
(a graph output named by conformance.graphs.exposing) and runs any other as
onnx.reference does: what no real runtime does on demand, so that a test sees
whether `conformance model` exposed a model's nodes at all
(tests/test_model_scale.py). Passed as
``tests.exposure_refusing_adapter:ExposureRefusingAdapter``."""

from __future__ import annotations

import onnx

from conformance.adapters import LoadError
from conformance.adapters.reference import ReferenceAdapter

PREFIX = "__conformance_exposed_"  # conformance.graphs.exposing.PREFIX (not imported: a worker)


class ExposureRefusingAdapter(ReferenceAdapter):
    name = "refuses-exposed"

    def info(self) -> dict:
        return {**super().info(), "name": self.name}

    def load(self, model: bytes):
        outputs = onnx.load_model_from_string(model).graph.output
        if any(output.name.startswith(PREFIX) for output in outputs):
            raise LoadError("refuses a model with its Gather values exposed")
        return super().load(model)
