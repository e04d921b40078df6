"""Judging: what one runtime did with one input, held against the oracle's verdict.

The outcome ``kind`` is exactly one of :data:`KINDS` (one row each in
:mod:`conformance.tables.outcomes`); scripts and CI rely on these names.
Comparison is bit-exact (decision ``bitwise-exact``): dtype, shape and every
element's bytes, NaN payloads and -0.0 included. Where the spec leaves the
output open (an operator that writes: duplicate indices, the order of a
reduction), the verdict holds the set of admissible outputs and an output
passes when it is any member of it, bit for bit; outside it, it is a value
mismatch whose expected values name what was admissible there
(:meth:`conformance.oracle.Defined.difference`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from conformance import oracle
from conformance.cases.case import Case
from conformance.engine.pool import Raw
from conformance.oracle import Verdict, compare
from conformance.tables import dtypes, outcomes

# The kinds, as the outcome table has them (its rows say what each means).
KINDS: tuple[str, ...] = tuple(kind.name for kind in outcomes.OUTCOME_KINDS)
CONFORMING = outcomes.kinds(lambda kind: kind.conforming)
DISCREPANCIES = outcomes.kinds(lambda kind: kind.discrepancy)

SHOWN_VALUES = 16  # elements of an unexpected output kept in a record


@dataclass(frozen=True)
class Outcome:
    kind: str
    message: str
    details: dict = field(default_factory=dict)  # JSON-ready fields added to the record

    @property
    def discrepancy(self) -> bool:
        return self.kind in DISCREPANCIES


def summarize(array: np.ndarray) -> dict:
    """An output as a record keeps it: dtype, shape and the first elements, formatted."""
    flat = array.ravel()
    return {
        "dtype": dtypes.name_of(array),
        "shape": list(array.shape),
        "values": [compare.format_element(v) for v in flat[:SHOWN_VALUES]],
        "elements": int(flat.size),
    }


def _malformed(raw: Raw) -> str:
    """Why a result that should be ok cannot be judged ("" if it can). What
    each output is was checked where it left the worker (the pool's
    ``_raw_from_wire``, through ``worker.plain_outputs``): a plain array of
    a dtype the harness knows, or NumPy text; here, only how many there are."""
    if raw.status != "ok":
        return f"the worker sent a result of unknown status {raw.status!r}"
    outputs = raw.outputs
    if not isinstance(outputs, (list, tuple)):
        return f"the adapter returned {type(outputs).__name__}, not a list of NumPy arrays"
    if len(outputs) != 1:
        return f"the adapter returned {len(outputs)} outputs for a one-output model"
    return ""


def judge(verdict: Verdict, raw: Raw, case: Case | None = None) -> Outcome:
    """The outcome of one result. ``case``: its input, when the caller has it:
    an output for an input with out-of-range indices then records the
    explanations that make it exactly (``explained_by``), as a value
    mismatch's does (:func:`conformance.oracle.compare.explained_invalid`)."""
    if raw.status == "crash":
        return Outcome("crash", raw.message, {"signal": raw.signal})
    if raw.status == "timeout":
        return Outcome("timeout", raw.message)
    if raw.status == "unsupported":
        return Outcome("harness_unsupported", raw.message)
    if raw.status == "harness_error":
        return Outcome("harness_unsupported", raw.message, {"harness_error": True})
    if raw.status in ("load_error", "run_error"):
        stage = "load" if raw.status == "load_error" else "run"
        if verdict.valid:
            return Outcome("rejected", raw.message, {"stage": stage})
        return Outcome("both_rejected", raw.message, {"stage": stage})
    problem = _malformed(raw)
    if problem:  # the pool checks what workers send; nothing else reaches the comparison
        return Outcome("harness_unsupported", problem, {"harness_error": True})
    assert raw.outputs is not None  # _malformed says why not otherwise
    actual = raw.outputs[0]
    if not isinstance(actual, np.ndarray):  # a numpy scalar from a Python runtime
        actual = np.asarray(actual)
    if not verdict.valid:
        details: dict = {"actual": summarize(actual)}
        reads = None
        if case is not None:
            reads = oracle.in_range(  # None for an operator that writes
                case.op, case.opset, case.data, case.indices, case.axis
            )
        if reads is not None:
            details["explained_by"] = compare.explained_invalid(reads, actual)
        return Outcome(
            "accepted_invalid",
            f"returned an output although the input violates {verdict.violation.clause}: "
            f"{verdict.violation.detail}",
            details,
        )
    diff = verdict.difference(actual)  # against the admissible set, where there is one
    if diff is None:
        return Outcome("pass", "")
    message = diff.told("the runtime returned", "the oracle computes")
    if diff.kind == "value":
        expected = verdict.output
        return Outcome(
            "value_mismatch",
            message,
            {
                "differing": diff.count,
                "elements": int(expected.size),
                "positions": [list(p) for p in diff.positions],
                # where several values are admissible: "one of A, B"
                "expected_values": [verdict.expected_at(p) for p in diff.positions],
                "actual_values": [compare.format_element(actual[p]) for p in diff.positions],
                # the known mechanisms that produce exactly this output (baselines match on it)
                "explained_by": compare.explained_by(expected, actual),
            },
        )
    return Outcome(f"{diff.kind}_mismatch", message, {"actual": summarize(actual)})
