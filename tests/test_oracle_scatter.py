"""ScatterElements' and ScatterND's oracles (conformance/oracle/scatter_elements.py,
scatter_nd.py) and their admissible sets (oracle/admissible.py): against an
independent implementation written here from the texts (007, 008), a plain
loop run in every order of the writes, on random inputs drawn with
duplicates on purpose; every example of the texts (007-011) with its
literal output (where one contradicts its own text, the text's value, and
the printed one shown outside the set); each forbidden input with its
clause; the judge on every member of a set and on values outside it."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.oracle import SpecViolation, admissible, reductions
from conformance.oracle import scatter_elements as se
from conformance.oracle import scatter_nd as snd
from conformance.oracle.admissible import TooManyOrders
from conformance.tables import decisions, dtypes
from conformance.tables.operators import OPERATORS

WRITES = tuple(name for name, row in OPERATORS.items() if row.writes)  # the operators that write

# The texts' type lists (007, 008: T of -11 has no bfloat16), copied from the
# text, not from onnx.defs, which the oracle reads.
_T11 = [
    *("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"),
    *("float16", "float32", "float64", "string", "bool", "complex64", "complex128"),
]
TEXT_TYPES = {11: _T11, 13: [*_T11, "bfloat16"], 16: [*_T11, "bfloat16"], 18: [*_T11, "bfloat16"]}
# "Type of reduction to apply: none (default), add, mul[, max, min]"; none at 11 and 13.
TEXT_REDUCTIONS = {11: [None], 13: [None], 16: [None, "none", "add", "mul"],
                   18: [None, "none", "add", "mul", "max", "min"]}  # fmt: skip


class Refused(Exception):
    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


def _f(reduction, current, update):
    """The texts' f, on two scalars of the data's type (decisions sc-reduction-bool,
    sc-reduction-string, sc-integer-overflow: NumPy scalars wrap)."""
    if reduction in (None, "none"):
        return update
    if isinstance(current, str):
        return current + update  # add: concatenation (the others are refused first)
    if isinstance(current, np.bool_):
        return {"add": current | update, "mul": current & update, "max": current | update,
                "min": current & update}[reduction]  # fmt: skip
    with np.errstate(all="ignore"):
        value = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[
            reduction
        ](current, update)
    return np.asarray(value).astype(np.asarray(current).dtype)[()]


def _text_checks(opset, data, indices, updates, reduction, index_types):
    if dtypes.name_of(data) not in TEXT_TYPES[opset]:
        raise Refused("data-dtype")
    if dtypes.name_of(indices) not in index_types:
        raise Refused("indices-dtype" if len(index_types) == 2 else "snd-indices-dtype")
    if updates.dtype != data.dtype:
        raise Refused("sc-updates-dtype")  # "updates (differentiable) : T"
    if data.ndim < 1:
        raise Refused("data-rank-zero")  # "Tensor of rank r >= 1."
    if reduction not in TEXT_REDUCTIONS[opset]:
        raise Refused("sc-reduction-opset")
    name = dtypes.name_of(data)
    if name == "string" and reduction not in (None, "none", "add"):
        raise Refused("sc-reduction-string")
    if name.startswith("complex") and reduction in ("max", "min"):
        raise Refused("sc-reduction-complex")


def slow_scatter_elements(opset, data, indices, updates, axis, reduction):
    """007 read literally: the writes, each (target position, update index),
    in row-major order; a refusal names the rule the input breaks."""
    _text_checks(opset, data, indices, updates, reduction, ("int32", "int64"))
    r = data.ndim
    if indices.ndim != r:
        raise Refused("se-rank-mismatch")  # "(same rank as input)"
    a = 0 if axis is None else axis
    if not -r <= a <= r - 1:  # "Accepted range is [-r, r-1]"
        raise Refused("axis-out-of-range")
    a %= r
    if updates.shape != indices.shape:  # "(same rank and shape as indices)"
        raise Refused("se-updates-shape")
    if any(
        i > d for dim, (i, d) in enumerate(zip(indices.shape, data.shape, strict=True)) if dim != a
    ):
        raise Refused("se-indices-larger-off-axis")
    writes = []
    for at in np.ndindex(*indices.shape):
        value, size = int(indices[at]), data.shape[a]
        if not -size <= value <= size - 1:  # "It is an error if any ... are out of bounds."
            raise Refused("index-out-of-range")
        target = list(at)
        target[a] = value + size if value < 0 else value
        writes.append((tuple(target), at))
    return writes


def slow_scatter_nd(opset, data, indices, updates, reduction):
    """008 read literally: output[tuple(indices[idx])] = f(..., updates[idx]),
    element by element of each slice."""
    _text_checks(opset, data, indices, updates, reduction, ("int64",))
    if indices.ndim < 1:
        raise Refused("snd-indices-rank-zero")  # "tensor of rank q >= 1"
    k = indices.shape[-1]
    if k > data.ndim:  # "k can be a value at most the rank of data"
        raise Refused("snd-last-dim-out-of-range")
    if updates.shape != indices.shape[:-1] + data.shape[k:]:
        raise Refused("snd-updates-shape")
    writes = []
    for idx in np.ndindex(*indices.shape[:-1]):
        tuple_ = []
        for j in range(k):
            value, size = int(indices[(*idx, j)]), data.shape[j]
            if not -size <= value <= size - 1:  # "expected in the valid range"
                raise Refused("index-out-of-range")
            tuple_.append(value + size if value < 0 else value)
        for rest in np.ndindex(*data.shape[k:]):
            writes.append(((*tuple_, *rest), (*idx, *rest)))
    return writes


def _run(data, updates, writes, order, reduction):
    out = data.copy()
    for n in order:
        target, source = writes[n]
        out[target] = _f(reduction, out[target], updates[source])
    return out


def _bits(value):
    if isinstance(value, str):
        return ("s", value)
    array = np.asarray(value)
    return (array.dtype.str, array.tobytes())


def _is_nan(value) -> bool:
    return not isinstance(value, str) and bool(np.isnan(np.asarray(value, np.complex128)))


def _values(dtype: str, shape, seed: int, small: bool = False) -> np.ndarray:
    """Arbitrary bits for the numeric types (NaN payloads, -0.0, infinities),
    or small integers in them (small: so that sums and products repeat)."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    if dtype == "string":
        return np.array([f"s{v}" for v in rng.integers(0, 9, size)], dtype=object).reshape(shape)
    if dtype == "bool":
        return rng.integers(0, 2, size).astype(bool).reshape(shape)
    numpy = dtypes.by_name(dtype).numpy
    if small:
        return rng.integers(-3, 4, size).astype(numpy).reshape(shape)
    return np.frombuffer(rng.bytes(size * numpy.itemsize), dtype=numpy).reshape(shape).copy()


