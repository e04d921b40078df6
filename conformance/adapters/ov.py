"""OpenVINO through its own Python API (``openvino``), CPU device.

Traps handled here:
- A bfloat16 NumPy array is read as float16 unless the tensor's element
  type is set, so bfloat16 tensors are made as ``ov.Type.bf16`` and filled
  with the uint16 bits; outputs are read by their element type, never by the
  NumPy dtype the binding reports.
- String tensors go through NumPy fixed-width strings, which drop trailing
  NUL characters both ways; such inputs are refused as harness-unsupported
  instead of being blamed on OpenVINO, and so are models whose string
  initializers hold them (the output, read back through the same path,
  could not carry them).
- Object arrays are refused by ``ov.Tensor``; strings are converted first.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import mmap
import os
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np
import onnx

from conformance.adapters.contract import (
    Adapter,
    HarnessUnsupported,
    LoadError,
    RunError,
    Runtime,
    probe_model,
    runtime_module,
)

if TYPE_CHECKING:
    import openvino as ov
else:
    ov = runtime_module("openvino")

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


@functools.cache
def _dtypes() -> dict:
    """OpenVINO element type -> NumPy dtype of the values it holds."""
    return {
        ov.Type.boolean: np.dtype(np.bool_),
        ov.Type.i8: np.dtype(np.int8),
        ov.Type.i16: np.dtype(np.int16),
        ov.Type.i32: np.dtype(np.int32),
        ov.Type.i64: np.dtype(np.int64),
        ov.Type.u8: np.dtype(np.uint8),
        ov.Type.u16: np.dtype(np.uint16),
        ov.Type.u32: np.dtype(np.uint32),
        ov.Type.u64: np.dtype(np.uint64),
        ov.Type.f16: np.dtype(np.float16),
        ov.Type.bf16: _BFLOAT16,
        ov.Type.f32: np.dtype(np.float32),
        ov.Type.f64: np.dtype(np.float64),
    }


# A fed array of this many bytes or more is shared with OpenVINO, not copied
# on every run (a fed embedding table: docs/development.md, Benchmarks). The
# CPU plugin reads a shared input in place only when no node of the model
# writes to its memory (else it copies it first: "the user's memory will not
# be modified"), and the outputs are copied out before anything else runs; so
# the feeds stay as fed, and the outputs own their bytes (tests/test_adapters.py
# holds both). A read-only array (a worker's feeds are: the model's constants,
# unpickled) is shared through one copy of it in memory mapped read-only
# (:func:`_read_only_copy`): a write there would crash the worker, never
# change a later run's feed.
SHARE_BYTES = 1 << 20
_PROT_READ = 1
# read-only array's id -> (a weak reference to it, its copy's mmap, the copy)
_COPIES: dict[int, tuple[weakref.ref, mmap.mmap, np.ndarray]] = {}


def _read_only_copy(array: np.ndarray) -> np.ndarray | None:
    """``array``'s bytes in anonymous memory that the process may only read
    (mprotect), as an array NumPy sees as writeable (which OpenVINO's binding
    asks before it shares); made once per array while it lives (a worker's
    cached feed is the same array run after run). None where it cannot be made."""
    known = _COPIES.get(id(array))
    if known is not None and known[0]() is array:
        return known[2]
    try:
        buffer = mmap.mmap(-1, array.nbytes)
        copy = np.frombuffer(buffer, array.dtype, array.size).reshape(array.shape)
        copy[...] = array
        address = copy.__array_interface__["data"][0]  # page-aligned: mmap's own
        libc = ctypes.CDLL(None, use_errno=True)
        length = ctypes.c_size_t(len(buffer))
        if libc.mprotect(ctypes.c_void_p(address), length, _PROT_READ) != 0:
            return None
    except (OSError, ValueError, AttributeError):
        return None
    key = id(array)

    def forget(_: weakref.ref) -> None:  # the array is gone: so is its copy
        _COPIES.pop(key, None)

    _COPIES[key] = (weakref.ref(array, forget), buffer, copy)
    return copy


def _to_tensor(array: np.ndarray) -> ov.Tensor:
    if array.dtype == object:
        strings = array.ravel().tolist()
        if any(s.endswith("\x00") for s in strings):
            raise HarnessUnsupported(
                "string tensor with a trailing NUL character: the OpenVINO Python API "
                "converts strings through NumPy fixed-width strings, which drop it"
            )
        tensor = ov.Tensor(ov.Type.string, ov.Shape(list(array.shape)))
        if strings:
            tensor.str_data = np.array(strings, dtype=str).reshape(array.shape)
        return tensor
    array = np.require(array, requirements="C")  # ascontiguousarray would make 0-d arrays 1-d
    if array.dtype == _BFLOAT16:
        tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(array.shape)))
        if array.size:
            tensor.data.view(np.uint16)[...] = array.view(np.uint16)
        return tensor
    if array.nbytes < SHARE_BYTES or not array.size:
        return ov.Tensor(array, shared_memory=False)
    if not array.flags.writeable:  # the binding shares no read-only array
        copy = _read_only_copy(array)
        if copy is None:
            return ov.Tensor(array, shared_memory=False)
        array = copy
    return ov.Tensor(array, shared_memory=True)


def _from_tensor(tensor: ov.Tensor) -> np.ndarray:
    kind = tensor.element_type
    shape = tuple(tensor.shape)
    if kind == ov.Type.string:
        if not tensor.size:
            return np.empty(shape, dtype=object)
        out = np.empty(shape, dtype=object)
        out.ravel()[:] = [str(s) for s in np.asarray(tensor.str_data).ravel()]
        return out
    if kind not in _dtypes():
        raise HarnessUnsupported(f"OpenVINO returned element type {kind}, which has no NumPy twin")
    dtype = _dtypes()[kind]
    if not tensor.size:
        return np.empty(shape, dtype=dtype)
    # Read the bytes, whatever NumPy dtype the binding attaches (f16 for bf16).
    return np.frombuffer(np.require(tensor.data, requirements="C").tobytes(), dtype).reshape(shape)


def _refuse_trailing_nul_initializers(model: bytes) -> None:
    try:
        proto = onnx.ModelProto.FromString(model)
    except Exception:  # not a model: OpenVINO says so itself, as a load error
        return
    for tensor in proto.graph.initializer:
        if tensor.data_type == onnx.TensorProto.STRING and any(
            s.endswith(b"\x00") for s in tensor.string_data
        ):
            raise HarnessUnsupported(
                "string initializer with a trailing NUL character: the OpenVINO Python API "
                "returns strings through NumPy fixed-width strings, which would drop it"
            )


# OpenVINO's own compiled-model cache (CACHE_DIR): a compile whose blob is
# there is an import, about a third of its CPU (docs/development.md, "The main
# job's time"). The folder, unless this variable names another or says "off".
CACHE_ENV = "CONFORMANCE_OPENVINO_CACHE"
RUNTIME_NAME = "openvino"
NO_CACHE = "off"


def cache_root() -> str | None:
    """$CONFORMANCE_OPENVINO_CACHE, else the user's cache folder; None: "off"."""
    given = os.environ.get(CACHE_ENV)
    if given == NO_CACHE:
        return None
    if given:
        return given
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "onnx-gather-conformance", "openvino")


