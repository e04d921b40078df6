"""Explanations: the mechanisms by which a runtime's wrong values are known to
come about, each as an exact function of the oracle's output.

A baseline family whose discrepancy depends on values (a value_mismatch that
shows only on some inputs) names its explanation (``explained_by:
int64-low32``); a result is covered only when the runtime's output is exactly
what the explanation makes of the oracle's output, element by element, bit for
bit: each element is either the oracle's or its transform. Anything else (garbage from a
new regression, another mechanism) is not explained and is NEW.

The judge records which explanations fit each value mismatch (``explained_by``
in results.jsonl), so the gate, the report and a reader of the records all
see the same answer.

An explanation with ``invalid`` is of an output the spec does not define at
all (``accepted_invalid`` of an input with out-of-range indices): a function
of what the spec defines where the indices are in range and of where they are
not (:func:`conformance.oracle.in_range`), checked position by position as
the others are; the judge records those that fit too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from conformance.tables import dtypes

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_INT32 = np.iinfo(np.int32)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_BFLOAT16_MAX = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)


@dataclass(frozen=True)
class Explanation:
    name: str
    dtypes: tuple[str, ...]  # data dtypes it can apply to
    description: str
    # expected -> what the explanation makes of it (same dtype and shape);
    # None for one that is a relation, not a function (``allowed`` decides)
    transform: Callable[[np.ndarray], np.ndarray] | None = None
    # (expected, actual) -> elementwise "the explanation allows this actual value"
    allowed: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    # The mechanism it is a form of, when several explanations describe one (how a
    # float64 constant is narrowed depends on the plugin's precision): a fuzz
    # campaign counts one bug per family (conformance.fuzz.bugs). "": its name.
    family: str = ""
    # What a model's deployer can do about it, in one line (conformance model
    # shows it beside each node it hits).
    workaround: str = ""
    # Of an accepted_invalid output: (the spec's output where the indices are in
    # range, the positions an out-of-range index selects) -> the output it makes
    invalid: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    # Of an accepted_invalid output, a relation: (the spec's output where the indices
    # are in range, the positions an out-of-range index selects, data flat, the
    # offset each position reads when no index is checked, the actual output) ->
    # elementwise "the explanation allows this actual value"
    unchecked: Callable[..., np.ndarray] | None = None

    @property
    def mechanism(self) -> str:
        return self.family or self.name

    @property
    def outcome(self) -> str:
        """The discrepancy kind whose outputs it explains."""
        return "accepted_invalid" if self.of_invalid else "value_mismatch"

    @property
    def of_invalid(self) -> bool:
        """Whether it explains outputs of inputs with out-of-range indices."""
        return self.invalid is not None or self.unchecked is not None


def _low32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.int32).astype(x.dtype)  # wraps, then sign-extends


def _saturate_int32(x: np.ndarray) -> np.ndarray:
    low = _INT32.min if np.issubdtype(x.dtype, np.signedinteger) else 0
    return np.clip(x, low, _INT32.max).astype(x.dtype)


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def _plus_zero(x: np.ndarray) -> np.ndarray:
    """Elementwise: the value is +0.0 (all bits clear)."""
    return _bits(x) == 0


def _narrowed(x: np.ndarray, limit: float) -> np.ndarray:
    """float64 -> float32 (beyond ``limit`` clamped to it, infinities included:
    OpenVINO 2026.4.1 returns +-FLT_MAX for +-inf in every variant, seen by a
    fuzz campaign and pinned by gather-float64-infinity-saturates) -> float64.
    NaN stays NaN."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        clamped = np.where(np.isnan(x), x, np.clip(x, -limit, limit))
        return clamped.astype(np.float32).astype(x.dtype)