MAX_WRITES = 5  # every global order of the writes is run: 5! = 120 at most


@st.composite
def valid_inputs(draw, op: str):
    opset = draw(st.sampled_from(se.OPSETS))
    dtype = draw(st.sampled_from(TEXT_TYPES[opset]))
    allowed = [
        r
        for r in TEXT_REDUCTIONS[opset]
        if not (dtype == "string" and r in ("mul", "max", "min"))
        and not (dtype.startswith("complex") and r in ("max", "min"))
    ]
    reduction = draw(st.sampled_from(allowed))
    r = draw(st.integers(1, 3))
    data_shape = draw(st.lists(st.integers(1, 3), min_size=r, max_size=r))
    seed = draw(st.integers(0, 2**32 - 1))
    small = draw(st.booleans())
    if op == "ScatterElements":
        axis = draw(st.integers(-r, r - 1))
        at = axis % r
        shape = [draw(st.integers(0, d)) if dim != at else draw(st.integers(0, 3))
                 for dim, d in enumerate(data_shape)]  # fmt: skip
        if int(np.prod(shape)) > MAX_WRITES:
            shape = [min(n, 1) for n in shape]
        size = data_shape[at]
        # Indices from a narrow range: duplicates on purpose.
        spread = draw(st.integers(1, size))
        indices = np.array(
            draw(
                st.lists(
                    st.integers(-spread, spread - 1),
                    min_size=int(np.prod(shape)),
                    max_size=int(np.prod(shape)),
                )
            ),
            dtype=draw(st.sampled_from([np.int32, np.int64])),
        ).reshape(shape)
        indices = np.where(indices < -size, 0, indices).astype(indices.dtype)
        updates = _values(dtype, shape, seed + 1, small)
        axis_arg = None if axis == 0 and draw(st.booleans()) else axis
        return opset, _values(dtype, data_shape, seed, small), indices, updates, axis_arg, reduction
    k = draw(st.integers(0, r))
    q = draw(st.integers(1, 2))
    lead = draw(st.lists(st.integers(0, 3), min_size=q - 1, max_size=q - 1))
    if int(np.prod(lead)) * int(np.prod(data_shape[k:])) > MAX_WRITES:
        lead = [1] * (q - 1)
        data_shape = data_shape[:k] + [1] * (r - k)
    tuples = int(np.prod(lead))
    indices = np.zeros((tuples, k), dtype=np.int64)
    for j in range(k):
        size = data_shape[j]
        indices[:, j] = draw(st.lists(st.integers(-size, min(size - 1, 0 if small else size - 1)),
                                      min_size=tuples, max_size=tuples))  # fmt: skip
    indices = indices.reshape((*lead, k))
    updates = _values(dtype, (*lead, *data_shape[k:]), seed + 1, small)
    return opset, _values(dtype, data_shape, seed, small), indices, updates, reduction


