"""Hypothesis strategies for Gather and GatherElements inputs.

Public: use them in your own property tests as well as in ``conformance fuzz``.
Every strategy draws a whole :class:`Example` (operator, opset, axis, data,
indices and the model variant to run it in) or one of its parts, so they
compose: fix what you care about, let the rest vary::

    from hypothesis import given
    from conformance.fuzz import strategies as cs

    @given(cs.valid_examples(op="Gather", dtype="float16"))
    def test_my_runtime(example):
        ...

Valid and invalid inputs come from separate strategies. :func:`valid_examples`
only draws inputs the oracle accepts (disputed decisions included: negative
indices, GatherElements indices smaller than data off the axis);
:func:`invalid_examples` draws inputs that break exactly the clause it was asked
for (an id from ``conformance decisions``). :func:`examples` is both.

Sizes: data and indices each have at most :func:`max_elements` elements
(default :data:`DEFAULT_MAX_ELEMENTS`; raise it with the environment variable
``CONFORMANCE_MAX_ELEMENTS``, ``conformance fuzz --max-elements`` or the
``max_elements`` argument). Small tensors find the same bugs faster and shrink
to clearer reproducers; raise the cap to look for size-dependent paths.

Where shrinking goes (the meta-tests hold the strategies to this):

- operator toward ``Gather``, opset toward the newest, variant toward ``static``;
- rank toward 1, every dimension toward 1, a zero-size dimension toward none;
  but Hypothesis counts fewer drawn values as simpler, so an example that asks
  nothing of the elements shrinks to empty tensors;
- axis toward 0 (an absent attribute is a separate, later choice);
- data elements toward all-zero bits (0, 0.0, ``""``, ``False``);
- in-range indices toward 0; an out-of-range index toward the nearest
  out-of-range value (``s`` or ``-s-1`` for an axis of size ``s``);
- invalid axes toward just outside ``[-r, r-1]``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

from conformance.cases.model import Case, Expectation, Source
from conformance.engine import models
from conformance.tables import dtypes
from conformance.tables.spec import OPSETS, op_spec

__all__ = [
    "DEFAULT_MAX_ELEMENTS",
    "INVALID_CLAUSES",
    "MAX_ELEMENTS_ENV",
    "Example",
    "axes",
    "data_dtypes",
    "examples",
    "ge_indices_shapes",
    "index_dtypes",
    "indices_in_range",
    "indices_out_of_range",
    "invalid_examples",
    "max_elements",
    "op_opsets",
    "shapes",
    "special_values",
    "tensors",
    "valid_examples",
    "variants",
]

DEFAULT_MAX_ELEMENTS = 256
MAX_ELEMENTS_ENV = "CONFORMANCE_MAX_ELEMENTS"
MAX_RANK = 8
MAX_GATHER_INDICES_RANK = MAX_RANK  # "any rank": as high as data goes
MAX_STRING = 12  # characters in a drawn string (long strings come from the specials)

# Clauses an invalid example can break (decision ids), by operator.
INVALID_CLAUSES: dict[str, tuple[str, ...]] = {
    "Gather": (
        "index-out-of-range",
        "axis-out-of-range",
        "data-rank-zero",
        "indices-dtype",
        "data-dtype",
    ),
    "GatherElements": (
        "index-out-of-range",
        "axis-out-of-range",
        "data-rank-zero",
        "rank-mismatch",
        "ge-indices-larger-off-axis",
        "indices-dtype",
        "data-dtype",
    ),
}
# Index dtypes outside Tind that still make a loadable model.
_WRONG_INDEX_DTYPES = ("int8", "int16", "uint8", "uint16", "uint32", "uint64")


def max_elements() -> int:
    """The element cap per tensor: $CONFORMANCE_MAX_ELEMENTS or the default."""
    raw = os.environ.get(MAX_ELEMENTS_ENV)
    if raw is None:
        return DEFAULT_MAX_ELEMENTS
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{MAX_ELEMENTS_ENV}={raw!r} is not a whole number") from None
    if value < 1:
        raise ValueError(f"{MAX_ELEMENTS_ENV}={raw!r} must be at least 1")
    return value


def _cap(given: int | None) -> int:
    """The cap a strategy was given, else the default (strategies take a
    ``max_elements`` argument, which hides the function of that name)."""
    return given or max_elements()


@dataclass(frozen=True, eq=False)
class Example:
    """One input to run: what a case is, plus the model variant."""

    op: str
    opset: int
    axis: int | None  # None: the attribute is absent
    data: np.ndarray
    indices: np.ndarray
    variant: str = "static"

    @property
    def dtype(self) -> str:
        return dtypes.name_of(self.data)

    @property
    def indices_dtype(self) -> str:
        return dtypes.name_of(self.indices)

    def as_case(self, case_id: str = "example", source: Source | None = None) -> Case:
        """The example as a :class:`Case` the run engine can take."""
        return Case(
            id=case_id,
            base_id=case_id,
            op=self.op,
            opset=self.opset,
            axis=self.axis,
            data=self.data,
            indices=self.indices,
            expectation=Expectation("oracle"),
            description="drawn by conformance.fuzz.strategies",
            spec="",
            decisions=(),
            tags=("generated",),
            source=source or Source(Path("<generated>"), 0),
        )

    def _repr_pretty_(self, printer, cycle) -> None:
        # Hypothesis pretty-prints dataclasses field by field (whole tensors);
        # this hook makes it print the bounded repr below instead.
        printer.text(repr(self))

    def __repr__(self) -> str:
        # What Hypothesis prints for a falsifying example: enough to rebuild it.
        return (
            f"Example(op={self.op!r}, opset={self.opset}, axis={self.axis}, "
            f"variant={self.variant!r}, data={_show(self.data)}, indices={_show(self.indices)})"
        )


REPR_LIMIT = 2000  # characters of one tensor in a printed Example


def _show(array: np.ndarray) -> str:
    body = np.array2string(array, threshold=64, separator=", ")
    if len(body) > REPR_LIMIT:  # long strings: the npz or case.yaml has the whole tensor
        body = body[:REPR_LIMIT] + " ..."
    return f"array({body}, dtype={dtypes.name_of(array)}, shape={array.shape})"


# -- operator, opset, dtypes, variant -----------------------------------------
def op_opsets(op: str | None = None) -> st.SearchStrategy[tuple[str, int]]:
    """(operator, opset) pairs this project covers; opsets shrink toward the newest."""
    ops = [op] if op else list(OPSETS)
    return st.sampled_from([(o, v) for o in ops for v in reversed(OPSETS[o])])


def data_dtypes(op: str, opset: int) -> st.SearchStrategy[str]:
    """Names of the data dtypes T allows at this opset (read from onnx.defs)."""
    return st.sampled_from(op_spec(op, opset).data_dtypes)


def index_dtypes(op: str, opset: int) -> st.SearchStrategy[str]:
    """int64 or int32 (Tind), shrinking toward int64."""
    return st.sampled_from(sorted(op_spec(op, opset).index_dtypes, reverse=True))


def variants() -> st.SearchStrategy[str]:
    """The five model variants of :mod:`conformance.engine.models`."""
    return st.sampled_from(models.VARIANTS)


# -- shapes -------------------------------------------------------------------
@st.composite
def shapes(
    draw,
    min_rank: int = 1,
    max_rank: int = MAX_RANK,
    max_elements: int | None = None,
    empty: bool | None = None,
    max_dim: int = 8,
) -> tuple[int, ...]:
    """Shapes with at most ``max_elements`` elements; dims shrink toward 1.

    ``empty``: True forces one zero-size dimension, False forbids it, None
    draws it about one time in eight.
    """
    cap = _cap(max_elements)
    rank = draw(st.integers(min_rank, max_rank))
    if rank == 0:
        return ()
    zero_at = None
    if empty is None:
        empty = draw(st.integers(0, 7)) == 7
    if empty:
        zero_at = draw(st.integers(0, rank - 1))
    dims = []
    budget = cap
    for position in range(rank):
        if position == zero_at:
            dims.append(0)
            continue
        dim = draw(st.integers(1, max(1, min(max_dim, budget))))
        budget = max(1, budget // dim)
        dims.append(dim)
    return tuple(dims)


def axes(rank: int) -> st.SearchStrategy[int]:
    """Valid axes for a rank, negative ones included; shrinks toward 0."""
    return st.integers(-rank, rank - 1)


def _invalid_axes(rank: int) -> st.SearchStrategy[int]:
    """Axes outside [-r, r-1]: just outside first, then far outside."""
    return st.one_of(
        st.integers(rank, rank + 3),
        st.integers(-rank - 3, -rank - 1),
        st.sampled_from([2**31 - 1, -(2**31), 2**63 - 1, -(2**63)]),
    )


@st.composite
def ge_indices_shapes(
    draw,
    data_shape: tuple[int, ...],
    axis: int,
    off_axis: str = "equal",
    max_elements: int | None = None,
) -> tuple[int, ...]:
    """GatherElements indices shapes for ``data_shape``: any size on the axis;
    off the axis ``equal``, ``smaller`` (at least one dim, disputed but valid)
    or ``larger`` (at least one dim: invalid)."""
    cap = _cap(max_elements)
    rank = len(data_shape)
    axis %= rank
    others = [d for d in range(rank) if d != axis]
    shape = list(data_shape)
    if off_axis != "equal":
        candidates = [d for d in others if off_axis == "larger" or data_shape[d] > 0]
        if not candidates:
            raise ValueError(f"no dimension of {data_shape} can be {off_axis} off axis {axis}")
        chosen = draw(st.sampled_from(candidates))
        if off_axis == "larger":  # one dimension, by one or two
            shape[chosen] = data_shape[chosen] + draw(st.integers(1, 2))
        else:  # the chosen one and any others that can shrink
            for dim in others:
                if (dim == chosen or draw(st.booleans())) and data_shape[dim] > 0:
                    shape[dim] = draw(st.integers(0, data_shape[dim] - 1))
    rest = math.prod(shape[d] for d in others)
    room = cap if rest == 0 else cap // rest
    # Zero on the axis one time in eight; otherwise 1 or more, shrinking toward 1.
    empty = draw(st.integers(0, 7)) == 7
    shape[axis] = 0 if empty else draw(st.integers(1, max(1, min(room, 8))))
    return tuple(shape)


# -- values -------------------------------------------------------------------
def _float_bits(dtype: dtypes.DType) -> list[int]:
    """Bit patterns of the float edges: signed zeros, infinities, NaNs with
    payloads (quiet and signalling, both signs), extremes, subnormals, ±1."""
    width = dtype.numpy.itemsize * 8
    unsigned = np.dtype(f"uint{width}")
    info = ml_dtypes.finfo(dtype.numpy)  # numpy's finfo does not know bfloat16
    mantissa = int(info.nmant)
    exponent_mask = ((1 << (width - 1 - mantissa)) - 1) << mantissa
    sign = 1 << (width - 1)
    quiet = 1 << (mantissa - 1)

    def bits(value) -> int:
        return int(np.array(value, dtype=dtype.numpy).view(unsigned))

    patterns = [
        0,
        sign,  # -0.0
        exponent_mask,  # +inf
        sign | exponent_mask,  # -inf
        exponent_mask | quiet,  # the default quiet NaN
        sign | exponent_mask | quiet | 1,  # negative quiet NaN with a payload
        exponent_mask | 1,  # signalling NaN
        exponent_mask | quiet | (quiet - 1),  # largest payload
        bits(info.max),
        bits(-info.max),
        bits(info.smallest_normal),
        1,  # smallest subnormal
        sign | 1,
        (1 << mantissa) - 1,  # largest subnormal
        bits(1.0),
        bits(-1.0),
    ]
    return patterns


@cache
def special_values(dtype_name: str) -> tuple:
    """The edge values of a dtype, as elements of its NumPy array type."""
    dtype = dtypes.by_name(dtype_name)
    kind = dtype.kind
    if kind == "bool":
        return (False, True)
    if kind in ("int", "uint"):
        info = np.iinfo(dtype.numpy)
        base = [0, 1, int(info.max), int(info.min), int(info.max) - 1]
        if kind == "int":
            base += [-1, int(info.min) + 1]
        else:
            base += [int(info.max) // 2, int(info.max) // 2 + 1]  # 2^(n-1) - 1 and 2^(n-1)
        for wide in (2**31 - 1, 2**31, 2**32 - 1, -(2**31), -(2**31) - 1):
            if info.min <= wide <= info.max:
                base.append(wide)
        return tuple(sorted(set(base), key=lambda v: (abs(v), v)))
    if kind in ("float", "complex"):
        bits = np.array(_special_bits(dtype), dtype=_unsigned(dtype))
        return tuple(bits.view(dtype.numpy).reshape(-1))
    return (
        "",
        "a",
        "é中😀",
        "<script>alert(1)</script>",
        "line\nbreak\ttab",
        "nul\x00inside",
        "\u202eright-to-left",
        "x" * 300,
    )


def _unsigned(dtype: dtypes.DType) -> np.dtype:
    """The unsigned type of one float (or one complex part)."""
    width = dtype.numpy.itemsize * 8 // (2 if dtype.kind == "complex" else 1)
    return np.dtype(f"uint{width}")


def _part(dtype: dtypes.DType) -> dtypes.DType:
    return dtypes.by_name({"complex64": "float32", "complex128": "float64"}[dtype.name])


def _special_bits(dtype: dtypes.DType) -> list:
    """Bit patterns of the edges (pairs of patterns for complex)."""
    if dtype.kind == "complex":
        parts = _float_bits(_part(dtype))
        return [[parts[i], parts[j]] for i, j in ((1, 0), (0, 4), (4, 2), (3, 5), (8, 11), (6, 13))]
    return _float_bits(dtype)


MAX_SPECIALS = 8  # edge values written over a drawn tensor


def _specials(dtype: dtypes.DType) -> st.SearchStrategy:
    """One edge value: a bit pattern (pair for complex) for floats, else a value."""
    if dtype.kind in ("float", "complex"):
        return st.sampled_from(_special_bits(dtype))
    return st.sampled_from(special_values(dtype.name))


def _overwrite(draw, flat: np.ndarray, values: st.SearchStrategy, least: int = 0) -> None:
    """Write ``least`` to MAX_SPECIALS drawn values at drawn positions of ``flat``."""
    if not len(flat):
        return
    count = draw(st.integers(least, max(least, min(len(flat), MAX_SPECIALS))))
    for _ in range(count):
        flat[draw(st.integers(0, len(flat) - 1))] = draw(values)


@st.composite
def tensors(draw, dtype_name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An array of ``dtype_name`` and ``shape`` over the dtype's full range:
    random bits for numbers, plus up to eight edge values (extremes, NaN
    payloads, signalling NaNs, ±inf, -0.0, subnormals; unicode, markup and empty
    strings) at drawn positions. Shrinks toward all-zero bits.

    Numbers are drawn as one block of bytes, not element by element: that keeps
    a 256-element tensor as cheap to draw as a scalar.
    """
    dtype = dtypes.by_name(dtype_name)
    size = math.prod(shape)
    if dtype.kind == "string":
        text = st.one_of(st.text(max_size=MAX_STRING), st.sampled_from(special_values("string")))
        array = np.empty(size, dtype=object)
        array[:] = draw(st.lists(text, min_size=size, max_size=size))
        return array.reshape(shape)
    if dtype.kind == "bool":
        raw = draw(st.binary(min_size=size, max_size=size))
        return (np.frombuffer(raw, dtype=np.uint8) & 1).astype(bool).reshape(shape)
    unit = _unsigned(dtype) if dtype.kind in ("float", "complex") else dtype.numpy
    raw = draw(
        st.binary(min_size=size * dtype.numpy.itemsize, max_size=size * dtype.numpy.itemsize)
    )
    flat = np.frombuffer(raw, dtype=unit).copy()
    if dtype.kind == "complex":
        pairs = flat.reshape(size, 2)
        _overwrite(draw, pairs, _specials(dtype))
    else:
        _overwrite(draw, flat, _specials(dtype))
    return flat.view(dtype.numpy).reshape(shape)