def _cpu_flags() -> str:
    """Every flag /proc/cpuinfo lists (empty elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("flags"):
                    return " ".join(sorted(line.partition(":")[2].split()))
    except OSError:
        pass
    return ""


def cache_key(device_name: str, properties: dict) -> str:
    """The subfolder of one cache: OpenVINO's own key holds the model, the
    properties given and the device's name (the CPU's brand string, which a
    virtual machine may share across CPUs of other instruction sets), not the
    CPU's flags and cores, on which the defaults it compiles with depend (bf16
    where AMX or avx512_bf16 is there; threads). So the folder is keyed by all
    of them: a blob is only read back where it was compiled for the same."""
    held = json.dumps(
        {
            "openvino": ov.get_version(),
            "device": device_name,
            "flags": _cpu_flags(),
            "cores": os.cpu_count(),  # the thread count it compiles for by default
            "properties": {str(k): str(v) for k, v in sorted(properties.items())},
        },
        sort_keys=True,
    )
    return hashlib.sha256(held.encode()).hexdigest()[:16]


def _text(value) -> str:
    """A property value as its name: ``bf16`` (not ``<Type: 'bfloat16'>``), ``ACCURACY``."""
    if isinstance(value, ov.Type):
        return value.get_type_name()
    return str(value).rpartition(".")[2]


class OpenVinoAdapter(Adapter):
    name = RUNTIME_NAME
    device = "CPU"
    # A compile costs far more than a run, so a cache miss is expensive; a
    # compiled one-node model is small in memory, so 512 of them are cheap (the
    # compile's figures: docs/development.md, "Pack sizes").
    cache_size = 512

    # Read back from a compiled model: what decides verdicts (precision, threads, mode).
    EFFECTIVE = (
        "INFERENCE_PRECISION_HINT",
        "INFERENCE_NUM_THREADS",
        "EXECUTION_MODE_HINT",
        "PERFORMANCE_HINT",
        "NUM_STREAMS",
        "DYNAMIC_QUANTIZATION_GROUP_SIZE",
    )

    def __init__(self, properties: dict | None = None) -> None:
        super().__init__(properties)
        self._core = ov.Core()
        root = cache_root()
        self.cache_dir = None
        self._uncached = None  # a Core without the cache, made if the cache fails
        if root:
            name = self._core.get_property(self.device, "FULL_DEVICE_NAME")
            folder = os.path.join(root, cache_key(name, self.properties or {}))
            try:
                self._core.set_property({"CACHE_DIR": folder})
                self.cache_dir = folder
            except RuntimeError:  # not a folder it can make (read-only home): no cache
                pass

    def info(self) -> dict:
        compiled = self._core.compile_model(
            self._core.read_model(probe_model(), b""), self.device, self.properties
        )
        effective: dict[str, str | None] = {}
        for name in self.EFFECTIVE:
            try:
                effective[name] = _text(compiled.get_property(name))
            except RuntimeError:
                effective[name] = None
        return {
            "name": self.name,
            "version": ov.get_version(),
            "device": self.device,
            "device_name": self._core.get_property(self.device, "FULL_DEVICE_NAME"),
            "effective": effective,
        }

    def load(self, model: bytes):
        _refuse_trailing_nul_initializers(model)
        try:
            compiled = self._compile(model)
            request = compiled.create_infer_request()
        except Exception as error:
            raise LoadError(str(error)) from None
        names = [port.any_name for port in compiled.inputs]
        return request, names, len(compiled.outputs)

    def _compile(self, model: bytes):
        try:
            return self._core.compile_model(
                self._core.read_model(model, b""), self.device, self.properties
            )
        except Exception as error:
            if not self.cache_dir or self.cache_dir not in str(error):
                raise
        # The cache failed, not the model: two workers writing one blob race in
        # OpenVINO's cache manager ("filesystem error: cannot set permissions:
        # No such file or directory [<cache folder>/<blob>]"). What OpenVINO
        # says of the model is what it says without the cache.
        uncached = self._uncached
        if uncached is None:
            uncached = self._uncached = ov.Core()
        return uncached.compile_model(uncached.read_model(model, b""), self.device, self.properties)

    def execute(self, session, feeds):
        request, names, n_outputs = session
        tensors = {name: _to_tensor(feeds[name]) for name in names}
        try:
            request.infer(tensors)
            outputs = [request.get_output_tensor(i) for i in range(n_outputs)]
        except Exception as error:
            raise RunError(str(error)) from None
        return [_from_tensor(tensor) for tensor in outputs]


def run_openvino(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(str(model), "CPU", {"INFERENCE_NUM_THREADS": 1})
    request = compiled.create_infer_request()
    tensors = {}
    for name, array in feeds.items():
        if array.dtype == object:
            tensor = ov.Tensor(ov.Type.string, ov.Shape(list(array.shape)))
            if array.size:
                tensor.str_data = np.array(array.ravel().tolist(), dtype=str).reshape(array.shape)
        elif array.dtype.name == "bfloat16":
            tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(array.shape)))
            if array.size:
                tensor.data.view(np.uint16)[...] = array.view(np.uint16)
        else:
            tensor = ov.Tensor(np.require(array, requirements="C"), shared_memory=False)
        tensors[name] = tensor
    request.infer(tensors)
    out = request.get_output_tensor(0)
    if out.element_type == ov.Type.string:
        strings = [str(s) for s in np.asarray(out.str_data).ravel()] if out.size else []
        result = np.empty(len(strings), dtype=object)
        result[:] = strings
        return result.reshape(tuple(out.shape))
    if out.element_type == ov.Type.bf16:
        import ml_dtypes

        raw = np.require(out.data, requirements="C").tobytes()
        return np.frombuffer(raw, np.uint16).view(ml_dtypes.bfloat16).reshape(tuple(out.shape))
    return np.array(out.data, copy=True).reshape(tuple(out.shape))


RUNTIME = Runtime(
    name=RUNTIME_NAME,
    adapter=OpenVinoAdapter.__name__,
    position=1,
    modules=("openvino",),
    extra="openvino",
    pack_size=32,
    profiles={
        "1thread": {"INFERENCE_NUM_THREADS": 1},
        "accuracy": {"EXECUTION_MODE_HINT": "ACCURACY"},
        # precise (tables/profiles): f32, and no dynamic quantization of activations
        "f32": {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0},
        "bf16": {"INFERENCE_PRECISION_HINT": "bf16"},
    },
    precise=("f32",),
    native=("backend-xfails",),
    repro=run_openvino,
    header_package="openvino",
)