def _check_against_every_order(found, data, updates, writes, reduction):
    """Every global order of the writes gives a member of the set; per
    element, the set is the values those orders give (any NaN where a
    reduction computed one; either zero where max or min tied +0 with -0)."""
    result, _ = found
    seen: dict[int, set] = {}
    nan_seen: set[int] = set()
    written = {int(np.ravel_multi_index(target, data.shape)) for target, _ in writes}
    computed = reduction not in (None, "none")
    for order in itertools.permutations(range(len(writes))):
        out = _run(data, updates, writes, order, reduction)
        diff = admissible.difference(result, out)
        assert diff is None, f"order {order}: {diff.message}"
        for flat, value in enumerate(out.reshape(-1)):
            if computed and flat in written and _is_nan(value):
                nan_seen.add(flat)
            else:
                seen.setdefault(flat, set()).add(_bits(value))
    for flat in range(data.size):
        index = tuple(int(i) for i in np.unravel_index(flat, data.shape))
        values, nan = result.at(index)
        listed = {_bits(v) for v in values if not (computed and flat in written and _is_nan(v))}
        assert nan == (flat in nan_seen), index
        ties = reduction in ("max", "min") and any(np.asarray(v) == 0 for v in values)
        if ties:  # the text's loop with NumPy's max gives one zero; the other is admissible too
            assert seen.get(flat, set()) <= listed
        else:
            assert listed == seen.get(flat, set()), index


@given(valid_inputs("ScatterElements"))
def test_scatter_elements_is_the_set_of_every_order_of_the_text_s_loop(drawn):
    opset, data, indices, updates, axis, reduction = drawn
    writes = slow_scatter_elements(opset, data, indices, updates, axis, reduction)
    found = se.evaluate(opset, data, indices, updates, axis, reduction)
    _check_against_every_order(found, data, updates, writes, reduction)


@given(valid_inputs("ScatterND"))
def test_scatter_nd_is_the_set_of_every_order_of_the_text_s_loop(drawn):
    opset, data, indices, updates, reduction = drawn
    writes = slow_scatter_nd(opset, data, indices, updates, reduction)
    found = snd.evaluate(opset, data, indices, updates, reduction)
    _check_against_every_order(found, data, updates, writes, reduction)


@st.composite
def invalid_inputs(draw, op: str):
    """A valid input with one drawn fault (or none) on top."""
    drawn = list(draw(valid_inputs(op)))
    opset, data, indices, updates = drawn[:4]
    fault = draw(st.sampled_from(["none", "dtype", "index", "updates", "rank", "reduction",
                                  "range", "axis", "shape"]))  # fmt: skip
    if fault == "dtype":
        which = draw(st.sampled_from(["data", "indices", "updates"]))
        if which == "data":
            data = np.zeros(data.shape, ml_dtypes.bfloat16)
        elif which == "indices":
            indices = indices.astype(draw(st.sampled_from([np.int8, np.uint64, np.int32])))
        else:
            updates = np.zeros(updates.shape, np.float32 if data.dtype != np.float32 else np.int8)
    elif fault == "updates":
        updates = np.resize(updates, (*updates.shape, 1))
    elif fault == "rank":
        indices = np.array(0, dtype=indices.dtype)
        data = data if draw(st.booleans()) else data.reshape(-1)[:1].reshape(())
    elif fault == "reduction":
        drawn[-1] = draw(st.sampled_from(["none", "add", "max", "sum", "mean", "sub"]))
    elif fault == "range" and indices.size:
        indices = indices.astype(np.int64)  # int32 cannot hold 2**40
        indices.reshape(-1)[0] = draw(st.sampled_from([2**40, -(2**40), 3, -4]))
    elif fault == "axis" and op == "ScatterElements":
        drawn[4] = draw(st.sampled_from([-4, 3, 5]))
    elif fault == "shape":
        indices = np.zeros((*indices.shape[:-1], data.ndim + 1), indices.dtype)
    drawn[:4] = opset, data, indices, updates
    return tuple(drawn)


@given(invalid_inputs("ScatterElements"))
def test_scatter_elements_refuses_what_the_text_refuses_and_by_the_same_rule(drawn):
    _same_refusal(slow_scatter_elements, se.evaluate, drawn)


@given(invalid_inputs("ScatterND"))
def test_scatter_nd_refuses_what_the_text_refuses_and_by_the_same_rule(drawn):
    _same_refusal(slow_scatter_nd, snd.evaluate, drawn)


def _same_refusal(slow, oracle, drawn):
    try:
        slow(*drawn)
    except Refused as refused:
        with pytest.raises(SpecViolation) as raised:
            oracle(*drawn)
        assert raised.value.clause == refused.rule
    else:
        oracle(*drawn)


# -- every dtype of each opset's type set with every reduction it allows ------------------
CELLS = [
    (opset, dtype, reduction)
    for opset in se.OPSETS
    for dtype in TEXT_TYPES[opset]
    for reduction in TEXT_REDUCTIONS[opset]
]


@pytest.mark.parametrize(("opset", "dtype", "reduction"), CELLS)
def test_every_dtype_with_every_reduction_of_each_opset(opset, dtype, reduction):
    data = _values(dtype, (3, 2), 5)
    indices = np.array([[2, 0], [-1, 1]], np.int64)  # data[2][0] written twice
    updates = _values(dtype, (2, 2), 6)
    refused = (dtype == "string" and reduction in ("mul", "max", "min")) or (
        dtype.startswith("complex") and reduction in ("max", "min")
    )
    for evaluate, slow, args in (
        (se.evaluate, slow_scatter_elements, (data, indices, updates, 0, reduction)),
        (snd.evaluate, slow_scatter_nd, (data, indices[:, :, None][:, 0], updates, reduction)),
    ):
        if refused:
            with pytest.raises(SpecViolation, match=r"sc-reduction-(string|complex)"):
                evaluate(opset, *args)
            continue
        result, _ = evaluate(opset, *args)
        writes = slow(opset, *args)
        for order in itertools.permutations(range(len(writes))):
            out = _run(data, args[2], writes, order, reduction)
            assert admissible.admits(result, out), order


