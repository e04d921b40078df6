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
- ``npy: embedding.npy`` or ``npy: {file: embedding.npy, shape: [6, 4]}``:
  the array of a NumPy ``.npy`` file in the case file's folder (or below it;
  a path leaving it is refused), of exactly the case's dtype (bfloat16: its
  bits as uint16, .npy having no bfloat16) and of the declared shape: how a
  model's large constant (an embedding table) is kept (``conformance model
  --save-cases``). Its size is the file's own: the memory guard
  (``--case-memory``), not the generators' limit, bounds it, and its header
  is held to the dtype, the shape and the guard before anything is allocated
  (:mod:`conformance.cases.npy`).
- ``json: {file: names.json, shape: [2, 3]}``: the values of a JSON file
  there, a flat list in row-major order, each converted as a literal's is:
  how ``--save-cases`` keeps a string tensor too large to write inline
  (``.npy`` holds strings only as a pickle, never read). The file's size and
  the shape's elements are held to the memory guard before it is read.

Literals are converted strictly: an int dtype takes only integers that fit, a
bool dtype only true/false, a string dtype only strings; float dtypes take
numbers and YAML's .nan/.inf; complex dtypes also take strings like "1-2j".
A number the dtype cannot hold is an error, never a silent inf or 0: a finite
literal that would overflow to inf or underflow to 0, or an integer that the
float dtype would round to another integer (decimals round as usual; write
.inf / .nan / "inf+nanj" for the special values). Generator fields (shape,
start, seed, low, high) are integers; what they generate must fit the dtype.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path

import numpy as np

from conformance.cases import npy
from conformance.cases.check import DEFAULT_CASE_MEMORY, STRING_ELEMENT_BYTES
from conformance.tables import dtypes
from conformance.tables.dtypes import DType
from conformance.tables.profiles import INT64_MAX, INT64_MIN

# No generated tensor in a case file may be larger than this: a typo in a
# shape must not allocate gigabytes before anything is checked.
MAX_ELEMENTS = 1 << 22
MAX_GENERATED_RANK = 32  # dimensions of a generator's shape (NumPy's old limit)
MAX_FILE_RANK = 64  # dimensions of an npy or json generator's array (NumPy's limit)

GENERATORS = ("arange", "random", "full", "bits", "npy", "json")
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
        raise ValueProblem(f"{_show(leaf)} is not a valid {dtype.name} value", path)
    if kind == "string":
        try:  # ONNX holds a string as UTF-8 bytes: a lone surrogate ("\ud800") has none
            leaf.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ValueProblem(
                f"{_show(leaf)} is not UTF-8 text ({error.reason}: "
                f"{leaf[error.start : error.end]!r}); ONNX strings are UTF-8",
                path,
            ) from None
    if kind in ("int", "uint"):
        info = np.iinfo(dtype.numpy)
        if not info.min <= leaf <= info.max:
            raise ValueProblem(
                f"{_show(leaf)} does not fit in {dtype.name} [{info.min}, {info.max}]", path
            )
    if kind == "float":
        _check_float(leaf, leaf, dtype.numpy, dtype.name, path)
    if kind == "complex":
        part = np.dtype(dtype.numpy).type(0).real.dtype
        if isinstance(leaf, str):
            try:
                number = complex(leaf.replace(" ", ""))
            except ValueError:
                raise ValueProblem(f"{leaf!r} is not a complex number", path) from None
            for value in (number.real, number.imag):
                if not math.isfinite(value) and not any(w in leaf.lower() for w in ("inf", "nan")):
                    raise ValueProblem(f"{_show(leaf)} is out of range for {dtype.name}", path)
                _check_float(value, leaf, part, dtype.name, path)
            return number
        _check_float(leaf, leaf, part, dtype.name, path)
    return leaf


def _show(value) -> str:
    """A value for a message: a 400-digit integer is not shown whole."""
    text = repr(value)
    if len(text) > 40:
        text = f"{text[:12]}...{text[-6:]} ({len(text)} characters)"
    return text


