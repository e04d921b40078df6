"""Tensor values of a case: literals and generators, turned into exact arrays.

A value in a case file is either a literal (nested lists, or a scalar for a
rank-0 tensor) or a generator, a mapping with exactly one key:

- ``arange: {shape: [2, 3], start: 0}``: 0, 1, 2, ... in row-major order
  (strings ``"s0"``, ``"s1"``...; bool alternates False, True).
- ``random: {shape: [4, 5], seed: 7, low: -5, high: 4}``: seeded values;
  with ``low``/``high`` (both inclusive) uniform integers in that range cast to
  the dtype, without them values over the dtype's full range (floats as random
  bit patterns, so NaN payloads, infinities, -0.0 and subnormals all occur).
- ``full: {shape: [0, 3], value: 1}``: every element the same.
- ``bits: [[0x7fc00001, 0x8000]]``: unsigned bit patterns reinterpreted as a
  float dtype (the only way to write a NaN payload in YAML); for a complex
  dtype each element is a ``[real, imaginary]`` pair of patterns.

Literals are converted strictly: an int dtype takes only integers that fit, a
bool dtype only true/false, a string dtype only strings; float dtypes take
numbers and YAML's .nan/.inf; complex dtypes also take strings like "1-2j".
"""

from __future__ import annotations

import math

import numpy as np

from conformance.tables import dtypes
from conformance.tables.dtypes import DType

# No generated tensor in a case file may be larger than this: a typo in a
# shape must not allocate gigabytes before anything is checked.
MAX_ELEMENTS = 1 << 22

GENERATORS = ("arange", "random", "full", "bits")
_GENERATOR_FIELDS = {
    "arange": ({"shape"}, {"start"}),
    "random": ({"shape", "seed"}, {"low", "high"}),
    "full": ({"shape", "value"}, set()),
}


class ValueProblem(Exception):
    """A value cannot be built; ``path`` locates it below the field (keys, list positions)."""

    def __init__(self, message: str, path: tuple = ()) -> None:
        super().__init__(message)
        self.path = path


def literal_shape(value, path: tuple = ()) -> tuple[int, ...]:
    """The shape of a nested-list literal; raises on ragged lists."""
    if not isinstance(value, list):
        return ()
    if not value:
        return (0,)
    shapes = [literal_shape(item, (*path, i)) for i, item in enumerate(value)]
    for i, shape in enumerate(shapes):
        if shape != shapes[0]:
            raise ValueProblem(
                f"ragged nested list: item {i} has shape {list(shape)}, item 0 has "
                f"{list(shapes[0])}",
                (*path, i),
            )
    return (len(value), *shapes[0])


def _leaves(value, path: tuple = ()):
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, (*path, i))
    else:
        yield path, value


def _check_leaf(dtype: DType, leaf, path: tuple):
    kind = dtype.kind
    ok = {
        "string": isinstance(leaf, str),
        "bool": isinstance(leaf, bool),
        "int": isinstance(leaf, int) and not isinstance(leaf, bool),
        "uint": isinstance(leaf, int) and not isinstance(leaf, bool),
        "float": isinstance(leaf, (int, float)) and not isinstance(leaf, bool),
        "complex": isinstance(leaf, (int, float, str)) and not isinstance(leaf, bool),
    }[kind]
    if not ok:
        raise ValueProblem(f"{leaf!r} is not a valid {dtype.name} value", path)
    if kind in ("int", "uint"):
        info = np.iinfo(dtype.numpy)
        if not info.min <= leaf <= info.max:
            raise ValueProblem(
                f"{leaf} does not fit in {dtype.name} [{info.min}, {info.max}]", path
            )
    if kind == "complex" and isinstance(leaf, str):
        try:
            return complex(leaf.replace(" ", ""))
        except ValueError:
            raise ValueProblem(f"{leaf!r} is not a complex number", path) from None
    return leaf


def from_literal(value, dtype: DType) -> np.ndarray:
    shape = literal_shape(value)
    converted = _convert(value, dtype, ())
    array = np.array(converted, dtype=dtype.numpy)
    if array.shape != shape:  # object arrays of strings can hide raggedness
        raise ValueProblem(f"literal has shape {list(shape)} but became {list(array.shape)}")
    return array


def _convert(value, dtype: DType, path: tuple):
    if isinstance(value, list):
        return [_convert(item, dtype, (*path, i)) for i, item in enumerate(value)]
    return _check_leaf(dtype, value, path)


def _shape(spec: dict, key: str) -> tuple[int, ...]:
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise ValueProblem("shape must be a list of non-negative integers", (key, "shape"))
    if math.prod(shape) > MAX_ELEMENTS:
        raise ValueProblem(
            f"shape {shape} has {math.prod(shape)} elements, over the limit of {MAX_ELEMENTS}",
            (key, "shape"),
        )
    return tuple(shape)


