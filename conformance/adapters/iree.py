"""IREE (``iree-base-compiler[onnx]``, ``iree-base-runtime``): ONNX imported to
MLIR, compiled for the CPU by ``iree-compile``, run by IREE's runtime.

The default configuration is IREE's documented ONNX flow (the "ONNX guide"
of iree.dev), nothing else::

    iree-import-onnx model.onnx -o model.mlir      # python -m iree.compiler.tools.import_onnx
    iree.compiler.compile_file("model.mlir", target_backends=["llvm-cpu"],
                               extra_args=["--iree-llvmcpu-target-cpu=host"])
    config = iree.runtime.Config("local-task")
    module = iree.runtime.VmModule.copy_buffer(config.vm_instance, vmfb)
    context = iree.runtime.SystemContext(vm_modules=[module], config=config)
    context.modules.module[graph_name](*inputs)

The import runs in this process, as ``iree-import-onnx`` does it (its
``__main__``: ``onnx.checker.check_model``, ``onnx.shape_inference.infer_shapes``
with data propagation, ``onnx_importer.ModelInfo`` / ``NodeImporter``,
``verify``), which saves starting a Python per model; the compile runs the
``iree-compile`` binary as ``iree.compiler.compile_str`` always does (a
subprocess: a compiler crash is a ``LoadError`` naming its signal,
"iree-compile (killed by SIGSEGV)", not a dead worker; iree-compile 3.13
dies so when it constant-folds a Gather of far out-of-range constant indices,
which the judge then counts as a refusal). The exported function is named after the ONNX
graph.

Properties (:mod:`conformance.tables.profiles`): ``target_backends`` (default
``["llvm-cpu"]``), ``extra_args`` (default
``["--iree-llvmcpu-target-cpu=host"]``, as IREE's guides compile: the host
CPU's features) and ``driver`` (default ``local-task``); the profile
``generic`` compiles for LLVM's generic CPU
(``--iree-llvmcpu-target-cpu=generic``). ``info()['effective']`` records the
compile command's flags, the driver, and the device IREE reports.
``opset_version`` (default 0: as written) upgrades a model of a lower opset
with ``onnx.version_converter`` before the import, as ``iree-import-onnx
--opset-version N`` does, and ``driver`` (default ``local-task``) is the
runtime's driver: the profile ``onnx-ops`` runs the pipeline of IREE's own
ONNX op suite (iree-test-suites ``onnx_ops``, config ``cpu_llvm_sync``: opset
17, float64 kept, ``local-sync``), whose expected-failure lists the export
writes (docs/export.md).

The profile ``cuda`` compiles with the ``cuda`` backend and runs on the
``cuda`` driver, on an NVIDIA GPU (docs/gpu.md). Its CUDA target is the
highest of :data:`CUDA_TARGETS` at or below the device's compute capability
(:func:`conformance.adapters.gpu.cuda_target`; a ``--iree-cuda-target=``
among ``extra_args`` is taken as given), read by ``info()``, which records the
device (``gpu``) and the target chosen (``effective.cuda_target``). Compiling
needs no GPU; running does: without a CUDA driver a model cannot be loaded,
and each result is ``harness_unsupported`` ("no CUDA driver: ..."), never a
verdict.

Traps handled here:
- Inputs and outputs cross as HAL buffer views, made and read here rather
  than through ``iree.runtime``'s function wrapper: the wrapper maps the
  ABI's ``i8``/``i16``/``i32``/``i64`` back to *signed* NumPy types (unsigned
  integers share their ABI type), turns bool outputs into ``astype(bool)``
  (a byte 2 would read as True), and has no ABI type for bfloat16 at all.
  Inputs go in with the element type of their NumPy dtype (bfloat16 by its
  bits). An output's bytes are read as they are and viewed as the model's
  declared output type when IREE's element type has the same width and the
  same kind (an integer, signed, unsigned or signless, read as the declared
  integer type; a byte as bool): signedness is erased on IREE's side
  (torch-mlir lowers ``ui8`` to signless ``i8``), so its element type cannot
  say it. An output of another width or kind comes back as IREE's own type,
  so a dtype mismatch shows.
- String tensors do not exist in IREE's runtime (the importer types them
  ``!torch.str``; the compiler refuses them): a model with one is IREE's own
  refusal (``LoadError``), and a string fed can never go in
  (harness-unsupported). Complex tensors cross as ``COMPLEX_64`` /
  ``COMPLEX_128``.
- An empty output (a zero in its shape) has no bytes to map: it comes back
  as an empty array of its shape.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np
import onnx

from conformance.adapters import gpu
from conformance.adapters.contract import (
    Adapter,
    HarnessUnsupported,
    LoadError,
    RunError,
    Runtime,
    compiled_inputs,
    probe_model,
    runtime_module,
)
from conformance.tables import dtypes

if TYPE_CHECKING:
    from iree import runtime as ireert
    from iree.compiler import ir
    from iree.compiler import tools as ireec
    from iree.compiler.extras import onnx_importer
else:
    ireert = runtime_module("iree.runtime")
    ireec = runtime_module("iree.compiler.tools")
    onnx_importer = runtime_module("iree.compiler.extras.onnx_importer")
    ir = runtime_module("iree.compiler.ir")

RUNTIME_NAME = "iree"
_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

# NumPy dtype of an input -> the element type (its name in HalElementType) its
# buffer view is given.
_ELEMENT_NAMES = {
    np.dtype(np.bool_): "BOOL_8",
    np.dtype(np.int8): "SINT_8",
    np.dtype(np.int16): "SINT_16",
    np.dtype(np.int32): "SINT_32",
    np.dtype(np.int64): "SINT_64",
    np.dtype(np.uint8): "UINT_8",
    np.dtype(np.uint16): "UINT_16",
    np.dtype(np.uint32): "UINT_32",
    np.dtype(np.uint64): "UINT_64",
    np.dtype(np.float16): "FLOAT_16",
    _BFLOAT16: "BFLOAT_16",
    np.dtype(np.float32): "FLOAT_32",
    np.dtype(np.float64): "FLOAT_64",
    np.dtype(np.complex64): "COMPLEX_64",
    np.dtype(np.complex128): "COMPLEX_128",
}
# An output's element type (as the integer ``HalBufferView.element_type`` gives:
# the binding's enum members do not compare equal to it) -> (kind, the NumPy
# dtype of IREE's own type).
# "int": an integer of any signedness (or a byte of a bool), read as the
# model's declared type of that width; "float"/"complex": exactly that type.
_OUTPUT_NAMES = {
    "BOOL_8": ("int", np.dtype(np.uint8)),
    "INT_8": ("int", np.dtype(np.int8)),
    "SINT_8": ("int", np.dtype(np.int8)),
    "UINT_8": ("int", np.dtype(np.uint8)),
    "INT_16": ("int", np.dtype(np.int16)),
    "SINT_16": ("int", np.dtype(np.int16)),
    "UINT_16": ("int", np.dtype(np.uint16)),
    "INT_32": ("int", np.dtype(np.int32)),
    "SINT_32": ("int", np.dtype(np.int32)),
    "UINT_32": ("int", np.dtype(np.uint32)),
    "INT_64": ("int", np.dtype(np.int64)),
    "SINT_64": ("int", np.dtype(np.int64)),
    "UINT_64": ("int", np.dtype(np.uint64)),
    "FLOAT_16": ("float", np.dtype(np.float16)),
    "BFLOAT_16": ("float", _BFLOAT16),
    "FLOAT_32": ("float", np.dtype(np.float32)),
    "FLOAT_64": ("float", np.dtype(np.float64)),
    "COMPLEX_64": ("complex", np.dtype(np.complex64)),
    "COMPLEX_128": ("complex", np.dtype(np.complex128)),
}


@functools.cache
def _element_of() -> dict:
    """NumPy dtype of an input -> the element type its buffer view is given."""
    return {dtype: getattr(ireert.HalElementType, name) for dtype, name in _ELEMENT_NAMES.items()}


@functools.cache
def _output_of() -> dict:
    """The integer element type of an output -> (kind, the NumPy dtype of IREE's own type)."""
    element = ireert.HalElementType
    return {int(getattr(element, name).value): kind for name, kind in _OUTPUT_NAMES.items()}


DEFAULTS = {
    "target_backends": ["llvm-cpu"],
    "extra_args": ["--iree-llvmcpu-target-cpu=host"],
    "driver": "local-task",
    "opset_version": 0,
}
DRIVER = DEFAULTS["driver"]
# The CUDA targets iree-compile 3.13 compiles for: it refuses sm_90 and sm_90a
# ("missing GPU target in #hal.executable.target"), so a Hopper GPU runs sm_89's PTX.
CUDA_TARGETS = ("sm_80", "sm_86", "sm_89")
CUDA_TARGET_FLAG = "--iree-cuda-target="
# A driver that puts a target on an NVIDIA GPU (docs/gpu.md).
GPU_DRIVERS = ("cuda",)
MESSAGE_CHARS = 4000  # iree-compile's diagnostics can repeat the whole module


def _declared(value: onnx.ValueInfoProto) -> np.dtype | None:
    """The NumPy dtype of a graph output's declared element type (None: unknown)."""
    row = dtypes.BY_PROTO.get(value.type.tensor_type.elem_type)
    return row.numpy if row else None


def _import(proto: onnx.ModelProto, opset_version: int = 0) -> str:
    """The model as torch-dialect MLIR text, as ``iree-import-onnx`` makes it
    (``--opset-version``: a model of a lower opset upgraded first)."""
    if opset_version and opset_version > proto.opset_import[0].version:
        proto = onnx.version_converter.convert_version(proto, opset_version)
    onnx.checker.check_model(proto)
    inferred = onnx.shape_inference.infer_shapes(proto, data_prop=True)
    context = ir.Context()
    info = onnx_importer.ModelInfo(inferred)
    module = info.create_module(context=context).operation
    importer = onnx_importer.NodeImporter.define_function(info.main_graph, module)
    importer.import_all()
    module.verify()
    return module.get_asm(assume_verified=True)


def _short(text: str) -> str:
    text = text.strip()
    if len(text) > MESSAGE_CHARS:
        text = f"{text[:MESSAGE_CHARS]}... ({len(text)} characters)"
    return text


def _compile_message(error: ireec.CompilerToolError) -> str:
    """iree-compile's exit status and first error on the first line, then its
    diagnostics (without the command line and the temp-file advice that
    ``CompilerToolError`` adds)."""
    text = str(error).split("\n\nInvoked with:", 1)[0]
    code = re.search(r"^Error code: (-?\d+)$", text, re.MULTILINE)
    diagnostics = text.split("Diagnostics:\n", 1)[-1].strip()
    first = next((line for line in diagnostics.splitlines() if "error:" in line), "")
    first = re.sub(r"^(<stdin>|<unknown>):\d+:\d+: ", "", first).strip()
    status = "failed"
    if code and int(code.group(1)) < 0:  # killed by a signal (subprocess's negative status)
        number = -int(code.group(1))
        try:
            status = f"killed by {signal.Signals(number).name}"
        except ValueError:
            status = f"killed by signal {number}"
    elif code:
        status = f"exit {code.group(1)}"
    return _short(f"iree-compile ({status}): {first or 'no error line'}\n{diagnostics}")


class IreeAdapter(Adapter):
    name = RUNTIME_NAME
    device = "CPU"
    # A session is a loaded VM module and its context (a few hundred kB);
    # compiling one costs a second or more, so keep many.
    cache_size = 256

    def __init__(self, properties: dict | None = None) -> None:
        super().__init__(properties)
        unknown = sorted(set(self.properties) - set(DEFAULTS))
        if unknown:
            raise ValueError(f"iree takes {sorted(DEFAULTS)} only, got {unknown}")
        self.options = {**DEFAULTS, **self.properties}
        self.driver = str(self.options["driver"])
        self.cuda = "cuda" in self.options["target_backends"]
        given = [a for a in self.options["extra_args"] if str(a).startswith(CUDA_TARGET_FLAG)]
        # The CUDA target: given, or chosen by info() from the device (None until then).
        self.cuda_target = given[-1].removeprefix(CUDA_TARGET_FLAG) if given else None
        self.cuda_target_from = "given (extra_args)" if given else ""
        self._config = None if self.driver != DRIVER else ireert.Config(DRIVER)

    @property
    def config(self):
        """The driver's configuration, made at first use: a GPU driver needs its
        library (libcuda) and a device, which compiling does not."""
        if self._config is None:
            try:
                ireert.get_driver(self.driver)  # says why (no libcuda), Config only "could not"
                self._config = ireert.Config(self.driver)
            except Exception as error:
                said = (str(error).strip().splitlines() or [type(error).__name__])[0]
                if self.driver == "cuda":
                    raise HarnessUnsupported(f"no CUDA driver: {said}") from None
                raise HarnessUnsupported(f"IREE's {self.driver} driver: {said}") from None
        return self._config

    def compile_args(self) -> list[str]:
        """iree-compile's flags: ``extra_args``, and the CUDA target chosen."""
        args = [str(a) for a in self.options["extra_args"]]
        if self.cuda and self.cuda_target and not self.cuda_target_from.startswith("given"):
            args.append(CUDA_TARGET_FLAG + self.cuda_target)
        return args

    def _choose_cuda_target(self) -> dict:
        """The device's record, and the CUDA target for it (gpu.NoGpu: none)."""
        device = gpu.read_device(0)
        if self.cuda_target is None:
            capability = device["compute_capability"]
            chosen = gpu.cuda_target(capability, CUDA_TARGETS)
            if chosen is None:
                raise gpu.NoGpu(
                    f"iree-compile compiles for {', '.join(CUDA_TARGETS)}: the GPU's compute "
                    f"capability {capability} is below them all"
                )
            self.cuda_target = chosen
            self.cuda_target_from = (
                f"compute capability {capability}: the highest of "
                f"{', '.join(CUDA_TARGETS)} at or below it"
            )
        return device

    def info(self) -> dict:
        device = self._choose_cuda_target() if self.cuda else None
        self.load(probe_model())  # the whole path once: what the run's models go through
        effective = {
            "target_backends": list(self.options["target_backends"]),
            "extra_args": self.compile_args(),
            "driver": self.driver,
            "opset_version": int(self.options["opset_version"]),
            "hal_device": str(self.config.device),
            "IREE_SAVE_TEMPS": os.environ.get("IREE_SAVE_TEMPS"),
        }
        found = {
            "name": self.name,
            "version": importlib.metadata.version("iree-base-compiler"),
            "runtime_version": importlib.metadata.version("iree-base-runtime"),
            "device": "GPU" if device else self.device,
            "interface": "iree.compiler (in-process ONNX import, iree-compile) and iree.runtime",
            "effective": effective,
        }
        if device is not None:
            # IREE's cuda driver calls the CUDA driver API itself: no CUDA runtime in between.
            found["gpu"] = {**device, "cuda_runtime_version": None}
            effective["cuda_target"] = self.cuda_target
            effective["cuda_target_from"] = self.cuda_target_from
        return found

    def compile(self, model: bytes) -> bytes:
        """The model compiled (a vmfb), as load() compiles it; LoadError on a refusal."""
        text, _, _ = self._imported(model)
        return self._compile(text)

    def _imported(self, model: bytes) -> tuple[str, onnx.ModelProto, list[str]]:
        """The model as MLIR text, its proto and its entry function's inputs."""
        proto, names = compiled_inputs(model)
        try:
            text = _import(proto, int(self.options["opset_version"]))
        except Exception as error:
            raise LoadError(
                f"import (iree-import-onnx): {type(error).__name__}: {_short(str(error))}"
            ) from None
        return text, proto, names

    def _compile(self, text: str) -> bytes:
        if self.cuda and self.cuda_target is None:  # load() before info(): the device decides
            try:
                self._choose_cuda_target()
            except gpu.NoGpu as error:
                raise HarnessUnsupported(str(error)) from None
        try:
            return ireec.compile_str(
                text,
                target_backends=list(self.options["target_backends"]),
                extra_args=self.compile_args(),
            )
        except ireec.CompilerToolError as error:
            raise LoadError(_compile_message(error)) from None

    def load(self, model: bytes):
        text, proto, names = self._imported(model)
        declared = [_declared(value) for value in proto.graph.output]
        function = proto.graph.name
        vmfb = self._compile(text)
        config = self.config  # HarnessUnsupported without the driver (no CUDA driver)
        try:
            module = ireert.VmModule.copy_buffer(config.vm_instance, vmfb)
            context = ireert.SystemContext(vm_modules=[module], config=config)
            entry = module.lookup_function(function)
        except Exception as error:
            raise LoadError(f"loading the module: {type(error).__name__}: {error}") from None
        if entry is None:
            raise LoadError(
                f"the compiled module has no function {function!r} "
                f"(it has {', '.join(module.function_names)})"
            )
        return context, entry, names, declared

    def _buffer_view(self, name: str, array: np.ndarray):
        element = _element_of().get(array.dtype)
        if element is None:
            raise HarnessUnsupported(
                f"input {name!r} is {dtypes.name_of(array)}: IREE's runtime has no such "
                "element type (a HAL buffer view holds numbers only)"
            )
        array = np.require(array, requirements="C")  # ascontiguousarray would make 0-d arrays 1-d
        if array.dtype == _BFLOAT16:
            array = array.view(np.uint16)
        device = self.config.device
        return device.allocator.allocate_buffer_copy(
            memory_type=ireert.MemoryType.DEVICE_LOCAL,
            allowed_usage=ireert.BufferUsage.DEFAULT,
            device=device,
            buffer=array,
            element_type=element,
        )

    def execute(self, session, feeds):
        context, entry, names, declared = session
        views = [self._buffer_view(name, feeds[name]) for name in names]
        arguments = ireert.VmVariantList(len(views))
        for view in views:
            arguments.push_ref(view)
        results = ireert.VmVariantList(len(declared))
        try:
            context.vm_context.invoke(entry, arguments, results)
        except Exception as error:
            raise RunError(f"{type(error).__name__}: {_short(str(error))}") from None
        if len(results) != len(declared):
            raise HarnessUnsupported(
                f"IREE returned {len(results)} results for a model of {len(declared)} outputs"
            )
        return [
            self._read(results.get_as_object(i, ireert.HalBufferView), declared[i])
            for i in range(len(declared))
        ]

    def _read(self, view, declared: np.dtype | None) -> np.ndarray:
        element = int(view.element_type)
        if element not in _output_of():
            raise HarnessUnsupported(f"IREE returned element type {element}, not read here")
        kind, own = _output_of()[element]
        dtype = own
        if (
            declared is not None
            and kind == "int"
            and declared.itemsize == own.itemsize
            and declared.kind in "biu"
        ):
            dtype = declared  # signedness (and bool) erased by IREE: the model's type
        shape = tuple(view.shape)
        if not int(np.prod(shape, dtype=np.int64)):
            return np.empty(shape, dtype=dtype)
        raw = np.dtype(f"uint{own.itemsize * 8}") if own.kind != "c" else own
        array = np.array(view.map().asarray(shape, raw), copy=True)
        return array.view(dtype)


def _on_gpu(properties: Mapping[str, object]) -> bool:
    return properties.get("driver") in GPU_DRIVERS


def run_iree(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """IREE's ONNX flow: iree-import-onnx, iree-compile for the host CPU, local-task.
    Inputs and the output cross as buffer views: IREE's function wrapper has no
    bfloat16 and reads unsigned integers back as signed."""
    import subprocess
    import sys
    import tempfile

    import iree.compiler as compiler
    import iree.runtime as rt
    import onnx

    proto = onnx.load(str(model))
    # what the entry function takes, positionally: the inputs that are not initializers
    baked = {tensor.name for tensor in proto.graph.initializer}
    names = [value.name for value in proto.graph.input if value.name not in baked]
    with tempfile.TemporaryDirectory() as folder:
        mlir = Path(folder) / "model.mlir"
        command = [sys.executable, "-m", "iree.compiler.tools.import_onnx", str(model), "-o"]
        subprocess.run([*command, str(mlir)], check=True)
        vmfb = compiler.compile_file(
            str(mlir), target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"]
        )
    config = rt.Config("local-task")
    module = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
    context = rt.SystemContext(vm_modules=[module], config=config)
    E = rt.HalElementType
    arguments = rt.VmVariantList(len(names))
    for name in names:
        array = np.require(feeds[name], requirements="C")
        kind = "BFLOAT_16" if array.dtype.name == "bfloat16" else None
        kind = kind or {"b": "BOOL_8", "i": "SINT", "u": "UINT", "f": "FLOAT"}[array.dtype.kind]
        if kind in ("SINT", "UINT", "FLOAT"):
            kind += f"_{array.dtype.itemsize * 8}"
        bits = array.view(np.uint16) if array.dtype.name == "bfloat16" else array
        arguments.push_ref(config.device.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
            device=config.device, buffer=bits, element_type=getattr(E, kind),
        ))  # fmt: skip
    results = rt.VmVariantList(1)
    context.vm_context.invoke(module.lookup_function(proto.graph.name), arguments, results)
    view = results.get_as_object(0, rt.HalBufferView)
    output = proto.graph.output[0].type.tensor_type.elem_type
    declared = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(output))  # ml_dtypes for bfloat16
    shape = tuple(view.shape)
    # The bytes as they are (an unsigned integer of the width; complex as it is),
    # then the model's type: IREE erases signedness.
    raw = declared if declared.kind == "c" else np.dtype(f"uint{declared.itemsize * 8}")
    if not np.prod(shape):
        return np.empty(shape, declared)
    return np.array(view.map().asarray(shape, raw), copy=True).view(declared)