def _index_range(dtype_name: str) -> tuple[int, int]:
    info = np.iinfo(dtypes.by_name(dtype_name).numpy)
    return int(info.min), int(info.max)


def _in_range(size: int, dtype_name: str, negative: bool = True) -> st.SearchStrategy[int]:
    """In-range index values the index dtype can hold; bounds drawn often."""
    low, high = _index_range(dtype_name)
    low, high = max(low, -size if negative else 0), min(high, size - 1)
    bounds = sorted({v for v in (0, size - 1, -1, -size) if low <= v <= high})
    return st.one_of(st.integers(low, high), st.sampled_from(bounds))


def _out_of_range(size: int, dtype_name: str) -> st.SearchStrategy[int]:
    """Index values outside [-size, size-1] that the index dtype can hold."""
    low, high = _index_range(dtype_name)
    choices = []
    if size <= high:
        choices.append(st.integers(size, high))
    if -size - 1 >= low:
        choices.append(st.integers(low, -size - 1))
    extremes = [
        v
        for v in (high, low, 2**31 - 1, -(2**31), 2**31, -(2**31) - 1, 2**32)
        if low <= v <= high and not -size <= v <= size - 1
    ]
    if extremes:
        choices.append(st.sampled_from(extremes))
    return st.one_of(choices)


