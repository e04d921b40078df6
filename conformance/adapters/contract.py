"""The contract of an adapter: what the harness asks of a runtime, what it
raises, and what a built-in runtime declares about itself.

An adapter turns model bytes and NumPy feeds into a runtime's outputs, and
turns the runtime's failures into typed errors so that the judge can tell a
model refused at load time (:class:`LoadError`) from a failure while running
(:class:`RunError`), and both from what the Python binding cannot carry at
all (:class:`HarnessUnsupported`, never blamed on the runtime).

A built-in runtime is one file of this package: its :class:`Adapter`
subclass and one :class:`Runtime`, the module's ``RUNTIME``, that says
everything the rest of the package knows of it (its extra, pack size,
timeout, profiles, export forms, reproducer); :mod:`.registry` reads them,
and every table of runtimes derives from it. The file imports its runtime
through :func:`runtime_module`, on first use, so that reading the
declarations imports no runtime (the main process, a worker of another
environment); a fork server imports them all before it forks
(:func:`preload`).
"""

from __future__ import annotations

import contextlib
import importlib
import time
import types
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np


class AdapterError(Exception):
    """A runtime's own failure, with the runtime's message."""

    stage = "run"


class LoadError(AdapterError):
    """The runtime refused the model (parsing, checking, compiling, creating a session)."""

    stage = "load"


class RunError(AdapterError):
    """The model loaded, and running it on these feeds failed."""

    stage = "run"


class HarnessUnsupported(Exception):
    """The Python binding cannot carry this input or output faithfully.

    Raised by the adapter, never by the runtime: it is recorded as
    ``harness_unsupported`` and never counted against the runtime.
    """


class WouldNotFinish(Exception):
    """The runtime cannot answer this input within any timeout, and the adapter
    knows it before running: it has counted the steps of a loop the runtime
    would enter (``reference``: NumPy's wrap loop, docs/development.md, "The
    main job's time"). Recorded as ``timeout`` with this message, without
    spending the timeout, so that the verdict does not depend on the machine's
    load. Raised only on a count, never on a guess.
    """


# -- a runtime imported on first use ---------------------------------------------------
class _RuntimeModule(types.ModuleType):
    """A module imported on its first attribute (the real one, from then on, by
    ``importlib``'s cache); a runtime that is not installed fails there, with
    Python's own ``ModuleNotFoundError``."""

    def __getattr__(self, attribute: str):
        return getattr(importlib.import_module(self.__name__), attribute)


def runtime_module(name: str) -> types.ModuleType:
    """The module ``name``, imported when first used: an adapter file imports
    its runtime through this (under ``if TYPE_CHECKING: import ...`` for the
    types), so that its declaration can be read where the runtime is absent."""
    return _RuntimeModule(name)


def preload(module: types.ModuleType) -> None:
    """Import the runtime modules an adapter's module holds (a fork server's,
    before it forks: its workers start with their runtime imported, as a
    worker started directly has it once its adapter starts). One that fails
    to import fails in the worker too, which reports it."""
    for value in list(vars(module).values()):
        if isinstance(value, _RuntimeModule):
            with contextlib.suppress(BaseException):
                importlib.import_module(value.__name__)


@dataclass(frozen=True)
class Timed:
    outputs: list[np.ndarray]
    load_s: float  # 0.0 when the session came from the cache
    run_s: float
    cached: bool