RUNTIME = Runtime(
    name=RUNTIME_NAME,
    adapter=IreeAdapter.__name__,
    position=5,
    # its compiler and its runtime are two distributions
    modules=("iree.compiler", "iree.runtime"),
    extra="iree",
    # a compiler: its compile cost per model (docs/compilers.md, "Cost") would
    # slow the main job and every fuzz campaign that runs the default runtimes
    opt_in=True,
    pack_size=32,
    # It compiles a pack per job: seconds (docs/compilers.md, "Cost"), up to
    # twice that with two workers on two cores; 30 s leaves room.
    timeout=30.0,
    # Its default is its guides' recipe, the host CPU (--iree-llvmcpu-target-cpu=host).
    profiles={
        "generic": {"extra_args": ["--iree-llvmcpu-target-cpu=generic"]},
        # Compiled for the device's CUDA target (IreeAdapter picks it), run on
        # IREE's cuda driver.
        "cuda": {"target_backends": ["cuda"], "extra_args": [], "driver": "cuda"},
        # IREE's own ONNX op suite (iree-test-suites onnx_ops): its importer upgrades
        # every model to opset 17, its CPU config keeps float64 and runs on local-sync;
        # on the host CPU, as the default. The export's IREE lists are judged in it.
        "onnx-ops": {
            "opset_version": 17,
            "extra_args": [
                "--iree-input-demote-f64-to-f32=false",
                "--iree-llvmcpu-target-cpu=host",
            ],
            "driver": "local-sync",
        },
    },
    gpu=_on_gpu,
    native=("onnx-ops-configs",),
    repro=run_iree,
)
