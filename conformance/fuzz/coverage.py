"""What a fuzz campaign reached, and where to send it next.

A campaign counts every example it ran (:meth:`Coverage.add`) in four
tables, each a count per cell:

- ``features``: (op, feature) for each input feature of
  :mod:`conformance.tables.features` the example has;
- ``dtypes``: (op, variant, data dtype);
- ``axis_lengths``: (op, axis-length class) of the gathered axis of data
  (:data:`AXIS_LENGTHS`);
- ``index_classes``: (op, index class) for each class its indices reach
  (:data:`INDEX_CLASSES`).

Like the features, the classes are computed from the input itself (its op,
axis, data and indices), never from how it was drawn, so a shrunk example, a
case file or another tool's input is counted the same way.

The spec makes some cells meaningless (a feature an operator cannot have, an
axis longer than the element cap allows): :func:`meaningful_cells` says which
cells can be reached, :meth:`Coverage.cold` which of those were not.
``findings.json`` holds the counts (:meth:`Coverage.to_json`, the format is
there); the report draws them as a heat map.

Steering: a campaign builds its rounds with :func:`next_key` (the round's
operator, opset, variant and dtypes, weighted toward cold (op, variant, dtype)
cells) and :func:`round_strategy` (its examples, weighted toward cold
axis-length and index-class cells), so that the cold cells are reached early.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
from hypothesis import strategies as st

from conformance.engine import models
from conformance.fuzz import strategies
from conformance.fuzz.strategies import Example
from conformance.tables import dtypes
from conformance.tables.features import FEATURES, OWN, features
from conformance.tables.operators import OPERATORS
from conformance.tables.spec import OPSETS, op_spec

FORMAT = 1  # of the findings.json ``coverage`` field

# Axis-length classes: the size ``s`` of the gathered axis of data (the axis
# attribute, absent meaning 0, taken modulo the rank; GatherND's: data's
# dimension b = batch_dims, the first its index tuples index). An example
# whose attribute is outside its range ([-r, r-1]; GatherND's [0, min(q, r) -
# 1]), or whose data has rank 0, has no gathered axis: it counts in no
# axis-length cell. The bounds are strategies.AXIS_LENGTH_RANGES, which
# draws them: 0 (empty), 1, 2-63, 64-255 and 256 or more elements.
AXIS_LENGTHS: tuple[str, ...] = tuple(strategies.AXIS_LENGTH_RANGES)

# Index classes, decided from the index values (integer indices only) and,
# for the first three, the size ``s`` of the gathered axis (GatherND: each
# component of a tuple against the size of the dimension it indexes; none of
# those without a gathered axis, or with tuples data has no room for). An
# example is in every class one of its index values puts it in, so in several
# at once, or in none (empty indices):
INDEX_CLASSES: dict[str, str] = {
    "in_range": "some index is in [0, s-1]",
    "negative": "some index is in [-s, -1] (a negative index the runtime must wrap)",
    "out_of_range": "some index is outside [-s, s-1]",
    "beyond_int32": "some index is outside int32's range [-2**31, 2**31-1]",
    "int64_extremes": "some index is -2**63 or 2**63-1",
}
assert tuple(INDEX_CLASSES) == strategies.VALID_INDEX_CLASSES + strategies.INVALID_INDEX_CLASSES
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)

# Features only one operator can have (tables.features.OWN): features()
# computes them for that operator alone (Gather copies blocks; only
# GatherElements indices have a shape of their own off and on the axis; only
# GatherND has batch dimensions and index tuples).
# Every other feature can occur with either, valid or not.
_FEATURE_OPS: dict[str, tuple[str, ...]] = {name: (owner.name,) for name, (owner, _) in OWN.items()}
# Features that need more than one element in data: a block of two elements
# after the axis. (An empty tensor, one element: any cap allows.)
_FEATURE_ELEMENTS: dict[str, int] = {"block_copy": 2}

# The tables, each with the names of its key's parts, in findings.json order.
TABLES: dict[str, tuple[str, ...]] = {
    "features": ("op", "feature"),
    "dtypes": ("op", "variant", "dtype"),
    "axis_lengths": ("op", "axis_length"),
    "index_classes": ("op", "index_class"),
}


# Every value of each key part, in the order a report shows them.
VALUES: dict[str, tuple[str, ...]] = {
    "op": tuple(OPSETS),
    "variant": models.VARIANTS,
    "dtype": dtypes.NAMES,
    "feature": tuple(FEATURES),
    "axis_length": AXIS_LENGTHS,
    "index_class": tuple(INDEX_CLASSES),
}


def axis_length(example) -> str | None:
    """The axis-length class of the gathered axis of data (GatherND: its
    dimension b), or None when the input has none (rank-0 data, an attribute
    outside its range)."""
    size = _axis_size(example)
    if size is None:
        return None
    for name, (low, high) in strategies.AXIS_LENGTH_RANGES.items():
        if low <= size and (high is None or size <= high):
            return name
    raise AssertionError(f"no axis-length class holds {size}")  # the ranges cover 0 and up


def index_classes(example) -> tuple[str, ...]:
    """The index classes the example's index values reach, in
    :data:`INDEX_CLASSES` order (see there how each is decided)."""
    indices = example.indices
    if not indices.size or indices.dtype.kind not in "iu":
        return ()
    # Whole-array comparisons with Python ints (exact for int64 and uint64
    # alike): this runs for every example, several times, and np.unique with
    # a set of Python ints cost half a millisecond each time.
    flat = indices.reshape(-1)
    low, high = int(flat.min()), int(flat.max())
    signed = indices.dtype.kind == "i"
    found = set()
    sizes = _index_sizes(example) or ()
    # GatherND: each component of a tuple against its own dimension.
    columns = list(flat.reshape(-1, len(sizes)).T) if len(sizes) > 1 else [flat][: len(sizes)]
    for size, column in zip(sizes, columns, strict=True):
        least, most = (low, high) if len(sizes) == 1 else (int(column.min()), int(column.max()))
        if least < size and bool(np.any((column >= 0) & (column < size))):
            found.add("in_range")
        if signed and least < 0 and bool(np.any((column < 0) & (column >= -size))):
            found.add("negative")
        if least < -size or most > size - 1:
            found.add("out_of_range")
    if low < _INT32[0] or high > _INT32[1]:
        found.add("beyond_int32")
    if (low == _INT64[0] and signed) or (high >= _INT64[1] and bool(np.any(flat == _INT64[1]))):
        found.add("int64_extremes")
    return tuple(name for name in INDEX_CLASSES if name in found)


def _axis_size(example) -> int | None:
    """The size of the gathered axis (GatherND: data's dimension b), or None."""
    operator = OPERATORS[example.op]
    rank = example.data.ndim
    value = operator.value(example.axis)
    shapes = operator.shapes(example.data.shape, example.indices.shape)
    if rank == 0 or value not in operator.attribute_range(shapes):
        return None
    return int(example.data.shape[value % rank])


def _index_sizes(example) -> tuple[int, ...] | None:
    """The sizes an index value is bounded by (GatherND: one per component of
    a tuple), or None where there is no gathered axis."""
    if _axis_size(example) is None:
        return None
    operator = OPERATORS[example.op]
    return operator.index_sizes(example.data.shape, example.indices.shape, example.axis)


def cells_of(example) -> dict[str, list[tuple]]:
    """The cells one example counts in, by table."""
    op = example.op
    length = axis_length(example)
    return {
        "features": [(op, name) for name in features(example)],
        "dtypes": [(op, example.variant, dtypes.name_of(example.data))],
        "axis_lengths": [(op, length)] if length is not None else [],
        "index_classes": [(op, name) for name in index_classes(example)],
    }


def op_dtypes(op: str) -> tuple[str, ...]:
    """The data dtypes some opset of ``op`` allows (tables.spec), in table order."""
    allowed = {d for opset in OPSETS[op] for d in op_spec(op, opset).data_dtypes}
    return tuple(d for d in dtypes.NAMES if d in allowed)


def meaningful_cells(max_elements: int) -> dict[str, tuple[tuple, ...]]:
    """The cells the spec makes meaningful, by table, for examples of at most
    ``max_elements`` elements per tensor: per operator, the features it can
    have (and that fit the cap); each variant with each dtype some opset of it
    allows; the axis-length classes whose shortest axis fits the cap; every
    index class (the last three only with invalid, int64 indices)."""
    lengths = [n for n, (low, _) in strategies.AXIS_LENGTH_RANGES.items() if low <= max_elements]
    return {
        "features": tuple(
            (op, name)
            for op in strategies.OPSETS  # the operators drawn
            for name in FEATURES
            if op in _FEATURE_OPS.get(name, (op,))
            and _FEATURE_ELEMENTS.get(name, 0) <= max_elements
        ),
        "dtypes": tuple(
            (op, variant, dtype)
            for op in strategies.OPSETS
            for variant in models.VARIANTS
            for dtype in op_dtypes(op)
        ),
        "axis_lengths": tuple((op, name) for op in strategies.OPSETS for name in lengths),
        "index_classes": tuple((op, name) for op in strategies.OPSETS for name in INDEX_CLASSES),
    }


class Coverage:
    """Counts of the examples a campaign ran, per cell of each table."""

    meaningful_cells = staticmethod(meaningful_cells)

    def __init__(self, max_elements: int = strategies.DEFAULT_MAX_ELEMENTS) -> None:
        self.max_elements = max_elements
        self.examples = 0
        self.counts: dict[str, Counter] = {table: Counter() for table in TABLES}
        self.meaningful = meaningful_cells(max_elements)

    def add(self, example) -> None:
        """Count one example in every cell it reaches."""
        self.examples += 1
        for table, cells in cells_of(example).items():
            self.counts[table].update(cells)

    def count(self, table: str, cell: tuple) -> int:
        return self.counts[table][tuple(cell)]

    def cold(self) -> list[tuple[str, tuple]]:
        """The meaningful cells no example reached, as (table, cell)."""
        return [
            (table, cell)
            for table, cells in self.meaningful.items()
            for cell in cells
            if not self.counts[table][cell]
        ]

    def reached(self) -> int:
        """How many meaningful cells some example reached."""
        return sum(len(cells) for cells in self.meaningful.values()) - len(self.cold())

    def to_json(self) -> dict:
        """The findings.json ``coverage`` field::

            {"format": 1, "max_elements": 256, "examples": N,
             "reached": R, "meaningful": M,      # over every table
             "tables": {
               "<table>": {"keys": ["op", "variant", "dtype"],
                           "values": {"op": [...], "variant": [...], "dtype": [...]},
                           "reached": r, "meaningful": m,
                           "cells": [{"key": ["Gather", "static", "float32"],
                                      "count": 12, "meaningful": true}, ...]}}}

        Tables: ``features``, ``dtypes``, ``axis_lengths``, ``index_classes``.
        ``cells`` lists every meaningful cell (count 0 included: a cold one),
        then any other cell an example reached (``meaningful`` false); ``values``
        lists each key part's values in the order to show them (every value
        this version knows, then any other a cell holds): a combination of
        them that ``cells`` lacks is neither meaningful nor reached."""
        tables = {}
        for table, keys in TABLES.items():
            meaningful = self.meaningful[table]
            counts = self.counts[table]
            others = sorted(set(counts) - set(meaningful), key=_sort_key)
            cells: list[dict[str, Any]] = [
                {"key": list(cell), "count": counts[cell], "meaningful": cell in meaningful}
                for cell in (*meaningful, *others)
            ]
            values = {
                key: list(dict.fromkeys([*VALUES[key], *(cell["key"][i] for cell in cells)]))
                for i, key in enumerate(keys)
            }
            tables[table] = {
                "keys": list(keys),
                "values": values,
                "reached": sum(1 for cell in meaningful if counts[cell]),
                "meaningful": len(meaningful),
                "cells": cells,
            }
        return {
            "format": FORMAT,
            "max_elements": self.max_elements,
            "examples": self.examples,
            "reached": sum(t["reached"] for t in tables.values()),
            "meaningful": sum(t["meaningful"] for t in tables.values()),
            "tables": tables,
        }

    @classmethod
    def from_json(cls, content: dict) -> Coverage:
        """The coverage :meth:`to_json` wrote (its meaningful cells are this
        version's, for the cap it names)."""
        coverage = cls(int(content["max_elements"]))
        coverage.examples = int(content.get("examples", 0))
        for table, held in content.get("tables", {}).items():
            if table in coverage.counts:
                for cell in held.get("cells", []):
                    if cell.get("count"):
                        coverage.counts[table][tuple(cell["key"])] += int(cell["count"])
        return coverage


def _sort_key(cell: tuple) -> tuple:
    return tuple(map(str, cell))


# -- steering ---------------------------------------------------------------------------
class RoundKey(NamedTuple):
    """What the valid examples of one round share, so that they share one
    packed model per runtime."""

    op: str
    opset: int
    variant: str
    dtype: str
    index_dtype: str


def _weight(count: int) -> float:
    """A cell's pull: a cold cell 1, a cell reached n times 1/(1+n)**2. Squared:
    with 1/(1+n), the last few cold cells of the 160 (op, variant, dtype) ones
    were outweighed by the many reached only once or twice (invalid examples
    reach cells in passing); a simulated campaign took 3 600 to 4 300 examples
    to reach every cell at the default cap, squared 3 000 to 3 700."""
    return 1 / (1 + count) ** 2


def next_key(coverage: Coverage, rng: random.Random) -> RoundKey:
    """The next round's key: an (op, variant, dtype) cell drawn with weight
    1/(1+count)**2 among the meaningful ones (a cold cell pulls most), an opset of
    the operator that allows the dtype and an index dtype it allows, both
    drawn uniformly."""
    cells = coverage.meaningful["dtypes"]
    weights = [_weight(coverage.counts["dtypes"][cell]) for cell in cells]
    op, variant, dtype = rng.choices(cells, weights=weights)[0]
    opset = rng.choice([v for v in OPSETS[op] if dtype in op_spec(op, v).data_dtypes])
    index_dtype = rng.choice(op_spec(op, opset).index_dtypes)
    return RoundKey(op, opset, variant, dtype, index_dtype)


# The share of a round's examples that are valid at the round's key; the
# rest are invalid (the same op, opset and variant).
VALID_SHARE = 0.75


def _goals(
    coverage: Coverage, op: str, table: str, names: Iterable[str]
) -> list[tuple[str | None, float]]:
    """(goal, weight) pairs: None (no goal: the strategy's own distribution)
    first, with as much weight as all the cells together, then each
    meaningful cell of ``table`` named in ``names`` with its :func:`_weight`."""
    meaningful = set(coverage.meaningful[table])
    cells = [
        (name, _weight(coverage.counts[table][op, name]))
        for name in names
        if (op, name) in meaningful
    ]
    return [(None, sum(w for _, w in cells) or 1.0), *cells]


class _Weighted(NamedTuple):
    """Goals and their weights, for ``random.Random.choices``."""

    goals: list
    weights: list[float]

    def pick(self, rng: random.Random):
        return rng.choices(self.goals, weights=self.weights)[0]


def _weighted(goals: Sequence[tuple[object, float]]) -> _Weighted:
    return _Weighted([goal for goal, _ in goals], [weight for _, weight in goals])


def round_strategy(
    coverage: Coverage, key: RoundKey, max_elements: int
) -> st.SearchStrategy[Example]:
    """The examples of one round at ``key``: about 3 in 4 valid at exactly
    that key, the others invalid with the same op, opset and variant (their
    dtypes and the clause drawn). Each example is sent toward a cold cell:
    an axis-length class and an index class (valid ones: in_range, negative;
    invalid ones: out_of_range, beyond_int32, int64_extremes, which break
    index-out-of-range), each drawn with weight 1/(1+count)**2 beside "no goal"
    (as much weight as the cells together, so that half the draws keep the
    strategies' own variety); an invalid example's dtype likewise among the
    (op, variant, dtype) cells.

    Why weights, not ``hypothesis.target()``: the weights are fixed when the
    round is built, from the counts so far, so every round (a fresh seed, 64
    draws) pulls toward the cells still cold, predictably; target() learns
    within one test run only, from scratch each round, and climbs a score
    rather than spreading over cells."""
    op, opset, variant = key.op, key.opset, key.variant
    spec = op_spec(op, opset)
    lengths = _weighted(_goals(coverage, op, "axis_lengths", AXIS_LENGTHS))
    valid_classes = _weighted(_goals(coverage, op, "index_classes", strategies.VALID_INDEX_CLASSES))
    invalid_classes = _weighted(
        _goals(coverage, op, "index_classes", strategies.INVALID_INDEX_CLASSES)
    )
    invalid_dtypes = _weighted(
        [
            (dtype, _weight(coverage.counts["dtypes"][op, variant, dtype]))
            for dtype in op_dtypes(op)  # T's here, or one it refuses here but allows elsewhere
        ]
    )
    built: dict[tuple, st.SearchStrategy[Example]] = {}  # argument checks once per round

    def valid(length: str | None, index_class: str | None) -> st.SearchStrategy[Example]:
        if length is not None and strategies.AXIS_LENGTH_RANGES[length][1] == 0:
            index_class = None  # no index is valid on an empty axis: the length wins
        return _built(
            built,
            strategies.valid_examples,
            op=op,
            opset=opset,
            dtype=key.dtype,
            index_dtype=key.index_dtype,
            variant=variant,
            max_elements=max_elements,
            axis_length=length,
            index_class=index_class,
        )

    def invalid(length, index_class, dtype) -> st.SearchStrategy[Example]:
        clause = None
        if dtype not in spec.data_dtypes:  # a dtype T refuses here breaks data-dtype
            clause, index_class = "data-dtype", None
        return _built(
            built,
            strategies.invalid_examples,
            op=op,
            opset=opset,
            clause=clause,
            dtype=dtype,
            variant=variant,
            max_elements=max_elements,
            axis_length=length,
            index_class=index_class,
        )

    @st.composite
    def draw_one(draw) -> Example:
        # The goals come from a Random that Hypothesis seeds (reproducible
        # from the campaign's seed): its own choices are not independent
        # draws (it mutates earlier examples, and from a range above 256 it
        # favours small values), which would leave some goals far colder.
        rng = draw(st.randoms(use_true_random=True))
        length = lengths.pick(rng)
        if rng.random() < VALID_SHARE:
            return draw(valid(length, valid_classes.pick(rng)))
        return draw(invalid(length, invalid_classes.pick(rng), invalid_dtypes.pick(rng)))

    return draw_one()


def _built(built: dict, strategy, **arguments) -> st.SearchStrategy[Example]:
    key = (strategy.__name__, *arguments.values())
    if key not in built:
        built[key] = strategy(**arguments)
    return built[key]