def _check_float(value: int | float, shown, numpy_type, name: str, path: tuple) -> None:
    """A number must survive conversion to a float type: no overflow to inf,
    no underflow to 0, and an integer stays that integer."""
    shown = _show(shown)
    try:
        wide = float(value)
    except OverflowError:
        raise ValueProblem(f"{shown} is out of range for {name}", path) from None
    if not math.isfinite(wide):
        return  # .inf, -.inf, .nan written as such
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        narrow = float(np.array(wide, dtype=numpy_type))
    if not math.isfinite(narrow):
        raise ValueProblem(
            f"{shown} is out of range for {name} (it would become {narrow}; write .inf "
            "for an infinity)",
            path,
        )
    if narrow == 0 and wide != 0:
        raise ValueProblem(f"{shown} underflows to 0 in {name}", path)
    if isinstance(value, int) and narrow != value:
        raise ValueProblem(
            f"{shown} is not exactly representable in {name} (it would become {narrow:.17g})",
            path,
        )


def from_literal(value, dtype: DType) -> np.ndarray:
    shape = literal_shape(value)
    converted = _convert(value, dtype, ())
    try:
        array = np.array(converted, dtype=dtype.numpy)
    except (ValueError, OverflowError) as error:  # e.g. more dimensions than NumPy has
        raise ValueProblem(f"cannot make a {dtype.name} array of it: {error}") from None
    if array.shape != shape:  # object arrays of strings can hide raggedness
        raise ValueProblem(f"literal has shape {list(shape)} but became {list(array.shape)}")
    return array


def _convert(value, dtype: DType, path: tuple):
    if isinstance(value, list):
        return [_convert(item, dtype, (*path, i)) for i, item in enumerate(value)]
    return _check_leaf(dtype, value, path)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_field(spec: dict, key: str, field: str, low: int, high: int, default=None) -> int:
    """An integer generator field within [low, high]."""
    value = spec.get(field, default)
    if not _is_int(value):
        raise ValueProblem(f"{field} must be an integer, not {_show(value)}", (key, field))
    if not low <= value <= high:
        raise ValueProblem(f"{field} {_show(value)} is outside [{low}, {high}]", (key, field))
    return value


def _shape(spec: dict, key: str) -> tuple[int, ...]:
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(_is_int(n) and n >= 0 for n in shape):
        raise ValueProblem("shape must be a list of non-negative integers", (key, "shape"))
    if len(shape) > MAX_GENERATED_RANK:
        raise ValueProblem(
            f"shape has {len(shape)} dimensions, over the limit of {MAX_GENERATED_RANK}",
            (key, "shape"),
        )
    for i, n in enumerate(shape):
        if n > MAX_ELEMENTS:
            raise ValueProblem(
                f"dimension {n} is over the limit of {MAX_ELEMENTS} elements",
                (key, "shape", i),
            )
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
        return np.asarray(values % 2).astype(bool)  # % of a 0-d array gives a NumPy scalar
    if dtype.kind in ("int", "uint"):
        info = np.iinfo(dtype.numpy)
        if values.size and (values.min() < info.min or values.max() > info.max):
            raise ValueProblem(
                f"generated values [{values.min()}, {values.max()}] do not fit in "
                f"{dtype.name} [{info.min}, {info.max}]"
            )
        return values.astype(dtype.numpy)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cast = values.astype(dtype.numpy)
    # float and complex: every generated integer must come out as itself (exact
    # comparison in int64: float64 would round both sides past 2**53)
    back = (cast.real if dtype.kind == "complex" else cast).astype(np.float64)
    exact = np.isfinite(back) & (back >= -(2.0**63)) & (back < 2.0**63)
    exact &= np.where(exact, back, 0).astype(np.int64) == values
    if not exact.all():
        first = values[tuple(np.argwhere(~exact)[0])]
        raise ValueProblem(f"generated value {first} is not exactly representable in {dtype.name}")
    return cast


def _random_full_range(rng: np.random.Generator, shape, dtype: DType) -> np.ndarray:
    if dtype.kind == "string":
        # One draw for every letter, then cut into words: the same values as
        # drawing each word's letters in turn (rng.choice draws integers in
        # [0, len) the same way), but 4M words in ~1.5 s instead of a minute.
        # The letters are NumPy <U1, which cannot hold "\x00" (it reads back
        # as ""), so no word holds a NUL; kept so that seeds keep their values.
        alphabet = np.array(list("ab<>&\"' \t\n\x00éß中😀"))
        lengths = rng.integers(0, 6, size=math.prod(shape))
        letters = alphabet[rng.integers(0, len(alphabet), size=int(lengths.sum()))].tolist()
        ends = np.cumsum(lengths).tolist()
        starts = [0, *ends][:-1]
        words = ["".join(letters[a:b]) for a, b in zip(starts, ends, strict=True)]
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


