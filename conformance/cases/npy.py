"""NumPy ``.npy`` arrays from files no one vouches for: a case file's ``npy``
generator (:mod:`conformance.cases.values`) and the members of ``conformance
model --inputs FILE.npz`` (:mod:`conformance.graphs.capture`).

``np.load`` allocates whatever a header declares before it reads a byte of
data (a header of 2^41 elements is a MemoryError, a 3 GiB zip bomb as much),
so the header is read first (:func:`read_header`: format 1.0 or 2.0, at most
NumPy's 10 000 header bytes, never a dtype of Python objects, which only a
pickle can hold), the caller holds the shape and dtype it declares to what
it allows (the memory guard, a declared shape), and only then is the array
read (:func:`read_data`: one allocation of the declared size, no more read
from the stream). A file is opened only if it is a regular file (a FIFO
would block the reader).
"""

from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

import numpy as np

MAGIC = b"\x93NUMPY"  # how every .npy begins (an .npz is a zip: b"PK")
CHUNK = 1 << 24  # bytes read at a time into the one allocation


class NpyProblem(ValueError):
    """Why a file or stream is not an ``.npy`` array this reads (for a person);
    its callers turn it into an error that names the file."""


@dataclass(frozen=True)
class Header:
    """What an ``.npy`` header declares."""

    shape: tuple[int, ...]
    dtype: np.dtype
    fortran_order: bool

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    def said(self) -> str:
        return f"shape {list(self.shape)} of {self.dtype}: {self.nbytes:,} bytes"


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file (opened without
    blocking, then asked: a FIFO or a device is never read); OSError, or
    NpyProblem for what is not a regular file."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise NpyProblem("not a regular file (a folder, a FIFO or a device is never read)")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_header(stream: IO[bytes]) -> Header:
    """The header at the start of ``stream``, which is left at the data."""
    try:
        version = np.lib.format.read_magic(stream)
    except (ValueError, EOFError) as error:
        raise NpyProblem(f"not an .npy array ({error})") from None
    readers = {
        (1, 0): np.lib.format.read_array_header_1_0,
        (2, 0): np.lib.format.read_array_header_2_0,
    }
    if version not in readers:
        raise NpyProblem(f".npy format {version[0]}.{version[1]}: only 1.0 and 2.0 are read")
    try:
        shape, fortran_order, dtype = readers[version](stream)
    except (ValueError, TypeError, SyntaxError, EOFError) as error:
        raise NpyProblem(f"its .npy header cannot be read ({error})") from None
    if dtype.hasobject:
        raise NpyProblem(
            f"its .npy header declares Python objects ({dtype}), which only a pickle holds: "
            "never read"
        )
    if any(size < 0 for size in shape):
        raise NpyProblem(f"its .npy header declares a negative dim: {list(shape)}")
    return Header(tuple(shape), dtype, bool(fortran_order))


def read_data(stream: IO[bytes], header: Header) -> np.ndarray:
    """The array ``header`` declares, read from ``stream`` (left at its data):
    one allocation of ``header.nbytes``, which the caller has allowed."""
    size = header.nbytes
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        chunk = stream.read(min(size - got, CHUNK))
        if not chunk:
            break
        view[got : got + len(chunk)] = chunk
        got += len(chunk)
    if got < size:
        raise NpyProblem(f"cut short: {got:,} bytes of data, its header declares {header.said()}")
    try:
        flat = np.frombuffer(buffer, dtype=header.dtype)
        return flat.reshape(header.shape, order="F" if header.fortran_order else "C")
    except (ValueError, TypeError) as error:
        raise NpyProblem(f"its data cannot be an array of {header.said()} ({error})") from None


def strings(array: np.ndarray) -> np.ndarray:
    """A NumPy text array (``U``: Unicode; ``S``: bytes, read as UTF-8, the
    encoding ONNX gives every string) as ONNX strings are fed: an object array
    of ``str``, which runtimes take and no pickle is needed to hold. Refused,
    naming the element: bytes that are not UTF-8, a code point no UTF-8 can
    encode (a lone surrogate, beyond U+10FFFF)."""
    if array.dtype.kind == "U" and array.size:
        # NumPy stores UCS-4 code units unchecked: one past U+10FFFF cannot
        # even become a str (SystemError), so it is found before any is made
        units = np.ascontiguousarray(array).view(array.dtype.byteorder + "u4")
        beyond = np.argwhere(units.reshape((*array.shape, -1)) > 0x10FFFF)
        if len(beyond):
            where = [int(i) for i in beyond[0][:-1]] if array.ndim else "the scalar"
            raise NpyProblem(f"element {where} holds a code point beyond U+10FFFF")
    out = np.empty(array.shape, dtype=object)
    for position, value in np.ndenumerate(array):
        try:
            text = value.decode("utf-8") if isinstance(value, bytes) else str(value)
            text.encode("utf-8")
        except (UnicodeDecodeError, UnicodeEncodeError) as error:
            where = list(position) if array.ndim else "the scalar"
            raise NpyProblem(f"element {where} is not UTF-8 text ({error.reason})") from None
        out[position] = text
    return out
