"""Case files written by the tool itself (a fuzz class's `case.yaml`,
`conformance model --save-cases`): the exact literal of a tensor and the YAML
text, one way for every writer, so what they write reads back bit for bit."""

from __future__ import annotations

import numpy as np
import yaml

from conformance.oracle import Verdict
from conformance.tables import dtypes
from conformance.tables.operators import OPERATORS


def literal(array: np.ndarray):
    """The case-file literal for an array: bit patterns for floats and complex
    (exact, NaN payloads included), plain values otherwise."""
    dtype = dtypes.of_array(array)
    if array.size == 0:  # a nested empty list cannot say its shape (nor a complex pair)
        zero = {"bool": False, "string": ""}.get(dtype.kind, 0)
        return {"full": {"shape": list(array.shape), "value": zero}}
    if dtype.kind in ("float", "complex"):
        width = dtype.numpy.itemsize * 8 // (2 if dtype.kind == "complex" else 1)
        # Flat first: a 0-d array cannot be viewed as a pair of halves.
        bits = np.require(array.reshape(-1), requirements="C").view(f"uint{width}")
        pair = (2,) if dtype.kind == "complex" else ()
        return {"bits": bits.reshape(array.shape + pair).tolist()}
    return array.tolist()


def dump(document: dict) -> str:
    """A case file's text. libyaml's dumper where PyYAML has it (faster),
    tensors' innermost lists in flow style ([1, 2, 3] on a line, not an element
    a line): a class found at a large size cap holds a million-element literal."""
    return yaml.dump(
        document,
        Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=None,
    )


def entry(case_id: str, description: str, spec: str, op: str, opset: int, dtype: str,
          indices_dtype: str, axis: int | None) -> dict:  # fmt: skip
    """A case entry's fields before its tensors, in the order case files
    write them (``attributes`` only when the axis, or the operator's attribute, is given)."""
    written: dict = {
        "id": case_id,
        "description": description,
        "spec": spec,
        "op": op,
        "opset": opset,
        "dtype": dtype,
        "indices_dtype": indices_dtype,
    }
    if axis is not None:
        written["attributes"] = {OPERATORS[op].attribute: int(axis)}
    return written


def expectation(verdict: Verdict) -> dict:
    """A case entry's fields after its tensors, from the oracle's verdict:
    ``expected: oracle`` or ``expect_error: CLAUSE``, and the disputed
    decisions the verdict rests on."""
    written: dict = (
        {"expected": "oracle"} if verdict.valid else {"expect_error": verdict.violation.clause}
    )
    if verdict.disputed:
        written["decisions"] = list(verdict.disputed)
    return written
