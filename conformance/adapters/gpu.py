"""NVIDIA GPUs: the device a GPU target runs on, and the failures of a GPU
that are no runtime's verdict (docs/gpu.md).

The device is read through NVIDIA's management library (NVML) by its Python
binding, ``nvidia-ml-py`` (module ``pynvml``), in the target's worker, so in
the target's environment: :func:`read_device` gives the record a GPU
adapter's ``info()`` reports as ``gpu`` (name, compute capability, memory,
driver version, the CUDA version the driver supports, UUID, PCI bus id). It
raises :class:`NoGpu`, one line saying why, where there is no NVIDIA driver,
no device or no binding: a GPU target then does not start, and the run ends
at once (:mod:`conformance.engine.pool`), never silently on the CPU.

The CUDA device a runtime uses is its ordinal among the GPUs the process sees
(``CUDA_VISIBLE_DEVICES``, an index or a ``GPU-`` UUID per entry); NVML counts
all GPUs in PCI order. :func:`read_device` maps the one to the other through
``CUDA_VISIBLE_DEVICES``; on a machine with several GPUs, CUDA orders them
fastest first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, so docs/gpu.md asks
for one GPU per run (the record's UUID and PCI bus id say which it was).

A **resource failure** (:func:`resource_failure`) is a GPU's running out of
memory or handles, or losing its device: the message a runtime gives then
says nothing of the model. :data:`RESOURCE_FAILURES` holds the texts, the
first two as the H200 run recorded them (CUDA execution provider, 16
workers: tests/data/h200-onnxruntime-cuda/), the others the CUDA, cuBLAS,
cuDNN and IREE names of the same conditions. A GPU target's job that fails
so is run again alone in a fresh worker, and a second such failure is a
harness error, never ``rejected`` (:mod:`conformance.engine.pool`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
from typing import Any

# Each a regular expression searched in a load's or a run's error message.
RESOURCE_FAILURES: tuple[str, ...] = (
    # recorded: "CUBLAS failure 3: the resource allocation failed ; ... ;
    # expr=cublasCreate(&cublas_handle_);" and "CUDNN failure 4000:
    # CUDNN_STATUS_INTERNAL_ERROR ; ... ; expr=cudnnCreate(&cudnn_handle_);"
    r"expr=(?:cublas|cublasLt|cudnn)Create\(",
    r"CUBLAS failure 3\b|CUBLAS_STATUS_ALLOC_FAILED",
    r"CUDNN_STATUS_ALLOC_FAILED",
    r"CUDA failure 2: out of memory|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY",
    r"\bout of memory\b",
    r"Failed to allocate memory for requested buffer",  # ONNX Runtime's arena, on the device
    r"RESOURCE_EXHAUSTED",  # IREE's status for an allocation the device refused
    # a device lost or taken: CUDA's runtime and driver names
    r"cudaErrorDevicesUnavailable|CUDA_ERROR_DEVICE_UNAVAILABLE|busy or unavailable",
    r"cudaErrorNoDevice|CUDA_ERROR_NO_DEVICE|no CUDA-capable device is detected",
    r"GPU has fallen off the bus|cudaErrorDeviceUninitialized|CUDA_ERROR_DEVICE_NOT_LICENSED",
)
_RESOURCE = re.compile("|".join(f"(?:{pattern})" for pattern in RESOURCE_FAILURES))


def resource_failure(message: str) -> str | None:
    """The part of ``message`` that says a GPU ran out of resources or lost
    its device (:data:`RESOURCE_FAILURES`); None when it says no such thing."""
    found = _RESOURCE.search(message or "")
    return found.group(0) if found else None


class NoGpu(RuntimeError):
    """No NVIDIA GPU can be read here; the message says why, on one line."""


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _nvml_index(nvml: Any, ordinal: int):
    """The NVML handle of CUDA device ``ordinal`` of this process."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return nvml.nvmlDeviceGetHandleByIndex(ordinal)
    entries = [entry.strip() for entry in visible.split(",") if entry.strip()]
    if ordinal >= len(entries):
        raise NoGpu(
            f"no NVIDIA GPU {ordinal} among CUDA_VISIBLE_DEVICES={visible!r} "
            f"({len(entries)} visible)"
        )
    entry = entries[ordinal]
    if entry.isdigit():
        return nvml.nvmlDeviceGetHandleByIndex(int(entry))
    if entry.startswith("GPU-"):
        return nvml.nvmlDeviceGetHandleByUUID(entry)
    raise NoGpu(f"CUDA_VISIBLE_DEVICES entry {entry!r} is not an index or a GPU- UUID")