def _float32_clamped(limit: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: _narrowed(x, limit)


def _constant_narrowed(limit: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Narrowed as :func:`_narrowed`, and where the float32 result is zero or
    subnormal it may come back +0.0 (flush-to-zero: GatherElements' constants
    do, Gather's keep the sign of a zero)."""

    def allowed(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
        narrowed = _narrowed(expected, limit)
        tiny = np.abs(narrowed) < np.finfo(np.float32).tiny
        return (_bits(narrowed) == _bits(actual)) | (tiny & _plus_zero(actual))

    return allowed


def _flushed(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Subnormals and -0.0 may come back +0.0 (denormals-are-zero)."""
    wide = expected.astype(np.float64)
    tiny = {
        np.dtype(np.float16): float(np.finfo(np.float16).tiny),
        np.dtype(np.float32): float(np.finfo(np.float32).tiny),
        np.dtype(np.float64): float(np.finfo(np.float64).tiny),
        _BFLOAT16: float(ml_dtypes.finfo(ml_dtypes.bfloat16).tiny),
    }[expected.dtype]
    return (np.abs(wide) < tiny) & _plus_zero(actual)


def _float32_bf16_clamped(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Finite float32 values beyond bfloat16's max come back as +-its max
    (infinities and NaNs kept); subnormals and -0.0 may come back +0.0."""
    over = np.isfinite(expected) & (np.abs(expected) > _BFLOAT16_MAX)
    limit = np.float32(_BFLOAT16_MAX)
    clamped = np.where(over, np.where(expected < 0, -limit, limit), expected).astype(np.float32)
    return (_bits(clamped) == _bits(actual)) | _flushed(expected, actual)


def _quiet_nans(x: np.ndarray) -> np.ndarray:
    quiet_bit = {2: 0x0200, 4: 0x0040_0000, 8: 0x0008_0000_0000_0000}[x.dtype.itemsize]
    if x.dtype == _BFLOAT16:
        quiet_bit = 0x0040
    bits = _bits(x)
    nan = np.isnan(x.astype(np.float64))
    return np.where(nan, bits | quiet_bit, bits).astype(bits.dtype).view(x.dtype)


def _emptied(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    del expected  # any element may come back empty
    return np.fromiter((a == "" for a in actual.ravel()), bool, actual.size).reshape(actual.shape)


def _nul_dropped(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """A string may come back without its trailing NUL characters."""
    pairs = zip(expected.ravel(), actual.ravel(), strict=True)
    kept = (isinstance(a, str) and isinstance(e, str) and a == e.rstrip("\0") for e, a in pairs)
    return np.fromiter(kept, bool, actual.size).reshape(actual.shape)


def _zero_outside(output: np.ndarray, outside: np.ndarray) -> np.ndarray:
    return np.where(outside, np.zeros((), dtype=output.dtype), output)


def _same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "fc" or a.dtype == _BFLOAT16:
        return _bits(a) == _bits(b)
    return a == b


def _unchecked_offset(
    output: np.ndarray,
    outside: np.ndarray,
    data: np.ndarray,
    offsets: np.ndarray,
    actual: np.ndarray,
) -> np.ndarray:
    """Where an index is out of range: data's element at the offset the
    unchecked index gives (the neighbouring row on an inner axis), or past
    either end of the data zero or data's last element (robust buffer access
    clamps a read to the buffer's last element: data's own, or zero padding
    where the buffer is larger than the data); elsewhere the spec's output."""
    inside = (offsets >= 0) & (offsets < data.size)
    if data.size == 0:
        past = _plus_zero(actual) if actual.dtype.kind in "fc" else actual == 0
        return np.where(outside, past, _same_bits(output, actual))
    read = data[np.where(inside, offsets, 0)]
    last = np.full(actual.shape, data[-1], dtype=data.dtype)
    zero = np.zeros_like(actual)
    past = _same_bits(zero, actual) | _same_bits(last, actual)
    return np.where(
        outside, np.where(inside, _same_bits(read, actual), past), _same_bits(output, actual)
    )


EXPLANATIONS: tuple[Explanation, ...] = (
    Explanation(
        "int64-low32",
        ("int64", "uint64"),
        "64-bit integers keep their low 32 bits (sign-extended): computed in int32",
        transform=_low32,
        workaround="keep int64 data within int32's range, or cast it to int32 before the Gather",
    ),
    Explanation(
        "saturate-int32",
        ("int64", "uint64", "uint32"),
        "integers beyond int32 saturate to its range (a constant narrowed to int32)",
        transform=_saturate_int32,
        workaround="keep integer data within int32's range, or cast it to int32 before the Gather",
    ),
    Explanation(
        "float64-as-float32",
        ("float64",),
        "float64 narrowed to float32, out-of-range values and infinities clamped to ±FLT_MAX",
        transform=_float32_clamped(_FLOAT32_MAX),
        workaround="use float32 data, or keep float64 values within float32's range and precision",
    ),
    Explanation(
        "float64-constant-as-float32",
        ("float64",),
        "a float64 constant narrowed to float32, out-of-range values and infinities clamped "
        "to ±FLT_MAX, "
        "zero or subnormal results possibly +0.0 (flush-to-zero)",
        allowed=_constant_narrowed(_FLOAT32_MAX),
        family="float64-as-float32",
        workaround="store the constant as float32, or feed it as an input instead of an "
        "initializer",
    ),
    Explanation(
        "float64-constant-as-float32-bf16-clamp",
        ("float64",),
        "a float64 constant narrowed to float32, out-of-range values and infinities clamped "
        "to ±bfloat16's max (where the inference precision is bf16), zero or subnormal "
        "results possibly +0.0",
        allowed=_constant_narrowed(_BFLOAT16_MAX),
        family="float64-as-float32",
        workaround="store the constant as float32 and request f32 inference precision "
        "(openvino: INFERENCE_PRECISION_HINT=f32)",
    ),
    Explanation(
        "subnormals-flushed",
        ("float16", "bfloat16", "float32", "float64"),
        "subnormal values and -0.0 come back +0.0 (denormals-are-zero)",
        allowed=_flushed,
        workaround="feed the tensor as an input rather than a constant, or accept that "
        "subnormals read as zero",
    ),
    Explanation(
        "float32-constant-bf16-clamp",
        ("float32",),
        "a float32 constant clamped to +-bfloat16's max (where the inference precision is "
        "bf16; infinities and NaNs kept), subnormal values and -0.0 possibly +0.0",
        allowed=_float32_bf16_clamped,
        workaround="request f32 inference precision (openvino: INFERENCE_PRECISION_HINT=f32)",
    ),
    Explanation(
        "nan-quieted",
        ("float16", "bfloat16", "float32", "float64"),
        "signalling NaNs come back quiet (the quiet bit set, payload kept)",
        transform=_quiet_nans,
        workaround="do not rely on signalling NaN payloads passing through",
    ),
    Explanation(
        "strings-emptied",
        ("string",),
        "some string elements come back empty",
        allowed=_emptied,
        workaround="avoid string tensors on this runtime, or check their values after the Gather",
    ),
    Explanation(
        "strings-trailing-nul-dropped",
        ("string",),
        "strings come back without their trailing NUL characters (read as NumPy "
        "fixed-width strings)",
        allowed=_nul_dropped,
        workaround="do not end strings with NUL characters",
    ),
    Explanation(
        "out-of-range-reads-zero",
        tuple(name for name in dtypes.NAMES if name != "string"),
        "an out-of-range index reads zero: the output is zero (all bits clear) exactly where "
        "an index is out of range, and the oracle's value everywhere else",
        invalid=_zero_outside,
        workaround="check indices on the host before the model (each within [-n, n-1] of its "
        "axis; token ids within the vocabulary), or run inputs that may be out of range on a "
        "runtime that refuses them (ONNX Runtime's CPU provider, onnx.reference)",
    ),
    Explanation(
        "out-of-range-reads-unchecked-offset",
        tuple(name for name in dtypes.NAMES if name != "string"),
        "an out-of-range index is not checked: a negative one is wrapped once (+ its "
        "dimension's size) and the position reads data at the offset that gives (the "
        "neighbouring row on an inner axis), or, past either end of the data, zero or data's "
        "last element (a read clamped to the end of its buffer); the oracle's value everywhere "
        "else",
        unchecked=_unchecked_offset,
        workaround="check indices on the host before the model (each within [-n, n-1] of its "
        "axis; token ids within the vocabulary), or run inputs that may be out of range on a "
        "runtime that refuses them (ONNX Runtime's CPU provider, onnx.reference)",
    ),
)
BY_NAME: dict[str, Explanation] = {explanation.name: explanation for explanation in EXPLANATIONS}
