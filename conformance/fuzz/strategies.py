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

Arguments: every strategy checks its arguments when it is called, as
``hypothesis.extra.numpy`` does, not when an example is drawn. A bad one raises
``hypothesis.errors.InvalidArgument`` (a ``ValueError`` as well) naming the
argument, its value and what is allowed; each docstring says what it checks.

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

import functools
import inspect
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from functools import cache
from numbers import Integral
from typing import NoReturn, TypeGuard, cast

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from conformance.cases.case import Case, Source
from conformance.engine import models
from conformance.fuzz.limits import DEFAULT_MAX_ELEMENTS, MAX_ELEMENTS_ENV, max_elements
from conformance.tables import dtypes
from conformance.tables.operators import OPERATORS
from conformance.tables.spec import OPSETS as ALL_OPSETS
from conformance.tables.spec import OpSpec, op_spec

# The operators (and their opsets) the strategies draw: every row but GatherND's,
# whose index tuples no strategy here draws yet (issue 46; its cases are in cases/),
# and the Scatter operators', whose third input no strategy draws yet (issue 47).
OPSETS: dict[str, tuple[int, ...]] = {
    name: opsets
    for name, opsets in ALL_OPSETS.items()
    if OPERATORS[name].indexing != "tuple" and not OPERATORS[name].writes
}