# -- the decisions, each on its own input ------------------------------------------------
def _a(values, dtype=np.int64):
    return np.array(values, dtype=dtype)


def test_max_and_min_propagate_nan_and_admit_either_tied_zero():
    data = _a([1.0, np.nan, 0.0, -0.0], np.float32)
    updates = _a([np.nan, 5, -0.0, 0.0], np.float32)
    result, disputed = se.evaluate(18, data, _a([0, 1, 2, 3]), updates,
                                   0, "max")  # fmt: skip
    assert "sc-nan-max-min" in disputed
    assert result.at((0,))[1] and result.at((1,))[1]  # any NaN: ONNX Runtime's 1 and 5 are not
    assert not admissible.admits(result, _a([1, 5, 0, 0], np.float32))
    for zeros in ([0.0, 0.0], [-0.0, -0.0], [0.0, -0.0]):
        candidate = _a([np.nan, -np.nan, *zeros], np.float32)
        assert admissible.admits(result, candidate)


def test_integer_add_and_mul_wrap_in_any_order():
    data = _a([100, 2], np.int8)
    result, _ = se.evaluate(18, data, _a([0, 0]), _a([100, 100], np.int8), 0, "add")
    assert result.unique and result.output.tolist() == [44, 2]  # 300 mod 256
    result, _ = snd.evaluate(16, data, _a([[0], [0]]), _a([3, 1], np.int8), "mul")
    assert result.unique and result.output.tolist() == [44, 2]


def test_bool_reductions_are_or_and_and():
    data = _a([True, False, True, False], bool)
    indices, updates = _a([1, 1, 2, 3]), _a([True, False, False, False], bool)
    expected = {"add": [1, 1, 1, 0], "mul": [1, 0, 0, 0], "max": [1, 1, 1, 0], "min": [1, 0, 0, 0]}
    for reduction, values in expected.items():
        result, disputed = se.evaluate(18, data, indices, updates, 0, reduction)
        assert result.unique and result.output.astype(int).tolist() == values, reduction
        assert "sc-reduction-bool" in disputed


def test_string_add_concatenates_in_any_order_of_the_writes():
    data = _a(["a", "b"], object)
    result, disputed = se.evaluate(16, data, _a([0, 0]), _a(["x", "y"], object), 0, "add")
    assert result.at((0,)) == (["axy", "ayx"], False)
    assert admissible.admits(result, _a(["ayx", "b"], object))
    assert not admissible.admits(result, _a(["xya", "b"], object))
    assert "sc-reduction-string" in disputed


def test_float_add_over_duplicates_admits_every_order_and_nothing_else():
    data = _a([0.0], np.float32)
    updates = _a([1e8, 1.0, -1e8], np.float32)  # 0+1e8+1-1e8 = 0 or 1 by the order
    result, disputed = se.evaluate(16, data, _a([0, 0, 0]), updates, 0, "add")
    values, nan = result.at((0,))
    assert sorted(float(v) for v in values) == [0.0, 1.0] and not nan
    assert {"sc-reduction-order"} <= set(disputed)
    assert not admissible.admits(result, _a([2.0], np.float32))


def test_a_nan_that_a_reduction_computes_may_be_any_nan_one_moved_keeps_its_bits():
    bits = np.array([0x7FC00001, 0xFFC12345], np.uint32).view(np.float32)
    result, _ = se.evaluate(16, _a([1.0, 2.0], np.float32), _a([0, 1]), bits, 0, "add")
    assert admissible.admits(result, np.array([0x7FC00000, 0xFFFFFFFF], np.uint32).view(np.float32))
    result, _ = se.evaluate(16, _a([1.0, 2.0], np.float32), _a([0, 1]), bits, 0, "none")
    assert result.unique
    assert not admissible.admits(
        result, np.array([0x7FC00000, 0xFFC12345], np.uint32).view(np.float32)
    )


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_empty_updates_leave_data_as_it_is(reduction):
    data = _a([[1.5, np.nan]], np.float32)
    for result, _ in (
        se.evaluate(
            18, data, np.zeros((0, 2), np.int64), np.zeros((0, 2), np.float32), 0, reduction
        ),
        snd.evaluate(18, data, np.zeros((0, 1), np.int64), np.zeros((0, 2), np.float32), reduction),
        snd.evaluate(
            18, data, np.zeros((0, 3, 2), np.int64), np.zeros((0, 3), np.float32), reduction
        ),
    ):
        assert result.unique
        assert admissible.difference(result, data.copy()) is None


def test_an_index_into_a_zero_size_axis_is_out_of_range():
    data = np.zeros((0, 2), np.float32)
    with pytest.raises(SpecViolation, match="index-out-of-range"):
        se.evaluate(13, data, _a([[0, 0]]), np.zeros((1, 2), np.float32), 0)
    with pytest.raises(SpecViolation, match="index-out-of-range"):
        snd.evaluate(13, data, _a([[0]]), np.zeros((1, 2), np.float32))


