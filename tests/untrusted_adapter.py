"""An adapter that returns, on demand, what a third-party adapter may return
instead of a list of plain NumPy arrays: to provoke what real runtimes will
not do on demand.

It computes the oracle's output (as :class:`tests.faulty_adapter.FaultyAdapter`
does) and returns it in the form :data:`RETURNS` names, chosen by the first
element of ``data``: the code of that form (an int32 or float32 element, or
a string of the code's digits). Tests pass it to the engine as
``tests.untrusted_adapter:UntrustedAdapter``.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from tests.faulty_adapter import FaultyAdapter


class Tagged(np.ndarray):
    """An ndarray subclass of the adapter's own (the parent cannot import it)."""


class Unreadable(list):
    """A list that raises when it is read."""

    def __iter__(self):
        raise RuntimeError("this list cannot be iterated")

    def __len__(self):
        raise RuntimeError("this list has no length")


def _memmap(output: np.ndarray) -> np.memmap:
    path = os.path.join(tempfile.gettempdir(), f"output-{os.getpid()}.bin")
    mapped = np.memmap(path, dtype=output.dtype, mode="w+", shape=output.shape)
    mapped[...] = output
    return mapped


def _masked(output: np.ndarray, hide_first: bool) -> np.ndarray:
    mask = np.zeros(output.shape, dtype=bool)
    mask.flat[0] = hide_first
    return np.ma.masked_array(output, mask=mask)


def _strided(output: np.ndarray) -> np.ndarray:
    view = np.repeat(output, 2, axis=0)[::2]
    assert not view.flags.c_contiguous
    return view


def _read_only(output: np.ndarray) -> np.ndarray:
    copy = output.copy()
    copy.setflags(write=False)
    return copy


def _objects(output: np.ndarray, element) -> np.ndarray:
    held = np.empty(output.shape, dtype=object)
    for position in np.ndindex(output.shape):
        held[position] = element(output[position])
    return held


# form -> what execute returns, given the oracle's output
RETURNS = {
    "tuple": lambda out: (out,),
    "numpy scalar": lambda out: [out[()]],
    "0-d array": lambda out: [np.asarray(out.flat[0])],
    "memmap": lambda out: [_memmap(out)],
    "matrix": lambda out: [np.asmatrix(out)],
    "own subclass": lambda out: [out.view(Tagged)],
    "masked, none masked": lambda out: [_masked(out, hide_first=False)],
    "masked, one masked": lambda out: [_masked(out, hide_first=True)],
    "big-endian": lambda out: [out.astype(out.dtype.newbyteorder(">"))],
    "non-contiguous": lambda out: [_strided(out)],
    "read-only": lambda out: [_read_only(out)],
    "np.str_ elements": lambda out: [_objects(out, np.str_)],
    "numpy text": lambda out: [out.astype(str)],
    "object of ints": lambda out: [out.astype(object)],
    "object of arrays": lambda out: [_objects(out, lambda v: np.zeros(2))],
    "record dtype": lambda out: [out.astype([("value", out.dtype)])],
    "longdouble": lambda out: [out.astype(np.longdouble)],
    "datetime": lambda out: [out.astype("datetime64[s]")],
    "python list": lambda out: [out.tolist()],
    "python number": lambda out: [7],
    "bare array": lambda out: out,
    "dict": lambda out: {"output": out},
    "two outputs": lambda out: (out, out),
    "no output": lambda out: [],
    "huge view": lambda out: [np.broadcast_to(out.flat[0], (1 << 40,))],
    "unreadable list": lambda out: Unreadable([out]),
}
CODES = {form: -1100 - number for number, form in enumerate(RETURNS)}
_FORMS = {code: form for form, code in CODES.items()}


class UntrustedAdapter(FaultyAdapter):
    name = "untrusted"

    def execute(self, session, feeds):
        (output,) = super().execute(session, feeds)
        data = {**session[3], **feeds}["data"]
        try:
            code = int(str(data.flat[0]) if data.dtype == object else data.flat[0])
        except (ValueError, OverflowError):  # NaN, infinity, a word
            code = 0
        form = _FORMS.get(code)
        return [output] if form is None else RETURNS[form](output)


# The file whose existence stops StartsOnceAdapter from starting again.
TAKEN = "UNTRUSTED_LICENCE_TAKEN"


class StartsOnceAdapter(FaultyAdapter):
    """Starts once: once its worker has run a job, no worker of it starts
    again, as an adapter whose licence server takes one client at a time.
    A crash (FaultyAdapter's codes) then leaves it no worker."""

    name = "once"

    def __init__(self) -> None:
        if os.path.exists(os.environ[TAKEN]):
            raise RuntimeError("the licence is taken")
        super().__init__()

    def execute(self, session, feeds):
        with open(os.environ[TAKEN], "w", encoding="ascii"):
            pass
        return super().execute(session, feeds)