__all__ = [
    "AXIS_LENGTH_RANGES",
    "DEFAULT_MAX_ELEMENTS",
    "INVALID_CLAUSES",
    "INVALID_INDEX_CLASSES",
    "MAX_ELEMENTS_ENV",
    "VALID_INDEX_CLASSES",
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

MAX_RANK = 8
MAX_GATHER_INDICES_RANK = MAX_RANK  # "any rank": as high as data goes
MAX_STRING = 12  # characters in a drawn string (long strings come from the specials)
MAX_SHAPE_RANK = 32  # the most dimensions a shape argument may have (NumPy's old limit)

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

# The classes ``axis_length`` and ``index_class`` ask for (what each means, and
# how an input is put in them, is :mod:`conformance.fuzz.coverage`'s to say).
# Axis-length class -> the least and the most elements of the gathered axis
# (None: as many as ``max_elements`` allows). Runtimes switch kernels at such
# lengths (vector widths, 8-bit and 64-element blocks, 256-entry tables).
AXIS_LENGTH_RANGES: dict[str, tuple[int, int | None]] = {
    "0": (0, 0),
    "1": (1, 1),
    "2-63": (2, 63),
    "64-255": (64, 255),
    ">=256": (256, None),
}
VALID_INDEX_CLASSES = ("in_range", "negative")  # what a valid input's indices can be
# ... and an invalid one's (clause index-out-of-range); the last two need int64 indices
INVALID_INDEX_CLASSES = ("out_of_range", "beyond_int32", "int64_extremes")
_INT64_ONLY = INVALID_INDEX_CLASSES[1:]
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
# Clauses whose inputs have no gathered axis (data of rank 0, an axis outside [-r, r-1]).
_AXISLESS = ("data-rank-zero", "axis-out-of-range")


def _cap(given: int | None) -> int:
    """The cap a strategy was given, else the default (strategies take a
    ``max_elements`` argument, which hides the function of that name)."""
    return given or max_elements()


# -- argument checks ------------------------------------------------------------
# Every public strategy checks its arguments when it is called, as Hypothesis'
# own do, rather than failing (or drawing nonsense) once an example is drawn.
#
# Hypothesis draws some values from the short string literals (and the large
# numbers) in a project's modules, so a new literal here would change the
# examples a seed draws. Hence argument names are passed as keywords
# (``_check_int(..., max_rank=max_rank)``) and message parts are f-strings or
# longer than 20 characters, which it skips.
class _BadArgument(InvalidArgument, ValueError):
    """Hypothesis' InvalidArgument; also a ValueError, which some of these
    errors were when they came at draw time."""


def _bad(what: str, expected: str, **argument: object) -> NoReturn:
    """Raise for the one ``name=value`` in ``argument``: it is not ``what``."""
    ((name, value),) = argument.items()
    raise _BadArgument(f"{name}={value!r} is not {what}; expected {expected}")


def _listing(values: Collection[object]) -> str:
    return ", ".join(map(repr, values))


def _is_int(value: object) -> TypeGuard[int | np.integer]:  # NumPy's are Integral
    return isinstance(value, Integral) and not isinstance(value, bool)


def _check_int(what: str, low: int, high: int | None = None, **argument: object) -> None:
    """An int (not a bool) in [low, high]."""
    ((_, value),) = argument.items()
    if not _is_int(value) or value < low or (high is not None and value > high):
        expected = f"an int >= {low}" if high is None else f"an int from {low} to {high}"
        _bad(what, expected, **argument)


def _check_bool(what: str, *, or_none: bool = False, **argument: object) -> None:
    """A bool (not 0 or 1), or None if ``or_none``."""
    ((_, value),) = argument.items()
    if not (isinstance(value, bool) or (or_none and value is None)):
        _bad(what, f"{True}, {False} or {None}" if or_none else f"{True} or {False}", **argument)


def _check_choice(choices: Collection[str], what: str, **argument: object) -> None:
    ((_, value),) = argument.items()
    if not isinstance(value, str) or value not in choices:
        _bad(what, f"one of {_listing(choices)}", **argument)


def _check_max_elements(max_elements: object) -> None:
    if max_elements is not None:
        _check_int("a positive element cap (or None)", 1, max_elements=max_elements)


def _check_variant(variant: object) -> None:
    if variant is not None:
        _check_choice(models.VARIANTS, "a variant of conformance.engine.models", variant=variant)


def _check_shape(**argument: object) -> None:
    """A tuple (or list) of at most MAX_SHAPE_RANK dimensions, each an int >= 0."""
    ((_, shape),) = argument.items()
    if not (
        isinstance(shape, tuple | list)
        and len(shape) <= MAX_SHAPE_RANK
        and all(_is_int(d) and d >= 0 for d in shape)
    ):
        _bad(
            "a valid shape for a tensor",
            f"a tuple of at most {MAX_SHAPE_RANK} ints >= 0",
            **argument,
        )


def _check_op_opset(op: object, opset: object, *, exact: bool = False) -> dict[str, OpSpec]:
    """Check ``op`` and ``opset`` (None: any, unless ``exact``); the specs of the
    (operator, opset) pairs a strategy given them can draw, by ``Op-opset`` name."""
    if op is not None or exact:
        _check_choice(OPSETS, "an operator of the spec", op=op)
    ops = [cast(str, op)] if op is not None else list(OPSETS)  # checked above
    if opset is not None or exact:
        known = sorted({v for o in ops for v in OPSETS[o]})
        if not _is_int(opset) or opset not in known:
            _bad(f"an opset of {op or 'any operator'}", f"one of {_listing(known)}", opset=opset)
    return {f"{o}-{v}": op_spec(o, v) for o in ops for v in OPSETS[o] if opset in (None, v)}


def _check_dtype(
    allowed_by: Mapping[str, Collection[str]] | None = None,
    what: str = "",
    **argument: object,
) -> None:
    """A dtype name of the table, and one every ``allowed_by`` entry allows
    (entries are named ``Op-opset``; an error lists those that refuse)."""
    ((_, value),) = argument.items()
    allowed_by = allowed_by or {"": dtypes.NAMES}
    allowed = [n for n in dtypes.NAMES if all(n in a for a in allowed_by.values())]
    if not isinstance(value, str) or value not in dtypes.NAMES:
        _bad("a name in the dtype table", f"one of {_listing(allowed)}", **argument)
    refusing = [where for where, a in allowed_by.items() if value not in a]
    if refusing:
        _bad(f"{what} {', '.join(refusing)}".strip(), f"one of {_listing(allowed)}", **argument)


_INTEGER_DTYPES = tuple(n for n in dtypes.NAMES if dtypes.by_name(n).kind in ("int", "uint"))


def _check_index_args(dtype_name: object, shape: object, size: object) -> None:
    """The arguments of the index strategies: an integer dtype, a shape, an axis size."""
    _check_dtype({"": _INTEGER_DTYPES}, "an integer dtype (for indices)", dtype_name=dtype_name)
    _check_shape(shape=shape)
    _check_int("a size an axis can have", 0, size=size)


def _wrong_data_dtypes(spec: OpSpec) -> list[str]:
    """The table's dtypes that T refuses at this operator and opset."""
    return [d for d in dtypes.NAMES if d not in spec.data_dtypes]


def _breakable(spec: OpSpec) -> list[str]:
    """The clauses an invalid example can break at this operator and opset
    ('data-dtype' needs a dtype T refuses)."""
    return [c for c in INVALID_CLAUSES[spec.op] if c != "data-dtype" or _wrong_data_dtypes(spec)]


def _check_example_args(
    op: object,
    opset: object,
    dtype: object,
    index_dtype: object,
    variant: object,
    max_elements: object,
    clause: object = None,
) -> None:
    """The arguments of :func:`valid_examples` and :func:`invalid_examples`:
    fixed dtypes and the clause must fit every operator and opset that can be drawn."""
    specs = _check_op_opset(op, opset)
    if clause is not None:
        known = list(dict.fromkeys(c for clauses in INVALID_CLAUSES.values() for c in clauses))
        _check_choice(known, "an invalid-input clause", clause=clause)
        common = [c for c in known if all(c in _breakable(s) for s in specs.values())]
        refusing = [where for where, s in specs.items() if clause not in _breakable(s)]
        if refusing:
            what = f"possible here: {', '.join(refusing)} cannot break {clause!r}"
            _bad(what, f"one of {_listing(common)}", clause=clause)
    if dtype is not None:
        if clause == "data-dtype":
            wrong: dict[str, Collection[str]]
            wrong = {where: _wrong_data_dtypes(s) for where, s in specs.items()}
            _check_dtype(wrong, f"a data dtype that breaks {clause!r} at", dtype=dtype)
        else:
            right = {where: s.data_dtypes for where, s in specs.items()}
            _check_dtype(right, "a data dtype allowed at", dtype=dtype)
    if index_dtype is not None:
        if clause == "indices-dtype":
            wrong = {"": _WRONG_INDEX_DTYPES}
            _check_dtype(wrong, f"an index dtype that breaks {clause!r}", index_dtype=index_dtype)
        else:
            right = {where: s.index_dtypes for where, s in specs.items()}
            _check_dtype(right, "an index dtype allowed at", index_dtype=index_dtype)
    _check_variant(variant)
    _check_max_elements(max_elements)


def _check_classes(
    max_elements: object, axis_length: object, index_class: object, index_classes: tuple
) -> None:
    """``axis_length`` None or a class of :data:`AXIS_LENGTH_RANGES` the cap allows;
    ``index_class`` None or one of ``index_classes``."""
    if axis_length is not None:
        _check_choice(AXIS_LENGTH_RANGES, "an axis-length class", axis_length=axis_length)
        cap = _cap(cast(int | None, max_elements))  # checked by _check_example_args
        fitting = [name for name, (low, _) in AXIS_LENGTH_RANGES.items() if low <= cap]
        if axis_length not in fitting:
            low = AXIS_LENGTH_RANGES[cast(str, axis_length)][0]  # checked above
            what = f"possible with max_elements={cap} (an axis of {low} elements exceeds it)"
            _bad(what, f"None or one of {_listing(fitting)}", axis_length=axis_length)
    if index_class is not None:
        _check_choice(index_classes, "an index class of these examples", index_class=index_class)


def _check_valid_example_args(
    op: object,
    opset: object,
    dtype: object,
    index_dtype: object,
    variant: object,
    max_elements: object,
    axis_length: object,
    index_class: object,
) -> None:
    """The arguments of :func:`valid_examples`."""
    _check_example_args(op, opset, dtype, index_dtype, variant, max_elements)
    _check_classes(max_elements, axis_length, index_class, VALID_INDEX_CLASSES)
    if index_class is not None and isinstance(axis_length, str) and _empty_axis(axis_length):
        what = f"possible with axis_length={axis_length!r}: no index is valid on an empty axis"
        _bad(what, f"None or an axis_length other than {axis_length!r}", index_class=index_class)


def _check_invalid_example_args(
    op: object,
    opset: object,
    clause: object,
    dtype: object,
    index_dtype: object,
    variant: object,
    max_elements: object,
    axis_length: object,
    index_class: object,
) -> None:
    """The arguments of :func:`invalid_examples`."""
    _check_example_args(op, opset, dtype, index_dtype, variant, max_elements, clause)
    _check_classes(max_elements, axis_length, index_class, INVALID_INDEX_CLASSES)
    if axis_length is not None and clause in _AXISLESS:
        what = f"possible with clause={clause!r}: its inputs have no gathered axis"
        _bad(what, f"None (or a clause other than {_listing(_AXISLESS)})", axis_length=axis_length)
    if index_class is None:
        return
    bound = INVALID_CLAUSES["Gather"][0]  # index-out-of-range: the one that puts an index there
    if clause not in (None, bound):
        what = f"possible with clause={clause!r}: only {bound!r} puts an index out of range"
        _bad(what, f"None (or clause={bound!r})", index_class=index_class)
    if index_class in _INT64_ONLY and index_dtype not in (None, "int64"):
        what = f"possible with index_dtype={index_dtype!r}: it needs int64 indices"
        expected = f"{INVALID_INDEX_CLASSES[0]!r} (or index_dtype int64 or None)"
        _bad(what, expected, index_class=index_class)


def _empty_axis(axis_length: str) -> bool:
    """Whether an axis of this class has no element."""
    return AXIS_LENGTH_RANGES[axis_length][1] == 0


def _checked_by(check: Callable[..., None]):
    """Run ``check`` on a strategy's arguments when the strategy is built: a
    composite's body runs only when drawn. ``check`` takes the arguments by name."""

    def decorate(strategy):
        signature = inspect.signature(strategy)

        @functools.wraps(strategy)
        def build(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            check(**bound.arguments)
            return strategy(*args, **kwargs)

        return build

    return decorate


@dataclass(frozen=True, eq=False)
class Example(Case):
    """One input to run: a :class:`~conformance.cases.case.Case` (op, opset,
    axis, data, indices) plus the model variant to run it in."""

    variant: str = "static"

    def as_case(self, case_id: str = "example", source: Source | None = None) -> Example:
        """The example under an id (and source) of its own, as the run engine records it."""
        return replace(self, id=case_id, base_id=case_id, source=source or self.source)

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
    """(operator, opset) pairs this project covers; opsets shrink toward the newest.

    Raises InvalidArgument, when called, unless ``op`` is None or an operator of
    the spec."""
    _check_op_opset(op, None)
    ops = [op] if op else list(OPSETS)
    return st.sampled_from([(o, v) for o in ops for v in reversed(OPSETS[o])])


def data_dtypes(op: str, opset: int) -> st.SearchStrategy[str]:
    """Names of the data dtypes T allows at this opset (read from onnx.defs).

    Raises InvalidArgument, when called, unless ``op`` is an operator of the
    spec and ``opset`` one of its opsets."""
    _check_op_opset(op, opset, exact=True)
    return st.sampled_from(op_spec(op, opset).data_dtypes)


def index_dtypes(op: str, opset: int) -> st.SearchStrategy[str]:
    """int64 or int32 (Tind), shrinking toward int64.

    Raises InvalidArgument, when called, unless ``op`` is an operator of the
    spec and ``opset`` one of its opsets."""
    _check_op_opset(op, opset, exact=True)
    return st.sampled_from(sorted(op_spec(op, opset).index_dtypes, reverse=True))


def variants() -> st.SearchStrategy[str]:
    """The five model variants of :mod:`conformance.engine.models`."""
    return st.sampled_from(models.VARIANTS)


# -- shapes -------------------------------------------------------------------
def _check_shapes_args(
    min_rank: object, max_rank: object, max_elements: object, empty: object, max_dim: object
) -> None:
    _check_int("a rank a shape can have", 0, MAX_SHAPE_RANK, min_rank=min_rank)
    low = cast(int, min_rank)  # checked above
    _check_int(f"a rank from min_rank={min_rank} up", low, MAX_SHAPE_RANK, max_rank=max_rank)
    _check_max_elements(max_elements)
    _check_bool("a bool, or None to draw it", or_none=True, empty=empty)
    if empty and min_rank == 0:
        what = f"possible with min_rank={min_rank}"
        _bad(what, f"{False} or {None} (a scalar has no dimension to empty)", empty=empty)
    _check_int("a positive bound on dimensions", 1, max_dim=max_dim)


@_checked_by(_check_shapes_args)
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

    Raises InvalidArgument, when called, unless ``0 <= min_rank <= max_rank <=
    MAX_SHAPE_RANK``, ``max_elements`` is None or a positive int, ``max_dim`` a
    positive int and ``empty`` None or a bool (and not True with ``min_rank=0``).
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
    """Valid axes for a rank, negative ones included; shrinks toward 0.

    Raises InvalidArgument, when called, unless ``rank`` is a positive int."""
    _check_int("the rank of a shape with an axis", 1, rank=rank)
    return st.integers(-rank, rank - 1)


def _invalid_axes(rank: int) -> st.SearchStrategy[int]:
    """Axes outside [-r, r-1]: just outside first, then far outside."""
    return st.one_of(
        st.integers(rank, rank + 3),
        st.integers(-rank - 3, -rank - 1),
        st.sampled_from([2**31 - 1, -(2**31), 2**63 - 1, -(2**63)]),
    )


OFF_AXIS = ("equal", "smaller", "larger")  # ge_indices_shapes' off_axis


def _off_axis_candidates(data_shape: tuple[int, ...], axis: int, off_axis: str) -> list[int]:
    """The dimensions off the axis (``axis % rank``) that can be ``off_axis``."""
    rank = len(data_shape)
    others = [d for d in range(rank) if d != axis % rank]
    return [d for d in others if off_axis == "larger" or data_shape[d] > 0]


def _check_ge_indices_shapes_args(
    data_shape: object, axis: object, off_axis: object, max_elements: object
) -> None:
    _check_shape(data_shape=data_shape)
    shape = cast(tuple[int, ...], data_shape)  # checked above (or a list of ints)
    rank = len(shape)
    if not rank:
        what = "a shape with an axis to gather along"
        _bad(what, f"a tuple of 1 to {MAX_SHAPE_RANK} ints >= 0", data_shape=data_shape)
    _check_int(f"an axis of data_shape={data_shape!r}", -rank, rank - 1, axis=axis)
    _check_choice(OFF_AXIS, "a relation to the data's shape", off_axis=off_axis)
    if off_axis != "equal" and not _off_axis_candidates(shape, cast(int, axis), str(off_axis)):
        what = f"possible for data_shape={data_shape!r} and axis={axis!r}"
        expected = f"{OFF_AXIS[0]!r} (no dimension off the axis can be {off_axis})"
        _bad(what, expected, off_axis=off_axis)
    _check_max_elements(max_elements)


@_checked_by(_check_ge_indices_shapes_args)
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
    or ``larger`` (at least one dim: invalid).

    Raises InvalidArgument, when called, unless ``data_shape`` is a shape of
    rank 1 or more, ``axis`` one of its axes, ``off_axis`` one of ``equal``,
    ``smaller`` and ``larger`` that some dimension off the axis allows
    (``larger`` needs rank 2, ``smaller`` a nonzero dimension off the axis) and
    ``max_elements`` None or a positive int."""
    cap = _cap(max_elements)
    rank = len(data_shape)
    axis %= rank
    others = [d for d in range(rank) if d != axis]
    shape = list(data_shape)
    if off_axis != "equal":
        chosen = draw(st.sampled_from(_off_axis_candidates(data_shape, axis, off_axis)))
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


def _check_dtype_name(dtype_name: object) -> None:
    _check_dtype(dtype_name=dtype_name)


@_checked_by(_check_dtype_name)
@cache
def special_values(dtype_name: str) -> tuple:
    """The edge values of a dtype, as elements of its NumPy array type.

    Raises InvalidArgument unless ``dtype_name`` is a name of the dtype table."""
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


def _check_tensors_args(dtype_name: object, shape: object) -> None:
    _check_dtype_name(dtype_name)
    _check_shape(shape=shape)


@_checked_by(_check_tensors_args)
@st.composite
def tensors(draw, dtype_name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An array of ``dtype_name`` and ``shape`` over the dtype's full range:
    random bits for numbers, plus up to eight edge values (extremes, NaN
    payloads, signalling NaNs, ±inf, -0.0, subnormals; unicode, markup and empty
    strings) at drawn positions. Shrinks toward all-zero bits.

    Numbers are drawn as one block of bytes, not element by element: that keeps
    a 256-element tensor as cheap to draw as a scalar.

    Raises InvalidArgument, when called, unless ``dtype_name`` is a name of the
    dtype table and ``shape`` a tuple of at most ``MAX_SHAPE_RANK`` ints >= 0.
    """
    dtype = dtypes.by_name(dtype_name)
    size = math.prod(shape)
    if dtype.kind == "string":
        text = st.one_of(st.text(max_size=MAX_STRING), st.sampled_from(special_values("string")))
        array = np.empty(size, dtype=object)
        array[:] = draw(st.lists(text, min_size=size, max_size=size))
        return array.reshape(shape)
    if dtype.kind == "bool":
        raw = _block(draw, size)
        return (np.frombuffer(raw, dtype=np.uint8) & 1).astype(bool).reshape(shape)
    unit = _unsigned(dtype) if dtype.kind in ("float", "complex") else dtype.numpy
    raw = _block(draw, size * dtype.numpy.itemsize)
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
    return np.frombuffer(_block(draw, count * 8), dtype=np.uint64)


# Bytes of a tensor Hypothesis draws one by one (and shrinks one by one, toward
# zero); a longer block comes from a NumPy generator seeded by one drawn
# integer (seed 0: all zero bytes, where shrinking goes). Hypothesis draws a
# byte string byte by byte (~2 us each, and its choice sequence has a size
# limit): a 4 KiB block cost ~8 ms to draw, a 32 MiB one at the largest cap
# seconds or an overrun. Shrinking makes the tensor smaller first, and once it
# is under this size every byte shrinks on its own again.
DRAWN_BYTES = 1024


def _block(draw, size: int) -> bytes:
    """``size`` bytes: drawn one by one up to :data:`DRAWN_BYTES`, else from a drawn seed."""
    if size <= DRAWN_BYTES:
        return draw(st.binary(min_size=size, max_size=size))
    seeded = draw(st.integers(0, 2**64 - 1))
    return bytes(size) if seeded == 0 else np.random.default_rng(seeded).bytes(size)


def _check_indices_in_range_args(
    dtype_name: object, shape: object, size: object, negative: object
) -> None:
    _check_index_args(dtype_name, shape, size)
    if size == 0 and math.prod(cast(tuple[int, ...], shape)) != 0:  # checked above
        what = f"possible with shape={shape!r}: no index is valid on an empty axis"
        _bad(what, f"an int >= {size + 1} (or a shape with a 0 in it)", size=size)
    _check_bool("a bool (True: allow negatives)", negative=negative)


@_checked_by(_check_indices_in_range_args)
@st.composite
def indices_in_range(
    draw, dtype_name: str, shape: tuple[int, ...], size: int, negative: bool = True
) -> np.ndarray:
    """Indices valid on an axis of ``size``: in [-size, size-1] (or [0, size-1]
    without ``negative``), bounds written in often; values shrink toward 0.
    An axis of size 0 admits only empty indices.

    Raises InvalidArgument, when called, unless ``dtype_name`` is an integer
    dtype, ``shape`` a shape, ``size`` an int >= 0 (>= 1 unless the shape is
    empty) and ``negative`` a bool."""
    count = math.prod(shape)
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


def _check_indices_out_of_range_args(dtype_name: object, shape: object, size: object) -> None:
    _check_index_args(dtype_name, shape, size)
    if not math.prod(cast(tuple[int, ...], shape)):  # checked above, as the others
        what = "a shape with an element to put the bad index in"
        _bad(what, "a tuple of ints, each >= 1", shape=shape)
    low, high = _index_range(cast(str, dtype_name))
    axis_size = cast(int, size)
    if -axis_size - 1 < low and axis_size > high:
        what = f"a size that leaves {dtype_name} ([{low}, {high}]) an index out of range"
        _bad(what, f"an int from 0 to {high}", size=size)


@_checked_by(_check_indices_out_of_range_args)
@st.composite
def indices_out_of_range(draw, dtype_name: str, shape: tuple[int, ...], size: int) -> np.ndarray:
    """Non-empty indices with at least one value outside [-size, size-1]: just
    past either bound, far past it, or at the extremes of the index dtype (int32
    limits, beyond int32 for int64). The others are in range where there is a range.

    Raises InvalidArgument, when called, unless ``dtype_name`` is an integer
    dtype, ``shape`` a shape with at least one element and ``size`` an int >= 0
    that leaves the dtype a value outside [-size, size-1]."""
    count = math.prod(shape)
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


def _axis_shape(draw, min_rank: int, axis_length: str, cap: int) -> tuple[tuple[int, ...], int]:
    """A data shape and an axis of it whose length is in the class ``axis_length``
    (at most ``cap``, which the argument checks made room for); the other
    dimensions are 1 to 8 (1 half the time), within what the cap leaves, and
    shrink toward 1."""
    low, high = AXIS_LENGTH_RANGES[axis_length]
    rank = draw(st.integers(min_rank, MAX_RANK))
    axis = draw(axes(rank))
    top = cap if high is None else min(high, cap)
    # An open class (>=256) is drawn near its low end mostly: up to the cap (4M
    # elements at most) every draw would make a tensor of megabytes.
    length = draw(st.one_of(st.integers(low, min(top, 4 * max(low, 1))), st.integers(low, top)))
    budget = cap // max(1, length)
    dims = []
    for position in range(rank):
        if position == axis % rank:
            dims.append(length)
            continue
        # Half of them 1: eight dimensions of up to 8 each made tensors of a
        # million elements wherever the cap allowed (4M at most).
        dim = draw(st.one_of(st.just(1), st.integers(1, max(1, min(8, budget)))))
        budget = max(1, budget // dim)
        dims.append(dim)
    return tuple(dims), axis


def _data_shape(
    draw, min_rank: int, axis_length: str | None, cap: int, empty: bool | None = None
) -> tuple[tuple[int, ...], int]:
    """The data's shape and the axis, in the class ``axis_length`` when given."""
    if axis_length is not None:
        return _axis_shape(draw, min_rank, axis_length, cap)
    data_shape = draw(shapes(min_rank=min_rank, max_elements=cap, empty=empty))
    return data_shape, draw(axes(len(data_shape)))


def _filled_within(index_shape: tuple[int, ...], axis: int, cap: int) -> tuple[int, ...]:
    """GatherElements indices made non-empty (:func:`_filled`), the axis cut so
    that they stay within ``cap`` elements (off the axis they stay within data's)."""
    shape = list(_filled(index_shape))
    axis %= len(shape)
    rest = math.prod(shape[:axis] + shape[axis + 1 :])
    shape[axis] = min(shape[axis], max(1, cap // rest))
    return tuple(shape)


@_checked_by(_check_valid_example_args)
@st.composite
def valid_examples(
    draw,
    op: str | None = None,
    opset: int | None = None,
    dtype: str | None = None,
    index_dtype: str | None = None,
    variant: str | None = None,
    max_elements: int | None = None,
    axis_length: str | None = None,
    index_class: str | None = None,
) -> Example:
    """Inputs the spec accepts (the oracle gives an output). Fix any argument
    to narrow the draw; the rest varies.

    ``axis_length`` (a key of :data:`AXIS_LENGTH_RANGES`) puts the length of
    the gathered axis of data in that class, within ``max_elements``.
    ``index_class`` asks for non-empty indices that are all in [0, s-1]
    (``"in_range"``: no negative index) or that hold at least one index in
    [-s, -1] (``"negative"``), for an axis of size ``s``.

    Raises InvalidArgument, when called, unless ``op`` is None or an operator,
    ``opset`` None or an opset of it (of either operator when ``op`` is None),
    ``dtype`` and ``index_dtype`` None or dtypes every operator and opset that
    can be drawn allows (``bfloat16`` only at opset 13), ``variant`` None or a
    model variant, ``max_elements`` None or a positive int, ``axis_length``
    None or a class whose shortest axis fits the cap (``">=256"`` needs a cap of
    256), ``index_class`` None or one of :data:`VALID_INDEX_CLASSES`, and not
    an index class with ``axis_length="0"`` (no index is valid on an empty axis)."""
    cap = _cap(max_elements)
    op, opset = _op_opset(draw, op, opset)
    dtype = _pick(draw, dtype, data_dtypes(op, opset))
    index_dtype = _pick(draw, index_dtype, index_dtypes(op, opset))
    # An index class needs an index: no empty dimension (in data, so that
    # GatherElements indices, no larger off the axis, can have one either).
    nonempty = False if index_class else None
    data_shape, axis = _data_shape(draw, 1, axis_length, cap, nonempty)
    rank = len(data_shape)
    size = data_shape[axis]
    if OPERATORS[op].indexing != "element":
        index_shape = draw(
            shapes(min_rank=0, max_rank=MAX_GATHER_INDICES_RANK, max_elements=cap, empty=nonempty)
        )
    else:
        can_be_smaller = any(data_shape[d] > 0 for d in range(rank) if d != axis % rank)
        off_axis = "smaller" if can_be_smaller and draw(st.integers(0, 5)) == 5 else "equal"
        index_shape = draw(ge_indices_shapes(data_shape, axis, off_axis, cap))
        if index_class:
            index_shape = _filled_within(index_shape, axis, cap)
    if size == 0:
        index_shape = _emptied(op, index_shape, axis)
    negative = index_class != VALID_INDEX_CLASSES[0]  # "in_range": none negative
    indices = draw(indices_in_range(index_dtype, index_shape, size, negative))
    if index_class == VALID_INDEX_CLASSES[1]:
        indices = _overwrite_one(draw, indices, st.integers(-size, -1))
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
    if OPERATORS[op].indexing != "element":  # any dimension will do
        return (0, *index_shape[1:]) if index_shape else (0,)
    shape = list(index_shape)
    shape[axis % len(shape)] = 0
    return tuple(shape)


def _op_opset(draw, op: str | None, opset: int | None) -> tuple[str, int]:
    """The operator and opset asked for, drawn where not given."""
    if op and opset:
        return op, opset
    return draw(op_opsets(op).filter(lambda pair: opset is None or pair[1] == opset))


@_checked_by(_check_invalid_example_args)
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
    axis_length: str | None = None,
    index_class: str | None = None,
) -> Example:
    """Inputs that break ``clause`` (a decision id from :data:`INVALID_CLAUSES`,
    drawn when not given). The oracle checks clauses in a fixed order (dtypes,
    data rank, shape rules, axis, index bounds) and the other parts are drawn
    valid, so it reports exactly that clause.

    Raises InvalidArgument, when called, on the arguments
    :func:`valid_examples` refuses, with two differences: ``clause`` must be None
    or a clause every operator and opset that can be drawn can break (GatherElements
    only: ``rank-mismatch``, ``ge-indices-larger-off-axis``; ``data-dtype`` needs
    an opset whose T lacks a dtype), and with ``clause='data-dtype'`` the
    ``dtype`` must be one T refuses, with ``clause='indices-dtype'`` the
    ``index_dtype`` an integer dtype outside Tind.

    A clause drawn (``clause`` None) is one the other arguments leave
    breakable: not ``data-dtype`` when ``dtype`` is given (it must then be one
    T allows), nor ``indices-dtype`` when ``index_dtype`` is, nor a clause
    without a gathered axis (``data-rank-zero``, ``axis-out-of-range``) when
    ``axis_length`` is.

    ``axis_length`` puts the gathered axis's length in that class, as in
    :func:`valid_examples` (refused with a clause whose inputs have no axis).
    ``index_class`` (one of :data:`INVALID_INDEX_CLASSES`) breaks
    ``index-out-of-range`` (the clause must be None or that) with at least one
    index outside [-s, s-1] (``"out_of_range"``), one outside int32's range
    (``"beyond_int32"``) or one equal to -2**63 or 2**63-1
    (``"int64_extremes"``); the last two draw int64 indices, and refuse another
    ``index_dtype``."""
    cap = _cap(max_elements)
    op, opset = _op_opset(draw, op, opset)
    spec = op_spec(op, opset)
    wrong_data_dtypes = _wrong_data_dtypes(spec)
    if index_class is not None:
        clause = INVALID_CLAUSES[op][0]  # index-out-of-range
        if index_class in _INT64_ONLY:
            index_dtype = "int64"
    if clause is None:
        left_out = set(_AXISLESS if axis_length is not None else ())
        left_out |= {"data-dtype"} if dtype is not None else set()
        left_out |= {"indices-dtype"} if index_dtype is not None else set()
        clause = draw(st.sampled_from([c for c in _breakable(spec) if c not in left_out]))
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
        index_shape = (draw(st.integers(0, 2)),) if OPERATORS[op].indexing == "element" else ()
        indices = _some_indices(draw, index_dtype, index_shape, 1)
        data = draw(tensors(dtype, ()))
        return Example(op, opset, _axis_attribute(draw, 0), data, indices, variant)

    # Larger off the axis needs a dimension off the axis: rank 2 at least.
    min_rank = 2 if clause == "ge-indices-larger-off-axis" else 1
    data_shape, axis = _data_shape(draw, min_rank, axis_length, cap)
    rank = len(data_shape)
    if OPERATORS[op].indexing == "element" and clause == "index-out-of-range":
        # The bad index needs an element, and indices may not exceed data off
        # the axis: no zero-size dimension off the axis.
        data_shape = tuple(d if k == axis % rank else max(1, d) for k, d in enumerate(data_shape))
    size = data_shape[axis]
    if OPERATORS[op].indexing != "element":
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
        if index_class in _INT64_ONLY:
            indices = _overwrite_one(draw, indices, _beyond_int32(index_class))
    else:
        indices = _some_indices(draw, index_dtype, index_shape, size)
    if clause == "axis-out-of-range":
        axis = draw(_invalid_axes(rank))
    data = draw(tensors(dtype, data_shape))
    return Example(op, opset, _axis_attribute(draw, axis), data, indices, variant)


def _beyond_int32(index_class: str) -> st.SearchStrategy[int]:
    """int64 values outside int32's range (all of them out of range on any
    axis the element cap allows): anywhere, or just beyond; or the extremes."""
    if index_class == _INT64_ONLY[1]:  # int64_extremes
        return st.sampled_from(_INT64)
    return st.one_of(
        st.integers(_INT32[1] + 1, _INT64[1]),
        st.integers(_INT64[0], _INT32[0] - 1),
        st.sampled_from([_INT32[1] + 1, _INT32[0] - 1]),
    )


def _overwrite_one(draw, indices: np.ndarray, values: st.SearchStrategy) -> np.ndarray:
    """``indices`` (non-empty) with one drawn position set to a drawn value."""
    flat = indices.reshape(-1).copy()
    flat[draw(st.integers(0, flat.size - 1))] = draw(values)
    return flat.reshape(indices.shape)


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
    """Valid and invalid inputs, valid ones drawn more often (and simpler).

    Raises InvalidArgument, when called, on the arguments :func:`valid_examples`
    refuses."""
    return st.one_of(
        valid_examples(op=op, opset=opset, max_elements=max_elements),
        valid_examples(op=op, opset=opset, max_elements=max_elements),
        invalid_examples(op=op, opset=opset, max_elements=max_elements),
    )