def test_scatter_nd_with_an_empty_tuple_writes_the_whole_of_data():
    data = _a([1.0, 2.0], np.float32)
    result, disputed = snd.evaluate(
        13, data, np.zeros((1, 0), np.int64), _a([[5.0, 6.0]], np.float32)
    )
    assert result.unique and result.output.tolist() == [5.0, 6.0]
    assert "snd-empty-tuple" in disputed


def test_more_ordered_writes_than_the_bound_are_refused_with_a_clear_error():
    k = reductions.MAX_ORDERED_WRITES + 1
    data = np.zeros((2, 3), np.float32)
    with pytest.raises(TooManyOrders) as raised:
        se.evaluate(16, data, np.ones((k, 1), np.int64), np.ones((k, 1), np.float32), 0, "add")
    message = str(raised.value)
    assert f"[1, 0] receives {k} writes" in message and "sc-reduction-order" in message
    assert "without more than" in message
    # Where the order cannot change the bits, any number of writes is judged.
    result, _ = se.evaluate(16, data.astype(np.int32), np.ones((k, 1), np.int64),
                            np.ones((k, 1), np.int32), 0, "add")  # fmt: skip
    assert result.unique and result.output[1, 0] == k
    result, _ = se.evaluate(13, data, np.ones((40, 1), np.int64),
                            np.arange(40, dtype=np.float32).reshape(40, 1), 0)  # fmt: skip
    assert len(result.at((1, 0))[0]) == 40


# -- the judge ---------------------------------------------------------------------------
def test_the_judge_accepts_every_member_of_a_set_and_rejects_anything_else():
    data = _a([[0.0, 0.0], [1.0, 2.0]], np.float32)
    # (0, 0) written three times: 0 + 1e8 + 1 - 1e8 is 0 or 1 by the order
    indices = _a([[0, 0], [0, 0], [0, 0], [0, 1], [0, 1]])
    updates = _a([[1e8], [1.0], [-1e8], [0.1], [0.2]], np.float32)
    result, _ = snd.evaluate(16, data, indices, updates[:, 0], "add")
    members = [result.at((0, 0))[0], result.at((0, 1))[0]]
    assert len(members[0]) >= 2
    for first, second in itertools.product(*members):
        actual = data.copy()
        actual[0, 0], actual[0, 1] = first, second
        assert admissible.admits(result, actual)
    outside = result.output.copy()
    outside.view(np.uint32)[0, 0] ^= 1  # one bit off every member
    assert all(outside[0, 0].tobytes() != np.float32(v).tobytes() for v in members[0])
    diff = admissible.difference(result, outside)
    assert diff is not None and diff.positions == ((0, 0),) and diff.expected.startswith("one of")
    wrong_elsewhere = result.output.copy()
    wrong_elsewhere[1, 1] = 9.0
    assert admissible.difference(result, wrong_elsewhere).positions == ((1, 1),)
    assert admissible.difference(result, result.output.astype(np.float64)).kind == "dtype"


def test_the_judge_takes_a_slice_s_elements_one_by_one():
    """Duplicate tuples without a reduction: per element any of the values
    written there, even mixed across the writes (threads per element)."""
    data = np.zeros((2, 2), np.int32)
    result, disputed = snd.evaluate(13, data, _a([[1], [1]]), _a([[1, 2], [3, 4]], np.int32))
    assert "sc-duplicates-none" in disputed
    for row in ([1, 2], [3, 4], [1, 4], [3, 2]):
        assert admissible.admits(result, _a([[0, 0], row], np.int32))
    assert not admissible.admits(result, _a([[0, 0], [2, 1]], np.int32))
    assert not admissible.admits(result, _a([[0, 0], [0, 0]], np.int32))


# -- every example of the texts ----------------------------------------------------------
F = np.float32
SE_EXAMPLES = {  # 007: Example 1, 2 and the seven backend examples (printed outputs)
    "example-1": (None, None, np.zeros((3, 3)), [[1, 0, 2], [0, 2, 1]],
                  [[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]],
                  [[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]]),
    "example-2": (1, None, [[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, 3]], [[1.1, 2.1]],
                  [[1.0, 1.1, 3.0, 2.1, 5.0]]),
    "with_duplicate_indices": (1, "add", [[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, 1]], [[1.1, 2.1]],
                               [[1.0, 5.2, 3.0, 4.0, 5.0]]),
    "with_negative_indices": (1, None, [[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, -3]], [[1.1, 2.1]],
                              [[1.0, 1.1, 2.1, 4.0, 5.0]]),
    "with_reduction_max": (1, "max", [[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, 1]], [[1.1, 2.1]],
                           [[1.0, 2.1, 3.0, 4.0, 5.0]]),
    "with_reduction_min": (1, "min", [[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, 1]], [[1.1, 2.1]],
                           [[1.0, 1.1, 3.0, 4.0, 5.0]]),
    "with_reduction_mul": (1, "mul", [[1.0, 2.0, 3.0, 4.0, 5.0]], [[1, 1]], [[1.1, 2.1]],
                           [[1.0, 4.62, 3.0, 4.0, 5.0]]),
}  # fmt: skip


