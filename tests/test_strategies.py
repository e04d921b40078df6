"""Meta-tests of conformance.strategies: every edge is reachable, valid and
invalid strategies draw what they promise, and shrinking goes where the module
docstring says."""

from __future__ import annotations

import inspect
import math
from random import Random

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from conformance import oracle, strategies
from conformance.fuzz import coverage
from conformance.fuzz.strategies import OPSETS  # the operators drawn: every row
from conformance.strategies import INVALID_CLAUSES, Example
from conformance.tables.spec import op_spec

SEARCH = settings(
    max_examples=5000, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)


def shrunk(strategy, condition):
    """The minimal example, from a fixed seed: shrinking tests must not flake."""
    return find(strategy, condition, settings=SEARCH, random=Random(0))


class _Reached(Exception):
    pass


def reach(strategy, condition) -> None:
    """find_any: generation alone (no shrinking) draws an example satisfying
    ``condition`` within SEARCH.max_examples."""

    @settings(SEARCH, phases=[Phase.generate], report_multiple_bugs=False)
    @given(strategy)
    def search(example):
        if condition(example):
            raise _Reached

    try:
        search()
    except _Reached:
        return
    pytest.fail(f"not drawn in {SEARCH.max_examples} examples")


def bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(f"uint{array.dtype.itemsize * 8}").reshape(-1)


def out_of_range(example: Example) -> list[int]:
    axis = 0 if example.axis is None else example.axis
    size = example.data.shape[axis]
    return [int(v) for v in example.indices.reshape(-1) if not -size <= int(v) <= size - 1]


# -- reachability ---------------------------------------------------------------
SHAPE_EDGES = {
    "rank 8 data": lambda e: e.data.ndim == 8,
    "rank 1 data": lambda e: e.data.ndim == 1,
    "zero-size data dim": lambda e: 0 in e.data.shape,
    "size-1 dim next to bigger ones": lambda e: 1 in e.data.shape and max(e.data.shape) > 2,
    "negative axis": lambda e: e.axis is not None and e.axis < 0,
    "absent axis attribute": lambda e: e.axis is None,
    "last axis": lambda e: e.axis is not None and e.axis % e.data.ndim == e.data.ndim - 1 > 0,
    "Gather scalar indices": lambda e: e.op == "Gather" and e.indices.ndim == 0,
    "Gather rank-4 indices": lambda e: e.op == "Gather" and e.indices.ndim == 4,
    "empty indices": lambda e: e.indices.size == 0,
    "GE indices smaller off axis": lambda e: (
        e.op == "GatherElements"
        and any(
            i < d
            for k, (i, d) in enumerate(zip(e.indices.shape, e.data.shape, strict=True))
            if k != (e.axis or 0) % e.data.ndim
        )
    ),
    "GE indices longer on the axis": lambda e: (
        e.op == "GatherElements"
        and e.indices.shape[(e.axis or 0) % e.data.ndim] > e.data.shape[(e.axis or 0) % e.data.ndim]
    ),
    "GE indices shorter on the axis": lambda e: (
        e.op == "GatherElements"
        and 0
        < e.indices.shape[(e.axis or 0) % e.data.ndim]
        < e.data.shape[(e.axis or 0) % e.data.ndim]
    ),
}


@pytest.mark.parametrize("edge", sorted(SHAPE_EDGES))
def test_shape_edges_are_reachable_with_valid_inputs(edge):
    reach(strategies.valid_examples(), SHAPE_EDGES[edge])


def _axis_size(e: Example) -> int:
    return e.data.shape[(e.axis or 0) % e.data.ndim]


# -- GatherND ---------------------------------------------------------------------
def _b(e: Example) -> int:
    return e.axis or 0


def _m(e: Example) -> int:
    return e.indices.shape[-1]


ND_EDGES = {
    "every opset": lambda e: e.opset == 11,  # 12 and 13 shrink first
    "batch_dims 1": lambda e: _b(e) == 1,
    "batch_dims 3 or more": lambda e: _b(e) >= 3,
    "absent batch_dims at 13": lambda e: e.opset == 13 and e.axis is None,
    "tuples of one element each (m = r - b)": lambda e: _m(e) == e.data.ndim - _b(e) >= 2,
    "tuples of slices (m < r - b)": lambda e: 1 < _m(e) < e.data.ndim - _b(e),
    "negative components": lambda e: (e.indices < 0).any(),
    "lower bound -s of a later component": lambda e: (
        _m(e) >= 2
        and e.data.shape[_b(e) + 1] > 1
        and (e.indices[..., 1] == -e.data.shape[_b(e) + 1]).any()
    ),
    "upper bound s-1 of the first": lambda e: (
        e.data.shape[_b(e)] > 2 and (e.indices[..., 0] == e.data.shape[_b(e)] - 1).any()
    ),
    "empty data": lambda e: e.data.size == 0,
    "empty indices, data not": lambda e: e.indices.size == 0 and e.data.size > 0,
    "zero-size indexed dimension": lambda e: 0 in e.data.shape[_b(e) : _b(e) + _m(e)],
    "rank 8 data": lambda e: e.data.ndim == 8,
    "rank 8 indices": lambda e: e.indices.ndim == 8,
    "batch dims of size 1": lambda e: _b(e) >= 2 and set(e.data.shape[: _b(e)]) == {1},
    "batch dims over 1": lambda e: _b(e) >= 1 and min(e.data.shape[: _b(e)]) > 1,
    "bfloat16 data": lambda e: e.dtype == "bfloat16",
}


