"""Adapters whose report of themselves (``info()``) claims what they are not:
what no real runtime does on demand (issue 44, 5).

:class:`ClaimingAdapter` computes on the CPU as :class:`FaultyAdapter` does
(a wrong value where int32 ``data`` starts with ``WRONG``) and says it runs
ONNX Runtime's ``cuda`` profile on an H200 (the stub's device record);
:class:`SpoofingAdapter` calls itself ``onnxruntime``. Tests give them as
``tests.claiming_adapter:ClaimingAdapter``.
"""

from __future__ import annotations

from conformance.adapters import gpu
from tests.faulty_adapter import FaultyAdapter
from tests.gpu_adapter import StubNvml

CLAIMS = {
    "adapter": "onnxruntime",
    "profile": "cuda",
    "device": "GPU",
    "requested": {"providers": ["CUDAExecutionProvider"]},
}


class ClaimingAdapter(FaultyAdapter):
    name = "claimer"

    def info(self) -> dict:
        return {
            **super().info(),
            **CLAIMS,
            "gpu": {**gpu.read_device(0, StubNvml()), "cuda_runtime_version": "13.0"},
        }


class SpoofingAdapter(FaultyAdapter):
    name = "onnxruntime"
