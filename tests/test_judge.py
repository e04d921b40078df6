"""The judge: every outcome kind from what a runtime did and what the oracle says."""

from __future__ import annotations

import importlib
import json
from collections import Counter

import numpy as np
import pytest

from conformance import oracle
from conformance.engine import rejudge
from conformance.engine.judge import CONFORMING, DISCREPANCIES, KINDS, judge
from conformance.engine.pool import Raw
from conformance.export import failures, runners
from conformance.fuzz import skips
from conformance.gate import baseline
from conformance.oracle import compare
from conformance.report import diff, node_verdicts, render, scoreboard
from conformance.report.views import severity
from conformance.tables import outcomes
from tests.conftest import REPO

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


# -- the outcome table: the judge's kinds as its rows say, every local set derived -----
# What the runtime did, by the worker's status, as the table's ``response`` says it.
RESPONSE_OF_STATUS = {
    "ok": outcomes.OUTPUT,
    "load_error": outcomes.REFUSED,
    "run_error": outcomes.REFUSED,
    "crash": outcomes.DIED,
    "timeout": outcomes.HUNG,
    "unsupported": outcomes.NOTHING,
    "harness_error": outcomes.NOTHING,
}
OUTPUTS = {  # outputs that make each output kind, of the valid input (VALID's is [inf, 1.0])
    "same": np.array([[np.inf, 2.5], [1.0, -0.0]], dtype=np.float32),
    "value": np.array([[np.inf, 2.5], [1.0, 0.0]], dtype=np.float32),
    "dtype": np.array([[np.inf, 2.5], [1.0, -0.0]], dtype=np.float64),
    "shape": np.array([np.inf, 2.5], dtype=np.float32),
}


def test_the_judge_gives_each_kind_as_its_row_says():
    """Every (input, worker status) the judge meets: the kind it gives is of
    inputs of that validity and of that response, and every row is reached."""
    reached = set()
    for verdict, validity in ((VALID, outcomes.VALID), (INVALID, outcomes.INVALID)):
        for status, response in RESPONSE_OF_STATUS.items():
            raws = [ok(array) for array in OUTPUTS.values()] if status == "ok" else [Raw(status)]
            for raw in raws:
                kind = outcomes.BY_NAME[judge(verdict, raw).kind]
                reached.add(kind.name)
                assert kind.inputs in (validity, outcomes.ANY), (kind.name, validity)
                assert kind.response == response, (kind.name, status)
    assert reached == set(KINDS)


def test_every_local_set_of_kinds_is_the_table_s():
    check_module = importlib.import_module("conformance.gate.check")
    rows = outcomes.OUTCOME_KINDS
    assert tuple(kind.name for kind in rows) == KINDS
    assert len({kind.severity for kind in rows}) == len(rows)  # an order: no ties
    for kind in rows:
        name = kind.name
        assert (name in CONFORMING) == (kind.judged and kind.conforming), name
        assert (name in DISCREPANCIES) == (kind.judged and not kind.conforming), name
        wrong, inputs = name in DISCREPANCIES, kind.inputs
        assert (name in baseline.VALID_ONLY) == (wrong and inputs == outcomes.VALID), name
        assert (name in check_module.INVALID_ONLY) == (wrong and inputs == outcomes.INVALID)
        assert (name in check_module.ANY_INPUT) == (wrong and inputs == outcomes.ANY), name
        assert (name in failures.SHOWABLE) == (wrong and inputs != outcomes.INVALID), name
        # what an exported test can show is what a native runner is told where to expect
        assert (name in failures.SHOWABLE) == (kind.native is not None), name
        assert (name in runners.RUN_KINDS) == (kind.native == outcomes.AT_RUN), name
        assert (name in runners.REFUSALS) == (kind.native == outcomes.AT_LOAD), name
        assert (name in skips.EXPENSIVE) == (kind.response in (outcomes.DIED, outcomes.HUNG))
        assert (name in diff.RUNTIME_TEXT) == (kind.response != outcomes.OUTPUT), name
        assert (name in rejudge.REFUSALS) == (kind.response == outcomes.REFUSED), name
        assert (name in scoreboard.JUDGED) == kind.judged, name
        assert (name in scoreboard.COUNTED_APART) == kind.counted_apart, name
        assert node_verdicts.KIND_WORKAROUNDS.get(name, "") == kind.workaround, name
        assert bool(kind.workaround) == wrong, name  # a deployer can act on each discrepancy
    worst_first = tuple(sorted(KINDS, key=lambda name: outcomes.BY_NAME[name].severity))
    assert worst_first == severity.SEVERITY


def test_the_pages_style_each_kind_as_its_row_says():
    css = render._environment().get_template("_style.css.j2").render()
    style_of = {}  # selector -> its declarations
    for line in css.splitlines():
        selectors, _, declarations = line.partition("{")
        for selector in selectors.split(","):
            style_of[selector.strip()] = declarations.strip().removesuffix("}").strip()
    for kind in outcomes.OUTCOME_KINDS:
        assert style_of[f".k-{kind.name}"] == kind.style, kind.name


def test_the_scoreboard_counts_apart_the_kinds_its_schema_has():
    document = json.loads((REPO / "docs/schemas/scoreboard.schema.json").read_text())
    score = document["properties"]["targets"]["items"]["properties"]["scores"]
    fields = score["additionalProperties"]["properties"]
    assert set(scoreboard.COUNTED_APART) <= set(score["additionalProperties"]["required"])
    kinds_there = {name for name in fields if name in KINDS}
    assert kinds_there == set(scoreboard.COUNTED_APART)
    counts = Counter({kind: n for n, kind in enumerate(KINDS, 1)})
    score_of = scoreboard._score(counts)
    assert score_of["judged"] == sum(counts[k] for k in KINDS if outcomes.BY_NAME[k].judged)
    assert [k for k in score_of if k in KINDS] == list(scoreboard.COUNTED_APART)
