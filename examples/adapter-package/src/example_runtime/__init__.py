"""An example adapter: onnx.reference under a runtime's own name.

A runtime's repository puts its own binding here: ``load`` turns model bytes
into a session (the runtime's refusal raised as ``LoadError``), ``execute``
runs it on NumPy feeds (a failure raised as ``RunError``), ``info`` says the
name, version and device the run header records. Anything the Python binding
cannot carry raises ``HarnessUnsupported`` (never blamed on the runtime).
Adapters run in isolated worker processes: a crash in the runtime is recorded,
not fatal.
"""

from __future__ import annotations

import onnx
from onnx.reference import ReferenceEvaluator

from conformance.adapters import Adapter, LoadError, RunError

__version__ = "0.1.0"


class ExampleRuntimeAdapter(Adapter):
    # The runtime's name: the same as the entry point's in pyproject.toml, so
    # that --runtime example-runtime, the results and known/example-runtime.yaml agree.
    name = "example-runtime"

    def info(self) -> dict:
        return {
            "name": self.name,
            "version": __version__,  # the runtime's version: baseline `versions:` match it
            "device": "CPU",
            "implementation": "onnx.reference.ReferenceEvaluator " + onnx.__version__,
            "effective": {},  # the configuration the runtime reports; nothing to configure
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