@pytest.mark.parametrize("edge", sorted(ND_EDGES))
def test_gather_nd_edges_are_reachable_with_valid_inputs(edge):
    reach(strategies.valid_examples(op="GatherND"), ND_EDGES[edge])


def test_gather_nd_draws_int64_indices_only_and_refuses_int32():
    assert shrunk(strategies.index_dtypes("GatherND", 12), lambda _: True) == "int64"
    with pytest.raises(InvalidArgument, match="GatherND-11, GatherND-12, GatherND-13"):
        strategies.valid_examples(op="GatherND", index_dtype="int32")
    reach(
        strategies.invalid_examples(op="GatherND", clause="gnd-indices-dtype"),
        lambda e: e.indices_dtype == "int32",
    )


ND_OUT_OF_RANGE_EDGES = {
    "just above a later component's: s": lambda e: any(
        (e.indices[..., i] == e.data.shape[_b(e) + i]).any() for i in range(1, _m(e))
    ),
    "just below: -s-1": lambda e: (e.indices[..., 0] == -e.data.shape[_b(e)] - 1).any(),
    "on a zero-size indexed dimension": lambda e: 0 in e.data.shape[_b(e) : _b(e) + _m(e)],
    "int64 max": lambda e: 2**63 - 1 in e.indices,
    "int64 min": lambda e: -(2**63) in e.indices,
    "in batches": lambda e: _b(e) >= 1,
}


@pytest.mark.parametrize("edge", sorted(ND_OUT_OF_RANGE_EDGES))
def test_gather_nd_out_of_range_edges_are_reachable(edge):
    reach(
        strategies.invalid_examples(op="GatherND", clause="index-out-of-range"),
        ND_OUT_OF_RANGE_EDGES[edge],
    )


INDEX_EDGES = {
    "upper bound s-1": lambda e: _axis_size(e) > 2 and (_axis_size(e) - 1) in e.indices,
    "lower bound -s": lambda e: _axis_size(e) > 2 and -_axis_size(e) in e.indices,
    "zero": lambda e: e.indices.size > 0 and 0 in e.indices,
    "negative": lambda e: (e.indices < 0).any(),
}


@pytest.mark.parametrize("edge", sorted(INDEX_EDGES))
def test_in_range_index_edges_are_reachable(edge):
    reach(strategies.valid_examples(), INDEX_EDGES[edge])


OUT_OF_RANGE_EDGES = {
    "just above: s": lambda e: _axis_size(e) > 1 and _axis_size(e) in e.indices,
    "just below: -s-1": lambda e: _axis_size(e) > 1 and (-_axis_size(e) - 1) in e.indices,
    "int32 max": lambda e: e.indices.dtype == np.int32 and 2**31 - 1 in e.indices,
    "int32 min": lambda e: e.indices.dtype == np.int32 and -(2**31) in e.indices,
    "int64 max": lambda e: 2**63 - 1 in e.indices,
    "int64 min": lambda e: -(2**63) in e.indices,
    "int64 beyond int32": lambda e: (
        e.indices.dtype == np.int64 and ((e.indices > 2**31 - 1) | (e.indices < -(2**31))).any()
    ),
    "on a zero-size axis": lambda e: _axis_size(e) == 0,
}


def _edge_index_dtype(edge: str) -> str:
    return "int32" if "int32 m" in edge else "int64"


# Only the pairs an operator can take: GatherND's indices are int64 only, so the
# int32 edges are not its (no case is drawn for them, nothing to skip).
@pytest.mark.parametrize(
    ("edge", "op"),
    [
        (edge, op)
        for edge in sorted(OUT_OF_RANGE_EDGES)
        for op in sorted(OPSETS)
        if _edge_index_dtype(edge) in op_spec(op, 13).index_dtypes
    ],
)
def test_out_of_range_edges_are_reachable(edge, op):
    index_dtype = _edge_index_dtype(edge)
    reach(
        strategies.invalid_examples(
            op=op, opset=13, clause="index-out-of-range", index_dtype=index_dtype
        ),
        OUT_OF_RANGE_EDGES[edge],
    )


def _f32(e: Example) -> np.ndarray:
    return bits(e.data)


# name -> (the dtype searched, condition): narrowing to the dtype keeps each
# search short; that the dtypes themselves are drawn is tested below.
VALUE_EDGES = {
    "NaN with a payload": (
        "float32",
        lambda e: (((_f32(e) & 0x7F800000) == 0x7F800000) & ((_f32(e) & 0x003FFFFF) != 0)).any(),
    ),
    "signalling NaN": (
        "float32",
        lambda e: (((_f32(e) & 0x7FC00000) == 0x7F800000) & ((_f32(e) & 0x003FFFFF) != 0)).any(),
    ),
    "negative zero": ("float32", lambda e: (_f32(e) == 0x80000000).any()),
    "+inf": ("float32", lambda e: (_f32(e) == 0x7F800000).any()),
    "-inf": ("float32", lambda e: (_f32(e) == 0xFF800000).any()),
    "subnormal": (
        "float32",
        lambda e: (((_f32(e) & 0x7F800000) == 0) & ((_f32(e) & 0x7FFFFF) != 0)).any(),
    ),
    "float32 max": ("float32", lambda e: (_f32(e) == 0x7F7FFFFF).any()),
    "float16 NaN payload": (
        "float16",
        lambda e: (((bits(e.data) & 0x7C00) == 0x7C00) & ((bits(e.data) & 0x01FF) != 0)).any(),
    ),
    "int64 min": ("int64", lambda e: (e.data == -(2**63)).any()),
    "uint64 max": ("uint64", lambda e: (e.data == 2**64 - 1).any()),
    "uint32 above int32": ("uint32", lambda e: (e.data > 2**31 - 1).any()),
    "empty string": ("string", lambda e: "" in e.data.reshape(-1).tolist()),
    "non-ASCII string": ("string", lambda e: any(not s.isascii() for s in e.data.reshape(-1))),
    "markup in a string": ("string", lambda e: any("<script>" in s for s in e.data.reshape(-1))),
    "bfloat16 NaN": ("bfloat16", lambda e: np.isnan(e.data.astype(np.float32)).any()),
    "complex with a NaN part": ("complex64", lambda e: np.isnan(e.data).any()),
    "bool True and False": ("bool", lambda e: e.data.any() and not e.data.all()),
}


