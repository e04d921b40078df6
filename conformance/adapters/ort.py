"""ONNX Runtime through its Python binding: the CPU execution provider, or
another one a profile asks for (``openvino-ep``: the OpenVINO execution
provider of the ``onnxruntime-openvino`` package; ``cuda``: the CUDA
execution provider of ``onnxruntime-gpu``, on an NVIDIA GPU, whose device
``info()`` records as ``gpu``: :mod:`conformance.adapters.gpu`, docs/gpu.md).

Trap: the binding's NumPy path refuses ml_dtypes bfloat16 ("Numpy_type 256
can't be converted to MLDataType") both ways, so bfloat16 goes in as an
OrtValue made from the uint16 bits with the ONNX element type set, and comes
out as the raw bytes of the output OrtValue. Strings cannot be OrtValues, so
every model without bfloat16 uses the plain ``session.run`` path.

Another execution provider (properties ``providers`` and ``provider_options``)
is judged only on what it ran. ONNX Runtime places each node on the first
provider that takes it and silently runs the rest on the CPU provider, and it
constant-folds a node whose inputs are all initializers on the CPU before any
provider sees the graph. So such a session is made with CPU fallback disabled
(``session.disable_cpu_ep_fallback``), and its placement is read back:

- the session refuses to load because a node went to the CPU provider: the
  load is tried again without graph optimizations to tell where ONNX
  Runtime places the node; on the CPU provider, the case is
  ``harness_unsupported`` ("not the EP's verdict"), naming the provider;
- a load refused by an optimization pass (constant folding on the CPU) that
  the same model without optimizations passes: not the EP's verdict either;
- a session that loads is profiled on its first run: the profile's node
  events name the provider of every kernel that ran; if none ran on the
  requested provider (the output was folded into a constant), not the EP's
  verdict. Every other result of such a target ran on the requested provider.
"""

from __future__ import annotations

import atexit
import ctypes
import glob
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np
from onnx import TensorProto

from conformance.adapters import gpu
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
    import onnxruntime as ort
else:
    ort = runtime_module("onnxruntime")

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


RUNTIME_NAME = "onnxruntime"
# What puts a session on an NVIDIA GPU: its first provider (docs/gpu.md).
GPU_PROVIDERS = ("CUDAExecutionProvider", "TensorrtExecutionProvider")
SPINNING = "session.intra_op.allow_spinning"
NO_FALLBACK = "session.disable_cpu_ep_fallback"
CPU = "CPUExecutionProvider"
# What ONNX Runtime says when CPU fallback is disabled and a node needs it.
FALLBACK_REFUSED = "fallback to CPU EP has been explicitly disabled"
# The package that brings each provider, and where the docs say how to run it.
PROVIDER_PACKAGES = {
    "OpenVINOExecutionProvider": "onnxruntime-openvino: docs/cli.md",
    "CUDAExecutionProvider": "onnxruntime-gpu: docs/gpu.md",
}


def _optimization(name) -> ort.GraphOptimizationLevel:
    return ort.GraphOptimizationLevel.__members__[str(name)]


def _bundled_openvino() -> str | None:
    """The OpenVINO version ``onnxruntime-openvino`` ships (its libopenvino.so.X.Y.Z):
    no API reports it, and it need not be the ``openvino`` package's version."""
    found = glob.glob(os.path.join(os.path.dirname(ort.__file__), "capi", "libopenvino.so.*.*.*"))
    return os.path.basename(sorted(found)[-1]).removeprefix("libopenvino.so.") if found else None