def _raw_words(draw, count: int) -> np.ndarray:
    raw = draw(st.binary(min_size=count * 8, max_size=count * 8))
    return np.frombuffer(raw, dtype=np.uint64)


@st.composite
def indices_in_range(
    draw, dtype_name: str, shape: tuple[int, ...], size: int, negative: bool = True
) -> np.ndarray:
    """Indices valid on an axis of ``size``: in [-size, size-1] (or [0, size-1]
    without ``negative``), bounds written in often; values shrink toward 0.
    An axis of size 0 admits only empty indices."""
    count = math.prod(shape)
    if count and size == 0:
        raise ValueError("an axis of size 0 has no valid index; the indices must be empty")
    low, high = _index_range(dtype_name)
    low, high = max(low, -size if negative else 0), min(high, size - 1)
    words = _raw_words(draw, count)
    # Zero bytes map to index 0; the rest spread over [low, high] with negatives
    # above the positives so that shrinking goes to small non-negative values.
    span = high - low + 1
    values = (words % np.uint64(max(span, 1))).astype(np.int64)
    values = np.where(values > high, values - span, values)
    _overwrite(draw, values, _in_range(size, dtype_name, negative))
    return values.astype(dtypes.by_name(dtype_name).numpy).reshape(shape)


@st.composite
def indices_out_of_range(draw, dtype_name: str, shape: tuple[int, ...], size: int) -> np.ndarray:
    """Non-empty indices with at least one value outside [-size, size-1]: just
    past either bound, far past it, or at the extremes of the index dtype (int32
    limits, beyond int32 for int64). The others are in range where there is a range."""
    count = math.prod(shape)
    if count == 0:
        raise ValueError("out-of-range indices need at least one element")
    if size:
        values = draw(indices_in_range(dtype_name, shape, size)).astype(object).reshape(-1)
    else:
        values = np.zeros(count, dtype=object)
    _overwrite(draw, values, _out_of_range(size, dtype_name), least=1)
    return np.array(values.tolist(), dtype=dtypes.by_name(dtype_name).numpy).reshape(shape)