class Adapter:
    """Base class. Subclasses set ``name`` and implement the four hooks.

    ``load`` and ``execute`` wrap only the runtime's own calls in their
    ``try`` blocks, so that a bug in the adapter's conversion code surfaces as
    a harness error instead of being blamed on the runtime.
    """

    name: str = "?"
    cache_size = 256  # sessions kept per worker, least recently used dropped

    def __init__(self, properties: dict | None = None) -> None:
        self._sessions: OrderedDict[bytes, object] = OrderedDict()
        # The runtime's own configuration names and values (a profile of
        # conformance.tables.profiles); empty: the runtime's defaults.
        self.properties = dict(properties or {})

    # -- hooks -------------------------------------------------------------
    def info(self) -> dict:
        """``name`` (what results call the runtime unless the target names it),
        ``version``, ``device``, ``effective`` (the configuration the runtime
        reports it runs with, read back from a compiled model or session) and
        anything else worth recording in the run header."""
        raise NotImplementedError

    def load(self, model: bytes):
        """A ready-to-run session for the model; raises LoadError."""
        raise NotImplementedError

    def execute(self, session, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        """The outputs, as NumPy arrays of the runtime's output types; raises RunError."""
        raise NotImplementedError

    # -- the protocol --------------------------------------------------------
    def holds(self, key: bytes | None) -> bool:
        """Whether :meth:`run` with ``key`` takes its cached session (and does
        not read the model): the worker then need not join a model's parts."""
        return key is not None and key in self._sessions

    def run(self, model: bytes, feeds: dict[str, np.ndarray], key: bytes | None = None) -> Timed:
        """Run the model on the feeds; the session is cached under ``key`` when given."""
        cached = key is not None and key in self._sessions
        start = time.perf_counter()
        if cached and key is not None:  # (cached implies a key; says so to mypy)
            session = self._sessions[key]
            self._sessions.move_to_end(key)
        else:
            session = self.load(model)
            if key is not None:
                self._sessions[key] = session
                if len(self._sessions) > self.cache_size:
                    self._sessions.popitem(last=False)
        loaded = time.perf_counter()
        outputs = self.execute(session, feeds)
        done = time.perf_counter()
        return Timed(outputs, 0.0 if cached else loaded - start, done - loaded, cached)


def compiled_inputs(model: bytes):
    """The ONNX model a compiler is given, and the names its entry function
    takes, positionally: the graph inputs that are not initializers (which
    compilers make constants). Bytes that are no model are a ``LoadError``."""
    import onnx

    try:
        proto = onnx.ModelProto.FromString(model)
    except Exception as error:  # not a model; no runtime of ours parses it
        raise LoadError(f"not an ONNX model: {type(error).__name__}: {error}") from None
    baked = {tensor.name for tensor in proto.graph.initializer}
    return proto, [value.name for value in proto.graph.input if value.name not in baked]


def probe_model() -> bytes:
    """A one-node float32 Gather model: compiled once by an adapter's ``info``
    to read back the configuration the runtime really runs with. One fixed
    model on purpose, not an operator's row: it probes the runtime, not an
    operator, and every runtime compiles it."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Gather", ["data", "indices"], ["output"], axis=0)],
        "probe",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, [4]),
            helper.make_tensor_value_info("indices", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # readable by every runtime version this project supports
    return onnx.ModelProto.SerializeToString(model)


# -- what a built-in runtime declares ------------------------------------------------
@dataclass(frozen=True)
class NativeList:
    """An export runner's expected-failure list that is one line per test
    (:mod:`conformance.export.runners` writes it): ``line`` with ``{test}``
    the test's name; ``allow``: every test is listed and a known failure is
    commented out (an allow list), else only the known failures are (a deny
    list); ``comment``: the comment mark, None where the form has none (the
    reasons are then in ``failing.txt`` only); ``about``: a comment line
    under the header saying how the runner reads the list."""

    file: str
    line: str = "{test}"
    allow: bool = False
    comment: str | None = "#"
    about: str = ""


@dataclass(frozen=True)
class Runtime:
    """What the package knows of a built-in runtime: declared once, in its
    adapter file (``RUNTIME``), read by :mod:`.registry`.

    ``adapter``: the class of the file; ``position``: where it stands among
    the built-ins (the order ``run`` runs them and lists name them);
    ``modules``: what must import for it to be installed; ``extra``: the
    package's extra that installs it (None: in the core); ``opt_in``: run
    only when named; ``pack_size``: cases per pack, measured (None: not
    measured, alone); ``timeout``: seconds per job where the engine's default
    does not suit it; ``profiles``: its named configurations beyond
    ``default`` (None: it takes none), each the properties its adapter sets;
    ``precise``: its profiles of full precision and no optimisation;
    ``packages``: profile -> the package, in another environment, that brings
    it; ``gpu``: whether a target of these properties runs on an NVIDIA GPU;
    ``native``: its export runners' expected-failure forms (a form's name in
    :mod:`conformance.export.runners`, or a :class:`NativeList`);
    ``repro``: the function ``repro.py`` runs it with (stand-alone: it
    imports its runtime inside, and nothing of this package);
    ``single_threaded``: it computes in one thread whatever is set;
    ``header_package``: the distribution whose version a run's header
    records beside NumPy's and onnx's (``packages``); ``compared_against``:
    ``conformance model`` compares the other targets' outputs with its own
    when it ran.
    """

    name: str
    adapter: str
    position: int
    modules: tuple[str, ...]
    extra: str | None
    opt_in: bool = False
    pack_size: int | None = None
    timeout: float | None = None
    profiles: Mapping[str, Mapping[str, object]] | None = None
    precise: tuple[str, ...] = ()
    packages: Mapping[str, str] = field(default_factory=dict)
    gpu: Callable[[Mapping[str, object]], bool] | None = None
    native: tuple[str | NativeList, ...] = ()
    repro: Callable[..., np.ndarray] | None = None
    single_threaded: bool = False
    header_package: str | None = None
    compared_against: bool = False
