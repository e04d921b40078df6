"""Cutting a value mismatch down to its smallest reproducer (engine.reproduce).

The runtime is played by a predicate over the oracle's output, so each test
knows exactly which inputs "still differ"; test_report.py checks the same
path on a real runtime's discrepancy.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance import oracle
from conformance.cases.case import Case
from conformance.engine import reproduce
from conformance.tables.operators import OPERATORS

BAD = 7  # the value our pretend runtime gets wrong


def _output(case: Case) -> np.ndarray:
    verdict = oracle.verdict(case.op, case.opset, case.data, case.indices, case.axis)
    assert verdict.valid, verdict.violation  # a cut must never make a case invalid
    return verdict.output


def _wrong_on_bad(case: Case) -> bool:
    """A runtime that returns a wrong value wherever the output holds BAD."""
    return bool((_output(case) == BAD).any())


def _first_bad(case: Case) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(_output(case) == BAD)[0])


CASES = [
    # GatherElements, rank 2, axis 1: data and indices share dimension 0
    Case("GatherElements", 13, 1, np.arange(12).reshape(3, 4),
         np.array([[0, 1, 2], [3, 3, 0], [1, 1, 1]])),
    # GatherElements, rank 3, axis 0, indices longer than data on the axis
    Case("GatherElements", 13, 0, np.arange(24).reshape(2, 3, 4), np.zeros((5, 3, 4), np.int64)),
    # GatherElements, negative axis and negative indices
    Case("GatherElements", 13, -1, np.arange(8).reshape(2, 4), np.array([[-1, 0], [-2, -1]])),
    # Gather, axis 1 of rank 3, rank-2 indices: output [2, 2, 3, 2]
    Case("Gather", 13, 1, np.arange(12).reshape(2, 3, 2), np.array([[0, 1, 2], [2, 1, 0]])),
    # Gather, default axis, scalar indices
    Case("Gather", 11, None, np.arange(12).reshape(4, 3), np.array(2)),
    # Gather-1 on a float tensor, axis 0, negative index
    Case("Gather", 1, 0, np.arange(10, dtype=np.float32).reshape(5, 2), np.array([[-2, 1]])),
    # GatherND, no batch dims: tuples of 2 into [2, 3, 4], output [3, 1, 4]
    Case("GatherND", 13, None, np.arange(24).reshape(2, 3, 4),
         np.array([[[0, 1]], [[1, 1]], [[0, 2]]])),
    # GatherND, batch_dims 1: data and indices share dimension 0, output [2, 2, 4]
    Case("GatherND", 13, 1, np.arange(24).reshape(2, 3, 4), np.array([[[1], [0]], [[2], [1]]])),
    # GatherND-12, batch_dims 2, whole tuples (an element each), negative components
    Case("GatherND", 12, 2, np.arange(48).reshape(2, 2, 3, 4),
         np.array([[[[1, 3]], [[2, -4]]], [[[0, 1]], [[-2, 2]]]])),
    # GatherND-11 on rank 2, tuples as long as data's rank: output [3]
    Case("GatherND", 11, None, np.arange(12).reshape(3, 4), np.array([[0, 3], [1, 3], [2, 1]])),
]  # fmt: skip


def _indexed(case: Case) -> dict[str, set[int]]:
    """The dimensions of each input that no output dimension comes from (the
    axis of data, GatherND's index tuple and the data dimensions it indexes):
    a cut keeps them whole, so every index keeps its meaning."""
    operator = OPERATORS[case.op]
    shapes = operator.shapes(case.data.shape, case.indices.shape)
    dims = operator.dims(shapes, operator.value(case.axis) % case.data.ndim)
    sourced = {source for sources in dims for source in sources}
    return {
        name: {d for d in range(len(shapes[name])) if (name, d) not in sourced}
        for name in operator.inputs
    }


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.op}{c.opset}-axis{c.axis}")
def test_a_value_dependent_mismatch_is_cut_to_one_element(case):
    assert _wrong_on_bad(case)
    found = reproduce.smallest(case, _first_bad(case), _wrong_on_bad)
    assert found is not None and found.tried == 1  # the whole cut, confirmed at once
    cut = found.case
    assert _output(cut).ravel().tolist() == [BAD]  # one element, the wrong one
    assert cut.data.ndim == case.data.ndim and cut.indices.ndim == case.indices.ndim
    assert cut.axis == case.axis and cut.op == case.op and cut.opset == case.opset
    for name, whole in _indexed(case).items():
        before, after = getattr(case, name).shape, getattr(cut, name).shape
        assert all(after[d] == before[d] for d in whole), (name, before, after)
        assert all(after[d] == 1 for d in range(len(after)) if d not in whole), (name, after)
    # one index; GatherND's one tuple of indices.shape[-1] components
    tuple_size = case.indices.shape[-1] if OPERATORS[case.op].indexing == "tuple" else 1
    assert cut.indices.size == tuple_size


def test_a_size_dependent_mismatch_keeps_what_it_needs():
    """A runtime that is wrong only while the data keeps all 3 rows (a
    threshold): every cut but the one of dimension 0 is kept."""
    case = CASES[0]  # GatherElements axis 1, data [3, 4], indices [3, 3]

    def wrong(cut: Case) -> bool:
        return cut.data.shape[0] == 3 and _wrong_on_bad(cut)

    found = reproduce.smallest(case, _first_bad(case), wrong)
    assert found is not None
    assert found.case.data.shape == (3, 4) and found.case.indices.shape == (3, 1)
    assert wrong(found.case)
    assert found.tried == 3  # the whole cut, then the two steps (dim 0 refused)


def test_nothing_is_returned_when_no_cut_reproduces():
    case = CASES[3]
    tried = []

    def whole_only(cut: Case) -> bool:
        tried.append(cut)
        return cut.data.shape == case.data.shape and cut.indices.shape == case.indices.shape

    assert reproduce.smallest(case, _first_bad(case), whole_only) is None
    assert len(tried) >= 2 and all(t.data.size <= case.data.size for t in tried)


def test_a_case_already_minimal_is_confirmed_not_cut():
    case = Case("Gather", 13, 0, np.array([BAD, 1]), np.array([0]))
    found = reproduce.smallest(case, (0,), _wrong_on_bad)
    assert found is not None and found.case.data.tolist() == [BAD, 1]
