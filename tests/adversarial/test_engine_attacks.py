"""Attacks on the engine: what an adapter returns, and many targets on a small machine.

Whatever an adapter's ``execute`` returns is untrusted: each return below is
judged (when it is a faithful plain array after a conversion that keeps
every element's bits: ``conformance.engine.worker.plain_outputs``) or
recorded as a harness error, never lost, and never an internal error. They
run through a real run (worker processes, results.jsonl), once for all.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from conformance.cases.model import Case
from conformance.engine.run import Options, Summary, run_cases
from tests import untrusted_adapter as untrusted

UNTRUSTED = "tests.untrusted_adapter:UntrustedAdapter"
NAN_BITS = 0x7FC01234  # a quiet NaN with a payload: kept bit for bit or not


def _case(form: str, layout: str) -> Case:
    """A Gather case whose data's first element is the code of ``form``."""
    code = untrusted.CODES[form]
    if layout == "int":  # a 2x3 int32 output
        data = np.array([[code, 1, 2], [3, 4, 5]], dtype=np.int32)
        indices = np.array([1, 0], dtype=np.int64)
    elif layout == "scalar":  # a 0-d int32 output
        data = np.array([code, 7, 8], dtype=np.int32)
        indices = np.array(1, dtype=np.int64)
    elif layout == "float":  # a NaN with a payload, and -0.0
        data = np.array([code, 0, -0.0], dtype=np.float32)
        data.view(np.uint32)[1] = NAN_BITS
        indices = np.array([1, 2], dtype=np.int64)
    else:  # strings
        data = np.empty(3, dtype=object)
        data[:] = [str(code), "b", ""]
        indices = np.array([1, 2], dtype=np.int64)
    name = form.replace(" ", "-").replace(",", "").replace(".", "")
    return Case("Gather", 13, 0, data, indices, id=f"returns-{name}", base_id=f"returns-{name}")


# form -> (case layout, kind, a part of the message; harness errors: kind None)
EXPECTED = {
    "tuple": ("int", "pass", ""),
    "numpy scalar": ("scalar", "pass", ""),
    "0-d array": ("int", "shape_mismatch", "shape []"),
    "memmap": ("int", "pass", ""),
    "matrix": ("int", "pass", ""),
    "own subclass": ("int", "pass", ""),
    "masked, none masked": ("int", "pass", ""),
    "masked, one masked": ("int", None, "masked array with 1 of 6 elements masked"),
    "big-endian": ("float", "pass", ""),
    "non-contiguous": ("int", "pass", ""),
    "read-only": ("int", "pass", ""),
    "np.str_ elements": ("string", "pass", ""),
    "numpy text": ("string", "dtype_mismatch", "dtype <U1"),
    "object of ints": ("int", None, "element [0, 0] is a int, not a str"),
    "object of arrays": ("int", None, "element [0, 0] is a ndarray, not a str"),
    "record dtype": ("int", None, "no tensor type the harness knows"),
    "longdouble": ("float", None, "dtype float128, no tensor type the harness knows"),
    "datetime": ("int", None, "dtype datetime64[s], no tensor type"),
    "python list": ("int", None, "element 0 is a list, not a NumPy array"),
    "python number": ("int", None, "element 0 is a int, not a NumPy array"),
    "bare array": ("int", None, "returned ndarray, not a list of NumPy arrays"),
    "dict": ("int", None, "returned dict, not a list of NumPy arrays"),
    "two outputs": ("int", None, "returned 2 outputs for a one-output model"),
    "no output": ("int", None, "returned 0 outputs for a one-output model"),
    "huge view": ("int", None, "4,398,046,511,104 bytes (shape [1099511627776]), over the"),
    "unreadable list": ("int", None, "this list cannot be iterated"),
}
assert set(EXPECTED) == set(untrusted.RETURNS)


@pytest.fixture(scope="module")
def returned(tmp_path_factory) -> tuple[dict[str, dict], Summary]:
    """One run of every form: each form's record, and the run's summary."""
    out = tmp_path_factory.mktemp("returns") / "run"
    cases = [_case(form, layout) for form, (layout, _, _) in EXPECTED.items()]
    summary = run_cases(cases, out, Options([UNTRUSTED], variants=["static"], pack=1))
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by_id = {record["case_id"]: record for record in records}
    assert len(by_id) == len(records) == len(cases), "a record was lost or doubled"
    forms = {case.id: form for case, form in zip(cases, EXPECTED, strict=True)}
    return {forms[case_id]: record for case_id, record in by_id.items()}, summary


def test_the_run_of_every_form_ends_cleanly(returned):
    _, summary = returned
    assert summary.error is None and not summary.interrupted
    assert summary.records == len(EXPECTED)
    assert not summary.events, "no worker died"


@pytest.mark.parametrize("form", list(EXPECTED))
def test_whatever_an_adapter_returns_is_judged_or_a_harness_error(returned, form):
    records, _ = returned
    record = records[form]
    _, kind, says = EXPECTED[form]
    if kind is None:
        assert (record["kind"], record.get("harness_error")) == ("harness_unsupported", True)
    else:
        assert record["kind"] == kind and "harness_error" not in record
    assert says in record["message"], record["message"]


def test_a_memory_map_a_subclass_or_a_byte_order_is_judged_on_its_bits(returned):
    """The conversions are faithful: a wrong bit is still seen. The NaN's
    payload and -0.0's sign came through byte-swapped and were compared."""
    records, _ = returned
    assert records["big-endian"]["kind"] == "pass"
    assert records["big-endian"]["expected"] == {"dtype": "float32", "shape": [2]}
    assert records["0-d array"]["actual"]["shape"] == []
