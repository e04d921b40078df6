"""Apache TVM (``apache-tvm``): the Relax ONNX frontend, compiled for the CPU with LLVM.

The default configuration is TVM's documented Relax flow for an ONNX model,
nothing else::

    mod = tvm.relax.frontend.onnx.from_onnx(onnx_model)
    mod = tvm.relax.transform.LegalizeOps()(mod)
    ex = tvm.compile(mod, target="llvm")
    vm = tvm.relax.VirtualMachine(ex, tvm.cpu())
    outputs = vm["main"](*tensors)

Properties (:mod:`conformance.tables.profiles`): ``target``, the target
``tvm.compile`` is given (default ``"llvm"``: LLVM's generic CPU for the host
triple, no ``-mcpu``); the value ``"host"`` stands for the host CPU as TVM
detects it (``llvm -mtriple=<default triple> -mcpu=<LLVM's host CPU name>``,
:func:`tvm.target.detect_target_from_device`), which the profile ``host``
asks for. ``info()['effective']`` records the target TVM compiled the probe
model for (``str(Target)``: kind, triple, mcpu, keys) and the frontend path.

Traps handled here:
- The whole frontend-to-code path runs at ``load``: any exception there
  (``tvm.error.OpNotImplemented``, a ``TVMError`` from type inference, a
  NumPy error from the frontend's own constant folding of a Gather whose
  inputs are both initializers) is a ``LoadError`` with its type and first
  lines; any exception from the VM call is a ``RunError``.
- The frontend warns on every renamed input and on the checker's complaints
  (``warnings.warn``); warnings are silenced inside ``load`` so that they do
  not flood a worker's stderr.
- The VM takes the graph inputs positionally, in the graph's order, without
  the initializers (``from_onnx`` makes those constants): the order is read
  from the ONNX model.
- Tensors cross as ``tvm.runtime.tensor(ndarray)`` and ``Tensor.numpy()``.
  TVM has no string or complex dtype: its frontend refuses such models,
  which is TVM's own refusal (``LoadError``). The binding carries bool,
  int8-int64, uint8-uint64, float16, bfloat16 (ml_dtypes, by its bits),
  float32 and float64 (``CARRIED``); anything else fed is
  harness-unsupported, and an output whose dtype has no NumPy twin too.
- A model with several outputs (a pack) returns a TVM Array (tuple) of tensors;
  one output, a single tensor.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np

from conformance.adapters.contract import (
    Adapter,
    HarnessUnsupported,
    LoadError,
    NativeList,
    RunError,
    Runtime,
    compiled_inputs,
    probe_model,
    runtime_module,
)
from conformance.tables import dtypes

if TYPE_CHECKING:
    import tvm
    import tvm.target.detect_target as detect_target
    from tvm import relax
    from tvm.relax.frontend import onnx as relax_onnx
else:
    tvm = runtime_module("tvm")
    relax = runtime_module("tvm.relax")
    relax_onnx = runtime_module("tvm.relax.frontend.onnx")
    detect_target = runtime_module("tvm.target.detect_target")

RUNTIME_NAME = "tvm"

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
# What tvm.runtime.tensor carries: every type of the table but complex and string.
CARRIED = frozenset(d.numpy for d in dtypes.DTYPES if d.kind not in ("complex", "string"))
DEFAULT_TARGET = "llvm"
HOST = "host"  # a property value: the host CPU as TVM detects it
PIPELINE = (
    "relax.frontend.onnx.from_onnx(model) -> relax.transform.LegalizeOps() -> "
    "tvm.compile(mod, target) -> relax.VirtualMachine(ex, tvm.cpu())"
)
MESSAGE_LINES = 12  # TVM's errors carry long C++ traces; the first lines say what failed


def message(error: BaseException) -> str:
    """The type and the first lines of a TVM error (its traceback cut)."""
    text = str(error).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > MESSAGE_LINES:
        lines = [*lines[:MESSAGE_LINES], f"... ({len(lines) - MESSAGE_LINES} more lines)"]
    body = "\n".join(lines)
    return f"{type(error).__name__}: {body}" if body else type(error).__name__


def _target(spec) -> tvm.target.Target:
    if spec == HOST:
        return detect_target.detect_target_from_device(tvm.cpu())
    return tvm.target.Target(spec)


def _to_tensor(name: str, array: np.ndarray):
    if array.dtype not in CARRIED:
        raise HarnessUnsupported(
            f"input {name!r} is {dtypes.name_of(array)}: TVM has no such tensor dtype "
            "(tvm.runtime.tensor cannot carry it)"
        )
    array = np.require(array, requirements="C")  # ascontiguousarray would make 0-d arrays 1-d
    return tvm.runtime.tensor(array, tvm.cpu())


def _from_tensor(tensor) -> np.ndarray:
    try:
        array = tensor.numpy()
    except Exception as error:  # a dtype Tensor.numpy cannot read
        raise HarnessUnsupported(
            f"TVM ran the model, but its output ({tensor.dtype}) cannot come out: {message(error)}"
        ) from None
    if str(tensor.dtype) == "bfloat16" and array.dtype != _BFLOAT16:
        raise HarnessUnsupported(f"TVM's binding returned bfloat16 as NumPy {array.dtype}")
    return array


class TvmAdapter(Adapter):
    name = RUNTIME_NAME
    device = "CPU"
    # A compiled one-node model is a few shared-library pages, and compiling one
    # is the dear part (docs/compilers.md, "Cost"), so cache many.
    cache_size = 512

    def __init__(self, properties: dict | None = None) -> None:
        super().__init__(properties)
        unknown = sorted(set(self.properties) - {"target"})
        if unknown:
            raise ValueError(f"tvm takes the property 'target' only, got {unknown}")
        self.target = _target(self.properties.get("target", DEFAULT_TARGET))
        self.device_handle = tvm.cpu()

    def info(self) -> dict:
        self.load(probe_model())  # the whole path once: what the run's models go through
        return {
            "name": self.name,
            "version": tvm.__version__,
            "device": self.device,
            "interface": "tvm.relax (Relax ONNX frontend, LLVM codegen, Relax VM)",
            "effective": {
                "pipeline": PIPELINE,
                "target": str(self.target),
                "mcpu": str(self.target.attrs.get("mcpu", "")) or None,
                "host_cpu": tvm.target.codegen.llvm_get_system_cpu(),
                "TVM_NUM_THREADS": os.environ.get("TVM_NUM_THREADS"),
            },
        }

    def load(self, model: bytes):
        proto, names = compiled_inputs(model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                mod = relax_onnx.from_onnx(proto)
                mod = relax.transform.LegalizeOps()(mod)
                executable = tvm.compile(mod, target=self.target)
                vm = relax.VirtualMachine(executable, self.device_handle)
                main = vm["main"]
            except Exception as error:
                raise LoadError(message(error)) from None
        return vm, main, names, len(proto.graph.output)

    def execute(self, session, feeds):
        _, main, names, n_outputs = session
        tensors = [_to_tensor(name, feeds[name]) for name in names]
        try:
            result = main(*tensors)
        except Exception as error:
            raise RunError(message(error)) from None
        results = [result] if n_outputs == 1 else list(result)
        if len(results) != n_outputs:
            raise HarnessUnsupported(
                f"TVM returned {len(results)} outputs for a model of {n_outputs}"
            )
        return [_from_tensor(tensor) for tensor in results]


def run_tvm(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """Apache TVM's Relax flow, compiled for LLVM's generic CPU (target "llvm")."""
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    proto = onnx.load(str(model))
    # what the entry function takes, positionally: the inputs that are not initializers
    baked = {tensor.name for tensor in proto.graph.initializer}
    names = [value.name for value in proto.graph.input if value.name not in baked]
    module = relax.transform.LegalizeOps()(from_onnx(proto))
    machine = relax.VirtualMachine(tvm.compile(module, target="llvm"), tvm.cpu())
    tensors = [tvm.runtime.tensor(np.require(feeds[n], requirements="C")) for n in names]
    return machine["main"](*tensors).numpy()


RUNTIME = Runtime(
    name=RUNTIME_NAME,
    adapter=TvmAdapter.__name__,
    position=4,
    modules=("tvm",),
    extra="tvm",
    # a compiler: its compile cost per model (docs/compilers.md, "Cost") would
    # slow the main job and every fuzz campaign that runs the default runtimes
    opt_in=True,
    pack_size=32,
    # It compiles a pack per job: seconds (docs/compilers.md, "Cost"), up to
    # twice that with two workers on two cores; 30 s leaves room.
    timeout=30.0,
    # Its default is its documented recipe, target "llvm" (LLVM's generic CPU).
    profiles={"host": {"target": HOST}},  # the host CPU as TVM detects it (llvm -mcpu=<host>)
    # TVM's Relax ONNX backend test has no list of its own: a pytest argument
    # file (`pytest @deselect.txt`), which has no comments (the reasons are in
    # failing.txt).
    native=(
        NativeList(
            file="deselect.txt",
            line="--deselect=tests/python/relax/test_frontend_onnx_backend.py"
            "::OnnxBackendNodeModelTest::{test}_cpu",
            comment=None,
        ),
    ),
    repro=run_tvm,
)
