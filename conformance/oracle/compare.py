"""Bit-exact comparison of tensors (decision bitwise-exact).

Gather and GatherElements move data, so a correct result has the expected
dtype, shape and the same bytes in every element: a NaN must keep its payload
and -0.0 its sign. Strings compare as Python strings, element by element.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conformance.tables import dtypes

MAX_POSITIONS = 10  # how many differing positions a Difference keeps


@dataclass(frozen=True)
class Difference:
    """Why two tensors are not the same; ``kind`` is 'dtype', 'shape' or 'value'."""

    kind: str
    message: str
    count: int = 0  # differing elements (kind 'value')
    positions: tuple[tuple[int, ...], ...] = ()  # the first differing positions


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
        return Difference(
            "dtype",
            f"dtype {dtypes.name_of(actual)}, expected {dtypes.name_of(expected)}",
        )
    if expected.shape != actual.shape:
        return Difference("shape", f"shape {list(actual.shape)}, expected {list(expected.shape)}")
    mask = differing_mask(expected, actual)
    count = int(np.count_nonzero(mask))
    if count == 0:
        return None
    positions = tuple(tuple(int(i) for i in p) for p in np.argwhere(mask)[:MAX_POSITIONS])
    first = positions[0]
    return Difference(
        "value",
        f"{count} of {expected.size} elements differ; first at {list(first)}: "
        f"got {format_element(actual[first])}, expected {format_element(expected[first])}",
        count=count,
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