# -- whole examples -------------------------------------------------------------
def _axis_attribute(draw, axis: int) -> int | None:
    # An absent attribute means 0; it is drawn after the axis so 0 stays simplest.
    if axis == 0 and draw(st.integers(0, 3)) == 3:
        return None
    return axis


def _pick(draw, given, strategy):
    return given if given is not None else draw(strategy)


@st.composite
def valid_examples(
    draw,
    op: str | None = None,
    opset: int | None = None,
    dtype: str | None = None,
    index_dtype: str | None = None,
    variant: str | None = None,
    max_elements: int | None = None,
) -> Example:
    """Inputs the spec accepts (the oracle gives an output). Fix any argument
    to narrow the draw; the rest varies."""
    cap = _cap(max_elements)
    op, opset = _op_opset(draw, op, opset)
    dtype = _pick(draw, dtype, data_dtypes(op, opset))
    index_dtype = _pick(draw, index_dtype, index_dtypes(op, opset))
    data_shape = draw(shapes(max_elements=cap))
    rank = len(data_shape)
    axis = draw(axes(rank))
    size = data_shape[axis]
    if op == "Gather":
        index_shape = draw(
            shapes(min_rank=0, max_rank=MAX_GATHER_INDICES_RANK, max_elements=cap, empty=None)
        )
    else:
        can_be_smaller = any(data_shape[d] > 0 for d in range(rank) if d != axis % rank)
        off_axis = "smaller" if can_be_smaller and draw(st.integers(0, 5)) == 5 else "equal"
        index_shape = draw(ge_indices_shapes(data_shape, axis, off_axis, cap))
    if size == 0:
        index_shape = _emptied(op, index_shape, axis)
    indices = draw(indices_in_range(index_dtype, index_shape, size))
    data = draw(tensors(dtype, data_shape))
    return Example(
        op,
        opset,
        _axis_attribute(draw, axis),
        data,
        indices,
        _pick(draw, variant, variants()),
    )


