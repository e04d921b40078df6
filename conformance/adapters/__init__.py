"""Adapters: how the harness talks to one runtime.

An adapter turns model bytes and NumPy feeds into a runtime's outputs, and
turns the runtime's failures into typed errors so that the judge can tell a
model refused at load time (:class:`LoadError`) from a failure while running
(:class:`RunError`), and both from what the Python binding cannot carry at
all (:class:`HarnessUnsupported`, never blamed on the runtime).

Adapters run inside isolated worker processes (:mod:`conformance.engine`);
nothing here protects against a crash.

Built-in adapters are named ``onnxruntime``, ``openvino``, ``reference``
(``onnx.reference.ReferenceEvaluator``), ``tract`` (Sonos' Rust engine,
through its Python binding), ``tvm`` (Apache TVM's Relax ONNX frontend and
LLVM codegen) and ``iree`` (IREE's ONNX importer, ``iree-compile`` and
runtime); each but ``reference`` (in the core: onnx) comes with an extra of
the package (:data:`EXTRAS`), and one that is not installed is named with it
(:func:`not_installed`). The compilers (:data:`OPT_IN`) run only when named.
Third-party adapters register a ``module:Class`` target in the
``conformance.adapters`` entry-point group under the name ``--runtime`` takes
(a built-in name cannot be taken); a
``module:Class`` target also works directly wherever a runtime name is
expected.

A target's **baseline name** (:func:`baseline_name`; its known discrepancies
are ``<baseline name>.yaml``) is the registered name of its adapter, built in
or entry point (``openvino:1thread`` and a targets file's target of adapter
``openvino`` read ``openvino.yaml``); for a ``module:Class`` adapter it is the
target's name, the one its results carry (given as such on ``--runtime``:
the ``name`` its ``info()`` reports, the class's ``name`` attribute). Every
baseline name follows one rule (:data:`BASELINE_RULE`): a target whose name
breaks it has no baseline file, and an entry point whose name breaks it is
refused (:func:`refused_entry_points`; naming it is an error saying why), so
that no name ever becomes a path outside the ``--known`` folder.

A runtime name is read in one place, :func:`parse`, by every caller
(``--runtime``, the pytest plugin's ``--runtime``, a targets file's
``adapter``, :func:`resolve`): ``NAME`` (a registered runtime), ``NAME:PROFILE``
(a profile of :mod:`conformance.tables.profiles` of that runtime), or
``module:Class`` where ``module`` is not a registered name: a dotted Python
module path and a class name starting with a capital letter
(``mypkg.adapters:MyAdapter``). Nothing else is a runtime name: not an empty
or blank one, not one with spaces, not ``NAME:`` with no profile, not
``foo:bar``. Whether a ``module:Class`` imports is found by its worker, in
its own interpreter.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from importlib.metadata import entry_points

import numpy as np

from conformance.errors import ConformanceError
from conformance.tables.profiles import DEFAULT, PROFILES

ENTRY_POINT_GROUP = "conformance.adapters"
DISTRIBUTION = "onnx-gather-conformance"
# The extra of this package that installs each built-in runtime (pyproject.toml);
# reference is in the core.
EXTRAS = {
    "onnxruntime": "onnxruntime",
    "openvino": "openvino",
    "tract": "tract",
    "tvm": "tvm",
    "iree": "iree",
}
# A baseline name becomes a file name, <name>.yaml in a --known folder: 1 to
# 64 of these characters (no separator, so never a path), and not . or ..
# (docs/cli.md). One rule for every name, built in, registered or a target's.
BASELINE_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
BASELINE_RULE = "1 to 64 letters, digits, '.', '_' and '-', and not '.' or '..'"

# name -> (target, the modules that must be importable for it to be installed,
# comma-separated: IREE's compiler and runtime are two distributions)
BUILTIN: dict[str, tuple[str, str]] = {
    "onnxruntime": ("conformance.adapters.ort:OnnxRuntimeAdapter", "onnxruntime"),
    "openvino": ("conformance.adapters.ov:OpenVinoAdapter", "openvino"),
    "reference": ("conformance.adapters.reference:ReferenceAdapter", "onnx.reference"),
    "tract": ("conformance.adapters.tract:TractAdapter", "tract"),
    "tvm": ("conformance.adapters.tvm:TvmAdapter", "tvm"),
    "iree": ("conformance.adapters.iree:IreeAdapter", "iree.compiler,iree.runtime"),
}
# Built in, but never run unless named (``--runtime tvm``, a targets file, the
# scoreboard): the compilers, whose compile cost per model (docs/compilers.md,
# "Cost": a fraction of a second to seconds) would slow
# the main job and every fuzz campaign that runs the default runtimes.
OPT_IN = frozenset({"tvm", "iree"})


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


class UnknownRuntime(ConformanceError, LookupError):
    """Not a runtime name (:func:`parse`); the message says what is known."""


class UnknownProfile(UnknownRuntime):
    """A registered runtime with no such profile."""


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
    to read back the configuration the runtime really runs with."""
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


