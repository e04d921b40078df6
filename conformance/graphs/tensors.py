"""A model's tensors: the one check of what each says it holds, and the one
reader of their values.

A tensor of a model is read only here, wherever it stands: the main graph's
initializers (dense and sparse), the tensors of node attributes (``t``,
``tensors``, ``sparse_tensor``, ``sparse_tensors``) and the graphs they hold
(``g``, ``graphs``: If, Loop and Scan bodies at any depth), model-local
functions and the graphs of their nodes, training graphs. :func:`every_tensor`
walks them all; :func:`check` is run on each when the model is read, and again
by :func:`value` and :func:`inline` whenever one is read, so no path reads a
file or trusts a field the check has not passed (a proto handed to
``onnx.reference`` gets the checked bytes inlined first: onnx would otherwise
read the files itself, relative to the working folder).

What is checked (``error: FILE: tensor NAME: WHAT``, exit 2,
:class:`BrokenTensor`):

- its dims are not negative;
- data in the proto: ``raw_data`` holds exactly the bytes its dims need, a
  typed field (``float_data``, ``int32_data``...) exactly the values; a string
  tensor has no ``raw_data`` (the spec forbids it) and as many ``string_data``
  as elements;
- external data (the ONNX external-data spec: ``location``, ``offset``,
  ``length``, ``checksum``; ``basepath``, which onnx's own writer may record,
  is ignored): each key once, no other key; ``location`` a relative path with
  no NUL, inside the model's folder once resolved, naming a regular file
  (opened without blocking, then ``fstat``: a FIFO, device, socket or folder is
  refused, whatever the length); ``offset`` and ``length`` decimal
  non-negative integers, ``length`` exactly the bytes the dims need; the file
  holds ``offset + length`` bytes; ``checksum`` 40 hexadecimal digits (the
  spec's SHA-1 of the file), compared with the file's own when its bytes are
  read. A string tensor cannot be external (external data is raw bytes, and
  strings have no raw form).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from conformance.errors import ConformanceError
from conformance.messages import first_line, shortened, shown


class BrokenTensor(ConformanceError, ValueError):
    """A tensor that does not hold what it says: ``error: FILE: tensor NAME: WHAT``, exit 2."""

    def __init__(self, model: Path | str, name: str, what: str) -> None:
        super().__init__(f"error: {model}: tensor {name or repr(name)}: {what}")
        self.path = Path(model)
        self.name = name
        self.what = what


# -- where tensors stand ----------------------------------------------------------
def every_tensor(proto: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every tensor a model holds, wherever it stands (the module's list)."""
    yield from graph_tensors(proto.graph)
    for function in proto.functions:
        yield from _node_tensors(function.node)
    for training in proto.training_info:
        yield from graph_tensors(training.initialization)
        yield from graph_tensors(training.algorithm)


def graph_tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """Every tensor of a graph: initializers, sparse ones, its nodes' (at any depth)."""
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield from (sparse.values, sparse.indices)
    yield from _node_tensors(graph.node)


def _node_tensors(nodes: Iterable[onnx.NodeProto]) -> Iterator[onnx.TensorProto]:
    for node in nodes:
        for attribute in node.attribute:
            yield from attribute_tensors(attribute)


def attribute_tensors(attribute: onnx.AttributeProto) -> Iterator[onnx.TensorProto]:
    """The tensors an attribute holds, those of the graphs it holds included."""
    if attribute.HasField("t"):
        yield attribute.t
    yield from attribute.tensors
    sparse = [attribute.sparse_tensor] if attribute.HasField("sparse_tensor") else []
    for each in (*sparse, *attribute.sparse_tensors):
        yield from (each.values, each.indices)
    if attribute.HasField("g"):
        yield from graph_tensors(attribute.g)
    for sub in attribute.graphs:
        yield from graph_tensors(sub)