@pytest.mark.parametrize("name", SE_EXAMPLES)
def test_every_scatter_elements_example(name):
    axis, reduction, data, indices, updates, printed = SE_EXAMPLES[name]
    opsets = [18] if reduction in ("max", "min") else [16, 18] if reduction else se.OPSETS
    for opset in opsets:
        result, _ = se.evaluate(opset, _a(data, F), _a(indices), _a(updates, F), axis, reduction)
        # The printed decimals, as float32, are the text's values bit for bit.
        assert admissible.admits(result, _a(printed, F)) and result.unique
    # without_axis is Example 1, with_axis Example 2; Scatter (009) prints the same two.


ND_DATA = [[[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
           [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
           [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]],
           [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]]  # fmt: skip
ND_UPDATES = [[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]],
              [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]]]  # fmt: skip
COMMENT_ROW_2 = [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]]  # the comments' data[2]
ND_ROW_0 = {  # the comments' data[0] for indices [[0], [0]], which the text agrees with
    "add": [[7, 8, 9, 10], [13, 14, 15, 16], [18, 17, 16, 15], [16, 15, 14, 13]],
    "max": [[5, 5, 5, 5], [6, 6, 7, 8], [8, 7, 7, 7], [8, 8, 8, 8]],
    "min": [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 3, 2, 1]],
    "mul": [[5, 10, 15, 20], [60, 72, 84, 96], [168, 147, 126, 105], [128, 96, 64, 32]],
}


def test_scatter_nd_examples_1_and_2_of_both_texts():
    for opset in snd.OPSETS:  # 008's Examples 1, 2 (and scatternd), 011's -3 Examples 1, 2
        result, _ = snd.evaluate(opset, _a([1, 2, 3, 4, 5, 6, 7, 8]), _a([[4], [3], [1], [7]]),
                                 _a([9, 10, 11, 12]))  # fmt: skip
        assert result.unique and result.output.tolist() == [1, 11, 3, 10, 9, 6, 7, 12]
        result, _ = snd.evaluate(opset, _a(ND_DATA, F), _a([[0], [2]]), _a(ND_UPDATES, F))
        expected = [ND_UPDATES[0], ND_DATA[1], ND_UPDATES[1], ND_DATA[3]]
        assert result.unique and result.output.tolist() == expected


@pytest.mark.parametrize("reduction", ["add", "max", "min", "mul"])
def test_scatter_nd_reduction_examples_follow_the_text_not_their_comments(reduction):
    """scatternd_add, _max, _min, _multiply: indices [[0], [0]] change data[0]
    only; the comments' data[2] (decision snd-example-comments) is outside the set."""
    opset = 18 if reduction in ("max", "min") else 16
    result, _ = snd.evaluate(opset, _a(ND_DATA, F), _a([[0], [0]]), _a(ND_UPDATES, F), reduction)
    expected = [ND_ROW_0[reduction], ND_DATA[1], ND_DATA[2], ND_DATA[3]]
    assert admissible.admits(result, _a(expected, F)) and result.unique
    commented = [ND_ROW_0[reduction], ND_DATA[1], COMMENT_ROW_2, ND_DATA[3]]
    assert not admissible.admits(result, _a(commented, F))


def test_scatter_nd_element_index_examples():
    data, indices, updates = _a([[1, 2], [3, 4]], F), _a([[0, 0], [1, 1]]), _a([5, 1], F)
    assert snd.evaluate(18, data, indices, updates, "max")[0].output.tolist() == [[5, 2], [3, 4]]
    assert snd.evaluate(18, data, indices, updates, "min")[0].output.tolist() == [[1, 2], [3, 1]]


def test_openvino_scatter_elements_update_12_examples():
    data = _a([2, 3, 4, 6], np.int32)
    updates = _a([10, 20, 30, 40, 70, 60], np.int32)
    ex1, _ = se.openvino_12(data, _a([1, 0, 0, -2, -1, 2]), updates, 0, "sum", True)
    assert ex1.output.tolist() == [52, 13, 104, 76]
    ex2, _ = se.openvino_12(data, _a([1, 0, 0, 2, 3, 2]), updates, 0, "sum", False)
    assert ex2.output.tolist() == [50, 10, 100, 70]
    indices, updates2 = _a([[1, 2], [0, 3]]), _a([[11, 12], [13, 14]], np.int32)
    ex3, _ = se.openvino_12(np.zeros((3, 4), np.int32), indices, updates2, 1, "none")
    assert ex3.output.tolist() == [[0, 11, 12, 0], [13, 0, 0, 14], [0, 0, 0, 0]]
    indices = _a([[1, 1], [0, 3]])
    ex4, _ = se.openvino_12(np.ones((3, 4), np.int32), indices, updates2, 1, "sum")
    assert ex4.output.tolist() == [[1, 24, 1, 1], [14, 1, 1, 15], [1, 1, 1, 1]]
    ex5, _ = se.openvino_12(np.full((3, 4), 2, np.int32), indices, updates2, 1, "prod")
    assert ex5.output.tolist() == [[2, 264, 2, 2], [26, 2, 2, 28], [2, 2, 2, 2]]
    # mean (OpenVINO's own): integers rounded toward negative infinity
    mean, _ = se.openvino_12(
        _a([1, 0], np.int32), _a([0, 0, 1]), _a([2, -6, -3], np.int32), 0, "mean"
    )
    assert mean.output.tolist() == [-1, -2]  # (1 + 2 - 6) / 3 = -1; (0 - 3) / 2 = -1.5 -> -2


