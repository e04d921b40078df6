"""GatherND's oracle (conformance/oracle/gather_nd.py): against an independent
implementation written here from the spec text (005), on random valid and
invalid inputs of every dtype and opset; every example of 005 and 006 with
its literal output; each forbidden input with its clause; its decisions'
quotes in their documents."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.oracle import SpecViolation, compare, gather_nd
from conformance.tables import decisions, dtypes

# 005's type lists, copied from the text (not from onnx.defs, which the oracle reads).
_T_11_12 = [
    *("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"),
    *("float16", "float32", "float64", "string", "bool", "complex64", "complex128"),
]
TEXT_TYPES = {11: _T_11_12, 12: _T_11_12, 13: [*_T_11_12, "bfloat16"]}


class Refused(Exception):
    """The slow implementation's refusal, with the 005 rule the input breaks."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


def slow_gather_nd(opset: int, data: np.ndarray, indices: np.ndarray, batch_dims):
    """005 read literally, a Python loop over every output position."""
    if dtypes.name_of(data) not in TEXT_TYPES[opset]:
        raise Refused("data-dtype")  # "T : tensor(uint8), ..."
    if indices.dtype != np.int64:
        raise Refused("gnd-indices-dtype")  # "indices ... : tensor(int64)"
    r, q = data.ndim, indices.ndim
    if r < 1:
        raise Refused("data-rank-zero")  # "r >= 1 and q >= 1 are to be honored"
    if q < 1:
        raise Refused("gnd-indices-rank-zero")
    if opset == 11 and batch_dims is not None:
        raise Refused("gnd-batch-dims-opset-11")  # GatherND-11 has no attributes
    b = 0 if batch_dims is None else batch_dims
    if not 0 <= b < min(q, r):  # "b < min(q, r) is to be honored"
        raise Refused("gnd-batch-dims-out-of-range")
    if any(indices.shape[i] != data.shape[i] for i in range(b)):
        raise Refused("gnd-batch-dims-unequal")  # "The first b dimensions ... must be equal"
    m = indices.shape[-1]
    if not (1 <= m <= r - b):  # "between 1 (inclusive) and rank r-b (inclusive)"
        raise Refused("gnd-last-dim-out-of-range")
    tuples = list(np.ndindex(*indices.shape[:-1]))
    # "All values in indices are expected to be within bounds": every one is checked.
    chosen = {}
    for at in tuples:
        components = []
        for i in range(m):
            value, size = int(indices[(*at, i)]), data.shape[b + i]
            if not -size <= value <= size - 1:  # "-data_shape[i] <= indices[...,i] <= ..."
                raise Refused("index-out-of-range")
            components.append(value + size if value < 0 else value)
        chosen[at] = tuple(components)
    rest = data.shape[b + m :]
    out = np.empty(indices.shape[:-1] + rest, dtype=data.dtype)
    for at in tuples:
        for j in np.ndindex(*rest):
            out[(*at, *j)] = data[(*at[:b], *chosen[at], *j)]
    return out


