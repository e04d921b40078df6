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

The GPU profiles (``onnxruntime:cuda``, ``iree:cuda``: docs/gpu.md) run on an
NVIDIA GPU: :func:`on_gpu` says which targets do, whatever their name.
"""

from __future__ import annotations

from conformance.messages import shown

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
        # The CUDA execution provider (package onnxruntime-gpu, in a targets
        # file's environment), placement checked as for openvino-ep.
        "cuda": {"providers": ["CUDAExecutionProvider"]},
    },
    "reference": {
        DEFAULT: {},
    },
    # The compilers' default is their documented recipe: TVM compiles for
    # target "llvm" (LLVM's generic CPU), IREE's guides for the host CPU
    # (--iree-llvmcpu-target-cpu=host); each has a profile with the other.
    "tvm": {
        DEFAULT: {},
        "host": {"target": "host"},  # the host CPU as TVM detects it (llvm -mcpu=<host>)
    },
    "iree": {
        DEFAULT: {},
        "generic": {"extra_args": ["--iree-llvmcpu-target-cpu=generic"]},
        # Compiled for the device's CUDA target (conformance/adapters/iree.py picks
        # it), run on IREE's cuda driver.
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
}

# Per runtime, its profiles of full precision and no optimisation: where a whole
# model's outputs differ between targets, `conformance model` runs the model
# again in these and records whether the difference disappears (docs/models.md).
PRECISE: dict[str, tuple[str, ...]] = {"openvino": ("f32",), "onnxruntime": ("no-opt",)}

# Profiles whose runtime comes from another package, which cannot share an
# environment with the runtime's usual one (onnxruntime-openvino is imported as
# `onnxruntime` too): run them through a targets file's `python`.
PACKAGES: dict[tuple[str, str], str] = {
    ("onnxruntime", "openvino-ep"): "onnxruntime-openvino",
    ("onnxruntime", "cuda"): "onnxruntime-gpu",
}

# What puts a target on an NVIDIA GPU, by its own properties: ONNX Runtime's
# first provider, IREE's driver. Such a target records its device, has its own
# worker cap (--gpu-workers) and has its resource failures retried
# (docs/gpu.md); a targets file's `device: gpu` says it of other adapters.
GPU_PROVIDERS = ("CUDAExecutionProvider", "TensorrtExecutionProvider")
GPU_DRIVERS = ("cuda",)


def on_gpu(adapter: str, properties: dict) -> bool:
    """Whether a target of this adapter with these properties runs on a GPU."""
    if adapter == "onnxruntime":
        providers = properties.get("providers") or ["CPUExecutionProvider"]
        return next(iter(providers)) in GPU_PROVIDERS
    if adapter == "iree":
        return properties.get("driver") in GPU_DRIVERS
    return False


# What a property value may be, in a profile above or a targets file's
# `properties`: what its worker is sent as JSON and the header records. A
# thread count (the runtime's own name for it) is a whole number >= 0.
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
THREAD_COUNTS = ("INFERENCE_NUM_THREADS", "intra_op_num_threads", "inter_op_num_threads")


def property_problem(name: str, value, path: tuple = ()) -> tuple[tuple, str] | None:
    """Where below the property (keys, list positions) and why its value is
    not one a worker can be given: None for a good value. Values are strings,
    booleans, integers within int64, finite floats, and lists and mappings
    (string keys) of them; never null, NaN or an infinity, which JSON has no
    word for (header.json and scoreboard.json would not be JSON)."""
    counts = name in THREAD_COUNTS and not path
    if counts and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        return path, f"{shown(value)}: a thread count is a whole number >= 0 (0: the default)"
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path, f"{shown(value)} is not UTF-8 text"
        return None
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            return path, f"{shown(value)} is outside int64"
        return None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return path, f"{value} is not a finite number (JSON has no NaN or infinity)"
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = property_problem(name, item, (*path, index))
            if found:
                return found
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or not key:
                return path, f"{shown(key)}: a key is a non-empty string"
            found = property_problem(name, item, (*path, key))
            if found:
                return found
        return None
    if value is None:
        return path, "no value (null): give one, or leave the property out"
    return path, f"{shown(value)} is not a property value (a {type(value).__name__})"