# -- the check ----------------------------------------------------------------------
@dataclass(frozen=True)
class Stored:
    """Where an external tensor's bytes are, its fields checked."""

    location: str  # as the model says it
    file: Path  # resolved, inside the model's folder
    offset: int
    # the bytes to read: what its dims need; for an element type onnx does not know,
    # the length given (None without one)
    length: int | None
    checksum: str | None


KEYS = ("location", "offset", "length", "checksum")  # the spec's
IGNORED_KEYS = ("basepath",)  # onnx's writer may record it; files are read from the model's folder
NUMBER = re.compile(r"[0-9]{1,19}")  # decimal, within a file offset's range (int64)
SHA1 = re.compile(r"[0-9a-fA-F]{40}")


def check(tensor: onnx.TensorProto, model: Path) -> Stored | None:
    """``tensor`` checked (the module's rules; BrokenTensor else); where its
    bytes are when they are external (the file opened and measured), else None."""
    name = tensor.name
    if any(d < 0 for d in tensor.dims):
        raise BrokenTensor(model, name, f"dims {list(tensor.dims)}: a dim is never negative")
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        stored = _fields(tensor, model)
        os.close(_open(stored, model, name))
        return stored
    _check_in_proto(tensor, model)
    return None


def _elements(tensor: onnx.TensorProto) -> int:
    return math.prod(tensor.dims)


# Element types stored packed (onnx's numpy_helper packs them), in bits; the others take
# their NumPy itemsize. By name: an older onnx may not know the newest of them.
_PACKED = {"INT4": 4, "UINT4": 4, "FLOAT4E2M1": 4, "INT2": 2, "UINT2": 2}
_PACKED |= {"FLOAT6E2M3": 6, "FLOAT6E3M2": 6}
PACKED_BITS = {
    getattr(onnx.TensorProto, n): b for n, b in _PACKED.items() if hasattr(onnx.TensorProto, n)
}


def raw_bytes(tensor: onnx.TensorProto) -> int | None:
    """The bytes of raw data its dims need (None: a string, or a type onnx does not know)."""
    if tensor.data_type in (onnx.TensorProto.STRING, onnx.TensorProto.UNDEFINED):
        return None
    try:
        itemsize = helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (KeyError, ValueError, TypeError):
        return None
    bits = PACKED_BITS.get(tensor.data_type, 8 * itemsize)
    return (_elements(tensor) * bits + 7) // 8


# Complex types hold two values of their typed field per element (real, imaginary), the
# others one; packed types are numpy_helper's to count, when a node reads them.
_TWO_PER_ELEMENT = (onnx.TensorProto.COMPLEX64, onnx.TensorProto.COMPLEX128)


def _check_in_proto(tensor: onnx.TensorProto, model: Path) -> None:
    name, kind = tensor.name, tensor.data_type
    if kind == onnx.TensorProto.STRING:
        if tensor.HasField("raw_data"):
            raise BrokenTensor(
                model, name, "a string tensor holds raw_data, which the spec forbids for strings"
            )
        _count(model, name, "string_data", len(tensor.string_data), "strings", _elements(tensor))
        return
    if tensor.HasField("raw_data"):
        need = raw_bytes(tensor)
        if need is not None and len(tensor.raw_data) != need:
            raise BrokenTensor(
                model, name, f"raw_data holds {len(tensor.raw_data)} bytes, its dims need {need}"
            )
        return
    if kind in PACKED_BITS or raw_bytes(tensor) is None:
        return  # packed in their field, or unknown: read (or refused) when a node needs them
    field = helper.tensor_dtype_to_field(kind)
    per = 2 if kind in _TWO_PER_ELEMENT else 1
    _count(model, name, field, len(getattr(tensor, field)), "values", _elements(tensor) * per)


def _count(model: Path, name: str, field: str, held: int, what: str, need: int) -> None:
    if held != need:
        raise BrokenTensor(model, name, f"{field} holds {held} {what}, its dims need {need}")