def test_openvino_ir_examples_shapes():
    """The IR examples: shapes only (their data is not printed)."""
    se.check_shapes((1000, 256, 7, 7), (125, 20, 7, 6), (125, 20, 7, 6), 0)
    assert snd.check_shapes((1000, 256, 10, 15), (25, 125, 3), (25, 125, 15)) == 3


def test_openvino_scatter_nd_update_15_examples_and_their_errors():
    data = _a([1, 2, 3, 4, 5, 6, 7, 8], F)
    indices = _a([[4], [3], [1], [7], [-2], [-4]])
    result, disputed = snd.openvino_15(data, indices, _a([9, 10, 11, 12, 13, 14], F))
    assert result.at((4,)) == ([9.0, 14.0], False)
    assert not admissible.admits(result, _a([1, 11, 3, 10, 4, 6, 13, 12], F))  # as printed
    assert admissible.admits(result, _a([1, 11, 3, 10, 14, 6, 13, 12], F))
    assert {"sc-negative-indices", "sc-duplicates-none"} <= set(disputed)
    # The XML examples, indices read as 5x1 (decision snd-openvino-15-examples).
    base, xml, ups = (
        _a([1, 2, 3, 4], F),
        _a([[0], [2], [-3], [-3], [0]]),
        _a([10, 20, 30, 40, 50], F),
    )
    none, _ = snd.openvino_15(base, xml, ups, "none")
    assert none.at((0,))[0] == [10.0, 50.0] and none.at((1,))[0] == [30.0, 40.0]
    assert not admissible.admits(none, _a([50, 20, 20, 4], F))
    total, _ = snd.openvino_15(base.astype(np.float16), xml, ups.astype(np.float16), "sum")
    assert total.unique and total.output.tolist() == [61, 72, 23, 4]
    sub, _ = snd.openvino_15(base.astype(np.int32), xml, ups.astype(np.int32), "sub")
    assert sub.output.tolist() == [-59, -68, -17, 4]
    prod, _ = snd.openvino_15(base, xml, ups, "prod")
    assert prod.output.tolist() == [500, 2400, 60, 4]
    assert not admissible.admits(prod, _a([500, 3600, 40, 4], F))
    # A rank-1 indices of 5 is k = 5 > r = 1.
    with pytest.raises(SpecViolation, match="snd-last-dim-out-of-range"):
        snd.openvino_15(base, _a([0, 2, -3, -3, 0]), ups, "none")


# -- forbidden inputs --------------------------------------------------------------------
D = np.zeros((2, 3), np.float32)
U = np.zeros((1, 3), np.float32)
SE_FORBIDDEN = [
    (
        13,
        D.astype(ml_dtypes.bfloat16),
        _a([[0, 1, 1]]),
        U.astype(ml_dtypes.bfloat16),
        0,
        None,
        "none",
    ),
    (
        11,
        D.astype(ml_dtypes.bfloat16),
        _a([[0, 1, 1]]),
        U.astype(ml_dtypes.bfloat16),
        0,
        None,
        "data-dtype",
    ),
    (13, D, _a([[0, 1, 1]], np.int16), U, 0, None, "indices-dtype"),
    (13, D, _a([[0, 1, 1]]), U.astype(np.float64), 0, None, "sc-updates-dtype"),
    (
        13,
        np.array(1.0, np.float32),
        _a(0),
        np.array(1.0, np.float32),
        0,
        None,
        "data-rank-zero",
    ),
    (13, D, _a([[0, 1, 1]]), U, 0, "none", "sc-reduction-opset"),
    (11, D, _a([[0, 1, 1]]), U, 0, "add", "sc-reduction-opset"),
    (16, D, _a([[0, 1, 1]]), U, 0, "max", "sc-reduction-opset"),
    (18, D, _a([[0, 1, 1]]), U, 0, "sum", "sc-reduction-opset"),
    (18, D.astype(object), _a([[0, 1, 1]]), U.astype(object), 0, "mul", "sc-reduction-string"),
    (
        18,
        D.astype(np.complex64),
        _a([[0, 1, 1]]),
        U.astype(np.complex64),
        0,
        "min",
        "sc-reduction-complex",
    ),
    (13, D, _a([0, 1, 1]), U[0], 0, None, "se-rank-mismatch"),
    (13, D, _a([[0, 1, 1]]), U, 2, None, "axis-out-of-range"),
    (13, D, _a([[0, 1, 1]]), U, -3, None, "axis-out-of-range"),
    (13, D, _a([[0, 1, 1]]), U[:, :2], 0, None, "se-updates-shape"),
    (13, D, _a([[0, 1, 1, 1]]), np.zeros((1, 4), F), 0, None, "se-indices-larger-off-axis"),
    (13, D, _a([[0, 2, 1]]), U, 0, None, "index-out-of-range"),
    (13, D, _a([[0, -3, 1]]), U, 0, None, "index-out-of-range"),
    (13, D, _a([[0, 2**62, 1]]), U, 0, None, "index-out-of-range"),
]
ND_FORBIDDEN = [
    (11, D.astype(ml_dtypes.bfloat16), _a([[0]]), U.astype(ml_dtypes.bfloat16), None, "data-dtype"),
    (13, D, _a([[0]], np.int32), U, None, "snd-indices-dtype"),
    (13, D, _a([[0]]), U.astype(np.int8), None, "sc-updates-dtype"),
    (13, np.array(1.0, np.float32), _a([0]), U, None, "data-rank-zero"),
    (13, D, _a(0), U, None, "snd-indices-rank-zero"),
    (13, D, _a([[0]]), U, "add", "sc-reduction-opset"),
    (16, D, _a([[0]]), U, "min", "sc-reduction-opset"),
    (18, D.astype(object), _a([[0]]), U.astype(object), "max", "sc-reduction-string"),
    (
        18,
        D.astype(np.complex128),
        _a([[0]]),
        U.astype(np.complex128),
        "max",
        "sc-reduction-complex",
    ),
    (13, D, _a([[0, 0, 0]]), U, None, "snd-last-dim-out-of-range"),
    (13, D, _a([[0]]), U[0], None, "snd-updates-shape"),
    (13, D, _a([[0, 1]]), np.zeros((1, 1), F), None, "snd-updates-shape"),  # OpenVINO would take it
    (13, D, _a([[2]]), U, None, "index-out-of-range"),
    (13, D, _a([[0, 3]]), np.zeros(1, F), None, "index-out-of-range"),
]


