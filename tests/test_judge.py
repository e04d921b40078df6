"""The judge: every outcome kind from what a runtime did and what the oracle says."""

from __future__ import annotations

import numpy as np
import pytest

from conformance import oracle
from conformance.engine.judge import CONFORMING, DISCREPANCIES, KINDS, judge
from conformance.engine.pool import Raw
from conformance.oracle import compare

DATA = np.array([[1.0, -0.0], [np.inf, 2.5]], dtype=np.float32)
VALID = oracle.verdict("Gather", 13, DATA, np.array([1, 0], dtype=np.int64), 0)
INVALID = oracle.verdict("Gather", 13, DATA, np.array([2], dtype=np.int64), 0)


def ok(array):
    return Raw("ok", [array], load_s=0.001, run_s=0.0001)


def test_the_kinds_are_the_contract():
    assert KINDS == (
        "pass", "value_mismatch", "dtype_mismatch", "shape_mismatch", "rejected",
        "accepted_invalid", "both_rejected", "crash", "timeout", "harness_unsupported",
    )  # fmt: skip
    assert {"pass", "both_rejected"} == CONFORMING
    assert "harness_unsupported" not in DISCREPANCIES | CONFORMING


def test_pass_needs_every_bit():
    assert judge(VALID, ok(VALID.output.copy())).kind == "pass"


@pytest.mark.parametrize(
    "bits, why",
    [(0x00000000, "+0.0 for -0.0"), (0x7F800001, "a NaN for a number")],
)
def test_a_single_changed_element_is_a_value_mismatch(bits, why):
    actual = VALID.output.copy()
    actual.view(np.uint32)[1, 1] = bits  # where the oracle has -0.0
    outcome = judge(VALID, ok(actual))
    assert outcome.kind == "value_mismatch", why
    assert outcome.details["differing"] == 1 and outcome.details["positions"] == [[1, 1]]
    assert outcome.details["expected_values"] == ["-0.0 (0x80000000)"]


def test_nan_payloads_must_match():
    data = np.array([np.nan, 1.0], dtype=np.float32)
    data.view(np.uint32)[0] = 0x7FC00ABC
    verdict = oracle.verdict("Gather", 13, data, np.array([0], dtype=np.int64), 0)
    quiet = np.array([np.nan], dtype=np.float32)  # payload lost
    assert judge(verdict, ok(quiet)).kind == "value_mismatch"
    assert judge(verdict, ok(verdict.output.copy())).kind == "pass"


def test_dtype_and_shape_mismatches_keep_what_came_back():
    outcome = judge(VALID, ok(VALID.output.astype(np.float64)))
    assert outcome.kind == "dtype_mismatch" and outcome.details["actual"]["dtype"] == "float64"
    outcome = judge(VALID, ok(VALID.output.reshape(4)))
    assert outcome.kind == "shape_mismatch" and outcome.details["actual"]["shape"] == [4]


def test_mismatch_messages_say_which_side_is_which():
    actual = VALID.output.copy()  # [[inf, 2.5], [1.0, -0.0]]
    actual[1, 0] = 7.0
    assert judge(VALID, ok(actual)).message == (
        "1 of 4 elements differ; first at [1, 0]: "
        "the runtime returned 7.0 (0x40e00000), the oracle computes 1.0 (0x3f800000)"
    )
    outcome = judge(VALID, ok(VALID.output.astype(np.float64)))
    assert outcome.message == "the runtime returned dtype float64, the oracle computes float32"
    outcome = judge(VALID, ok(VALID.output.reshape(4)))
    assert outcome.message == "the runtime returned shape [4], the oracle computes [2, 2]"


def test_a_difference_names_its_sides_as_told():
    diff = compare.difference(np.array([1, 2], np.int64), np.array([1, 2], np.int32))
    assert diff.told("the file says", "the oracle computes") == (
        "the file says dtype int32, the oracle computes int64"
    )
    diff = compare.difference(np.array([1, 2], np.int64), np.array([1, 3], np.int64))
    assert diff.message == "1 of 2 elements differ; first at [1]: got 3, expected 2"
    assert (diff.expected, diff.actual, diff.count, diff.positions) == ("2", "3", 1, ((1,),))


def test_refusals_of_valid_and_invalid_inputs():
    outcome = judge(VALID, Raw("load_error", message="nope", load_s=0.1))
    assert (outcome.kind, outcome.details["stage"], outcome.message) == ("rejected", "load", "nope")
    assert judge(VALID, Raw("run_error", message="x")).details["stage"] == "run"
    assert judge(INVALID, Raw("run_error", message="x")).kind == "both_rejected"


def test_an_output_for_a_forbidden_input_is_accepted_invalid_and_kept():
    outcome = judge(INVALID, ok(np.array([[7.0, 8.0]], dtype=np.float32)))
    assert outcome.kind == "accepted_invalid"
    assert "index-out-of-range" in outcome.message
    assert outcome.details["actual"]["values"] == ["7.0 (0x40e00000)", "8.0 (0x41000000)"]


def test_process_level_outcomes():
    assert judge(VALID, Raw("crash", message="m", signal="SIGSEGV")).details == {
        "signal": "SIGSEGV"
    }
    assert judge(INVALID, Raw("timeout", message="m")).kind == "timeout"
    assert judge(VALID, Raw("unsupported", message="m")).kind == "harness_unsupported"
    bug = judge(VALID, Raw("harness_error", message="Traceback"))
    assert bug.kind == "harness_unsupported" and bug.details == {"harness_error": True}


def test_a_scalar_output_mismatch_points_at_the_scalar():
    data = np.array([1, 2, 3], dtype=np.int32)
    verdict = oracle.verdict("Gather", 13, data, np.array(2, dtype=np.int64), 0)
    outcome = judge(verdict, ok(np.array(4, dtype=np.int32)))
    assert outcome.kind == "value_mismatch" and outcome.details["positions"] == [[]]
