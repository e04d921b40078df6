"""Admissible outputs: the set of outputs a conforming runtime may give, and
the judge that accepts any member bit for bit.

Where the spec leaves a result open (ScatterElements and ScatterND: the
order of the writes to one element, decisions ``sc-duplicates-none`` and
``sc-reduction-order``; a NaN a reduction computes, ``sc-nan-payload``;
the sign of a zero that max or min picks, ``sc-nan-max-min``), the oracle
returns an :class:`Admissible`: one member written out in full (``output``:
the text's loop in row-major order) and, per element whose value is open,
the sorted unique bit patterns a runtime may give there. Every other
element has exactly ``output``'s bits. The set is per element: a runtime
that writes the elements of one slice in different orders (threads per
element) gives a member too.

The judge (:func:`difference`, :func:`admits`) compares bit for bit:
an element of the actual output passes when it has ``output``'s bits, or
one of the bit patterns listed for its position, or is a NaN where the
position admits any NaN. Nothing else passes: an element outside its set
is a discrepancy, and a member of the set never is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conformance.errors import ConformanceError
from conformance.oracle import compare

__all__ = ["Admissible", "TooManyOrders", "admits", "difference", "exact", "told"]


class TooManyOrders(ConformanceError, ValueError):
    """An input whose admissible set this oracle does not enumerate: more
    writes to one element, under an order-dependent reduction, than
    ``MAX_ORDERED_WRITES`` (decision ``sc-reduction-order``). The case must
    be drawn without so many duplicate indices; never a verdict on a runtime."""


def _keys(values: np.ndarray) -> np.ndarray:
    """Bit patterns to sort and compare: unsigned ints of the item's width
    (numeric dtypes up to 8 bytes), else the values as Python objects."""
    if values.dtype != object and values.dtype.itemsize <= 8:
        return np.ascontiguousarray(values).view(f"uint{values.dtype.itemsize * 8}")
    if values.dtype == object:
        return values
    return np.array([v.tobytes() for v in values.ravel()], dtype=object).reshape(values.shape)


def _is_nan(values: np.ndarray) -> np.ndarray:
    """NaN, per element (a complex value with a NaN part); False for types without NaN."""
    if values.dtype == object or values.dtype.kind in "biu":
        return np.zeros(values.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        return np.isnan(values.astype(np.complex128 if values.dtype.kind == "c" else np.float64))


@dataclass(frozen=True)
class Admissible:
    """The outputs a conforming runtime may give for one input.

    ``output`` is a member (the text's loop, row-major). ``positions``
    (sorted flat positions of ``output``) are the elements with more than
    one admissible value: those of ``positions[i]`` are
    ``values[offsets[i]:offsets[i + 1]]``, unique and sorted by bit pattern.
    ``any_nan`` (sorted flat positions) are the elements where any NaN is
    admissible (a NaN that a reduction computes: decision ``sc-nan-payload``),
    besides their listed values."""

    output: np.ndarray
    positions: np.ndarray
    offsets: np.ndarray
    values: np.ndarray
    any_nan: np.ndarray

    @property
    def unique(self) -> bool:
        """Whether ``output`` is the only member."""
        return self.positions.size == 0 and self.any_nan.size == 0

    def at(self, index: tuple[int, ...]) -> tuple[list, bool]:
        """The values admissible at one element (as Python values, sorted by
        bits) and whether any NaN is: for tests and messages."""
        flat = int(np.ravel_multi_index(index, self.output.shape)) if self.output.ndim else 0
        found = int(np.searchsorted(self.positions, flat))
        nan = bool(self.any_nan.size) and _contains(self.any_nan, flat)
        if found < self.positions.size and self.positions[found] == flat:
            chunk = self.values[self.offsets[found] : self.offsets[found + 1]]
            return [chunk[i] for i in range(chunk.size)], nan
        return [self.output.reshape(-1)[flat]], nan


def _contains(sorted_positions: np.ndarray, flat: int) -> bool:
    at = int(np.searchsorted(sorted_positions, flat))
    return at < sorted_positions.size and int(sorted_positions[at]) == flat


_EMPTY = np.zeros(0, dtype=np.int64)


def exact(output: np.ndarray) -> Admissible:
    """The set of one output."""
    return Admissible(output, _EMPTY, np.zeros(1, dtype=np.int64), output.reshape(-1)[:0], _EMPTY)


def from_candidates(
    output: np.ndarray,
    flats: list[np.ndarray],
    candidates: list[np.ndarray],
    nan_flats: list,
    computed: bool = True,
) -> Admissible:
    """The set from candidate values per element: ``candidates[g]`` is
    (n, c), the c values that element ``flats[g][i]`` may take (repeats
    allowed, ``output``'s among them); ``nan_flats`` are positions where any
    NaN is admissible. Where the values are ``computed`` (a reduction), a
    NaN candidate makes its position an ``any_nan`` one; values only moved
    (no reduction) keep their bits, NaN payloads included."""
    positions, counts, values = [], [], []
    nans = [np.asarray(n, dtype=np.int64) for n in nan_flats]
    for flat, cand in zip(flats, candidates, strict=True):
        if flat.size == 0:
            continue
        nan = _is_nan(cand) if computed else np.zeros(cand.shape, dtype=bool)
        row_nan = nan.any(axis=1)
        nans.append(flat[row_nan])
        kept, keep = _unique_rows(cand, nan)
        sizes = keep.sum(axis=1)
        chosen = sizes + row_nan >= 2
        positions.append(flat[chosen])
        counts.append(sizes[chosen])
        values.append(kept[chosen][keep[chosen]])
    any_nan = np.unique(np.concatenate(nans)) if nans else _EMPTY
    pos = np.concatenate(positions) if positions else _EMPTY
    if pos.size == 0:
        return Admissible(output, _EMPTY, np.zeros(1, np.int64), output.reshape(-1)[:0], any_nan)
    size = np.concatenate(counts).astype(np.int64)
    flat_values = np.concatenate(values)
    # Sort the elements by position, each keeping its run of values.
    order = np.argsort(pos, kind="stable")
    old_starts = np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.int64)
    sizes = size[order]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    picks = np.repeat(old_starts[order] - offsets[:-1], sizes) + np.arange(int(offsets[-1]))
    return Admissible(output, pos[order], offsets, flat_values[picks], any_nan)


def _unique_rows(cand: np.ndarray, nan: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row sorted by bit pattern, and which of its values to keep: the
    first of each run of equal bits, NaN left out."""
    keys = _keys(cand)
    if keys.dtype != object:
        order = np.argsort(keys, axis=1, kind="stable")
        sorted_keys = np.take_along_axis(keys, order, axis=1)
        first = np.ones(sorted_keys.shape, dtype=bool)
        first[:, 1:] = sorted_keys[:, 1:] != sorted_keys[:, :-1]
        return np.take_along_axis(cand, order, axis=1), first & ~np.take_along_axis(
            nan, order, axis=1
        )
    kept = np.empty(cand.shape, dtype=cand.dtype)
    keep = np.zeros(cand.shape, dtype=bool)
    for r in range(cand.shape[0]):
        seen: dict = {}
        for v, k, n in zip(cand[r], keys[r], nan[r], strict=True):
            if not n:
                seen.setdefault((type(v).__name__, k), v)
        for i, key in enumerate(sorted(seen)):
            kept[r, i] = seen[key]
            keep[r, i] = True
    return kept, keep


def _members_mask(admissible: Admissible, actual: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Of the differing elements (``mask``, flat), those that are members of their set."""
    flat_actual = actual.reshape(-1)
    where = np.flatnonzero(mask)
    ok = np.zeros(where.size, dtype=bool)
    if admissible.any_nan.size:
        at = np.searchsorted(admissible.any_nan, where)
        inside = at < admissible.any_nan.size
        hit = np.zeros(where.size, dtype=bool)
        hit[inside] = admissible.any_nan[at[inside]] == where[inside]
        ok |= hit & _is_nan(flat_actual[where])
    if admissible.positions.size:
        at = np.searchsorted(admissible.positions, where)
        inside = at < admissible.positions.size
        listed = np.zeros(where.size, dtype=bool)
        listed[inside] = admissible.positions[at[inside]] == where[inside]
        idx, slot = where[listed], at[listed]
        starts, ends = admissible.offsets[slot], admissible.offsets[slot + 1]
        sizes = ends - starts
        # Each differing element against each of its listed values, flattened.
        owner = np.repeat(np.arange(idx.size), sizes)
        picks = np.repeat(starts - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
        picks = picks + np.arange(int(sizes.sum()))
        listed_values = admissible.values[picks]
        actual_values = flat_actual[idx][owner]
        if listed_values.dtype == object:
            same = np.fromiter(
                (
                    type(a) is type(b) and a == b
                    for a, b in zip(listed_values, actual_values, strict=True)
                ),
                dtype=bool,
                count=listed_values.size,
            )
        else:
            same = _keys(listed_values) == _keys(actual_values)
        member = np.zeros(idx.size, dtype=bool)
        np.logical_or.at(member, owner, same)
        ok[np.flatnonzero(listed)] |= member
    full = np.zeros(mask.size, dtype=bool)
    full[where[ok]] = True
    return full


def difference(admissible: Admissible, actual: np.ndarray) -> compare.Difference | None:
    """None when ``actual`` is a member of the set, bit for bit; else what
    differs first (its expected side names the admissible values)."""
    expected = admissible.output
    found = compare.difference(expected, actual)
    if found is None or found.kind != "value" or admissible.unique:
        return found
    mask = compare.differing_mask(expected, actual).reshape(-1)
    bad = mask & ~_members_mask(admissible, actual, mask)
    count = int(np.count_nonzero(bad))
    if count == 0:
        return None
    flats = np.flatnonzero(bad)[: compare.MAX_POSITIONS]
    positions = tuple(
        tuple(int(i) for i in np.unravel_index(int(f), expected.shape)) for f in flats
    )
    first = positions[0]
    return compare.Difference(
        "value",
        told(admissible, first),
        compare.format_element(actual[first]),
        count=count,
        elements=int(expected.size),
        positions=positions,
    )


def told(admissible: Admissible, index: tuple[int, ...]) -> str:
    """The values admissible at one element, formatted: the value, or
    ``one of A, B`` (``any NaN`` among them where any NaN is)."""
    values, nan = admissible.at(index)
    shown = [compare.format_element(v) for v in values]
    if nan:
        shown.append("any NaN")
    return shown[0] if len(shown) == 1 else f"one of {', '.join(shown)}"


def admits(admissible: Admissible, actual: np.ndarray) -> bool:
    """Whether ``actual`` is a member of the set, bit for bit."""
    return difference(admissible, actual) is None