def _file_spec(key: str, spec, folder) -> tuple[str, Path, tuple[int, ...] | None]:
    """(the name as written, the file, the declared shape or None) of a file
    generator: ``NAME`` (npy only) or ``{file: NAME, shape: [...]}``, NAME in
    the case file's folder or below it."""
    shape = None
    if isinstance(spec, dict):
        fields = sorted(map(str, spec))
        if fields != ["file", "shape"]:
            raise ValueProblem(
                f"{key} takes the fields file and shape, got {', '.join(fields)}", (key,)
            )
        shape = _declared_shape(spec["shape"], key)
        spec = spec["file"]
        where: tuple = (key, "file")
    else:
        where = (key,)
        if key != "npy":
            raise ValueProblem(f"{key} takes a mapping of fields (file, shape)", (key,))
    return spec, beside(key, spec, folder, where), shape


def beside(key: str, name, folder, where: tuple) -> Path:
    """The file ``name`` (as a case file writes it) in ``folder``, the case
    file's, or below it; ValueProblem at ``where`` for a name that is none or
    leaves the folder. Every file a case file names is found so."""
    if not isinstance(name, str) or not name:
        raise ValueProblem(f"{key} takes the name of a file beside the case file", where)
    if folder is None:
        raise ValueProblem(f"{key} is only for case files (a path relative to the file)", where)
    base = Path(folder).resolve()
    path = (base / name).resolve()
    if Path(name).is_absolute() or base not in path.parents:
        raise ValueProblem(
            f"{name!r} leaves the case file's folder: {key} reads only files in it or below", where
        )
    return path


def _declared_shape(shape, key: str) -> tuple[int, ...]:
    """A file generator's shape: its size is bounded by the memory guard, not
    by the generators' limit (a model's embedding table is kept this way)."""
    if not isinstance(shape, list) or not all(_is_int(n) and n >= 0 for n in shape):
        raise ValueProblem("shape must be a list of non-negative integers", (key, "shape"))
    if len(shape) > MAX_FILE_RANK or any(n > INT64_MAX for n in shape):
        raise ValueProblem(
            f"shape {_show(shape)} is not a tensor's (at most {MAX_FILE_RANK} dims of int64)",
            (key, "shape"),
        )
    return tuple(shape)


def _guard(what: str, size: int, memory: int, key: str) -> None:
    if size > memory:
        raise ValueProblem(
            f"{what} {size:,} bytes, over the memory guard's limit of {memory:,} "
            "(--case-memory); nothing was read",
            (key,),
        )


def _npy(spec, dtype: DType, folder, memory: int) -> np.ndarray:
    """The array of an .npy file inside ``folder`` (the case file's), of
    exactly ``dtype`` (and of the declared shape, if one is), its header held
    to both and to the memory guard before anything is allocated."""
    name, path, shape = _file_spec("npy", spec, folder)
    where = ("npy", "file") if isinstance(spec, dict) else ("npy",)
    # .npy has no bfloat16: its bits, as uint16
    stored = np.dtype(np.uint16) if dtype.name == "bfloat16" else np.dtype(dtype.numpy)
    try:
        with npy.open_regular(path) as stream:
            header = npy.read_header(stream)
            if header.dtype != stored:
                raise ValueProblem(f"{name!r} holds {header.dtype}, not {dtype.name}", where)
            if shape is not None and header.shape != shape:
                raise ValueProblem(
                    f"{name!r} holds shape {list(header.shape)}, the case declares {list(shape)}",
                    where,
                )
            said = f"shape {list(header.shape)} of {header.dtype}:"
            _guard(f"{name!r}: its header declares {said}", header.nbytes, memory, "npy")
            array = npy.read_data(stream, header)
    except npy.NpyProblem as problem:
        raise ValueProblem(f"cannot read {name!r}: {problem}", where) from None
    except OSError as error:
        raise ValueProblem(
            f"cannot read {name!r} as an .npy file: {error.strerror or error}", where
        ) from None
    return array.view(dtype.numpy) if dtype.name == "bfloat16" else array


