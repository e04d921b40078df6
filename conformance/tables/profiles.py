"""Runtime profiles: the named configurations a target can run in.

``--runtime NAME[:PROFILE]`` picks one; a bare name is the ``default``
profile, which sets nothing: what a user gets out of the box
(``core.compile_model(model, "CPU")``, a default ``SessionOptions``) is what
the main job judges. Each profile is the properties its adapter sets, by the
runtime's own names; the adapter records what it asked for and what the
runtime says it got (``header.json`` ``runtimes``).

Why these: OpenVINO's verdicts change with the thread count (a one-thread
GatherElements reads an index of 2^31-1 instead of refusing it), with the
execution mode, and with the inference precision its CPU plugin picks by CPU
(bf16 where the CPU has AMX/avx512_bf16); ONNX Runtime's with its graph
optimizations (constant folding computes Gather of initializers itself) and
with its execution provider (``openvino-ep`` judges only the nodes the
OpenVINO EP ran: conformance/adapters/ort.py says how it tells).
"""

from __future__ import annotations

DEFAULT = "default"

PROFILES: dict[str, dict[str, dict[str, object]]] = {
    "openvino": {
        DEFAULT: {},
        "1thread": {"INFERENCE_NUM_THREADS": 1},
        "accuracy": {"EXECUTION_MODE_HINT": "ACCURACY"},
        "f32": {"INFERENCE_PRECISION_HINT": "f32"},
        "bf16": {"INFERENCE_PRECISION_HINT": "bf16"},
    },
    "onnxruntime": {
        DEFAULT: {},
        "no-opt": {"graph_optimization_level": "ORT_DISABLE_ALL"},
        "1thread": {"intra_op_num_threads": 1, "inter_op_num_threads": 1},
        # The OpenVINO execution provider (package onnxruntime-openvino, in a
        # targets file's environment): what ONNX Runtime users of OpenVINO get.
        "openvino-ep": {
            "providers": ["OpenVINOExecutionProvider"],
            "provider_options": [{"device_type": "CPU"}],
        },
    },
    "reference": {
        DEFAULT: {},
    },
}

# Profiles whose runtime comes from another package, which cannot share an
# environment with the runtime's usual one (onnxruntime-openvino is imported as
# `onnxruntime` too): run them through a targets file's `python`.
PACKAGES: dict[tuple[str, str], str] = {("onnxruntime", "openvino-ep"): "onnxruntime-openvino"}