def _emptied(op: str, index_shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """Indices for a zero-size axis: empty (any index would be out of range)."""
    if 0 in index_shape:
        return index_shape
    if op == "Gather":
        return (0, *index_shape[1:]) if index_shape else (0,)
    shape = list(index_shape)
    shape[axis % len(shape)] = 0
    return tuple(shape)


def _op_opset(draw, op: str | None, opset: int | None) -> tuple[str, int]:
    """The operator and opset asked for, drawn where not given."""
    if op and opset:
        return op, opset
    return draw(op_opsets(op).filter(lambda pair: opset is None or pair[1] == opset))


@st.composite
def invalid_examples(
    draw,
    op: str | None = None,
    opset: int | None = None,
    clause: str | None = None,
    dtype: str | None = None,
    index_dtype: str | None = None,
    variant: str | None = None,
    max_elements: int | None = None,
) -> Example:
    """Inputs that break ``clause`` (a decision id from :data:`INVALID_CLAUSES`,
    drawn when not given). The oracle checks clauses in a fixed order (dtypes,
    data rank, shape rules, axis, index bounds) and the other parts are drawn
    valid, so it reports exactly that clause."""
    cap = _cap(max_elements)
    op, opset = _op_opset(draw, op, opset)
    spec = op_spec(op, opset)
    wrong_data_dtypes = [d for d in dtypes.NAMES if d not in spec.data_dtypes]
    possible = [c for c in INVALID_CLAUSES[op] if c != "data-dtype" or wrong_data_dtypes]
    if clause is None:
        clause = draw(st.sampled_from(possible))
    elif clause not in possible:
        raise ValueError(f"{op}-{opset} cannot break {clause!r}; possible: {', '.join(possible)}")
    if clause == "data-dtype":
        dtype = dtype or draw(st.sampled_from(wrong_data_dtypes))
    else:
        dtype = _pick(draw, dtype, data_dtypes(op, opset))
    if clause == "indices-dtype":
        index_dtype = index_dtype or draw(st.sampled_from(_WRONG_INDEX_DTYPES))
    else:
        index_dtype = _pick(draw, index_dtype, index_dtypes(op, opset))
    variant = _pick(draw, variant, variants())

    if clause == "data-rank-zero":
        index_shape = () if op == "Gather" else (draw(st.integers(0, 2)),)
        indices = _some_indices(draw, index_dtype, index_shape, 1)
        data = draw(tensors(dtype, ()))
        return Example(op, opset, _axis_attribute(draw, 0), data, indices, variant)

    # Larger off the axis needs a dimension off the axis: rank 2 at least.
    min_rank = 2 if clause == "ge-indices-larger-off-axis" else 1
    data_shape = draw(shapes(min_rank=min_rank, max_elements=cap))
    rank = len(data_shape)
    axis = draw(axes(rank))
    if op == "GatherElements" and clause == "index-out-of-range":
        # The bad index needs an element, and indices may not exceed data off
        # the axis: no zero-size dimension off the axis.
        data_shape = tuple(d if k == axis % rank else max(1, d) for k, d in enumerate(data_shape))
    size = data_shape[axis]
    if op == "Gather":
        index_shape = draw(shapes(min_rank=0, max_rank=MAX_GATHER_INDICES_RANK, max_elements=cap))
    elif clause == "rank-mismatch":
        index_rank = draw(st.integers(0, MAX_RANK - 1))
        index_rank += index_rank >= rank  # any rank but the data's
        index_shape = draw(shapes(min_rank=index_rank, max_rank=index_rank, max_elements=cap))
    elif clause == "ge-indices-larger-off-axis":
        index_shape = draw(ge_indices_shapes(data_shape, axis, "larger", cap))
    else:
        index_shape = draw(ge_indices_shapes(data_shape, axis, "equal", cap))

    if clause == "index-out-of-range":
        indices = draw(indices_out_of_range(index_dtype, _filled(index_shape), size))
    else:
        indices = _some_indices(draw, index_dtype, index_shape, size)
    if clause == "axis-out-of-range":
        axis = draw(_invalid_axes(rank))
    data = draw(tensors(dtype, data_shape))
    return Example(op, opset, _axis_attribute(draw, axis), data, indices, variant)


def _filled(index_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape with its zero-size dimensions made 1, so it holds an index."""
    return tuple(max(1, d) for d in index_shape)


def _some_indices(draw, dtype_name, shape, size) -> np.ndarray:
    """Indices for an input that is invalid for another reason: in range where
    that means something, else small."""
    if size > 0:
        return draw(indices_in_range(dtype_name, shape, size))
    count = math.prod(shape)
    low = max(-2, _index_range(dtype_name)[0])
    values = draw(st.lists(st.integers(low, 2), min_size=count, max_size=count))
    return np.array(values, dtype=dtypes.by_name(dtype_name).numpy).reshape(shape)


def examples(
    op: str | None = None, opset: int | None = None, max_elements: int | None = None
) -> st.SearchStrategy[Example]:
    """Valid and invalid inputs, valid ones drawn more often (and simpler)."""
    return st.one_of(
        valid_examples(op=op, opset=opset, max_elements=max_elements),
        valid_examples(op=op, opset=opset, max_elements=max_elements),
        invalid_examples(op=op, opset=opset, max_elements=max_elements),
    )