def _fields(tensor: onnx.TensorProto, model: Path) -> Stored:
    """The external-data fields read and checked; the location resolved in the model's folder."""
    name = tensor.name
    given: dict[str, str] = {}
    for entry in tensor.external_data:
        key = entry.key
        if key in IGNORED_KEYS:
            continue
        if key not in KEYS:
            raise BrokenTensor(
                model,
                name,
                f"external data key {shown(key)} is not one of the spec's "
                f"({', '.join(KEYS)}): what its bytes mean is unknown",
            )
        if key in given:
            raise BrokenTensor(model, name, f"external data key {key!r} is given twice")
        given[key] = entry.value
    if tensor.data_type == onnx.TensorProto.STRING:
        raise BrokenTensor(
            model,
            name,
            "a string tensor cannot be external data: external data is raw bytes, "
            "and strings have no raw form",
        )
    location = given.get("location", "")
    file = _inside(model, name, location)
    offset = _number(model, name, given, "offset")
    length = _number(model, name, given, "length")
    need = raw_bytes(tensor)
    if length is not None and need is not None and length != need:
        raise BrokenTensor(model, name, f"external data length {length}, its dims need {need}")
    checksum = given.get("checksum")
    if checksum is not None and not SHA1.fullmatch(checksum):
        raise BrokenTensor(
            model,
            name,
            f"external data checksum {shown(checksum)} is not a SHA-1 digest "
            "(40 hexadecimal digits)",
        )
    return Stored(location, file, offset or 0, need if need is not None else length, checksum)


def _inside(model: Path, name: str, location: str) -> Path:
    """The file ``location`` names, resolved: a relative path inside the model's folder."""
    if not location:
        raise BrokenTensor(model, name, "external data has no location")
    said = f"external data location {shown(location)}"
    if "\x00" in location:
        raise BrokenTensor(model, name, f"{said} holds a NUL byte")
    folder = model.parent.resolve()
    if os.path.isabs(location):
        raise BrokenTensor(model, name, f"{said}: the location must be a path relative to {folder}")
    try:
        target = (folder / location).resolve()
    except (OSError, RuntimeError) as error:  # a symbolic-link loop, a name too long
        raise BrokenTensor(model, name, f"{said}: cannot be resolved: {error}") from None
    if folder not in target.parents:
        raise BrokenTensor(model, name, f"{said}: the location must be a file in {folder}")
    return target


def _number(model: Path, name: str, given: dict[str, str], key: str) -> int | None:
    text = given.get(key)
    if text is None:
        return None
    if not NUMBER.fullmatch(text):
        raise BrokenTensor(
            model,
            name,
            f"external data {key} {shown(text)} is not a decimal number of bytes "
            "(0 to 2^63-1, digits only)",
        )
    value = int(text)
    if value >= 1 << 63:
        raise BrokenTensor(model, name, f"external data {key} {text} is past 2^63-1")
    return value


