"""A deliberately faulty adapter, to provoke what real runtimes will not do on demand.

It answers like a correct runtime (it asks the oracle), except when the
first element of an int32 ``data`` tensor is one of the codes below.
Tests pass it to the engine as ``tests.faulty_adapter:FaultyAdapter``.
"""

from __future__ import annotations

import ctypes
import os
import signal

import numpy as np
import onnx
from onnx import numpy_helper

from conformance import oracle
from conformance.adapters import Adapter, LoadError, RunError

SEGV, FPE, ABORT, EXIT, LOOP, ALLOCATE, FLAKY, REFUSE, FAIL, WRONG = (
    -1011,
    -1008,
    -1006,
    -1003,
    -1007,
    -1009,
    -1005,
    -1020,
    -1021,
    -1022,
)
HUGE = 8 << 30  # bytes the ALLOCATE fault asks for


def _array(tensor: onnx.TensorProto) -> np.ndarray:
    """An initializer's values. onnx's numpy_helper.to_array drops trailing NUL
    characters of strings (it goes through NumPy fixed-width strings), so
    strings are decoded from the proto directly: this adapter must conform."""
    if tensor.data_type != onnx.TensorProto.STRING:
        return numpy_helper.to_array(tensor)
    strings = np.empty(len(tensor.string_data), dtype=object)
    strings[:] = [s.decode("utf-8") for s in tensor.string_data]
    return strings.reshape(tuple(tensor.dims))


class FaultyAdapter(Adapter):
    name = "faulty"

    def __init__(self) -> None:
        super().__init__()
        self.jobs_run = 0

    def info(self) -> dict:
        return {"name": self.name, "version": "0", "device": "CPU", "pid": os.getpid()}

    def load(self, model: bytes):
        parsed = onnx.load_model_from_string(model)
        node = parsed.graph.node[0]
        axis = next((a.i for a in node.attribute if a.name == "axis"), None)
        baked = {t.name: _array(t) for t in parsed.graph.initializer}
        opset = parsed.opset_import[0].version
        first = baked.get("data")
        if first is not None and first.dtype == np.int32 and first.size and first.flat[0] == REFUSE:
            raise LoadError("faulty: refused at load time")
        return node.op_type, opset, axis, baked

    def execute(self, session, feeds):
        op, opset, axis, baked = session
        self.jobs_run += 1
        inputs = {**baked, **feeds}
        data, indices = inputs["data"], inputs["indices"]
        code = int(data.flat[0]) if data.dtype == np.int32 and data.size else 0
        if code == SEGV:
            ctypes.string_at(0)
        elif code == FPE:
            os.kill(os.getpid(), signal.SIGFPE)
        elif code == ABORT:
            os.abort()
        elif code == EXIT:
            os._exit(3)
        elif code == LOOP:
            while True:
                pass
        elif code == ALLOCATE:
            np.ones(HUGE, dtype=np.uint8)
        elif code == FLAKY and self.jobs_run > 1:
            ctypes.string_at(0)
        elif code == REFUSE:
            raise LoadError("faulty: refused at load time")
        elif code == FAIL:
            raise RunError("faulty: failed at run time")
        try:
            output = oracle.evaluate(op, opset, data, indices, axis)
        except oracle.SpecViolation as violation:
            raise RunError(f"faulty: {violation}") from None
        if code == WRONG:
            output = output.copy()
            output.flat[-1] += 1
        return [output]
