"""tract (Sonos' Rust inference engine) through its Python binding, ``tract``.

The default configuration is tract's own documented Python usage (the
package's README and the docstring of ``tract/__init__.py``), nothing else::

    tract.onnx().load(path).into_model().into_runnable().run([...])[i].to_numpy()

``into_model`` types and declutters the model, ``into_runnable`` prepares it
on the default CPU runtime, which optimizes it; ``info()['effective']`` reads
back the runtime's name and the runnable's ``tract.stage`` property. The
binding sets no thread count or precision: there is nothing to configure.

Traps handled here:
- The binding loads a model only from a path (libtract has
  ``tract_onnx_load_buffer``, the binding does not expose it), so the model
  bytes go through an anonymous in-memory file (``memfd_create``) that tract
  opens by its ``/proc/self/fd/N`` path: nothing is written to disk, and the
  kernel frees it when it is closed or when the process dies. A panic can
  abort the worker inside ``load`` (tract folds an out-of-range index baked
  into the model while it loads), where no clean-up of ours can run: a
  temporary file left a ``conformance-tract-*.onnx`` behind at every such
  panic. Where there is no memfd (not Linux), a temporary file in the
  worker's own scratch folder (``TMPDIR``, which the engine removes with the
  worker) stands in.
- ``run`` takes a list in the model's input order, and the runnable does not
  name its inputs: the order is read from the typed model before it is
  consumed by ``into_runnable``.
- Tensors cross the binding through libtract's C API; the binding converts
  bool, int8-int64, uint8-uint64, float16, float32, float64 (``_DATUM_TYPES``).
  A string, bfloat16 or complex input cannot go in (``Tensor.from_numpy``
  fails on their NumPy dtypes), and a string output cannot come out
  (``Unsupported DatumType in the public API String``): both are refused as
  harness-unsupported. tract itself runs string Gathers; its ONNX loader
  refuses bfloat16 and complex models (``Unknown DatumType``), which is the
  runtime's own refusal.
- libtract's error text is anyhow's debug form. With ``RUST_BACKTRACE``
  set, anyhow captures and symbolizes a stack trace for every error (~50 ms
  per refused input instead of 0.03 ms) and prints it in the message. The
  adapter sets ``RUST_BACKTRACE=0`` and ``RUST_LIB_BACKTRACE=0`` in its worker
  before tract runs (both are read once, at first use): what tract computes
  is the same, its messages say what failed; any backtrace left is cut.
- A panic inside tract cannot unwind through its C API: the process aborts
  (SIGABRT, "thread caused non-unwinding panic. aborting."). Nothing to catch
  here: the isolated worker dies and the run records a crash. The panic's own
  message ("index out of bounds: the len is 3 but the index is 3") goes to
  stderr first; the abort then prints a stack trace whatever
  ``RUST_BACKTRACE`` says.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from conformance.adapters.contract import (
    Adapter,
    HarnessUnsupported,
    LoadError,
    NativeList,
    RunError,
    Runtime,
    probe_model,
    runtime_module,
)
from conformance.tables import dtypes

if TYPE_CHECKING:
    import tract
else:
    tract = runtime_module("tract")

RUNTIME_NAME = "tract"
# libtract's public datum types (by their names) -> the NumPy dtype ``to_numpy`` gives for each.
_DATUM_TYPES = {
    "BOOL": np.dtype(np.bool_),
    "I8": np.dtype(np.int8),
    "I16": np.dtype(np.int16),
    "I32": np.dtype(np.int32),
    "I64": np.dtype(np.int64),
    "U8": np.dtype(np.uint8),
    "U16": np.dtype(np.uint16),
    "U32": np.dtype(np.uint32),
    "U64": np.dtype(np.uint64),
    "F16": np.dtype(np.float16),
    "F32": np.dtype(np.float32),
    "F64": np.dtype(np.float64),
}
CARRIED = frozenset(_DATUM_TYPES.values())


@functools.cache
def _dtypes() -> dict:
    """libtract's public datum types -> the NumPy dtype ``to_numpy`` gives for each."""
    return {getattr(tract.DatumType, name): dtype for name, dtype in _DATUM_TYPES.items()}


PIPELINE = "tract.onnx().load(path).into_model().into_runnable()"
_NO_DATUM_TYPE = (
    "tract's Python binding carries only bool, integer and float16/32/64 tensors "
    "(libtract's C API, which it goes through, has no string or bfloat16 datum type)"
)
_STAGE = re.compile(r"String (\w+)\)$")  # the dump of a string scalar: Tensor(,String optimized)


def message(error: tract.TractError) -> str:
    """libtract's error text without the backtrace ``RUST_BACKTRACE`` adds."""
    return str(error).partition("\n\nStack backtrace:")[0].rstrip()