def read_json(key: str, name: str, path: Path, memory: int, where: tuple):
    """The JSON value of the file ``path`` (named ``name`` in the case file), a
    regular file whose size the memory guard allows; ValueProblem at ``where``
    saying why not. How a case file's JSON companions are read (the ``json``
    generator's values, a long ``nodes`` list)."""
    try:
        with npy.open_regular(path) as stream:
            size = os.fstat(stream.fileno()).st_size
            _guard(f"{name!r} holds", size, memory, key)
            text = stream.read().decode("utf-8")
        return json.loads(text)
    except npy.NpyProblem as problem:
        raise ValueProblem(f"cannot read {name!r}: {problem}", where) from None
    except OSError as error:
        raise ValueProblem(f"cannot read {name!r}: {error.strerror or error}", where) from None
    except UnicodeDecodeError:
        raise ValueProblem(f"{name!r} is not UTF-8 text", where) from None
    except RecursionError:
        raise ValueProblem(f"{name!r} is not a flat JSON list (nested)", where) from None
    except ValueError as error:
        raise ValueProblem(f"{name!r} is not JSON ({error})", where) from None


def _json(spec, dtype: DType, folder, memory: int) -> np.ndarray:
    """The values of a JSON file inside ``folder``: a flat list, row-major, of
    ``shape``'s elements, each converted as a literal's is (how a string
    tensor too large to write inline is kept: .npy holds strings only as a
    pickle). The file's size and the declared shape are held to the memory
    guard before the file is read."""
    name, path, shape = _file_spec("json", spec, folder)
    assert shape is not None  # the json generator takes only the mapping form
    itemsize = STRING_ELEMENT_BYTES if dtype.kind == "string" else dtype.numpy.itemsize
    _guard(f"its shape declares {list(shape)} of {dtype.name}:", math.prod(shape) * itemsize,
           memory, "json")  # fmt: skip
    where = ("json", "file")
    values = read_json("json", name, path, memory, where)
    count = math.prod(shape)
    if not isinstance(values, list) or any(isinstance(v, (list, dict)) for v in values):
        raise ValueProblem(f"{name!r} is not a flat JSON list of values", where)
    if len(values) != count:
        raise ValueProblem(
            f"{name!r} holds {len(values)} values, the shape {list(shape)} has {count}", where
        )
    try:
        return from_literal(values, dtype).reshape(shape)
    except ValueProblem as problem:
        raise ValueProblem(f"{name!r}: {problem}", (*where, *problem.path)) from None


def build(value, dtype: DType, folder=None, memory: int = DEFAULT_CASE_MEMORY) -> np.ndarray:
    """The array a case-file value denotes, for one dtype; ``folder`` is the
    case file's, where an ``npy`` or ``json`` generator's file is, and
    ``memory`` the memory guard's limit (``--case-memory``) that bounds it."""
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
    if name == "npy":
        return _npy(spec, dtype, folder, memory)
    if name == "json":
        return _json(spec, dtype, folder, memory)
    if not isinstance(spec, dict):
        raise ValueProblem(f"{name} takes a mapping of fields", (name,))
    required, optional = _GENERATOR_FIELDS[name]
    # key=str: a file may mix key types (7: 2, x: 1), which do not compare
    missing = sorted(required - set(spec))
    unknown = sorted(set(spec) - required - optional, key=str)
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
        count = math.prod(shape)
        start = _int_field(spec, name, "start", INT64_MIN, INT64_MAX, 0)
        if start + count - 1 > INT64_MAX:
            raise ValueProblem(
                f"start {start} + {count} elements passes the int64 maximum {INT64_MAX}",
                (name, "start"),
            )
        return _from_ints(np.arange(start, start + count, dtype=np.int64).reshape(shape), dtype)
    if name == "full":
        value = from_literal(spec["value"], dtype)
        try:
            return np.broadcast_to(value, shape).copy()
        except ValueError:
            raise ValueProblem(
                f"a value of shape {list(value.shape)} cannot broadcast to shape {list(shape)}",
                (name, "value"),
            ) from None
    rng = np.random.default_rng(_int_field(spec, name, "seed", 0, INT64_MAX))
    if "low" in spec or "high" in spec:
        if "low" not in spec or "high" not in spec:
            raise ValueProblem("random takes both low and high, or neither", (name,))
        low = _int_field(spec, name, "low", INT64_MIN, INT64_MAX)
        high = _int_field(spec, name, "high", INT64_MIN, INT64_MAX)
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