@pytest.mark.parametrize("row", SE_FORBIDDEN, ids=lambda row: row[-1])
def test_each_forbidden_scatter_elements_input_names_its_clause(row):
    *args, clause = row
    if clause == "none":  # bfloat16 is in T from 13 on
        se.evaluate(*args)
        return
    with pytest.raises(SpecViolation) as raised:
        se.evaluate(*args)
    assert raised.value.clause == clause and f"[{clause}]" in str(raised.value)


@pytest.mark.parametrize("row", ND_FORBIDDEN, ids=lambda row: row[-1])
def test_each_forbidden_scatter_nd_input_names_its_clause(row):
    *args, clause = row
    with pytest.raises(SpecViolation) as raised:
        snd.evaluate(*args)
    assert raised.value.clause == clause and f"[{clause}]" in str(raised.value)


def test_openvino_s_own_reductions_are_refused_where_its_texts_lack_them():
    with pytest.raises(SpecViolation, match="sc-openvino-reductions"):
        se.openvino_12(_a([True], bool), _a([0]), _a([True], bool), 0, "mean")
    with pytest.raises(SpecViolation, match="sc-openvino-reductions"):
        snd.openvino_15(_a([1.0], F), _a([[0]]), _a([1.0], F), "mean")


def test_every_clause_the_modules_raise_is_a_decision_and_has_a_forbidden_input():
    """Each clause the modules raise has a forbidden input here too (the
    corpus's cases, tests/test_decisions.py, hold them through runs)."""
    tested = {row[-1] for row in SE_FORBIDDEN + ND_FORBIDDEN} | {"sc-openvino-reductions"}
    for module in (se, snd):
        source = Path(module.__file__).read_text(encoding="utf-8")
        raised = set(re.findall(r'SpecViolation\(\s*"([a-z0-9-]+)"', source))
        raised |= {"data-dtype", "data-rank-zero", "index-out-of-range"}  # through checks
        raised |= set(re.findall(r'checks\.check_dtypes\([^)]*?"([a-z0-9-]+)"', source))
        assert raised <= set(decisions.BY_ID)
        assert raised <= tested, sorted(raised - tested)
    for op in WRITES:
        assert op in __import__("conformance.oracle", fromlist=["OPERATORS"]).OPERATORS


def test_the_decisions_name_the_scatter_operators():
    own = [d for d in decisions.DECISIONS if d.id.startswith(("sc-", "se-", "snd-"))]
    assert len(own) == 30
    for decision in own:
        assert set(decision.ops) <= set(WRITES)
    for shared in ("index-out-of-range", "data-dtype", "data-rank-zero", "zero-size-axis",
                   "empty-tensors", "bitwise-exact"):  # fmt: skip
        assert set(WRITES) <= set(decisions.BY_ID[shared].ops)
    assert "ScatterElements" in decisions.BY_ID["axis-out-of-range"].ops
    assert "ScatterND" not in decisions.BY_ID["axis-out-of-range"].ops


@pytest.mark.parametrize("opset", se.OPSETS)
def test_each_opset_s_types_are_the_text_s(opset):
    assert sorted(se.op_spec(opset).data_dtypes) == sorted(TEXT_TYPES[opset])
    assert se.op_spec(opset).index_dtypes == ("int32", "int64")
    assert sorted(snd.op_spec(opset).data_dtypes) == sorted(TEXT_TYPES[opset])
    assert snd.op_spec(opset).index_dtypes == ("int64",)
