"""The registry: the built-in runtimes, read from their adapter files, and
the adapters of other packages, read from their entry points.

Each built-in runtime is a module of this package with a ``RUNTIME``
(:class:`conformance.adapters.contract.Runtime`); every table of runtimes
the package has derives from those declarations, here: :data:`BUILTIN`,
:data:`EXTRAS`, :data:`OPT_IN`, :data:`PROFILES`, :data:`PRECISE`,
:data:`PACKAGES`, and what the engine, the export and the reproducer ask of
one (:func:`declared`). Nothing else in the package names a runtime
(tests/test_runtime_facts.py holds it). Each but the core's comes with an
extra of the package (:data:`EXTRAS`), and one that is not installed is
named with it (:func:`not_installed`). The compilers (:data:`OPT_IN`) run
only when named.

Third-party adapters register a ``module:Class`` target in the
``conformance.adapters`` entry-point group under the name ``--runtime``
takes (a built-in name cannot be taken); a ``module:Class`` target also
works directly wherever a runtime name is expected (:func:`parse`).

A target's **baseline name** (:func:`baseline_name`; its known
discrepancies are ``<baseline name>.yaml``) is the registered name of its
adapter, built in or entry point (``openvino:1thread`` and a targets file's
target of adapter ``openvino`` read ``openvino.yaml``); for a
``module:Class`` adapter it is the target's name, the one its results carry
(given as such on ``--runtime``: the ``name`` its ``info()`` reports, the
class's ``name`` attribute). An entry point whose name breaks
:data:`conformance.adapters.names.BASELINE_RULE` is refused
(:func:`refused_entry_points`; naming it is an error saying why).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Mapping
from importlib.metadata import entry_points

from conformance.adapters import names
from conformance.adapters.contract import Adapter, Runtime
from conformance.adapters.names import BASELINE_RULE, RuntimeName, is_baseline_name
from conformance.tables.profiles import DEFAULT

ENTRY_POINT_GROUP = "conformance.adapters"
DISTRIBUTION = "onnx-gather-conformance"


def _declarations() -> tuple[Runtime, ...]:
    """Every ``RUNTIME`` of a module of this package, in their declared order."""
    package = importlib.import_module(__package__ or "conformance.adapters")
    found = []
    for module in pkgutil.iter_modules(package.__path__):
        declared = getattr(importlib.import_module(f"{package.__name__}.{module.name}"),
                           "RUNTIME", None)  # fmt: skip
        if isinstance(declared, Runtime):
            found.append((declared, f"{package.__name__}.{module.name}"))
    found.sort(key=lambda pair: pair[0].position)
    _TARGETS.update({runtime.name: f"{module}:{runtime.adapter}" for runtime, module in found})
    return tuple(runtime for runtime, _ in found)


_TARGETS: dict[str, str] = {}  # name -> module:Class, filled by _declarations
RUNTIMES: tuple[Runtime, ...] = _declarations()
_BY_NAME = {runtime.name: runtime for runtime in RUNTIMES}

# name -> (target, the modules that must be importable for it to be installed,
# comma-separated: IREE's compiler and runtime are two distributions)
BUILTIN: dict[str, tuple[str, str]] = {
    runtime.name: (_TARGETS[runtime.name], ",".join(runtime.modules)) for runtime in RUNTIMES
}
# The extra of this package that installs each built-in runtime (pyproject.toml);
# one in the core has none.
EXTRAS = {runtime.name: runtime.extra for runtime in RUNTIMES if runtime.extra}
# Built in, but never run unless named (``--runtime NAME``, a targets file, the
# scoreboard): the compilers, whose compile cost per model (docs/compilers.md,
# "Cost": a fraction of a second to seconds) would slow the main job and every
# fuzz campaign that runs the default runtimes.
OPT_IN = frozenset(runtime.name for runtime in RUNTIMES if runtime.opt_in)
# Each runtime's profiles (conformance.tables.profiles says what a profile is):
# ``default`` (sets nothing) first, then those its adapter declares.
PROFILES: dict[str, dict[str, dict[str, object]]] = {
    runtime.name: {DEFAULT: {}, **{k: dict(v) for k, v in runtime.profiles.items()}}
    for runtime in RUNTIMES
    if runtime.profiles is not None
}
# Per runtime, its profiles of full precision and no optimisation: where a whole
# model's outputs differ between targets, `conformance model` runs the model
# again in these and records whether the difference disappears (docs/models.md).
PRECISE: dict[str, tuple[str, ...]] = {r.name: r.precise for r in RUNTIMES if r.precise}
# Profiles whose runtime comes from another package, which cannot share an
# environment with the runtime's usual one: run them through a targets file's
# `python`.
PACKAGES: dict[tuple[str, str], str] = {
    (runtime.name, profile): package
    for runtime in RUNTIMES
    for profile, package in runtime.packages.items()
}


# The distributions whose versions a run's header records (header.json `packages`).
HEADER_PACKAGES = tuple(r.header_package for r in RUNTIMES if r.header_package)


def declared(name: str | None) -> Runtime | None:
    """The declaration of the built-in runtime ``name``; None for any other."""
    return _BY_NAME.get(name or "")


def declaring(form: str) -> str:
    """The built-in runtime whose adapter file declares the export form ``form``
    (``Runtime.native``): the one its runner runs on."""
    found = [runtime.name for runtime in RUNTIMES if form in runtime.native]
    if len(found) != 1:
        raise LookupError(f"the export form {form!r} is declared by {found or 'no runtime'}")
    return found[0]


def on_gpu(adapter: str, properties: Mapping[str, object]) -> bool:
    """Whether a target of this adapter with these properties runs on an
    NVIDIA GPU, by its own properties (docs/gpu.md); a targets file's
    ``device: gpu`` says it of other adapters."""
    runtime = declared(adapter)
    return runtime is not None and runtime.gpu is not None and runtime.gpu(properties)


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
    takes a built-in name is ignored: a built-in name is always the built-in;
    one whose name is no baseline name is refused: :func:`refused_entry_points`)."""
    known = {name: target for name, (target, _) in BUILTIN.items()}
    known.update(_entry_points()[0])
    return known


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
    name (:func:`is_baseline_name`), or when it is the name of a registered
    runtime (``onnxruntime``, ``openvino:1thread``) of another class: an
    adapter that calls itself so is not that runtime, and never reads its
    baseline (``conformance gate`` reading a header that says so). The class
    a name is registered for, given as ``module:Class``, is that runtime."""
    known = registered()
    if adapter in known:  # built-in names, and entry points accepted for their name
        return adapter if is_baseline_name(adapter) else None
    if runtime in known:
        return runtime if known[runtime] == adapter and is_baseline_name(runtime) else None
    if runtime.partition(":")[0] in known:  # a profile's name: never a module:Class's
        return None
    return runtime if is_baseline_name(runtime) else None


def parse(spec: str) -> RuntimeName:
    """The one reading of a runtime name (:func:`conformance.adapters.names.read`)
    against what is registered here."""
    known = registered()
    refused = {} if spec in known else refused_entry_points()
    return names.read(spec, known, refused, PROFILES)


def resolve(name: str) -> str:
    """The ``module:Class`` target of a runtime name, as :func:`parse` reads it."""
    return parse(name).target


def instantiate(target: str, properties: dict | None = None) -> Adapter:
    module, _, attribute = target.partition(":")
    cls = getattr(importlib.import_module(module), attribute)
    return cls(properties) if properties else cls()
