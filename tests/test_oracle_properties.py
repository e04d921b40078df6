"""The oracle against an independent slow implementation and against np.take."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import oracle
from conformance.oracle import SpecViolation, compare
from conformance.strategies import examples, invalid_examples, valid_examples
from tests import slow_reference
from tests.test_oracle_gather_nd import Refused, slow_gather_nd

SLOW = {"Gather": slow_reference.gather, "GatherElements": slow_reference.gather_elements}
SMALL = 64  # elements per tensor: the slow reference is a Python loop


def valid(op=None):
    if op is None:  # the operators of the slow reference (GatherND's is its own, below)
        return st.one_of(*(valid_examples(op=o, max_elements=SMALL) for o in SLOW))
    return valid_examples(op=op, max_elements=SMALL)


# What the slow reference can tell apart: valid inputs, and the two invalid
# ones it trips over (an index out of range, GatherElements indices too large).
computable = st.one_of(
    valid(),
    *(invalid_examples(op=o, clause="index-out-of-range", max_elements=SMALL) for o in SLOW),
    invalid_examples(op="GatherElements", clause="ge-indices-larger-off-axis", max_elements=SMALL),
)


def args(e):
    return e.op, e.opset, e.data, e.indices, e.axis


def _assert_same(expected: np.ndarray, actual: np.ndarray) -> None:
    assert isinstance(actual, np.ndarray), f"the oracle returned {type(actual).__name__}"
    diff = compare.difference(expected, actual)
    assert diff is None, diff.message


@given(valid())
def test_valid_inputs_match_the_slow_reference_bit_for_bit(case):
    expected = SLOW[case.op](case.data, case.indices, 0 if case.axis is None else case.axis)
    _assert_same(expected, oracle.evaluate(*args(case)))


@given(examples(op="GatherND", max_elements=SMALL))
def test_gather_nd_drawn_by_the_strategies_matches_its_slow_reference(case):
    """The strategies' GatherND examples, valid and invalid, against 005 read
    literally (tests/test_oracle_gather_nd.py): the same output bit for bit,
    or both refuse by the same clause."""
    try:
        expected = slow_gather_nd(case.opset, case.data, case.indices, case.axis)
    except Refused as refused:
        with pytest.raises(SpecViolation) as raised:
            oracle.evaluate(*args(case))
        assert raised.value.clause == refused.rule
    else:
        _assert_same(expected, oracle.evaluate(*args(case)))


@given(valid(op="Gather"))
def test_gather_matches_np_take(case):
    axis = 0 if case.axis is None else case.axis
    size = case.data.shape[axis]
    positions = np.where(case.indices < 0, case.indices + size, case.indices)
    expected = np.take(case.data, positions, axis=axis)
    if not isinstance(expected, np.ndarray):  # np.take gives a bare scalar for rank-0 output
        expected = np.array(expected, dtype=case.data.dtype)
    _assert_same(expected, oracle.evaluate(*args(case)))


@given(computable)
def test_oracle_rejects_exactly_what_the_slow_reference_cannot_compute(case):
    try:
        expected = SLOW[case.op](case.data, case.indices, 0 if case.axis is None else case.axis)
    except IndexError:
        with pytest.raises(SpecViolation) as raised:
            oracle.evaluate(*args(case))
        assert raised.value.clause in {"index-out-of-range", "ge-indices-larger-off-axis"}
    else:
        _assert_same(expected, oracle.evaluate(*args(case)))


@given(valid(op="GatherElements"))
def test_disputed_decisions_are_reported_exactly_when_they_apply(case):
    verdict = oracle.verdict(*args(case))
    axis = (0 if case.axis is None else case.axis) % case.data.ndim
    pairs = enumerate(zip(case.data.shape, case.indices.shape, strict=True))
    smaller = any(i < d for dim, (d, i) in pairs if dim != axis)
    negative = bool(case.indices.size) and bool((case.indices < 0).any())
    assert ("ge-indices-smaller-off-axis" in verdict.disputed) == smaller
    assert ("ge-negative-indices" in verdict.disputed) == negative


def test_blocked_path_matches_the_reference_across_block_boundaries(monkeypatch):
    """Blocks of rows must not leak into each other: force tiny blocks."""
    from conformance.oracle import gather_elements

    monkeypatch.setattr(gather_elements, "BLOCK_ELEMENTS", 7)
    rng = np.random.default_rng(3)
    data = rng.standard_normal((5, 6, 3)).astype(np.float32)
    for axis in range(3):
        shape = list(data.shape)
        shape[axis] = 4
        size = data.shape[axis]
        indices = rng.integers(-size, size, size=shape)
        _assert_same(
            slow_reference.gather_elements(data, indices, axis),
            oracle.evaluate("GatherElements", 13, data, indices, axis),
        )