def _from_ints(values: np.ndarray, dtype: DType) -> np.ndarray:
    """Cast int64 values to a dtype the way a reader expects (strings as 's<i>')."""
    if dtype.kind == "string":
        return np.array([f"s{v}" for v in values.ravel()], dtype=object).reshape(values.shape)
    if dtype.kind == "bool":
        return (values % 2).astype(bool)
    if dtype.kind in ("int", "uint"):
        info = np.iinfo(dtype.numpy)
        if values.size and (values.min() < info.min or values.max() > info.max):
            raise ValueProblem(f"generated values do not fit in {dtype.name}")
    return values.astype(dtype.numpy)


def _random_full_range(rng: np.random.Generator, shape, dtype: DType) -> np.ndarray:
    if dtype.kind == "string":
        alphabet = list("ab<>&\"' \t\n\x00éß中😀")
        lengths = rng.integers(0, 6, size=math.prod(shape))
        words = ["".join(rng.choice(alphabet, size=n)) for n in lengths]
        return np.array(words, dtype=object).reshape(shape)
    if dtype.kind == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    nbytes = dtype.numpy.itemsize * math.prod(shape)
    raw = rng.integers(0, 256, size=nbytes, dtype=np.uint8)
    return raw.view(dtype.numpy).reshape(shape)


def _bits(value, dtype: DType) -> np.ndarray:
    """Bit patterns; a complex element is a [real, imaginary] pair of them."""
    if dtype.kind not in ("float", "complex"):
        raise ValueProblem(
            f"bits is only for float and complex dtypes, not {dtype.name}", ("bits",)
        )
    pairs = dtype.kind == "complex"
    width = dtype.numpy.itemsize * 8 // (2 if pairs else 1)
    unsigned = np.dtype(f"uint{width}")
    shape = literal_shape(value, ("bits",))
    if pairs and (not shape or shape[-1] != 2):
        raise ValueProblem(
            f"complex bits need a [real, imaginary] pair of {width}-bit patterns per "
            f"element (innermost length 2), got shape {list(shape)}",
            ("bits",),
        )
    for path, leaf in _leaves(value, ("bits",)):
        if isinstance(leaf, bool) or not isinstance(leaf, int) or not 0 <= leaf < 2**width:
            raise ValueProblem(f"{leaf!r} is not a {width}-bit pattern", path)
    array = np.array(value, dtype=unsigned).reshape(shape)
    # np.require, not ascontiguousarray: that one turns a 0-d array into 1-d.
    return (
        np.require(array, requirements="C")
        .view(dtype.numpy)
        .reshape(shape[:-1] if pairs else shape)
    )


def build(value, dtype: DType) -> np.ndarray:
    """The array a case-file value denotes, for one dtype."""
    if not isinstance(value, dict):
        return from_literal(value, dtype)
    if len(value) != 1 or next(iter(value)) not in GENERATORS:
        raise ValueProblem(
            f"a generator is a mapping with exactly one of: {', '.join(GENERATORS)}; "
            f"got keys {', '.join(map(str, value))}"
        )
    ((name, spec),) = value.items()
    if name == "bits":
        return _bits(spec, dtype)
    if not isinstance(spec, dict):
        raise ValueProblem(f"{name} takes a mapping of fields", (name,))
    required, optional = _GENERATOR_FIELDS[name]
    missing, unknown = sorted(required - set(spec)), sorted(set(spec) - required - optional)
    if missing:
        raise ValueProblem(f"{name} needs field '{missing[0]}'", (name,))
    if unknown:
        raise ValueProblem(
            f"{name} has no field '{unknown[0]}' "
            f"(fields: {', '.join(sorted(required | optional))})",
            (name, unknown[0]),
        )
    shape = _shape(spec, name)
    if name == "arange":
        start = spec.get("start", 0)
        return _from_ints(
            np.arange(start, start + math.prod(shape), dtype=np.int64).reshape(shape), dtype
        )
    if name == "full":
        return np.broadcast_to(from_literal(spec["value"], dtype), shape).copy()
    rng = np.random.default_rng(spec["seed"])
    if "low" in spec or "high" in spec:
        if "low" not in spec or "high" not in spec:
            raise ValueProblem("random takes both low and high, or neither", (name,))
        low, high = spec["low"], spec["high"]
        if low > high:
            raise ValueProblem(f"low {low} is greater than high {high}", (name, "low"))
        ints = rng.integers(low, high, endpoint=True, size=shape, dtype=np.int64)
        return _from_ints(ints, dtype)
    return _random_full_range(rng, shape, dtype)


def dtype_named(name: str) -> DType:
    try:
        return dtypes.by_name(name)
    except KeyError as error:
        raise ValueProblem(str(error.args[0])) from None