@pytest.mark.parametrize("edge", sorted(VALUE_EDGES))
def test_value_edges_are_reachable(edge):
    dtype, condition = VALUE_EDGES[edge]
    reach(strategies.valid_examples(op="Gather", opset=13, dtype=dtype), condition)


def test_values_are_not_just_small_integers():
    reach(
        strategies.valid_examples(dtype="int32", op="Gather", opset=13),
        lambda e: e.data.size >= 4 and (np.abs(e.data.astype(np.int64)) > 2**20).sum() >= 2,
    )


@pytest.mark.parametrize("variant", strategies.models.VARIANTS)
def test_every_variant_is_drawn(variant):
    reach(strategies.examples(), lambda e: e.variant == variant)


@pytest.mark.parametrize("op,opset", [(op, v) for op in OPSETS for v in OPSETS[op]])
def test_every_opset_draws_only_its_dtypes_and_all_of_them(op, opset):
    allowed = op_spec(op, opset).data_dtypes  # from onnx.defs: bfloat16 only at 13
    for dtype in allowed:
        reach(strategies.data_dtypes(op, opset), lambda d, dtype=dtype: d == dtype)

    @settings(
        max_examples=100, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(strategies.valid_examples(op=op, opset=opset))
    def drawn(example):
        assert (example.op, example.opset) == (op, opset)
        assert example.dtype in allowed
        assert example.indices_dtype in op_spec(op, opset).index_dtypes

    drawn()


# -- valid and invalid are what they say ---------------------------------------------
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.valid_examples())
def test_valid_examples_are_valid(example):
    verdict = oracle.verdict(example.op, example.opset, example.data, example.indices, example.axis)
    assert verdict.valid, verdict.violation


@pytest.mark.parametrize(
    "op,clause", [(op, clause) for op, clauses in INVALID_CLAUSES.items() for clause in clauses]
)
def test_invalid_examples_break_the_clause_asked_for(op, clause):
    # The opsets that can break it: T refuses a dtype at 11 only (and at 1); GatherND's
    # batch_dims is given at 11 or out of range or unequal at 12 and 13 only.
    opset = None if all(clause in breakable(op, v) for v in OPSETS[op]) else 11
    if clause not in breakable(op, 11):
        opset = 13

    @settings(
        max_examples=60, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(strategies.invalid_examples(op=op, opset=opset, clause=clause))
    def check(example):
        verdict = oracle.verdict(
            example.op, example.opset, example.data, example.indices, example.axis
        )
        assert not verdict.valid
        assert verdict.violation.clause == clause

    check()


def breakable(op: str, opset: int) -> list[str]:
    """The clauses ``invalid_examples`` takes at this opset (it refuses the others)."""
    taken = []
    for clause in INVALID_CLAUSES[op]:
        try:
            strategies.invalid_examples(op=op, opset=opset, clause=clause)
        except InvalidArgument:
            continue
        taken.append(clause)
    return taken


def test_gather_nd_clauses_follow_its_opsets():
    """GatherND-11 has no batch_dims: giving it is the clause; 12 and 13 take it,
    out of range or unequal; only 11 and 12 lack a dtype (bfloat16)."""
    common = ["index-out-of-range", "data-rank-zero", "gnd-indices-rank-zero",
              "gnd-last-dim-out-of-range", "gnd-indices-dtype"]  # fmt: skip
    assert breakable("GatherND", 11) == [*common[:3], "gnd-batch-dims-opset-11", *common[3:],
                                         "data-dtype"]  # fmt: skip
    batch = ["gnd-batch-dims-out-of-range", "gnd-batch-dims-unequal"]
    assert breakable("GatherND", 12) == [*common[:3], *batch, *common[3:], "data-dtype"]
    assert breakable("GatherND", 13) == [*common[:3], *batch, *common[3:]]


def test_a_clause_the_opset_cannot_break_is_a_clear_error():
    with pytest.raises(ValueError, match="cannot break 'data-dtype'"):
        find(strategies.invalid_examples(op="Gather", opset=13, clause="data-dtype"), bool)


@given(st.data())
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_examples_mix_valid_and_invalid(data):
    example = data.draw(strategies.examples())
    assert isinstance(example, Example)
    assert example.variant in strategies.models.VARIANTS


def test_both_valid_and_invalid_come_from_examples():
    def valid(e):
        return oracle.verdict(e.op, e.opset, e.data, e.indices, e.axis).valid

    reach(strategies.examples(), valid)
    reach(strategies.examples(), lambda e: not valid(e))


# -- the size cap ----------------------------------------------------------------
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.examples(max_elements=16))
def test_tensors_respect_the_cap(example):
    # Off-axis dims of GatherElements indices may exceed data's by 2 ("larger"):
    # the cap bounds data and each dimension drawn, so allow that margin.
    assert example.data.size <= 16
    assert example.indices.size <= 16 * 3**example.indices.ndim


