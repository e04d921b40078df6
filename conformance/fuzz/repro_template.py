#!/usr/bin/env python3
"""Stand-alone reproducer written by `conformance fuzz`.

Runs model.onnx (beside this file) on one runtime with the inputs in
inputs.npz, in this process, and prints what the runtime returned next to
what the spec defines: expected.npz (the oracle's output) or, when there is
none, the clause the input breaks (case.yaml, expect_error). Needs numpy and
the runtime (ml_dtypes for bfloat16); not the conformance package.

    python repro.py            # the runtime that showed the discrepancy
    python repro.py NAME       # another runtime: one of RUNNERS
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

# A reproducer needs only its runtime's module: each runner imports its own.
RUNTIME = ""
SIGNATURE = ""
HERE = Path(__file__).resolve().parent
# Control characters, line separators, bidi overrides, lone surrogates: what a
# runtime's message or a target's name must not send to the terminal raw.
HIDDEN = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def shown(text) -> str:
    """Text for the terminal: every hidden character escaped (\\x1b, \\u2028).
    Not ``conformance.messages.shown`` (which cuts a value for an error
    message): this file is copied as repro.py and imports nothing of ours."""
    return HIDDEN.sub(lambda m: repr(m.group())[1:-1], str(text))


def load(name: str) -> dict[str, np.ndarray]:
    """Arrays of an npz; ``<name>.bfloat16`` keys hold bfloat16 as uint16 bits."""
    arrays = {}
    with np.load(HERE / name, allow_pickle=True) as npz:  # strings are object arrays
        for key in npz.files:
            array = npz[key]
            if key.endswith(".bfloat16"):
                import ml_dtypes

                key, array = key[: -len(".bfloat16")], array.view(ml_dtypes.bfloat16)
            arrays[key] = array
    return arrays


# -- the runners, one per runtime: each from its adapter file (conformance/adapters/),
# written here by conformance.fuzz.artifacts.repro_py --
RUNNERS: dict[str, Callable[[Path, dict[str, np.ndarray]], np.ndarray]] = {}


def show(label: str, array: np.ndarray) -> None:
    print(f"{label}: dtype {array.dtype}, shape {list(array.shape)}")
    with np.printoptions(threshold=200, edgeitems=4):
        print(np.array2string(np.asarray(array), prefix="  ", separator=", "))
    if array.dtype.kind == "f" or array.dtype.name == "bfloat16":
        bits = np.ascontiguousarray(array).view(f"uint{array.dtype.itemsize * 8}")
        print("  bits:", np.array2string(bits, formatter={"int": hex}, threshold=64))


def main() -> int:
    runtime = sys.argv[1] if len(sys.argv) > 1 else RUNTIME
    runner = RUNNERS
    # A target of a profile (openvino:1thread) runs on its runtime, as configured here.
    run = runner.get(runtime) or runner.get(runtime.partition(":")[0])
    if run is None:
        print(f"unknown runtime '{shown(runtime)}': give one of {', '.join(runner)}")
        return 2
    inputs = load("inputs.npz")
    feeds = {k[len("feed.") :]: v for k, v in inputs.items() if k.startswith("feed.")}
    print(f"class {SIGNATURE}")
    show("data", inputs["data"])
    show("indices", inputs["indices"])
    expected_path = HERE / "expected.npz"
    expected = load("expected.npz")["output"] if expected_path.exists() else None
    if expected is None:
        clause = [
            line for line in (HERE / "case.yaml").read_text().splitlines() if "expect_error" in line
        ]
        print(f"expected: an error ({shown(clause[0].strip()) if clause else 'see case.yaml'})")
    else:
        show("expected", expected)
    print(f"running model.onnx on {shown(runtime)} ...", flush=True)  # a crash kills this process
    try:
        actual = run(HERE / "model.onnx", feeds)
    except Exception as error:  # the runtime refused the model or the input
        print(f"{shown(runtime)} raised {type(error).__name__}: {shown(error)}")
        return 0 if expected is None else 1
    show("actual", actual)
    if expected is None:
        print("DISCREPANCY: the input is invalid, but the runtime returned an output")
        return 1
    same = (
        actual.dtype == expected.dtype
        and actual.shape == expected.shape
        and np.ascontiguousarray(actual).tobytes() == np.ascontiguousarray(expected).tobytes()
        if expected.dtype != object
        else actual.shape == expected.shape and actual.tolist() == expected.tolist()
    )
    if same:
        print("same as expected, bit for bit: the discrepancy does not reproduce here")
        return 0
    if actual.shape == expected.shape and actual.dtype == expected.dtype and expected.size:
        if expected.dtype == object:
            pairs = zip(actual.ravel(), expected.ravel(), strict=True)
            differ = np.array([a != e for a, e in pairs])
        else:
            width = (
                f"uint{expected.dtype.itemsize * 8}"
                if expected.dtype.kind in "fc" or expected.dtype.name == "bfloat16"
                else None
            )
            a = np.ascontiguousarray(actual).view(width) if width else actual
            e = np.ascontiguousarray(expected).view(width) if width else expected
            differ = (a != e).reshape(expected.shape) if width else (a != e)
        positions = np.argwhere(differ.reshape(expected.shape))[:16]
        print(f"DISCREPANCY: {int(differ.sum())} of {expected.size} elements differ; first:")
        for position in positions:
            at = tuple(int(i) for i in position)
            print(f"  at {list(at)}: expected {expected[at]!r}, actual {actual[at]!r}")
    else:
        print("DISCREPANCY: dtype or shape differs from expected")
    return 1


if __name__ == "__main__":
    sys.exit(main())
