"""Bit-exact comparison of tensors (decision bitwise-exact).

Gather and GatherElements move data, so a correct result has the expected
dtype, shape and the same bytes in every element: a NaN must keep its payload
and -0.0 its sign. Strings compare as Python strings, element by element.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from conformance.tables import dtypes, explanations

if TYPE_CHECKING:
    from conformance.oracle import InRange

MAX_POSITIONS = 10  # how many differing positions a Difference keeps


@dataclass(frozen=True)
class Difference:
    """Why two tensors are not the same; ``kind`` is 'dtype', 'shape' or 'value'.

    ``expected`` and ``actual`` are what each side has where they first
    differ (a dtype name, a shape such as ``[2, 3]``, or an element as
    :func:`format_element` writes it); :meth:`told` names the two sides in a
    message.
    """

    kind: str
    expected: str
    actual: str
    count: int = 0  # differing elements (kind 'value')
    elements: int = 0  # elements of each side (kind 'value')
    positions: tuple[tuple[int, ...], ...] = ()  # the first differing positions

    def told(self, actual: str, expected: str) -> str:
        """The difference with each side named, the actual side first:
        ``told("the runtime returned", "the oracle computes")`` gives e.g.
        ``1 of 4 elements differ; first at [2]: the runtime returned 8, the oracle computes 9``."""
        if self.kind != "value":  # "the file says dtype int32, the oracle computes int64"
            return f"{actual} {self.kind} {self.actual}, {expected} {self.expected}"
        first = list(self.positions[0])
        return (
            f"{self.count} of {self.elements} elements differ; first at {first}: "
            f"{actual} {self.actual}, {expected} {self.expected}"
        )

    @property
    def message(self) -> str:
        """The difference as ``got <actual>, expected <expected>``."""
        return self.told("got", "expected")


def differing_mask(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Elementwise 'not the same bits' for two arrays of one dtype and shape."""
    if expected.dtype == object:
        flat_e, flat_a = expected.ravel(), actual.ravel()
        same = np.fromiter(
            (type(e) is type(a) and e == a for e, a in zip(flat_e, flat_a, strict=True)),
            dtype=bool,
            count=flat_e.size,
        )
        return ~same.reshape(expected.shape)
    width = expected.dtype.itemsize
    as_bytes = np.dtype((np.void, width))
    e = np.require(expected, requirements="C").view(as_bytes)
    a = np.require(actual, requirements="C").view(as_bytes)
    return (e != a).reshape(expected.shape)  # a 0-d input keeps 0-d positions


def difference(expected: np.ndarray, actual: np.ndarray) -> Difference | None:
    """None when actual is exactly expected; else what differs first."""
    if expected.dtype != actual.dtype:
        return Difference("dtype", dtypes.name_of(expected), dtypes.name_of(actual))
    if expected.shape != actual.shape:
        return Difference("shape", str(list(expected.shape)), str(list(actual.shape)))
    mask = differing_mask(expected, actual)
    count = int(np.count_nonzero(mask))
    if count == 0:
        return None
    positions = tuple(tuple(int(i) for i in p) for p in np.argwhere(mask)[:MAX_POSITIONS])
    first = positions[0]
    return Difference(
        "value",
        format_element(expected[first]),
        format_element(actual[first]),
        count=count,
        elements=int(expected.size),
        positions=positions,
    )


def format_element(value) -> str:
    """An element as a person should see it: floats with their bits when it matters."""
    if isinstance(value, str):
        return repr(value)
    array = np.asarray(value)
    if array.dtype.kind == "f" or dtypes.name_of(array) == "bfloat16":
        bits = array.view(f"uint{array.dtype.itemsize * 8}")
        return f"{array.item()!r} (0x{int(bits):0{array.dtype.itemsize * 2}x})"
    return repr(array.item())


def explained_by(expected: np.ndarray, actual: np.ndarray) -> list[str]:
    """The explanations (:mod:`conformance.tables.explanations`) that fit
    ``actual`` exactly: every element is the oracle's, or what the explanation
    makes of it, bit for bit. Both arrays have one dtype and shape."""
    name = dtypes.name_of(expected)
    same = ~differing_mask(expected, actual)
    found = []
    for explanation in explanations.EXPLANATIONS:
        if name not in explanation.dtypes or explanation.of_invalid:
            continue
        with np.errstate(all="ignore"):  # NaNs and extremes are what the explanations are about
            if explanation.transform is not None:
                allowed = ~differing_mask(explanation.transform(expected), actual)
            else:
                assert explanation.allowed is not None  # it has a transform or an allowed
                allowed = explanation.allowed(expected, actual)
        if bool((same | allowed).all()):
            found.append(explanation.name)
    return found


def explained_invalid(in_range: InRange, actual: np.ndarray) -> list[str]:
    """The explanations of an output the spec does not define
    (``accepted_invalid``: :attr:`Explanation.invalid`, or the relation
    :attr:`Explanation.unchecked` with the offsets the indices read unchecked) that make exactly
    ``actual``, bit for bit at every position, from what the spec defines
    where the indices are in range (:func:`conformance.oracle.in_range`)."""
    name = dtypes.name_of(in_range.output)
    found = []
    for explanation in explanations.EXPLANATIONS:
        if not explanation.of_invalid or name not in explanation.dtypes:
            continue
        if explanation.invalid is not None:
            made = explanation.invalid(in_range.output, in_range.outside)
            if difference(made, actual) is None:
                found.append(explanation.name)
            continue
        assert explanation.unchecked is not None  # of_invalid: one or the other
        fits = (
            in_range.offsets is not None
            and in_range.data is not None
            and actual.dtype == in_range.output.dtype
            and actual.shape == in_range.output.shape
        )
        if fits and bool(
            explanation.unchecked(
                in_range.output, in_range.outside, in_range.data, in_range.offsets, actual
            ).all()
        ):
            found.append(explanation.name)
    return found