def test_the_cap_defaults_and_reads_the_environment(monkeypatch):
    monkeypatch.delenv(strategies.MAX_ELEMENTS_ENV, raising=False)
    assert strategies.max_elements() == strategies.DEFAULT_MAX_ELEMENTS
    monkeypatch.setenv(strategies.MAX_ELEMENTS_ENV, "4096")
    assert strategies.max_elements() == 4096
    reach(strategies.valid_examples(op="Gather"), lambda e: 1000 < e.data.size <= 4096)
    monkeypatch.setenv(strategies.MAX_ELEMENTS_ENV, "lots")
    with pytest.raises(ValueError, match="CONFORMANCE_MAX_ELEMENTS='lots'"):
        strategies.max_elements()


def test_below_the_default_cap_nothing_is_bigger(monkeypatch):
    monkeypatch.delenv(strategies.MAX_ELEMENTS_ENV, raising=False)
    with pytest.raises(Exception, match="No examples found"):
        find(
            strategies.valid_examples(),
            lambda e: e.data.size > strategies.DEFAULT_MAX_ELEMENTS,
            settings=settings(SEARCH, max_examples=500),
        )


# -- shrinking direction ------------------------------------------------------------
def test_the_parts_shrink_to_gather_newest_opset_static_int64():
    assert shrunk(strategies.op_opsets(), lambda _: True) == ("Gather", 13)
    assert shrunk(strategies.op_opsets("GatherElements"), lambda _: True) == ("GatherElements", 13)
    assert shrunk(strategies.variants(), lambda _: True) == "static"
    assert shrunk(strategies.index_dtypes("Gather", 13), lambda _: True) == "int64"
    assert shrunk(strategies.axes(4), lambda _: True) == 0
    assert shrunk(strategies.shapes(), lambda _: True) == (1,)
    assert shrunk(strategies.shapes(), lambda s: len(s) == 3) == (1, 1, 1)


def test_needing_an_element_shrinks_to_one():
    example = shrunk(
        strategies.valid_examples(op="Gather", dtype="float32"), lambda e: e.indices.size > 0
    )
    assert example.data.shape == (1,) and example.indices.shape == ()
    assert not bits(example.data).any() and int(example.indices) == 0


def test_dimensions_shrink_toward_one_and_rank_toward_the_need():
    example = shrunk(
        strategies.valid_examples(op="Gather", dtype="float32"),
        lambda e: e.data.ndim >= 3,
    )
    assert example.data.shape == (1, 1, 1)


def test_a_zero_size_dimension_shrinks_away_unless_needed():
    example = shrunk(
        strategies.valid_examples(op="Gather", dtype="float32"),
        lambda e: 0 in e.data.shape,
    )
    assert example.data.shape == (0,)


def test_out_of_range_shrinks_to_the_nearest_bad_value():
    example = shrunk(
        strategies.invalid_examples(op="Gather", opset=13, clause="index-out-of-range"),
        lambda e: _axis_size(e) == 3 and max(out_of_range(e)) > 0,
    )
    assert out_of_range(example) == [3]


def test_negative_out_of_range_shrinks_to_minus_s_minus_one():
    example = shrunk(
        strategies.invalid_examples(op="Gather", opset=13, clause="index-out-of-range"),
        lambda e: _axis_size(e) == 3 and min(out_of_range(e)) < 0,
    )
    assert out_of_range(example) == [-4]


def test_beyond_int32_shrinks_to_just_beyond():
    example = shrunk(
        strategies.invalid_examples(
            op="Gather", opset=13, clause="index-out-of-range", index_dtype="int64"
        ),
        lambda e: (e.indices > 2**31 - 1).any(),
    )
    assert example.indices.reshape(-1).tolist() == [2**31]


def test_data_values_shrink_toward_zero_bits():
    example = shrunk(
        strategies.valid_examples(op="Gather", dtype="float32"),
        lambda e: e.data.size >= 3 and np.isnan(e.data).any(),
    )
    # One NaN; every other element is +0.0.
    flat = bits(example.data).tolist()
    assert sorted(flat)[:-1] == [0] * (len(flat) - 1)
    assert np.isnan(example.data).sum() == 1


def test_invalid_axis_shrinks_to_just_outside():
    example = shrunk(
        strategies.invalid_examples(op="Gather", opset=13, clause="axis-out-of-range"),
        lambda e: e.axis > 0,
    )
    assert (example.data.ndim, example.axis) == (1, 1)


def test_in_range_indices_shrink_to_zero():
    example = shrunk(
        strategies.valid_examples(op="GatherElements", opset=13),
        lambda e: e.indices.size >= 2,
    )
    assert not example.indices.any()


def _nd_out_of_range(e: Example) -> list[tuple[int, int]]:
    """(component, value) of each index outside its dimension's range."""
    sizes = e.data.shape[_b(e) : _b(e) + _m(e)]
    rows = e.indices.reshape(-1, _m(e)).tolist()
    return [(i, v) for row in rows for i, v in enumerate(row) if not -sizes[i] <= v < sizes[i]]


