"""onnx.reference.ReferenceEvaluator: a third runtime to compare.

It is a peer with its own flaws (it is NumPy code, and for example wraps
negative indices however NumPy does), not the oracle. Every exception it
raises is its own: it is pure Python, so there is no binding to get wrong.
"""

from __future__ import annotations

import onnx
from onnx.reference import ReferenceEvaluator

from conformance.adapters import Adapter, LoadError, RunError


class ReferenceAdapter(Adapter):
    name = "reference"

    def info(self) -> dict:
        return {
            "name": self.name,
            "version": onnx.__version__,
            "device": "CPU",
            "implementation": "onnx.reference.ReferenceEvaluator",
            "effective": {},  # nothing to configure
        }

    def load(self, model: bytes):
        try:
            return ReferenceEvaluator(onnx.load_model_from_string(model))
        except Exception as error:
            raise LoadError(f"{type(error).__name__}: {error}") from None

    def execute(self, session, feeds):
        try:
            outputs = session.run(None, feeds)
        except Exception as error:
            raise RunError(f"{type(error).__name__}: {error}") from None
        return list(outputs)
