"""A deliberately faulty adapter, to provoke what real runtimes will not do on demand.

It answers like a correct runtime (it asks the oracle), except when the
first element of an int32 ``data`` tensor is one of the codes below.
Tests pass it to the engine as ``tests.faulty_adapter:FaultyAdapter``.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

from conformance import oracle
from conformance.adapters import Adapter, HarnessUnsupported, LoadError, RunError
from conformance.tables.operators import OPERATORS

SEGV, FPE, ABORT, EXIT, LOOP, ALLOCATE, FLAKY, REFUSE, FAIL, WRONG, LONE = (
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
    -1023,
)
HUGE = 8 << 30  # bytes the ALLOCATE fault asks for
# What a buggy third-party adapter may return or raise instead of a list of arrays.
NONE, NUMBER, BARE, NOT_ARRAYS, TWO, UNPICKLABLE, UNLOADABLE = (
    -1030,
    -1031,
    -1032,
    -1033,
    -1034,
    -1035,
    -1036,
)
SYS_EXIT, INTERRUPT, FORK_CRASH = -1040, -1041, -1042
# Dies as a Rust panic across FFI does: the panic's place and message, then a
# backtrace longer than the part of stderr a crash keeps, then abort.
PANIC = -1043
PANIC_LINE = "thread '<unnamed>' (7) panicked at core/src/ops/array/gather.rs:75:52:"
# FORK_CRASH's grandchild appends its pid to the file this variable names.
GRANDCHILD_PIDS = "FAULTY_GRANDCHILD_PIDS"


def _refuse() -> None:
    raise RuntimeError("this object cannot be rebuilt here")


class _Unloadable:
    """Pickles in the worker; unpickling it (in the parent) raises."""

    def __reduce__(self):
        return (_refuse, ())


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
        attribute = OPERATORS[node.op_type].attribute  # axis, or GatherND's batch_dims
        axis = next((a.i for a in node.attribute if a.name == attribute), None)
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
        elif code == PANIC:
            print(PANIC_LINE, "index out of bounds: the len is 4 but the index is 4", sep="\n",
                  file=sys.stderr)  # fmt: skip
            for frame in range(200):
                print(f"  {frame}: 0x7f24ce9159f5 - frame_{frame}", file=sys.stderr)
            print("thread caused non-unwinding panic. aborting.", file=sys.stderr, flush=True)
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
        elif code == SYS_EXIT:
            sys.exit(7)
        elif code == INTERRUPT:
            raise KeyboardInterrupt
        elif code == FORK_CRASH:
            if os.fork() == 0:  # the grandchild inherits the pipe and outlives its parent
                with open(os.environ[GRANDCHILD_PIDS], "a", encoding="ascii") as pids:
                    pids.write(f"{os.getpid()}\n")
                time.sleep(600)
                os._exit(0)
            time.sleep(0.2)
            ctypes.string_at(0)
        returned = {
            NONE: None,
            NUMBER: 42,
            BARE: np.zeros((1, 1), dtype=np.int32),
            NOT_ARRAYS: ["not an array"],
            UNPICKLABLE: [np.array([lambda: 0, 1], dtype=object)],
            UNLOADABLE: [np.array([_Unloadable(), 1], dtype=object)],
        }
        if code in returned:
            return returned[code]
        try:
            output = oracle.evaluate(op, opset, data, indices, axis)
        except oracle.SpecViolation as violation:
            raise RunError(f"faulty: {violation}") from None
        if code == WRONG:
            output = output.copy()
            output.flat[-1] += 1
        if code == TWO:
            return [output, output]
        return [output]


class UnwrappedTuplesAdapter(FaultyAdapter):
    """Conforms, but for index tuples (GatherND) with a negative component,
    which it reads as 0 instead of counting it from the end: a wrong value
    for a fuzz campaign to find, shrink and save a reproducer of."""

    name = "unwrapped-tuples"

    def execute(self, session, feeds):
        op, opset, axis, baked = session
        indices = {**baked, **feeds}["indices"]
        if OPERATORS[op].indexing != "tuple" or not indices.size or indices.min() >= 0:
            return super().execute(session, feeds)
        data = {**baked, **feeds}["data"]
        try:
            oracle.evaluate(op, opset, data, indices, axis)  # refuse what the spec refuses
        except oracle.SpecViolation as violation:
            raise RunError(f"faulty: {violation}") from None
        return [oracle.evaluate(op, opset, data, np.maximum(indices, 0), axis)]


class SlowAdapter(FaultyAdapter):
    """FaultyAdapter taking 10 ms per job: a corpus run lasts half a minute or
    more whatever the machine's speed, so a test interrupts or kills it mid-run."""

    def execute(self, session, feeds):
        time.sleep(0.01)
        return super().execute(session, feeds)


class NamelessAdapter(FaultyAdapter):
    """``info()`` without a name."""

    def info(self) -> dict:
        return {"version": "0"}


class ListInfoAdapter(FaultyAdapter):
    """``info()`` that is not a dict."""

    def info(self):
        return ["faulty", "0"]


class HangingAdapter(FaultyAdapter):
    """Hangs on every input: what a fuzz time budget must survive."""

    name = "hanging"

    def execute(self, session, feeds):
        time.sleep(3600)


class NotJsonInfoAdapter(FaultyAdapter):
    """``info()`` whose values JSON cannot carry (header.json must stay JSON)."""

    def info(self) -> dict:
        return {"name": "faulty", "version": float("nan"), "flags": {1, 2}}


class NoneAdapter(FaultyAdapter):
    """``execute`` returns None for every input."""

    name = "none"

    def execute(self, session, feeds):
        return None


def _axis(node: onnx.NodeProto) -> int | None:
    return next((a.i for a in node.attribute if a.name == "axis"), None)


class PackAwareAdapter(FaultyAdapter):
    """Runs models of many nodes (packs) as a correct runtime would, except that
    in a model of more than one node a case whose int32 data starts with WRONG
    comes out wrong, REFUSE fails the model's load and SEGV crashes the worker;
    alone, each of them is right. FAIL fails at run time wherever it is. LONE
    comes out wrong in a pack and cannot be judged alone (harness_unsupported),
    as ONNX Runtime's OpenVINO EP takes a GatherElements node only in a model
    of more than one node."""

    name = "packaware"

    def load(self, model: bytes):
        parsed = onnx.load_model_from_string(model)
        baked = {t.name: _array(t) for t in parsed.graph.initializer}
        return parsed.opset_import[0].version, list(parsed.graph.node), baked

    def execute(self, session, feeds):
        opset, nodes, baked = session
        inputs = {**baked, **feeds}
        packed = len(nodes) > 1
        codes = []
        for node in nodes:
            data = inputs[node.input[0]]
            codes.append(int(data.flat[0]) if data.dtype == np.int32 and data.size else 0)
        if packed and REFUSE in codes:
            raise LoadError("packaware: refused a model of many nodes")
        if packed and SEGV in codes:
            ctypes.string_at(0)
        if FAIL in codes:
            raise RunError("packaware: failed at run time")
        if not packed and LONE in codes:
            raise HarnessUnsupported("packaware: a lone node is not this runtime's verdict")
        outputs = []
        for node, code in zip(nodes, codes, strict=True):
            data, indices = inputs[node.input[0]], inputs[node.input[1]]
            try:
                output = oracle.evaluate(node.op_type, opset, data, indices, _axis(node))
            except oracle.SpecViolation as violation:
                raise RunError(f"packaware: {violation}") from None
            if packed and code in (WRONG, LONE):
                output = output.copy()
                output.flat[-1] += 1
            outputs.append(output)
        return outputs