def test_gather_nd_needing_an_element_shrinks_to_one_tuple_of_one_zero():
    example = shrunk(
        strategies.valid_examples(op="GatherND", dtype="float32"), lambda e: e.indices.size > 0
    )
    assert (example.opset, example.axis) == (13, 0)  # the newest opset, batch_dims 0
    assert example.data.shape == (1,) and example.indices.shape == (1,)
    assert not bits(example.data).any() and example.indices.tolist() == [0]


def test_gather_nd_batch_dims_shrink_to_one_batch_of_one():
    example = shrunk(strategies.valid_examples(op="GatherND", dtype="float32"), lambda e: _b(e) > 0)
    assert (example.axis, example.data.shape, example.indices.shape) == (1, (1, 1), (1, 1))
    assert not example.indices.any()


def test_gather_nd_out_of_range_shrinks_to_the_nearest_bad_value():
    example = shrunk(
        strategies.invalid_examples(op="GatherND", opset=13, clause="index-out-of-range"),
        lambda e: e.data.shape[:1] == (3,) and any(v > 0 for _, v in _nd_out_of_range(e)),
    )
    assert _nd_out_of_range(example) == [(0, 3)]
    example = shrunk(
        strategies.invalid_examples(op="GatherND", opset=13, clause="index-out-of-range"),
        lambda e: any(i == 1 for i, _ in _nd_out_of_range(e)),  # the second component's
    )
    assert _nd_out_of_range(example) == [(1, example.data.shape[_b(example) + 1])]


def test_gather_nd_invalid_batch_dims_shrink_to_just_outside():
    strategy = strategies.invalid_examples(
        op="GatherND", opset=13, clause="gnd-batch-dims-out-of-range"
    )
    above = shrunk(strategy, lambda e: e.axis > 0)
    assert above.axis == min(above.data.ndim, above.indices.ndim) == 1
    assert shrunk(strategy, lambda e: e.axis < 0).axis == -1
    unequal = shrunk(
        strategies.invalid_examples(op="GatherND", opset=13, clause="gnd-batch-dims-unequal"),
        lambda _: True,
    )
    assert (unequal.axis, unequal.data.shape[:1], unequal.indices.shape[:1]) == (1, (1,), (2,))


def test_gather_nd_tuple_length_shrinks_to_just_past_r_minus_b():
    example = shrunk(
        strategies.invalid_examples(op="GatherND", opset=13, clause="gnd-last-dim-out-of-range"),
        lambda e: _m(e) > 0,
    )
    assert _m(example) == example.data.ndim - _b(example) + 1