def _open(stored: Stored, model: Path, name: str) -> int:
    """The file opened for reading, without blocking: a regular file that holds
    ``offset + length`` bytes (BrokenTensor else). The caller closes it."""
    said = f"external data location {shown(stored.location)}"
    try:
        before = os.stat(stored.file)
    except FileNotFoundError:
        where = shortened(str(stored.file), 160)
        raise BrokenTensor(model, name, f"{said}: missing file {where}") from None
    except OSError as error:
        raise BrokenTensor(model, name, f"{said}: cannot read it: {error.strerror}") from None
    _regular(before, said, model, name)  # before opening: opening a device may act on it
    try:
        fd = os.open(stored.file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise BrokenTensor(model, name, f"{said}: cannot read it: {error.strerror}") from None
    try:
        info = os.fstat(fd)  # what was opened, whatever the name points to now
        _regular(info, said, model, name)
        need = stored.offset + (stored.length or 0)
        if info.st_size < need:
            raise BrokenTensor(
                model,
                name,
                f"{said}: the file is short: {info.st_size} bytes, {need} needed "
                f"(offset {stored.offset} + length {stored.length or 0})",
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _regular(info: os.stat_result, said: str, model: Path, name: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = {
            stat.S_IFIFO: "a FIFO",
            stat.S_IFDIR: "a folder",
            stat.S_IFCHR: "a character device",
            stat.S_IFBLK: "a block device",
            stat.S_IFSOCK: "a socket",
        }.get(stat.S_IFMT(info.st_mode), "not a file")
        raise BrokenTensor(model, name, f"{said} is {kind}: only regular files are read")


# -- the reader ---------------------------------------------------------------------
def value(tensor: onnx.TensorProto, model: Path) -> np.ndarray:
    """A tensor's value, checked (BrokenTensor else); external bytes read from
    their file, at their offset, when asked for (the proto keeps no copy)."""
    stored = check(tensor, model)
    if tensor.data_type == onnx.TensorProto.STRING:
        return _strings(tensor, model)
    if stored is not None:
        copy = onnx.TensorProto()
        copy.CopyFrom(tensor)
        _fill(copy, _read(stored, model, tensor.name))
        tensor = copy
    try:  # never external here: numpy_helper reads no file
        return numpy_helper.to_array(tensor)
    except Exception as error:  # a segment, bytes that are not UTF-8, a packed type's count
        text = first_line(error, 200) or type(error).__name__
        raise BrokenTensor(model, tensor.name, f"cannot be read: {text}") from None


def _strings(tensor: onnx.TensorProto, model: Path) -> np.ndarray:
    """A string tensor as an object array of str, every character kept
    (numpy_helper goes through NumPy's fixed-width strings, which drop
    trailing NULs: ``'a\\0'`` would come back as ``'a'``)."""
    values = np.empty(len(tensor.string_data), dtype=object)
    for i, each in enumerate(tensor.string_data):
        try:
            values[i] = each.decode("utf-8")
        except UnicodeDecodeError:
            raise BrokenTensor(
                model, tensor.name, f"string_data[{i}] is not UTF-8 (strings are text)"
            ) from None
    return values.reshape(tuple(tensor.dims))


def inline(tensor: onnx.TensorProto, model: Path) -> None:
    """An external tensor made an in-proto one, with its checked bytes: for a
    proto handed to onnx, which would otherwise read the file itself."""
    stored = check(tensor, model)
    if stored is not None:
        _fill(tensor, _read(stored, model, tensor.name))


def _fill(tensor: onnx.TensorProto, raw: bytes) -> None:
    del tensor.external_data[:]
    tensor.data_location = onnx.TensorProto.DEFAULT
    tensor.raw_data = raw


# The SHA-1 of each file read, by (device, inode, size, modification time): a file many
# tensors share is hashed once.
_DIGESTS: dict[tuple[int, int, int, int], str] = {}


def _read(stored: Stored, model: Path, name: str) -> bytes:
    fd = _open(stored, model, name)
    try:
        length = stored.length or 0
        parts, got = [], 0
        while got < length:  # pread returns at most about 2 GiB at a time
            part = os.pread(fd, length - got, stored.offset + got)
            if not part:
                break
            parts.append(part)
            got += len(part)
        if got < length:
            raise BrokenTensor(
                model,
                name,
                f"external data location {shown(stored.location)}: the file ended after "
                f"{got} of {length} bytes (it changed while read)",
            )
        if stored.checksum is not None:
            _verify(fd, stored.checksum, stored.location, model, name)
        return b"".join(parts)
    finally:
        os.close(fd)


def _verify(fd: int, checksum: str, location: str, model: Path, name: str) -> None:
    info = os.fstat(fd)
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in _DIGESTS:
        digest, at = hashlib.sha1(usedforsecurity=False), 0
        while part := os.pread(fd, 1 << 24, at):
            digest.update(part)
            at += len(part)
        _DIGESTS[key] = digest.hexdigest()
    if _DIGESTS[key] != checksum.lower():
        raise BrokenTensor(
            model,
            name,
            f"external data checksum {checksum} is not the SHA-1 of {shown(location)} "
            f"({_DIGESTS[key]})",
        )