def _values(dtype: str, shape, seed: int) -> np.ndarray:
    """Data of any dtype, arbitrary bits for the numeric ones (NaN payloads, -0.0)."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    if dtype == "string":
        return np.array([f"s{v}" for v in rng.integers(0, 99, size)], dtype=object).reshape(shape)
    if dtype == "bool":
        return rng.integers(0, 2, size).astype(bool).reshape(shape)
    numpy = dtypes.by_name(dtype).numpy
    return np.frombuffer(rng.bytes(size * numpy.itemsize), dtype=numpy).reshape(shape).copy()


@st.composite
def inputs(draw, valid: bool):
    """A GatherND input; with ``valid`` false, one drawn fault (or none) on top."""
    opset = draw(st.sampled_from(gather_nd.OPSETS))
    dtype = draw(st.sampled_from(TEXT_TYPES[opset] if valid else dtypes.NAMES))
    r = draw(st.integers(1, 4))
    q = draw(st.integers(1, 3))
    b = 0 if opset == 11 else draw(st.integers(0, min(q, r) - 1))
    m = draw(st.integers(1, r - b))
    dim = st.integers(0, 3)
    batch = draw(st.lists(dim, min_size=b, max_size=b))
    data_shape = [*batch, *draw(st.lists(dim, min_size=r - b, max_size=r - b))]
    indices_shape = [*batch, *draw(st.lists(dim, min_size=q - b - 1, max_size=q - b - 1)), m]
    # Indices within [-s, s-1], plus out-of-range ones when drawing invalid inputs.
    spread = 1 if not valid else 0
    indices = np.empty(indices_shape, dtype=np.int64)
    for at in np.ndindex(*indices_shape):
        size = data_shape[b + at[-1]]
        if size == 0 and valid:
            data_shape[b + at[-1]] = size = 1  # an index needs a non-empty dimension
        indices[at] = draw(st.integers(-size - spread, size - 1 + spread))
    data = _values(dtype, data_shape, draw(st.integers(0, 2**32 - 1)))
    batch_dims = None if opset == 11 or (b == 0 and draw(st.booleans())) else b
    if not valid:
        data, indices, batch_dims = draw(_fault(data, indices, batch_dims, opset))
    return opset, data, indices, batch_dims


@st.composite
def _fault(draw, data, indices, batch_dims, opset):
    fault = draw(st.sampled_from(["none", "int32", "batch", "last", "rank0", "shape", "attr"]))
    if fault == "int32":
        indices = indices.astype(draw(st.sampled_from([np.int32, np.int16, np.uint64])))
    elif fault == "batch":
        batch_dims = draw(st.integers(-2, data.ndim + 1))
    elif fault == "last":
        width = draw(st.sampled_from([0, data.ndim + 1]))
        indices = np.zeros((*indices.shape[:-1], width), dtype=np.int64)
    elif fault == "rank0":
        which = draw(st.booleans())
        indices = np.array(0, np.int64) if which else indices
        data = data if which else np.zeros((), data.dtype)
    elif fault == "shape" and indices.ndim > 1:
        indices = np.zeros((indices.shape[0] + 1, *indices.shape[1:]), dtype=np.int64)
    elif fault == "attr" and opset == 11:
        batch_dims = 0
    return data, indices, batch_dims


def _same(expected: np.ndarray, actual: np.ndarray) -> None:
    assert isinstance(actual, np.ndarray)
    diff = compare.difference(expected, actual)
    assert diff is None, diff.message


@given(inputs(valid=True))
def test_valid_inputs_match_the_slow_implementation_bit_for_bit(drawn):
    opset, data, indices, batch_dims = drawn
    output, disputed = gather_nd.evaluate(opset, data, indices, batch_dims)
    _same(slow_gather_nd(opset, data, indices, batch_dims), output)
    negative = bool(indices.size) and bool((indices < 0).any())
    assert disputed == (("gnd-negative-indices",) if negative else ())
    shape = gather_nd.output_shape(data.shape, indices.shape, batch_dims)
    assert shape == output.shape


@given(inputs(valid=False))
def test_oracle_refuses_exactly_what_the_text_refuses_and_by_the_same_rule(drawn):
    opset, data, indices, batch_dims = drawn
    try:
        expected = slow_gather_nd(opset, data, indices, batch_dims)
    except Refused as refused:
        with pytest.raises(SpecViolation) as raised:
            gather_nd.evaluate(opset, data, indices, batch_dims)
        assert raised.value.clause == refused.rule
    else:
        _same(expected, gather_nd.evaluate(opset, data, indices, batch_dims)[0])


@pytest.mark.parametrize("dtype", dtypes.NAMES)
def test_every_dtype_is_copied_bit_for_bit(dtype):
    data = _values(dtype, (2, 3, 4), seed=7)
    indices = _a([[[1, -1], [0, 2]], [[-2, 0], [1, 1]]])
    output, disputed = gather_nd.evaluate(13, data, indices, None)
    _same(slow_gather_nd(13, data, indices, None), output)
    assert output.shape == (2, 2, 4) and disputed == ("gnd-negative-indices",)


def test_a_list_is_not_an_input():
    with pytest.raises(TypeError, match=r"numpy\.ndarray"):
        gather_nd.evaluate(13, [[1.0, 2.0]], _a([[0]]), None)


@pytest.mark.parametrize("opset", gather_nd.OPSETS)
def test_each_opset_s_types_are_the_text_s(opset):
    spec = gather_nd.op_spec(opset)
    assert sorted(spec.data_dtypes) == sorted(TEXT_TYPES[opset])
    assert spec.index_dtypes == ("int64",)  # int32 is not allowed, unlike Gather's Tind


def _a(values, dtype=np.int64):
    return np.array(values, dtype=dtype)


# Every example of 005 (Examples 1-5 and the backend examples float32, int32,
# int32_batchdim_1) and of 006 (GatherND-5's 1-6, GatherND-8's 1-7), with the
# output as printed. GatherND-5's Example 6 flattens the batch dims (its own
# op's rule, decision gnd-batch-dims-kept): the ONNX output has the same values
# in the shape GatherND-8's Example 6 prints.
D2 = [[0, 1], [2, 3]]
D3 = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
V2 = [[1, 2], [3, 4]]
V3 = [
    [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]],
    [[13, 14, 15, 16], [17, 18, 19, 20], [21, 22, 23, 24]],
]
V6_INDICES = [[[[1]], [[0]], [[2]]], [[[0]], [[2]], [[2]]]]
V7_DATA = [[[[1, 2, 3, 4], [5, 6, 7, 8]], [[9, 10, 11, 12], [13, 14, 15, 16]]]]
EXAMPLES = {
    "onnx-1": (None, D2, [[0, 0], [1, 1]], [0, 3], np.int64),
    "onnx-2": (0, D2, [[1], [0]], [[2, 3], [0, 1]], np.int64),
    "onnx-3": (0, D3, [[0, 1], [1, 0]], [[2, 3], [4, 5]], np.int64),
    "onnx-4": (0, D3, [[[0, 1]], [[1, 0]]], [[[2, 3]], [[4, 5]]], np.int64),
    "onnx-5": (1, D3, [[1], [0]], [[2, 3], [4, 5]], np.int64),
    "onnx-float32": (None, D3, [[[0, 1]], [[1, 0]]], [[[2, 3]], [[4, 5]]], np.float32),
    "onnx-int32": (None, D2, [[0, 0], [1, 1]], [0, 3], np.int32),
    "onnx-int32_batchdim_1": (1, D3, [[1], [0]], [[2, 3], [4, 5]], np.int32),
    "openvino-1": (None, V2, [[0, 0], [1, 0]], [1, 3], np.int64),
    "openvino-2": (None, V2, [[1], [0]], [[3, 4], [1, 2]], np.int64),
    "openvino-3": (None, V2, [[[1]], [[0]]], [[[3, 4]], [[1, 2]]], np.int64),
    "openvino-4": (1, V2, [[1], [0]], [2, 3], np.int64),
    "openvino-5": (1, V3, [[1], [0]], [[5, 6, 7, 8], [13, 14, 15, 16]], np.int64),
    "openvino-8-6": (2, V3, V6_INDICES, [[[2], [5], [11]], [[13], [19], [23]]], np.int64),
    "openvino-8-7": (3, V7_DATA, [[[[1], [0]], [[3], [2]]]], [[[2, 5], [12, 15]]], np.int64),
}


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("opset", [12, 13])
def test_every_example_of_both_texts(name, opset):
    batch_dims, data, indices, expected, dtype = EXAMPLES[name]
    output, disputed = gather_nd.evaluate(opset, _a(data, dtype), _a(indices), batch_dims)
    _same(_a(expected, dtype), output)
    assert disputed == ()
    if batch_dims in (None, 0):  # GatherND-11 has the b = 0 examples too
        _same(_a(expected, dtype), gather_nd.evaluate(11, _a(data, dtype), _a(indices), None)[0])


def test_openvino_5_example_6_flattens_what_onnx_keeps():
    output, _ = gather_nd.evaluate(13, _a(V3), _a(V6_INDICES), 2)
    flattened = [[2], [5], [11], [13], [19], [23]]  # GatherND-5's printed output, shape (6, 1)
    assert output.shape == (2, 3, 1)
    _same(_a(flattened), output.reshape(6, 1))


@pytest.mark.parametrize(
    ("data", "indices", "batch_dims", "shape"),
    [  # 006's IR examples (GatherND-8's outputs; GatherND-5 prints (60, 3, 35) for the second)
        ((1000, 256, 10, 15), (25, 125, 3), 0, (25, 125, 15)),
        ((30, 2, 100, 35), (30, 2, 3, 1), 2, (30, 2, 3, 35)),
        ((1, 64, 64, 320), (1, 64, 64, 1, 1), 3, (1, 64, 64, 1)),
    ],
)
def test_the_ir_examples_shapes(data, indices, batch_dims, shape):
    assert gather_nd.output_shape(data, indices, batch_dims) == shape


F32 = np.arange(8, dtype=np.float32).reshape(2, 2, 2)


@pytest.mark.parametrize(
    ("opset", "data", "indices", "batch_dims", "clause"),
    [
        (13, F32, _a([[0, 2]]), None, "index-out-of-range"),
        (13, F32, _a([[-3, 0]]), None, "index-out-of-range"),
        (13, F32, _a([[0, 2**63 - 1]]), None, "index-out-of-range"),
        (13, np.zeros((0, 2), np.float32), _a([[0]]), None, "index-out-of-range"),
        (13, F32, _a([[1], [0], [1]]), 1, "gnd-batch-dims-unequal"),
        (13, F32[:1], _a([[1], [0]]), 1, "gnd-batch-dims-unequal"),  # OpenVINO would broadcast
        (13, F32, _a(0), None, "gnd-indices-rank-zero"),
        (13, F32, np.zeros((2, 0), np.int64), None, "gnd-last-dim-out-of-range"),
        (13, F32, np.zeros((2, 4), np.int64), None, "gnd-last-dim-out-of-range"),
        (13, F32, np.zeros((2, 3), np.int64), 1, "gnd-last-dim-out-of-range"),
        (13, F32, np.zeros((0, 4), np.int64), None, "gnd-last-dim-out-of-range"),
        (13, F32, _a([[1], [0]]), -1, "gnd-batch-dims-out-of-range"),
        (13, F32, _a([[1], [0]]), 2, "gnd-batch-dims-out-of-range"),
        (12, F32, _a([[[1]], [[0]]]), 3, "gnd-batch-dims-out-of-range"),
        (11, F32, _a([[1], [0]]), 0, "gnd-batch-dims-opset-11"),
        (13, F32, _a([[0, 1]], np.int32), None, "gnd-indices-dtype"),
        (13, F32, _a([[0, 1]], np.uint64), None, "gnd-indices-dtype"),
        (12, F32.astype(ml_dtypes.bfloat16), _a([[0, 1]]), None, "data-dtype"),
        (11, F32.astype(ml_dtypes.bfloat16), _a([[0, 1]]), None, "data-dtype"),
        (13, np.array(1.0, np.float32), _a([[0]]), None, "data-rank-zero"),
    ],
)
def test_each_forbidden_input_names_its_clause(opset, data, indices, batch_dims, clause):
    with pytest.raises(SpecViolation) as raised:
        gather_nd.evaluate(opset, data, indices, batch_dims)
    assert raised.value.clause == clause
    assert clause in decisions.BY_ID
    assert f"[{clause}]" in str(raised.value)


@pytest.mark.parametrize(
    ("data_shape", "indices_shape", "batch_dims", "shape"),
    [
        ((2, 0, 3), (0, 1), None, (0, 0, 3)),  # no index tuple: nothing read, nothing refused
        ((0, 2), (0, 1, 1), 0, (0, 1, 2)),  # empty indices into an empty axis
        ((2, 3, 0), (2, 1), 1, (2, 0)),  # empty slices, yet every index is checked
        ((0, 3), (0, 1), 1, (0,)),  # zero batches
    ],
)
def test_empty_tensors_give_the_shape_rule_s_empty_output(
    data_shape, indices_shape, batch_dims, shape
):
    data = np.zeros(data_shape, np.float32)
    indices = np.zeros(indices_shape, np.int64)
    output, _ = gather_nd.evaluate(13, data, indices, batch_dims)
    assert output.shape == shape == gather_nd.output_shape(data_shape, indices_shape, batch_dims)


def test_an_out_of_range_index_is_refused_even_where_the_slices_are_empty():
    data = np.zeros((2, 3, 0), np.float32)
    with pytest.raises(SpecViolation, match="index-out-of-range"):
        gather_nd.evaluate(13, data, _a([[1], [3]]), 1)


def test_negative_indices_read_from_the_back_and_are_disputed():
    output, disputed = gather_nd.evaluate(13, F32, _a([[-1, -2], [0, -1]]), None)
    _same(_a([[4, 5], [2, 3]], np.float32), output)
    assert disputed == ("gnd-negative-indices",)
    assert decisions.BY_ID["gnd-negative-indices"].disputed


def test_strings_and_nan_payloads_are_copied_unchanged():
    bits = np.array([0x7FC00001, 0x80000000, 0xFFC12345, 1], np.uint32)
    data = bits.view(np.float32).reshape(2, 2)
    output, _ = gather_nd.evaluate(13, data, _a([[1, 0], [0, 0], [1, 1]]), None)
    assert output.view(np.uint32).tolist() == [0xFFC12345, 0x7FC00001, 1]
    words = np.array([["a", "b"], ["c", "d"]], dtype=object)
    assert gather_nd.evaluate(13, words, _a([[1], [0]]), None)[0].tolist() == [
        ["c", "d"],
        ["a", "b"],
    ]


def test_a_violation_pickles_and_is_a_spec_violation():
    violation = SpecViolation("gnd-batch-dims-unequal", "detail")
    again = pickle.loads(pickle.dumps(violation))
    assert (again.clause, again.detail) == ("gnd-batch-dims-unequal", "detail")


def test_the_decisions_are_complete_and_in_the_table():
    """GatherND's own decisions (ids gnd-...) name GatherND alone; the shared
    entries it raises (index-out-of-range ...) name it and quote its documents."""
    own = [d for d in decisions.DECISIONS if d.id.startswith("gnd-")]
    assert len(own) == 9
    for decision in own:
        assert decision.ops == ("GatherND",)
    for shared in ("index-out-of-range", "data-dtype", "data-rank-zero", "zero-size-axis",
                   "empty-tensors", "bitwise-exact"):  # fmt: skip
        decision = decisions.BY_ID[shared]
        assert "GatherND" in decision.ops
        assert any(c.document == decisions.S005 for c in decision.clauses)
    for axis_only in ("axis-out-of-range", "indices-dtype", "axis-absent"):
        assert "GatherND" not in decisions.BY_ID[axis_only].ops


def test_every_clause_the_module_raises_is_a_decision():
    source = Path(gather_nd.__file__).read_text(encoding="utf-8")
    raised = set(re.findall(r'SpecViolation\(\s*"([a-z0-9-]+)"', source))
    # the dtypes through the shared check: data-dtype, and the index clause it is given
    shared = re.findall(r'checks\.check_dtypes\([^)]*?"([a-z0-9-]+)"', source)
    assert shared == ["gnd-indices-dtype"]
    raised |= {"data-dtype", *shared}
    assert raised == {
        "index-out-of-range",
        "data-dtype",
        "gnd-indices-dtype",
        "gnd-indices-rank-zero",
        "gnd-batch-dims-opset-11",
        "gnd-batch-dims-out-of-range",
        "gnd-batch-dims-unequal",
        "gnd-last-dim-out-of-range",
    }
    assert raised <= set(decisions.BY_ID)  # every quote: tests/test_decisions.py


# -- GatherND as a row: the oracle's entry points, features, case files --------------
def test_the_oracle_s_entry_points_take_gather_nd_by_its_row():
    from conformance import oracle

    data = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    indices = _a([[[1]], [[2]]])
    assert oracle.output_shape("GatherND", data.shape, indices.shape, 1) == (2, 1, 4)
    assert oracle.output_shape("GatherND", data.shape, _a([[1], [2], [0]]).shape, 1) is None
    _same(data[[0, 1], [1, 2]][:, None], oracle.evaluate("GatherND", 13, data, indices, 1))
    assert oracle.verdict("GatherND", 11, data, indices, 0).violation.clause == (
        "gnd-batch-dims-opset-11"
    )


def test_in_range_marks_each_tuple_with_an_out_of_range_component():
    """The mask of oracle.in_range is per tuple: a tuple whose second component
    is out of its dimension (3 of 3) marks its whole slice, the others read."""
    from conformance import oracle

    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    found = oracle.in_range("GatherND", 13, data, _a([[1, 0], [0, 3], [1, 2]]), None)
    assert found is not None
    assert found.outside.tolist() == [[False] * 4, [True] * 4, [False] * 4]
    _same(data[[1, 1], [0, 2]], found.output[[0, 2]])


@pytest.mark.parametrize(
    ("data_shape", "indices", "batch_dims", "expected"),
    [  # each component against the dimension it indexes, not the first dimension's size
        ((2, 3, 4), [[1, 2]], None, ()),
        ((2, 3, 4), [[0, 3]], None, ("out_of_range",)),
        ((2, 3, 4), [[2, 0]], None, ("out_of_range",)),
        ((2, 3, 4), [[2], [1]], 1, ()),
        ((2, 3, 4), [[3], [1]], 1, ("out_of_range",)),
        ((2, 0, 4), [[0], [0]], 1, ("out_of_range", "empty_data", "zero_size_axis")),
    ],
)
def test_features_bound_each_component_by_its_dimension(data_shape, indices, batch_dims, expected):
    from types import SimpleNamespace

    from conformance.tables.features import features

    example = SimpleNamespace(
        op="GatherND", axis=batch_dims, data=np.zeros(data_shape, np.float32), indices=_a(indices)
    )
    found = features(example)
    assert tuple(f for f in found if f in ("out_of_range", "empty_data", "zero_size_axis")) == (
        expected
    )


def test_a_case_file_spells_batch_dims_and_refuses_axis(tmp_path):
    from conformance.cases import CaseErrors, load

    text = (
        "cases:\n"
        "  - id: nd\n"
        "    op: GatherND\n"
        "    opset: 13\n"
        "    dtype: float32\n"
        "    attributes: {%s: 1}\n"
        "    data: [[1.0, 2.0], [3.0, 4.0]]\n"
        "    indices: [[1], [0]]\n"
        "    expected: oracle\n"
        "    description: batch_dims 1\n"
        "    spec: 005_onnx-GatherND.txt\n"
    )
    (tmp_path / "good.yaml").write_text(text % "batch_dims")
    (case,) = load([tmp_path / "good.yaml"])
    assert case.axis == 1 and case.attributes == {"batch_dims": 1}
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "bad.yaml").write_text(text % "axis")
    with pytest.raises(CaseErrors) as raised:
        load([tmp_path / "bad" / "bad.yaml"])
    (error,) = [str(e) for e in raised.value.errors]
    assert "bad.yaml:2" in error or "bad.yaml:6" in error
    assert "GatherND has no attribute axis (its attributes: batch_dims)" in error