# -- arguments are checked when a strategy is built ------------------------------------
# (function, positional arguments, keyword arguments, the bad argument's name):
# calling the function alone, without drawing, must raise InvalidArgument naming it.
BAD_ARGUMENTS = [
    ("op_opsets", ("Gatherr",), {}, "op"),
    ("op_opsets", ("",), {}, "op"),
    ("data_dtypes", ("Gather", 12), {}, "opset"),
    ("data_dtypes", (None, 13), {}, "op"),
    ("index_dtypes", ("GatherElements", 1), {}, "opset"),
    ("index_dtypes", ("Gather", "13"), {}, "opset"),
    ("shapes", (), {"min_rank": -1}, "min_rank"),
    ("shapes", (), {"min_rank": 3, "max_rank": 2}, "max_rank"),
    ("shapes", (), {"max_rank": 33}, "max_rank"),
    ("shapes", (), {"max_elements": 0}, "max_elements"),
    ("shapes", (), {"empty": 1}, "empty"),
    ("shapes", (), {"min_rank": 0, "empty": True}, "empty"),
    ("shapes", (), {"max_dim": 0}, "max_dim"),
    ("axes", (0,), {}, "rank"),
    ("axes", (2.0,), {}, "rank"),
    ("ge_indices_shapes", ((), 0), {}, "data_shape"),
    ("ge_indices_shapes", ((3, -1), 0), {}, "data_shape"),
    ("ge_indices_shapes", ((3, 4), 2), {}, "axis"),
    ("ge_indices_shapes", ((3, 4), -3), {}, "axis"),
    ("ge_indices_shapes", ((3, 4), 0, "bigger"), {}, "off_axis"),
    ("ge_indices_shapes", ((3,), 0, "larger"), {}, "off_axis"),
    ("ge_indices_shapes", ((3, 0), 0, "smaller"), {}, "off_axis"),
    ("ge_indices_shapes", ((3, 4), 0), {"max_elements": -1}, "max_elements"),
    ("special_values", ("float",), {}, "dtype_name"),
    ("special_values", (["float32"],), {}, "dtype_name"),
    ("tensors", ("float", (2,)), {}, "dtype_name"),
    ("tensors", ("float32", 3), {}, "shape"),
    ("tensors", ("float32", (2, -1)), {}, "shape"),
    ("tensors", ("float32", (1,) * 33), {}, "shape"),
    ("indices_in_range", ("float32", (2,), 3), {}, "dtype_name"),
    ("indices_in_range", ("int64", (2,), -1), {}, "size"),
    ("indices_in_range", ("int64", (2,), 0), {}, "size"),
    ("indices_in_range", ("int64", [2.5], 3), {}, "shape"),
    ("indices_in_range", ("int64", (2,), 3), {"negative": 1}, "negative"),
    ("indices_out_of_range", ("bool", (2,), 3), {}, "dtype_name"),
    ("indices_out_of_range", ("int64", (0, 2), 3), {}, "shape"),
    ("indices_out_of_range", ("uint8", (2,), 256), {}, "size"),
    ("valid_examples", (), {"op": "Gatherr"}, "op"),
    ("valid_examples", (), {"opset": 10}, "opset"),
    ("valid_examples", (), {"op": "GatherElements", "opset": 1}, "opset"),
    ("valid_examples", (), {"opset": True}, "opset"),
    ("valid_examples", (), {"dtype": "float"}, "dtype"),
    ("valid_examples", (), {"dtype": np.float32}, "dtype"),
    ("valid_examples", (), {"op": "Gather", "opset": 11, "dtype": "bfloat16"}, "dtype"),
    ("valid_examples", (), {"op": "Gather", "dtype": "bfloat16"}, "dtype"),  # opset 1 and 11
    ("valid_examples", (), {"index_dtype": "int16"}, "index_dtype"),
    ("valid_examples", (), {"variant": "Static"}, "variant"),
    ("valid_examples", (), {"max_elements": 0}, "max_elements"),
    ("valid_examples", (), {"max_elements": True}, "max_elements"),
    ("valid_examples", (), {"max_elements": 2.5}, "max_elements"),
    ("valid_examples", (), {"max_elements": -3}, "max_elements"),
    ("invalid_examples", (), {"op": "Gatherr"}, "op"),
    ("invalid_examples", (), {"clause": "nope"}, "clause"),
    ("invalid_examples", (), {"clause": "rank-mismatch"}, "clause"),  # Gather cannot
    ("invalid_examples", (), {"op": "Gather", "opset": 13, "clause": "data-dtype"}, "clause"),
    (
        "invalid_examples",
        (),
        {"op": "Gather", "opset": 11, "clause": "data-dtype", "dtype": "float32"},
        "dtype",
    ),
    (
        "invalid_examples",
        (),
        {"op": "Gather", "clause": "indices-dtype", "index_dtype": "int64"},
        "index_dtype",
    ),
    ("invalid_examples", (), {"clause": "indices-dtype"}, "clause"),  # GatherND's is its own
    (
        "invalid_examples",
        (),
        {"op": "GatherND", "clause": "gnd-indices-dtype", "index_dtype": "int64"},
        "index_dtype",
    ),
    (
        "invalid_examples",
        (),
        {"op": "GatherND", "opset": 12, "clause": "gnd-batch-dims-opset-11"},
        "clause",
    ),
    (
        "invalid_examples",
        (),
        {"op": "GatherND", "opset": 11, "clause": "gnd-batch-dims-unequal"},
        "clause",
    ),
    ("valid_examples", (), {"op": "GatherND", "index_dtype": "int32"}, "index_dtype"),
    ("tuples_in_range", ("float32", (2, 1), (3,)), {}, "dtype_name"),
    ("tuples_in_range", ("int64", (), ()), {}, "shape"),
    ("tuples_in_range", ("int64", (2, 0), ()), {}, "shape"),
    ("tuples_in_range", ("int64", (2, 2), (3,)), {}, "sizes"),
    ("tuples_in_range", ("int64", (2, 1), (-1,)), {}, "sizes"),
    ("tuples_in_range", ("int64", (2, 1), 3), {}, "sizes"),
    ("tuples_in_range", ("int64", (2, 2), (3, 0)), {}, "sizes"),
    ("tuples_in_range", ("int64", (2, 1), (3,)), {"negative": None}, "negative"),
    ("tuples_out_of_range", ("bool", (1, 1), (3,)), {}, "dtype_name"),
    ("tuples_out_of_range", ("int64", (0, 1), (3,)), {}, "shape"),
    ("tuples_out_of_range", ("uint8", (1, 2), (3, 256)), {}, "sizes"),
    ("invalid_examples", (), {"clause": "index-out-of-range", "dtype": "floot"}, "dtype"),
    ("invalid_examples", (), {"index_dtype": "uint8"}, "index_dtype"),
    ("invalid_examples", (), {"variant": "static "}, "variant"),
    ("invalid_examples", (), {"max_elements": 0}, "max_elements"),
    ("valid_examples", (), {"axis_length": "2-64"}, "axis_length"),
    ("valid_examples", (), {"axis_length": 0}, "axis_length"),
    ("valid_examples", (), {"axis_length": ">=256", "max_elements": 255}, "axis_length"),
    ("valid_examples", (), {"axis_length": "64-255", "max_elements": 63}, "axis_length"),
    ("valid_examples", (), {"index_class": "out_of_range"}, "index_class"),
    ("valid_examples", (), {"index_class": "in_range", "axis_length": "0"}, "index_class"),
    ("invalid_examples", (), {"axis_length": "1", "clause": "data-rank-zero"}, "axis_length"),
    (
        "invalid_examples",
        (),
        {"op": "Gather", "axis_length": "1", "clause": "axis-out-of-range"},
        "axis_length",
    ),
    (
        "invalid_examples",
        (),
        {"op": "GatherND", "axis_length": "1", "clause": "gnd-indices-rank-zero"},
        "axis_length",
    ),
    ("invalid_examples", (), {"axis_length": ">=256", "max_elements": 16}, "axis_length"),
    ("invalid_examples", (), {"index_class": "negative"}, "index_class"),
    (
        "invalid_examples",
        (),
        {"op": "GatherElements", "index_class": "out_of_range", "clause": "rank-mismatch"},
        "index_class",
    ),
    (
        "invalid_examples",
        (),
        {"op": "Gather", "index_class": "beyond_int32", "index_dtype": "int32"},
        "index_class",
    ),
    ("examples", (), {"op": "Gatherr"}, "op"),
    ("examples", (), {"opset": 2}, "opset"),
    ("examples", (), {"max_elements": 0}, "max_elements"),
]