class OnnxRuntimeAdapter(Adapter):
    name = RUNTIME_NAME
    provider = CPU

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
        # starve whatever runs next: destroying one session with hundreds of others
        # alive took thousands of times longer than without spinning, which made
        # every uncached model (initializer variants, packs, refusals) dear
        # (the figures: docs/development.md, "Run throughput").
        # Spinning decides how an idle thread waits, not what any thread computes:
        # the outputs are the same bytes. info() reads it back (effective).
        self._options.add_session_config_entry(SPINNING, "0")
        settings = dict(self.properties)
        # The providers in ONNX Runtime's order of preference, and their options.
        self.providers = list(settings.pop("providers", [CPU]))
        self.provider_options = list(settings.pop("provider_options", [{}] * len(self.providers)))
        self.provider = self.providers[0]
        for name, value in settings.items():
            if name == "graph_optimization_level":
                value = _optimization(value)
            elif name == "execution_mode":
                value = ort.ExecutionMode.__members__[str(value)]
            setattr(self._options, name, value)
        self._placed = self.provider != CPU  # another provider: judge only what it ran
        if self._placed:
            self._options.add_session_config_entry(NO_FALLBACK, "1")
            # Profiles are read once per session (its first run) and deleted.
            folder = tempfile.mkdtemp(prefix="conformance-ort-profile-")
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            self._options.enable_profiling = True
            self._options.profile_file_prefix = os.path.join(folder, "profile")

    def _session(self, model: bytes, options: ort.SessionOptions) -> ort.InferenceSession:
        return ort.InferenceSession(
            model, options, providers=self.providers, provider_options=self.provider_options
        )

    def info(self) -> dict:
        available = ort.get_available_providers()
        if self.provider not in available:
            # ONNX Runtime would warn and run everything on the CPU provider,
            # which would then be judged under the other provider's name.
            package = PROVIDER_PACKAGES.get(self.provider, "docs/cli.md")
            raise RuntimeError(
                f"{self.provider} is not available in onnxruntime {ort.__version__} "
                f"(available: {', '.join(available)}); run this target in an environment "
                f"with the package that provides it ({package})"
            )
        # On a GPU: the device first (no GPU, no start: never a silent CPU run).
        device = self._device() if self.provider in GPU_PROVIDERS else None
        session = self._session(probe_model(), self._options)
        options = session.get_session_options()
        if self._placed:
            _providers_that_ran(session)  # ends the probe's profile
        found = {
            "name": self.name,
            "version": ort.__version__,
            "device": "GPU" if device else "CPU",
            "provider": self.provider,
            "providers": session.get_providers(),
            "available_providers": available,
            "effective": {
                **{name: str(getattr(options, name)).rpartition(".")[2] for name in self.EFFECTIVE},
                SPINNING: options.get_session_config_entry(SPINNING),
            },
        }
        if self._placed:
            found["provider_options"] = self.provider_options
            found["effective"][NO_FALLBACK] = options.get_session_config_entry(NO_FALLBACK)
        if self.provider == "OpenVINOExecutionProvider":
            found["openvino_bundled"] = _bundled_openvino()
        if device is not None:
            found["gpu"] = device
        return found

    def _device(self) -> dict:
        """The GPU the provider runs on (its ``device_id``), as NVML reads it,
        with the CUDA version this onnxruntime was built for (its runtime's:
        onnxruntime-gpu loads that CUDA's libraries)."""
        options = self.provider_options[0] if self.provider_options else {}
        device = gpu.read_device(int(options.get("device_id", 0)))
        try:
            from onnxruntime.capi import build_and_package_info
        except ImportError:  # a build without it: the version is not known
            built = None
        else:
            built = getattr(build_and_package_info, "cuda_version", None)
        return {**device, "cuda_runtime_version": built or None}

    def load(self, model: bytes):
        try:
            session = self._session(model, self._options)
        except Exception as error:  # the binding raises its own exception types
            if self._placed:
                self._not_placed(model, str(error))
            raise LoadError(str(error)) from None
        output_types = [o.type for o in session.get_outputs()]
        # Decided once per model: only bfloat16 needs the slower OrtValue path.
        bfloat16 = "tensor(bfloat16)" in output_types + [i.type for i in session.get_inputs()]
        # Another provider: [None] until the first run's profile says where it ran,
        # then [""] (on the provider) or [why the results are not its verdict].
        placement = [None] if self._placed else [""]
        return session, [o.name for o in session.get_outputs()], output_types, bfloat16, placement

    def _not_placed(self, model: bytes, message: str) -> None:
        """Raise HarnessUnsupported when a refused load was not the provider's verdict."""
        if FALLBACK_REFUSED in message:
            raise HarnessUnsupported(
                f"not the {self.provider}'s verdict: ONNX Runtime places this node on "
                f"{CPU}, which would run it (CPU fallback, disabled here to tell)"
            )
        # Refused by an optimization pass (constant folding runs CPU kernels
        # before partitioning)? Then the same model loads without optimizations.
        plain = ort.SessionOptions()
        plain.add_session_config_entry(NO_FALLBACK, "1")
        plain.graph_optimization_level = _optimization("ORT_DISABLE_ALL")
        try:
            self._session(model, plain)
        except Exception as error:
            if FALLBACK_REFUSED in str(error):
                raise HarnessUnsupported(
                    f"not the {self.provider}'s verdict: ONNX Runtime places this node on "
                    f"{CPU}; its graph optimizations refused the model first: {message}"
                ) from None
            return  # refused without optimizations too: by the provider or ORT's checker
        raise HarnessUnsupported(
            f"not the {self.provider}'s verdict: refused by ONNX Runtime's graph "
            f"optimizations on the CPU (e.g. constant folding) before partitioning: {message}"
        )

    def execute(self, session, feeds):
        session, output_names, output_types, bfloat16, placement = session
        if placement[0] is None:  # the session's first run: read its profile
            try:
                outputs = self._execute(session, output_names, output_types, bfloat16, feeds)
            except RunError:
                # CPU fallback is disabled: only the provider's kernels ran, and failed.
                placement[0] = ""
                _providers_that_ran(session)
                raise
            placement[0] = self._verdict_of(_providers_that_ran(session))
            if not placement[0]:
                return outputs
        if placement[0]:
            raise HarnessUnsupported(placement[0])
        return self._execute(session, output_names, output_types, bfloat16, feeds)

    def _verdict_of(self, ran: set[str]) -> str:
        """ "" when a kernel ran on the provider, else why the outputs are not its verdict."""
        if self.provider in ran:
            return ""
        where = ", ".join(sorted(ran)) or (
            "none: ONNX Runtime folded the node into a constant on the CPU before partitioning"
        )
        return f"not the {self.provider}'s verdict: no kernel ran on it ({where})"

    def _execute(self, session, output_names, output_types, bfloat16, feeds):
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