NVML_LIBRARY = "libnvidia-ml.so.1"  # what the NVIDIA driver installs (and pynvml loads)


def driver_missing() -> None:
    """Raise NoGpu when this machine has no NVIDIA driver (its NVML library
    cannot be loaded), which no package of the environment can make up for."""
    try:
        ctypes.CDLL(NVML_LIBRARY)
    except OSError as error:
        raise NoGpu(f"no NVIDIA GPU here: no NVIDIA driver ({error})") from None


def _pynvml() -> Any:
    """NVIDIA's binding, ``pynvml`` (package nvidia-ml-py); NoGpu without it."""
    try:
        import pynvml
    except ImportError:
        driver_missing()
        raise NoGpu(
            "nvidia-ml-py is not installed in this environment (pip install nvidia-ml-py): "
            "a GPU target records its device through it"
        ) from None
    return pynvml


def read_device(ordinal: int = 0, nvml: Any = None) -> dict:
    """The record of CUDA device ``ordinal``, read through NVML (``nvml``: the
    ``pynvml`` module, or a stand-in with its functions); NoGpu when there is
    none to read. ``memory_bytes`` is the device's total memory;
    ``cuda_driver_version`` the newest CUDA the driver runs ("13.0")."""
    if nvml is None:
        nvml = _pynvml()
    try:
        nvml.nvmlInit()
    except Exception as error:  # pynvml.NVMLError: no library, no driver loaded
        raise NoGpu(f"no NVIDIA GPU here: NVML did not start ({_text(error)})") from None
    try:
        count = nvml.nvmlDeviceGetCount()
        if count < 1:
            raise NoGpu("no NVIDIA GPU here: NVML sees no device")
        handle = _nvml_index(nvml, ordinal)
        major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
        cuda = int(nvml.nvmlSystemGetCudaDriverVersion())
        return {
            "name": _text(nvml.nvmlDeviceGetName(handle)),
            "compute_capability": f"{major}.{minor}",
            "memory_bytes": int(nvml.nvmlDeviceGetMemoryInfo(handle).total),
            "driver_version": _text(nvml.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": f"{cuda // 1000}.{cuda % 1000 // 10}",
            "uuid": _text(nvml.nvmlDeviceGetUUID(handle)),
            "pci_bus_id": _text(nvml.nvmlDeviceGetPciInfo(handle).busId),
            "cuda_ordinal": ordinal,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        }
    except NoGpu:
        raise
    except Exception as error:  # pynvml.NVMLError of a query
        raise NoGpu(f"NVML could not read GPU {ordinal}: {_text(error)}") from None
    finally:
        with contextlib.suppress(Exception):  # nothing to shut down: what was read stands
            nvml.nvmlShutdown()


def sm(compute_capability: str) -> int:
    """``"8.9"`` as IREE and NVCC number it: 89."""
    major, _, minor = compute_capability.partition(".")
    return int(major) * 10 + int(minor or 0)


def cuda_target(compute_capability: str, accepted: tuple[str, ...]) -> str | None:
    """The highest of ``accepted`` (``sm_80``...) at or below the device's
    compute capability: IREE embeds PTX (``.target sm_80``), which the driver
    compiles for the device at load, and PTX of an older target runs on any
    newer device; None when none is at or below it."""
    device = sm(compute_capability)
    fitting = [name for name in accepted if int(name.removeprefix("sm_")) <= device]
    return max(fitting, key=lambda name: int(name.removeprefix("sm_")), default=None)