@pytest.mark.parametrize(
    "function,args,kwargs,name",
    BAD_ARGUMENTS,
    ids=[f"{f}-{name}-{i}" for i, (f, _, _, name) in enumerate(BAD_ARGUMENTS)],
)
def test_a_bad_argument_raises_when_the_strategy_is_built(function, args, kwargs, name):
    strategy = getattr(strategies, function)
    value = inspect.signature(strategy).bind(*args, **kwargs).arguments[name]
    with pytest.raises(InvalidArgument) as raised:
        strategy(*args, **kwargs)  # built, never drawn
    message = str(raised.value)
    assert message.startswith(f"{name}={value!r} is not "), message
    assert "; expected " in message
    assert isinstance(raised.value, ValueError)  # as the old draw-time errors were


def test_every_public_function_with_arguments_has_bad_argument_cases():
    public = {
        name
        for name in strategies.__all__
        if inspect.isfunction(getattr(strategies, name))
        and inspect.signature(getattr(strategies, name)).parameters
    }
    assert public == {function for function, *_ in BAD_ARGUMENTS}


def test_the_message_says_what_is_allowed():
    with pytest.raises(InvalidArgument, match="op='Gatherr' is not an operator") as raised:
        strategies.valid_examples(op="Gatherr")
    assert str(raised.value).endswith("expected one of 'Gather', 'GatherElements', 'GatherND'")
    with pytest.raises(
        InvalidArgument, match=r"Gather-1, Gather-11; expected one of .*'float16', 'float32'"
    ):
        strategies.valid_examples(op="Gather", dtype="bfloat16")
    with pytest.raises(InvalidArgument, match="Gather-13 cannot break 'data-dtype'"):
        strategies.invalid_examples(op="Gather", opset=13, clause="data-dtype")


# Arguments at the edge of what is allowed (and those the fuzz campaign's shrinker
# passes): they build, and what they draw keeps to them.
GOOD_ARGUMENTS = [
    ("op_opsets", (), {}),
    ("op_opsets", ("GatherElements",), {}),
    ("data_dtypes", ("Gather", 1), {}),
    ("index_dtypes", ("GatherElements", np.int64(13)), {}),
    ("variants", (), {}),
    ("shapes", (), {"min_rank": 0, "max_rank": 0}),
    ("shapes", (), {"min_rank": 2, "max_rank": 32, "max_elements": 1, "empty": True}),
    ("shapes", (), {"max_dim": 1, "empty": False}),
    ("axes", (1,), {}),
    ("ge_indices_shapes", ([3, 0], -2, "larger", 1), {}),
    ("ge_indices_shapes", ((3, 2), 0, "smaller"), {}),
    ("special_values", ("bfloat16",), {}),
    ("tensors", ("string", ()), {}),
    ("tensors", ("complex128", [2, 0]), {}),
    ("indices_in_range", ("uint8", (2,), 1000, False), {}),
    ("indices_in_range", ("int32", (0,), 0), {}),
    ("indices_out_of_range", ("int8", (1,), 0), {}),
    ("indices_out_of_range", ("uint8", (1,), 255), {}),
    ("valid_examples", (), {}),
    ("valid_examples", (), {"opset": 13, "dtype": "bfloat16"}),
    ("valid_examples", (), {"op": "Gather", "opset": 1, "index_dtype": "int32", "max_elements": 1}),
    ("invalid_examples", (), {"op": "Gather", "opset": 1, "clause": "data-dtype"}),
    (
        "invalid_examples",
        (),
        {"op": "GatherElements", "opset": 11, "clause": "data-dtype", "dtype": "bfloat16"},
    ),
    ("invalid_examples", (), {"op": "Gather", "clause": "indices-dtype", "index_dtype": "uint64"}),
    (
        "invalid_examples",
        (),
        {"op": "GatherND", "clause": "gnd-indices-dtype", "index_dtype": "int32"},
    ),
    ("invalid_examples", (), {"op": "GatherND", "opset": 11, "clause": "gnd-batch-dims-opset-11"}),
    ("valid_examples", (), {"op": "GatherND", "opset": 12, "max_elements": 1}),
    ("tuples_in_range", ("int64", (0, 2), (0, 3)), {}),
    ("tuples_in_range", ("uint8", [2, 3, 1], [1000], False), {}),
    ("tuples_out_of_range", ("int8", (1, 2), (0, 127)), {}),
    ("invalid_examples", (), {"op": "GatherElements", "clause": "rank-mismatch"}),
    ("examples", (), {"op": "GatherElements", "opset": 11, "max_elements": 4}),
    ("valid_examples", (), {"axis_length": ">=256", "max_elements": 256}),
    ("valid_examples", (), {"axis_length": "1", "index_class": "negative", "max_elements": 1}),
    (
        "invalid_examples",
        (),
        {"op": "GatherElements", "axis_length": "0", "index_class": "int64_extremes"},
    ),
    (
        "invalid_examples",
        (),
        {"op": "Gather", "index_class": "out_of_range", "index_dtype": "int32"},
    ),
    (
        "invalid_examples",
        (),
        {"op": "GatherND", "opset": 13, "axis_length": "1", "index_class": "int64_extremes"},
    ),
]


