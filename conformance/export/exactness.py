"""What a tolerance-based runner cannot see in an expected output, and what
a runner's importer cannot carry.

Most runners of the backend test layout compare floats with a tolerance
(onnx's backend runner: ``np.testing.assert_allclose`` with rtol 1e-3 and
atol 1e-7, also for integers; ONNX Runtime's onnx_test_runner: a per-sample
tolerance for floats, NaN equal to any NaN) while this project's verdict is
bit for bit. For each expected output this module says which of its values
such a comparison would accept a wrong answer for; a test with any of them
needs a bit-exact comparison (the gate here) to be judged fully. The marks
named after a runner (``iree_import_bits``) say that the runner's importer
changes the test's values (:mod:`conformance.export.pipelines` finds which
tests): that runner runs another test than the folder holds.
"""

from __future__ import annotations

import numpy as np

RTOL, ATOL = 1e-3, 1e-7  # onnx.backend.test.case.test_case.TestCase's defaults
EXACT_FLOAT_INTEGERS = 2**53  # beyond it an integer compared as float64 loses its low bits

# name -> what a tolerance-based comparison misses (docs/export.md, the manifest's schema)
BLIND_SPOTS: dict[str, str] = {
    "nan_payload": "a NaN whose payload, sign and quiet bit are the verdict: any NaN passes",
    "negative_zero": "a -0.0 (or +0.0): the other zero passes",
    "tiny_values": f"a non-zero value within atol {ATOL:g} of zero (subnormals): a flushed +0.0 "
    "passes",
    "string_trailing_nul": "a string ending in NUL characters: onnx.numpy_helper.to_array, "
    "which Python runners read .pb files with, drops them (another expected output is read)",
    "integer_tolerance": f"an integer of magnitude {1 / RTOL:g} or more (or beyond 2^53), compared "
    "by assert_allclose: a neighbouring integer passes",
    # a runner's importer (conformance.export.pipelines), not a tolerance
    "iree_import_bits": "an input or expected value IREE's onnx_ops importer cannot write bit "
    "for bit: it packs values through Python objects (struct.pack of tolist()), which quiets "
    "a signalling float32 NaN and writes every float16 NaN as the canonical quiet one, so "
    "that runner runs and compares other bits than the test specifies",
}


def _float_parts(values: np.ndarray) -> list[np.ndarray]:
    if values.dtype.kind == "c":
        return [values.real, values.imag]
    return [values.astype(np.float64)]  # float16, bfloat16 (ml_dtypes), float32: exactly


def trailing_nul(values: np.ndarray) -> bool:
    """Whether a string tensor holds a string that ends in NUL."""
    return values.dtype == object and any(
        isinstance(v, (str, bytes)) and v[-1:] in ("\0", b"\0") for v in values.ravel()
    )


def blind_spots(expected: np.ndarray) -> tuple[str, ...]:
    """The :data:`BLIND_SPOTS` the expected output has, in their order."""
    found = set()
    kind = expected.dtype.kind
    if trailing_nul(expected):
        found.add("string_trailing_nul")
    if expected.size and (kind in "fc" or expected.dtype.name == "bfloat16"):
        with np.errstate(invalid="ignore"):
            parts = _float_parts(expected)
        for part in parts:
            if np.isnan(part).any():
                found.add("nan_payload")
            if (part == 0).any():
                found.add("negative_zero")
            magnitude = np.abs(part)
            if ((magnitude > 0) & (magnitude <= ATOL)).any():
                found.add("tiny_values")
    elif expected.size and kind in "iu":
        low, high = int(expected.min()), int(expected.max())
        if max(abs(low), abs(high)) >= 1 / RTOL:
            found.add("integer_tolerance")
    return tuple(name for name in BLIND_SPOTS if name in found)
