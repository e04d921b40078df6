"""ONNX Runtime, CPU execution provider, through its Python binding.

Trap: the binding's NumPy path refuses ml_dtypes bfloat16 ("Numpy_type 256
can't be converted to MLDataType") both ways, so bfloat16 goes in as an
OrtValue made from the uint16 bits with the ONNX element type set, and comes
out as the raw bytes of the output OrtValue. Strings cannot be OrtValues, so
every model without bfloat16 uses the plain ``session.run`` path.
"""

from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np
import onnxruntime as ort
from onnx import TensorProto

from conformance.adapters import Adapter, LoadError, RunError, probe_model

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def _to_ort_value(array: np.ndarray) -> ort.OrtValue:
    array = np.require(array, requirements="C")  # ascontiguousarray would make 0-d arrays 1-d
    if array.dtype == _BFLOAT16:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            array.view(np.uint16), TensorProto.BFLOAT16
        )
    return ort.OrtValue.ortvalue_from_numpy(array)


def _bfloat16_from(value: ort.OrtValue) -> np.ndarray:
    """A bfloat16 output, bit for bit (NaN payloads included), as an ml_dtypes array.

    ``value.numpy()`` refuses bfloat16 ("No corresponding Numpy type"), so the
    bits are copied from ``data_ptr()``: a dense CPU tensor of shape x 2 bytes.
    The size is computed, not asked: ``OrtValue.tensor_size_in_bytes`` does not
    exist in onnxruntime 1.20 (the oldest pyproject allows).
    """
    shape = tuple(value.shape())
    size = int(np.prod(shape, dtype=np.int64)) * _BFLOAT16.itemsize
    raw = ctypes.string_at(value.data_ptr(), size) if size else b""
    return np.frombuffer(raw, dtype=np.uint16).view(_BFLOAT16).reshape(shape).copy()


SPINNING = "session.intra_op.allow_spinning"


class OnnxRuntimeAdapter(Adapter):
    name = "onnxruntime"
    provider = "CPUExecutionProvider"

    # SessionOptions read back from a session (0 threads: ORT's own choice).
    EFFECTIVE = (
        "graph_optimization_level",
        "intra_op_num_threads",
        "inter_op_num_threads",
        "execution_mode",
    )

    def __init__(self, properties: dict | None = None) -> None:
        super().__init__(properties)
        # Warnings such as "only guarantees support for opset 7 or above" for
        # Gather-1 models, and every refused input logged as an error, would flood
        # the log; the refusal reaches us as an exception with the same text.
        ort.set_default_logger_severity(4)
        self._options = ort.SessionOptions()
        # Idle intra-op threads do not spin-wait for work. A worker keeps hundreds
        # of sessions (the cache), each with its own thread pool; spinning pools
        # starve whatever runs next: destroying one session with 256 others alive
        # took 317 ms (0.08 ms without spinning), which made every uncached model
        # (initializer variants, packs, refusals) cost up to a third of a second.
        # Spinning decides how an idle thread waits, not what any thread computes:
        # the outputs are the same bytes. info() reads it back (effective).
        self._options.add_session_config_entry(SPINNING, "0")
        for name, value in self.properties.items():
            if name == "graph_optimization_level":
                value = ort.GraphOptimizationLevel.__members__[str(value)]
            elif name == "execution_mode":
                value = ort.ExecutionMode.__members__[str(value)]
            setattr(self._options, name, value)

    def info(self) -> dict:
        session = ort.InferenceSession(probe_model(), self._options, providers=[self.provider])
        options = session.get_session_options()
        return {
            "name": self.name,
            "version": ort.__version__,
            "device": "CPU",
            "provider": self.provider,
            "available_providers": ort.get_available_providers(),
            "effective": {
                **{name: str(getattr(options, name)).rpartition(".")[2] for name in self.EFFECTIVE},
                SPINNING: options.get_session_config_entry(SPINNING),
            },
        }

    def load(self, model: bytes):
        try:
            session = ort.InferenceSession(model, self._options, providers=[self.provider])
        except Exception as error:  # the binding raises its own exception types
            raise LoadError(str(error)) from None
        output_types = [o.type for o in session.get_outputs()]
        # Decided once per model: only bfloat16 needs the slower OrtValue path.
        bfloat16 = "tensor(bfloat16)" in output_types + [i.type for i in session.get_inputs()]
        return session, [o.name for o in session.get_outputs()], output_types, bfloat16

    def execute(self, session, feeds):
        session, output_names, output_types, bfloat16 = session
        if not bfloat16:
            try:
                return list(session.run(output_names, feeds))
            except Exception as error:
                raise RunError(str(error)) from None
        values = {name: _to_ort_value(array) for name, array in feeds.items()}
        try:
            outputs = session.run_with_ort_values(output_names, values)
        except Exception as error:
            raise RunError(str(error)) from None
        return [
            _bfloat16_from(value) if kind == "tensor(bfloat16)" else value.numpy()
            for value, kind in zip(outputs, output_types, strict=True)
        ]