def is_baseline_name(name: object) -> bool:
    """Whether ``name`` may name a baseline file (:data:`BASELINE_RULE`)."""
    return (
        isinstance(name, str)
        and BASELINE_NAME.fullmatch(name) is not None
        and name not in {".", ".."}
    )


def _entry_points() -> tuple[dict[str, str], dict[str, str]]:
    """The ``conformance.adapters`` entry points read from the installed
    packages' metadata (nothing imported): the accepted ones (name ->
    ``module:Class``) and the refused ones (name -> why). An entry point's
    name is its runtime's name and its baseline file's (``<name>.yaml``), so
    a name that breaks :data:`BASELINE_RULE` (``../x``, 300 characters) is
    refused here, at registration, and never becomes a path."""
    accepted: dict[str, str] = {}
    refused: dict[str, str] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in BUILTIN or entry.name in accepted or entry.name in refused:
            continue  # a built-in name cannot be taken; the first of a name stays
        if is_baseline_name(entry.name):
            accepted[entry.name] = entry.value
            continue
        dist = getattr(entry, "dist", None)
        package = f" of the package {dist.name!r}" if dist is not None else ""
        refused[entry.name] = (
            f"the {ENTRY_POINT_GROUP} entry point {entry.name!r}{package} ({entry.value}) "
            f"is refused: a registered runtime name names its baseline file, <name>.yaml, "
            f"so it is {BASELINE_RULE}; rename the entry point"
        )
    return accepted, refused


def registered() -> dict[str, str]:
    """Every known runtime name and its ``module:Class`` target: the built-ins,
    then the entry points of the ``conformance.adapters`` group (one that
    takes a built-in name is ignored: ``openvino`` is always OpenVINO; one
    whose name is no baseline name is refused: :func:`refused_entry_points`)."""
    names = {name: target for name, (target, _) in BUILTIN.items()}
    names.update(_entry_points()[0])
    return names


def refused_entry_points() -> dict[str, str]:
    """The entry points of the group refused for their name, each with why."""
    return _entry_points()[1]


def _importable(modules: str) -> bool:
    """Whether every module of a comma-separated list is importable."""
    try:
        return all(importlib.util.find_spec(m) is not None for m in modules.split(","))
    except (ModuleNotFoundError, ValueError):  # a parent package is missing
        return False


def installed() -> list[str]:
    """Names of the runtimes installed here: the built-ins whose packages are
    importable, and every accepted entry point. An entry point is known from
    its package's metadata alone: finding a module imports its parent
    packages, whose ``__init__`` may raise, hang or crash, and only a worker
    may import a third-party adapter."""
    found = [name for name, (_, modules) in BUILTIN.items() if _importable(modules)]
    return found + list(_entry_points()[0])