def _providers_that_ran(session: ort.InferenceSession) -> set[str]:
    """Ends the session's profiling: the providers of the kernels that ran
    (node events name theirs; a provider's fused subgraph is one node)."""
    path = session.end_profiling()
    try:
        with open(path) as file:
            events = json.load(file)
    finally:
        os.unlink(path)
    return {
        str(event["args"]["provider"])
        for event in events
        if isinstance(event, dict)
        and event.get("cat") == "Node"
        and isinstance(event.get("args"), dict)
        and event["args"].get("provider")
    }


def _on_gpu(properties: Mapping[str, object]) -> bool:
    """A session whose first provider is a GPU's (the CPU's when none is set)."""
    providers: Any = properties.get("providers") or [CPU]
    return next(iter(providers)) in GPU_PROVIDERS


def run_onnxruntime(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    output = session.get_outputs()[0]
    if output.type != "tensor(bfloat16)" and not any(
        a.dtype.name == "bfloat16" for a in feeds.values()
    ):
        return session.run(None, feeds)[0]
    # The binding has no bfloat16 NumPy path: OrtValues made from the bits.
    import ctypes

    import ml_dtypes

    values = {}
    for name, array in feeds.items():
        if array.dtype.name == "bfloat16":
            values[name] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
                np.require(array.view(np.uint16), requirements="C"), 16
            )
        else:
            values[name] = ort.OrtValue.ortvalue_from_numpy(np.require(array, requirements="C"))
    result = session.run_with_ort_values([output.name], values)[0]
    raw = ctypes.string_at(result.data_ptr(), result.tensor_size_in_bytes())
    return np.frombuffer(raw, np.uint16).view(ml_dtypes.bfloat16).reshape(result.shape())


RUNTIME = Runtime(
    name=RUNTIME_NAME,
    adapter=OnnxRuntimeAdapter.__name__,
    position=0,
    modules=("onnxruntime",),
    extra="onnxruntime",
    pack_size=32,
    profiles={
        "no-opt": {"graph_optimization_level": "ORT_DISABLE_ALL"},
        "1thread": {"intra_op_num_threads": 1, "inter_op_num_threads": 1},
        # The OpenVINO execution provider (package onnxruntime-openvino, in a
        # targets file's environment): what ONNX Runtime users of OpenVINO get.
        "openvino-ep": {
            "providers": ["OpenVINOExecutionProvider"],
            "provider_options": [{"device_type": "CPU"}],
        },
        # The CUDA execution provider (package onnxruntime-gpu, in a targets
        # file's environment), placement checked as for openvino-ep.
        "cuda": {"providers": ["CUDAExecutionProvider"]},
    },
    precise=("no-opt",),
    # onnxruntime-openvino is imported as `onnxruntime` too: its own environment
    packages={"openvino-ep": "onnxruntime-openvino", "cuda": "onnxruntime-gpu"},
    gpu=_on_gpu,
    native=("backend-series-filters", "broken-tests"),
    repro=run_onnxruntime,
    header_package="onnxruntime",
)
