"""Runtime profiles: the named configurations a target can run in.

``--runtime NAME[:PROFILE]`` picks one; a bare name is the ``default``
profile, which sets nothing: what a user gets out of the box
(``core.compile_model(model, "CPU")``, a default ``SessionOptions``) is what
the main job judges. Each profile is the properties its adapter sets, by the
runtime's own names; the adapter records what it asked for and what the
runtime says it got (``header.json`` ``runtimes``). Each runtime declares its
own profiles in its adapter file (``Runtime.profiles``; the table of them
all: ``conformance.adapters.registry.PROFILES``); this module holds what is
not a runtime's: the default's name and what a property value may be.

Why profiles: OpenVINO's verdicts change with the thread count (a one-thread
GatherElements reads an index of 2^31-1 instead of refusing it), with the
execution mode, and with the inference precision its CPU plugin picks by CPU
(bf16 where the CPU has AMX/avx512_bf16); ONNX Runtime's with its graph
optimizations (constant folding computes Gather of initializers itself) and
with its execution provider (``openvino-ep`` judges only the nodes the
OpenVINO EP ran: conformance/adapters/ort.py says how it tells).

A runtime's **precise** profiles (``Runtime.precise``; the table:
``conformance.adapters.registry.PRECISE``) are what ``conformance model``
reruns a whole model in when its outputs differ, to tell a runtime's
precision from its bug: each computes in full precision and changes no value
to go faster. ONNX Runtime's ``no-opt``: no graph optimization. OpenVINO's
``f32``: ``INFERENCE_PRECISION_HINT=f32`` and
``DYNAMIC_QUANTIZATION_GROUP_SIZE=0``, since the CPU plugin otherwise
quantizes the activations of a MatMul with int8 weights to int8 on the fly
(group size 32 by default, where the CPU has VNNI or AMX), which is no
precision's rounding: how far that moved outputs is in docs/findings.md
("OpenVINO's f32 was not precise"), held by tests/test_precise_profiles.py.

The GPU profiles (docs/gpu.md) run on an NVIDIA GPU: each adapter file says
by which properties (``Runtime.gpu``; ``conformance.adapters.registry.on_gpu``).
"""

from __future__ import annotations

from conformance.messages import shown

DEFAULT = "default"

# What a property value may be, in a profile or a targets file's
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
