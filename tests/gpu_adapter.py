"""A GPU target without a GPU: what CI cannot get from a real one on demand.

:class:`StubNvml` stands in for NVIDIA's binding (``pynvml``) with the few
calls :func:`conformance.adapters.gpu.read_device` makes, answering as the
H200 of the recorded run (tests/data/h200-onnxruntime-cuda/) would.
:class:`FakeGpuAdapter` answers like a correct runtime (tests/faulty_adapter.py)
and reports that device, except where the first element of int32 ``data``
asks for a resource failure, with the messages ONNX Runtime's CUDA provider
gave on the H200 (:data:`CUBLAS`, :data:`CUDNN`, from its results.jsonl.gz):

- ``RESOURCES``: fails so every time (two failures: a harness error);
- ``BUSY``: fails so in a worker that ran another case before (the handles
  its sessions hold), and passes alone in a fresh one.

And a Gather out of range reads zero there, as the CUDA provider's kernel
does (no GPU here to show it).

Tests give it as ``adapter: tests.gpu_adapter:FakeGpuAdapter`` with
``device: gpu`` in a targets file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conformance.adapters import LoadError, gpu
from tests.faulty_adapter import FaultyAdapter

RESOURCES, BUSY = -1050, -1051

_CALL = (
    "[ONNXRuntimeError] : 1 : FAIL : Exception during initialization: "
    "/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:154 std::conditional_t<THRW, "
    "void, onnxruntime::common::Status> onnxruntime::CudaCall(ERRTYPE, const char*, const char*, "
    "SUCCTYPE, const char*, const char*, int) [with ERRTYPE = {t}; bool THRW = true; SUCCTYPE = "
    "{t}; std::conditional_t<THRW, void, common::Status> = void] /onnxruntime_src/onnxruntime/"
    "core/providers/cuda/cuda_call.cc:146 std::conditional_t<THRW, void, onnxruntime::common::"
    "Status> onnxruntime::CudaCall(ERRTYPE, const char*, const char*, SUCCTYPE, const char*, "
    "const char*, int) [with ERRTYPE = {t}; bool THRW = true; SUCCTYPE = {t}; std::conditional_t"
    "<THRW, void, common::Status> = void] {what} ; GPU=0 ; hostname=vm ; file=/onnxruntime_src/"
    "onnxruntime/core/providers/cuda/cuda_execution_provider.cc ; line={line} ; expr={expr}; \n\n"
)
CUBLAS = _CALL.format(
    t="cublasStatus_t", what="CUBLAS failure 3: the resource allocation failed", line=245,
    expr="cublasCreate(&cublas_handle_)",
)  # fmt: skip
CUDNN = _CALL.format(
    t="cudnnStatus_t", what="CUDNN failure 4000: CUDNN_STATUS_INTERNAL_ERROR", line=250,
    expr="cudnnCreate(&cudnn_handle_)",
)  # fmt: skip


@dataclass
class _Memory:
    total: int


@dataclass
class _Pci:
    busId: str  # NVML's own field name


class StubNvml:
    """pynvml's calls that read_device makes, answered for one device
    (``devices`` more of them: NVML index -> the same device)."""

    NAME = "NVIDIA H200"

    def __init__(self, capability=(9, 0), devices: int = 1, fail_init: str = "") -> None:
        self.capability, self.devices, self.fail_init = capability, devices, fail_init
        self.handles: list[object] = []  # what was asked for, in order

    def nvmlInit(self) -> None:
        if self.fail_init:
            raise RuntimeError(self.fail_init)

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetCount(self) -> int:
        return self.devices

    def nvmlDeviceGetHandleByIndex(self, index: int) -> object:
        self.handles.append(index)
        return index

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> object:
        self.handles.append(uuid)
        return uuid

    def nvmlDeviceGetCudaComputeCapability(self, handle) -> tuple[int, int]:
        return self.capability

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return 13000

    def nvmlDeviceGetName(self, handle) -> bytes:
        return self.NAME.encode()  # older bindings give bytes

    def nvmlDeviceGetMemoryInfo(self, handle) -> _Memory:
        return _Memory(150_754_820_096)

    def nvmlSystemGetDriverVersion(self) -> str:
        return "580.159.04"

    def nvmlDeviceGetUUID(self, handle) -> str:
        return "GPU-00000000-0000-0000-0000-000000000000"

    def nvmlDeviceGetPciInfo(self, handle) -> _Pci:
        return _Pci("00000000:00:05.0")


class FakeGpuAdapter(FaultyAdapter):
    name = "fakegpu"

    def info(self) -> dict:
        return {
            "name": self.name,
            "version": "1.31.1",
            "device": "GPU",
            "gpu": {**gpu.read_device(0, StubNvml()), "cuda_runtime_version": "13.0"},
        }

    def execute(self, session, feeds):
        data = {**session[3], **feeds}["data"]
        code = int(data.flat[0]) if data.dtype == np.int32 and data.size else 0
        if code == RESOURCES or (code == BUSY and self.jobs_run > 0):
            self.jobs_run += 1
            raise LoadError(CUDNN if code == RESOURCES else CUBLAS)
        indices = {**session[3], **feeds}["indices"]
        if session[0] == "Gather" and session[2] in (None, 0) and data.ndim == 1:
            size = data.shape[0]
            outside = (indices < -size) | (indices >= size)
            if outside.any():  # ONNX Runtime's CUDA Gather kernel: 0 where out of range
                self.jobs_run += 1
                read = np.take(data, np.where(outside, 0, indices))
                return [np.where(outside, np.zeros((), data.dtype), read)]
        return super().execute(session, feeds)