def default_builtins() -> list[str]:
    """The built-in runtimes ``run`` and ``fuzz`` run when none is named (not :data:`OPT_IN`)."""
    return [name for name in BUILTIN if name not in OPT_IN]


def installed_builtins() -> list[str]:
    """The default built-in runtimes installed here: what ``run`` and ``fuzz``
    run by default (the :data:`OPT_IN` compilers only when named)."""
    return [name for name in default_builtins() if _importable(BUILTIN[name][1])]


def install_hint(name: str) -> str:
    """How to install the built-in runtime ``name``: the extra that brings it."""
    extra = EXTRAS.get(name)
    return f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"reinstall {DISTRIBUTION}"


def not_installed(name: str) -> str | None:
    """Why the built-in runtime ``name`` cannot run here, naming the extra that
    brings it; None when it is installed (or not a built-in)."""
    if name not in BUILTIN or _importable(BUILTIN[name][1]):
        return None
    return f"{name} is not installed: {install_hint(name)}"


def baseline_name(adapter: str, runtime: str) -> str | None:
    """The name of the baseline file (``<name>.yaml``) of the target ``runtime``
    of ``adapter``: the adapter's registered name (built in or entry point), or
    for any other adapter (a ``module:Class``) the target's name, the one its
    results carry: for a ``module:Class`` given as such, what its ``info()``
    reports as ``name`` (the class's ``name`` attribute, by the base class's
    convention). The class is never imported here: its import may hang or
    crash, which only a worker may do. None when that name cannot be a file
    name (:func:`is_baseline_name`): such a target has no baseline file."""
    if adapter in registered():  # built-in names, and entry points accepted for their name
        return adapter if is_baseline_name(adapter) else None
    return runtime if is_baseline_name(runtime) else None


@dataclass(frozen=True)
class RuntimeName:
    """What a runtime name says (:func:`parse`)."""

    adapter: str  # the registered runtime name, or the module:Class itself
    target: str  # the module:Class its worker instantiates
    profile: str | None  # the profile named after NAME: (None: none named)

    @property
    def is_class(self) -> bool:
        """A ``module:Class`` given as such, not a registered name."""
        return self.adapter == self.target


def _is_module_path(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def parse(spec: str) -> RuntimeName:
    """The one reading of a runtime name: ``NAME``, ``NAME:PROFILE`` or
    ``module:Class``; raises UnknownRuntime (UnknownProfile) saying what exists."""
    known = registered()
    listed = ", ".join(sorted(known))
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownRuntime(f"a runtime name is empty; known: {listed}")
    if not spec.isprintable() or any(ch.isspace() for ch in spec):
        raise UnknownRuntime(
            f"{spec!r} is not a runtime name (no spaces or control characters); known: {listed}"
        )
    if spec in known:
        return RuntimeName(spec, known[spec], None)
    refused = refused_entry_points()
    if spec in refused:
        raise UnknownRuntime(refused[spec])
    name, colon, after = spec.partition(":")
    if colon and name in known:
        profiles = PROFILES.get(name, {DEFAULT: {}})
        if after not in profiles:
            said = f"no profile {after!r}" if after else "no profile after ':'"
            raise UnknownProfile(f"{name} has {said}; its profiles: {', '.join(profiles)}")
        return RuntimeName(name, known[name], after)
    if colon and _is_module_path(name) and after.isidentifier() and after[0].isupper():
        return RuntimeName(spec, spec, None)
    hint = (
        " (a module:Class adapter is a dotted module path and a capitalised class name: "
        "mypkg.adapters:MyAdapter)"
        if colon
        else ""
    )
    raise UnknownRuntime(f"unknown runtime {name!r}; known: {listed}{hint}")


def resolve(name: str) -> str:
    """The ``module:Class`` target of a runtime name, as :func:`parse` reads it."""
    return parse(name).target


def instantiate(target: str, properties: dict | None = None) -> Adapter:
    module, _, attribute = target.partition(":")
    cls = getattr(importlib.import_module(module), attribute)
    return cls(properties) if properties else cls()