@pytest.mark.parametrize(
    "function,args,kwargs",
    GOOD_ARGUMENTS,
    ids=[f"{f}-{i}" for i, (f, *_) in enumerate(GOOD_ARGUMENTS)],
)
def test_good_arguments_build_and_draw(function, args, kwargs):
    built = getattr(strategies, function)(*args, **kwargs)
    if function == "special_values":  # the one public function that is not a strategy
        assert built
        return

    @settings(SEARCH, max_examples=20, phases=[Phase.generate])
    @given(built)
    def draw(drawn):
        if isinstance(drawn, Example):
            for name in ("op", "opset", "dtype"):
                if name in kwargs:
                    assert getattr(drawn, name) == kwargs[name]
            if "index_dtype" in kwargs:
                assert drawn.indices_dtype == kwargs["index_dtype"]
            if "max_elements" in kwargs:
                assert drawn.data.size <= kwargs["max_elements"]
        if "max_elements" in kwargs and isinstance(drawn, tuple):
            assert math.prod(drawn) <= kwargs["max_elements"]

    draw()


# -- coverage classes asked for (conformance.fuzz.coverage counts them) -----------------
CLASS_DRAWS = settings(
    max_examples=25, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)


def _verdict(example: Example):
    return oracle.verdict(example.op, example.opset, example.data, example.indices, example.axis)


@pytest.mark.parametrize("valid", [True, False], ids=["valid", "invalid"])
@pytest.mark.parametrize("axis_length", coverage.AXIS_LENGTHS)
def test_an_axis_length_asked_for_is_the_one_drawn(axis_length, valid):
    strategy = strategies.valid_examples if valid else strategies.invalid_examples

    @CLASS_DRAWS
    @given(strategy(axis_length=axis_length, max_elements=256))
    def check(example):
        assert coverage.axis_length(example) == axis_length  # as the campaign counts it
        assert example.data.size <= 256
        verdict = _verdict(example)
        assert verdict.valid == valid, verdict.violation
        if valid:
            assert example.indices.size <= 256

    check()


@pytest.mark.parametrize(
    "index_class", strategies.VALID_INDEX_CLASSES + strategies.INVALID_INDEX_CLASSES
)
def test_an_index_class_asked_for_is_one_drawn(index_class):
    valid = index_class in strategies.VALID_INDEX_CLASSES
    strategy = strategies.valid_examples if valid else strategies.invalid_examples

    @CLASS_DRAWS
    @given(strategy(index_class=index_class, max_elements=256))
    def check(example):
        classes = coverage.index_classes(example)
        assert index_class in classes, classes
        verdict = _verdict(example)
        if valid:
            assert verdict.valid, verdict.violation
            assert example.indices.size <= 256
            if index_class == "in_range":
                assert "negative" not in classes and (example.indices >= 0).all()
        else:
            assert verdict.violation.clause == "index-out-of-range"
        if index_class in ("beyond_int32", "int64_extremes"):
            assert example.indices_dtype == "int64"

    check()


@pytest.mark.parametrize(
    "strategy,kwargs",
    [
        ("valid_examples", {"op": "GatherElements", "axis_length": "64-255",
                            "index_class": "negative"}),
        ("valid_examples", {"op": "Gather", "axis_length": ">=256", "index_class": "in_range"}),
        ("invalid_examples", {"op": "GatherElements", "axis_length": ">=256",
                              "index_class": "beyond_int32"}),
        ("invalid_examples", {"op": "Gather", "axis_length": "0", "index_class": "int64_extremes"}),
        ("valid_examples", {"op": "GatherND", "axis_length": "2-63", "index_class": "negative"}),
        ("invalid_examples", {"op": "GatherND", "axis_length": "0",
                              "index_class": "out_of_range"}),
    ],
)  # fmt: skip
def test_both_classes_at_once(strategy, kwargs):
    @CLASS_DRAWS
    @given(getattr(strategies, strategy)(max_elements=256, **kwargs))
    def check(example):
        assert example.op == kwargs["op"]
        assert coverage.axis_length(example) == kwargs["axis_length"]
        assert kwargs["index_class"] in coverage.index_classes(example)
        assert _verdict(example).valid == (strategy == "valid_examples")

    check()


def test_a_drawn_clause_is_one_the_given_dtypes_can_break():
    """With a dtype (one T allows) or an index dtype given, no clause is drawn
    that only another dtype could break: the input is still invalid."""

    @settings(CLASS_DRAWS, max_examples=80)
    @given(strategies.invalid_examples(op="Gather", opset=11, dtype="float32", index_dtype="int32"))
    def check(example):
        verdict = _verdict(example)
        assert not verdict.valid
        assert verdict.violation.clause not in ("data-dtype", "indices-dtype")
        assert (example.dtype, example.indices_dtype) == ("float32", "int32")

    check()


def test_with_an_axis_length_no_axisless_clause_is_drawn():
    reach(
        strategies.invalid_examples(op="GatherElements", axis_length="2-63"),
        lambda e: _verdict(e).violation.clause == "rank-mismatch",
    )

    @settings(CLASS_DRAWS, max_examples=60)
    @given(strategies.invalid_examples(axis_length="2-63"))
    def check(example):
        assert _verdict(example).violation.clause not in ("data-rank-zero", "axis-out-of-range")

    check()


def test_every_operator_of_the_table_is_drawn():
    from conformance.tables.operators import OPERATORS
    from conformance.tables.spec import OPSETS as ALL

    # every row but those that write: their third input is not drawn yet (issue 47)
    drawn = {op: opsets for op, opsets in ALL.items() if not OPERATORS[op].writes}
    assert drawn == strategies.OPSETS and len(drawn) == 3
    for op in drawn:
        reach(strategies.examples(), lambda e, op=op: e.op == op)