def _to_tensor(name: str, array: np.ndarray) -> tract.Tensor:
    if array.dtype not in CARRIED:
        raise HarnessUnsupported(f"input {name!r} is {dtypes.name_of(array)}: {_NO_DATUM_TYPE}")
    return tract.Tensor.from_numpy(array)


def _output_dtype(fact) -> np.dtype | str:
    """The NumPy dtype an output comes back as, or why it cannot come back."""
    try:
        kind = tract.DatumType(fact.datum_type())
    except tract.TractError as error:  # "Unsupported DatumType in the public API String"
        return (
            f"tract ran the model, but its output ({fact.dump()}) cannot come out: "
            f"{_NO_DATUM_TYPE} ({message(error)})"
        )
    if kind not in _dtypes():
        return f"tract ran the model, but its output is {kind.name}: Tensor.to_numpy cannot read it"
    return _dtypes()[kind]


def _from_tensor(tensor: tract.Tensor, dtype: np.dtype) -> np.ndarray:
    array = tensor.to_numpy()
    if array.dtype != dtype:  # the binding's own conversion, checked rather than trusted
        raise HarnessUnsupported(f"tract's binding returned {dtype} as NumPy {array.dtype}")
    return array


@contextlib.contextmanager
def _model_file(model: bytes):
    """A path tract can load the model bytes from, for as long as the block lasts."""
    if hasattr(os, "memfd_create"):
        descriptor = os.memfd_create("conformance-tract-model", os.MFD_CLOEXEC)
        try:
            view = memoryview(model)
            while view:
                view = view[os.write(descriptor, view) :]
            yield f"/proc/self/fd/{descriptor}"
        finally:
            os.close(descriptor)
        return
    descriptor, path = tempfile.mkstemp(suffix=".onnx", prefix="conformance-tract-")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(model)
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


# Read by Rust's panic hook and by anyhow once per process, at first use.
QUIET = {"RUST_BACKTRACE": "0", "RUST_LIB_BACKTRACE": "0"}


class TractAdapter(Adapter):
    name = RUNTIME_NAME
    device = "CPU"

    def __init__(self, properties: dict | None = None) -> None:
        super().__init__(properties)
        if self.properties:  # nothing to set: the binding has no configuration
            raise ValueError(f"tract takes no properties, got {sorted(self.properties)}")
        os.environ.update(QUIET)

    def info(self) -> dict:
        runnable, _, _ = self.load(probe_model())
        stage = runnable.property("tract.stage").dump()
        found = _STAGE.search(stage)
        return {
            "name": self.name,
            "version": tract.version(),
            "device": self.device,
            "interface": "tract Python binding (ctypes over libtract's C API)",
            "effective": {
                "pipeline": PIPELINE,
                "runtime": tract.runtime_for_name("default").name(),
                "tract.stage": found.group(1) if found else stage,
                **{name: os.environ.get(name) for name in QUIET},
            },
        }

    def load(self, model: bytes):
        with _model_file(model) as path:
            try:
                typed = tract.onnx().load(path).into_model()
            except tract.TractError as error:
                raise LoadError(message(error)) from None
        names = [typed.input_name(i) for i in range(typed.input_count())]
        try:
            runnable = typed.into_runnable()
        except tract.TractError as error:
            raise LoadError(message(error)) from None
        kinds = [_output_dtype(runnable.output_fact(i)) for i in range(runnable.output_count())]
        return runnable, names, kinds

    def execute(self, session, feeds):
        runnable, names, kinds = session
        tensors = [_to_tensor(name, feeds[name]) for name in names]
        try:
            results = runnable.run(tensors)
        except tract.TractError as error:
            raise RunError(message(error)) from None
        arrays = []
        for tensor, dtype in zip(results, kinds, strict=True):
            if isinstance(dtype, str):
                raise HarnessUnsupported(dtype)
            arrays.append(_from_tensor(tensor, dtype))
        return arrays


def run_tract(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """tract's ONNX flow, as the adapter runs it: load, into_model, into_runnable."""
    import tract

    typed = tract.onnx().load(str(model)).into_model()
    names = [typed.input_name(i) for i in range(typed.input_count())]
    runnable = typed.into_runnable()
    tensors = [tract.Tensor.from_numpy(np.require(feeds[n], requirements="C")) for n in names]
    return runnable.run(tensors)[0].to_numpy()


RUNTIME = Runtime(
    name=RUNTIME_NAME,
    adapter=TractAdapter.__name__,
    position=3,
    modules=("tract",),
    extra="tract",
    # Its time goes to restarting workers after its panics, packed or not: alone.
    pack_size=1,
    native=(
        NativeList(
            file="node.txt",
            allow=True,
            about="tract's onnx suite runs the tests a line matches (^line$), ignores the others.",
        ),
    ),
    repro=run_tract,
)
