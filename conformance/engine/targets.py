"""Targets: what a run judges. A target is an adapter, a configuration of it
(a profile of :mod:`conformance.tables.profiles`, or properties given
directly) and the Python environment its worker runs in.

``--runtime`` takes ``NAME[:PROFILE]`` (``openvino``, ``openvino:1thread``);
a bare name is the ``default`` profile. ``module:Class`` (a third-party or
test adapter) still works where the part before the colon is not a runtime
name. The syntax is read by :func:`conformance.adapters.parse` alone, here,
in the pytest plugin and in a targets file's ``adapter``. ``--targets FILE``
names targets in YAML, checked like case files (``file:line: field:
message``, through the strict loader of :mod:`conformance.cases.yaml_lines`)
against ``docs/schemas/targets.schema.json``::

    targets:
      ov2025:                      # the name results carry (`runtime`)
        adapter: openvino
        profile: default           # or: properties: {INFERENCE_NUM_THREADS: 1}
        python: envs/ov2025/bin/python   # another environment (relative to the file)
      cuda:
        adapter: onnxruntime
        profile: cuda              # on an NVIDIA GPU (docs/gpu.md)
        python: envs/ort-gpu/bin/python
        gpu_workers: 2             # its workers (default: its share of --gpu-workers)

A target's name is 1 to :data:`MAX_NAME` ASCII letters, digits, ``_``,
``-``, ``.`` and ``:``, starting with a letter or digit: it becomes part of
file names (a fuzz class's folder) and is typed on command lines. A name
that is a runtime name (``openvino``, ``onnxruntime:openvino-ep``) must be
that target, its adapter in that profile: results named ``openvino`` are
OpenVINO's default profile wherever they are read. ``python`` is a path
relative to the targets file's folder (never looked up on ``$PATH``), or
absolute; it must be an executable file. Properties are checked by
:func:`conformance.tables.profiles.property_problem` (no null, NaN or
infinity, integers within int64, thread counts whole numbers).

A target runs on an NVIDIA GPU (:attr:`Target.gpu`) when its properties say
so (:func:`conformance.adapters.registry.on_gpu`: ONNX Runtime's CUDA provider,
IREE's cuda driver) or its file says ``device: gpu`` (an adapter the table
does not know). A GPU target's workers are not ``-j``'s: the GPU targets of a
run share ``--gpu-workers`` (:func:`gpu_workers`), unless the file gives one
its own ``gpu_workers``.

A built-in runtime's properties say where it computes, and a file's
``device`` must agree: ``reference`` or ``onnxruntime`` (default profile)
with ``device: gpu`` would be judged on the CPU under a GPU's name, so the
file is refused at that line (``profile: cuda`` is ONNX Runtime on a GPU).

Results carry the target's name in ``runtime``; the header says, per target,
the adapter, profile, requested and effective properties, the package
version and the interpreter (:meth:`Target.recorded`). What the harness
knows of a target (its name, adapter, profile, requested properties, device,
a GPU target's device record, the interpreter) is the harness's: the
adapter's ``info()`` is recorded apart (``adapter_info``) and decides no
name, profile, device, baseline or scope; an adapter that calls itself by a
runtime's name, or a GPU target's adapter that reports no GPU, does not
start (:meth:`Target.refusal`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from conformance import adapters
from conformance.adapters import registry
from conformance.adapters.registry import PROFILES, on_gpu
from conformance.cases import yaml_lines, yaml_schema
from conformance.cases.loader import CaseErrors, YamlFileReader
from conformance.errors import ConformanceError
from conformance.tables.profiles import DEFAULT, property_problem

# A targets file's target name; docs/schemas/targets.schema.json says the same
# (propertyNames), which the reader holds files to (tests/test_file_schemas.py).
MAX_NAME = 64
NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._:-]{{0,{MAX_NAME - 1}}}")


class TargetError(ConformanceError, ValueError):
    """A runtime or profile that does not exist; the message says which exist."""


@dataclass(frozen=True)
class Target:
    name: str  # what results call it ("openvino:1thread"); "" = the adapter's own name
    adapter: str  # a registered runtime name, or a module:Class
    profile: str | None = DEFAULT  # None when properties were given directly
    properties: dict = field(default_factory=dict, hash=False, compare=False)
    python: str | None = None  # the interpreter of another environment; None: this one
    device: str | None = None  # a targets file's "gpu" or "cpu"; None: as its properties say
    gpu_workers: int | None = None  # a GPU target's own workers; None: its share (gpu_workers)

    @property
    def gpu(self) -> bool:
        """Whether the target runs on an NVIDIA GPU (the module's docstring)."""
        if self.device is not None:
            return self.device == "gpu"
        return on_gpu(self.adapter, self.properties)

    @property
    def adapter_class(self) -> str:
        """The adapter's ``module:Class``."""
        return adapters.resolve(self.adapter)

    def worker_arguments(self) -> list[str]:
        """What the worker process is told: the adapter and its properties."""
        return [self.adapter_class, json.dumps(self.properties, sort_keys=True)]

    def describe(self) -> dict:
        """What the header records of the target before its worker reports."""
        return {
            "adapter": self.adapter,
            "profile": self.profile,
            "requested": dict(self.properties),
            "python": self.python,
        }

    def refusal(self, info: dict) -> str:
        """Why a started worker's report of itself cannot stand for this
        target ("" when it can): an adapter named by its own ``info()`` (a
        ``module:Class`` on ``--runtime``) that calls itself by a registered
        runtime's name would be judged and gated as that runtime (its
        baseline, its scoped entries); a GPU target whose adapter reports no
        GPU (``gpu``: :func:`conformance.adapters.gpu.read_device`) has no
        device to judge it on."""
        name = info.get("name")
        if not self.name and isinstance(name, str):
            try:
                named = adapters.parse(name)
            except adapters.UnknownRuntime:
                named = None
            impostor = named is not None and not (
                named.is_class or (named.target == self.adapter and named.profile is None)
            )  # the class a runtime name is registered for, given as module:Class, is it
            if named is not None and impostor:
                return (
                    f"its adapter calls itself {name!r}, the name of the runtime "
                    f"{named.adapter}: its results would be judged and gated as that "
                    "runtime's; give it another name in a targets file (docs/cli.md)"
                )
        device = info.get("gpu")
        if self.gpu and not (isinstance(device, dict) and isinstance(device.get("name"), str)):
            return (
                "it runs on an NVIDIA GPU and its adapter reports no GPU (info()['gpu'], "
                "as conformance.adapters.gpu.read_device reads it): never a CPU run "
                "under a GPU target's name"
            )
        return ""

    def recorded(self, name: str, info: dict) -> dict:
        """What the header records of the started target ``name``
        (``runtimes.<name>``): the harness's own fields (:data:`OWN_FIELDS`:
        the name, adapter, profile, requested properties, the device from
        :attr:`gpu`, a GPU target's device record, the worker's interpreter)
        over the rest of its adapter's report (version, effective
        properties...), and that report as given, apart, as ``adapter_info``."""
        reported = {key: value for key, value in info.items() if key not in WORKER_FIELDS}
        about = {
            **self.describe(),
            "name": name,
            "device": "GPU" if self.gpu else "CPU",
            "python": info.get("python") or self.python,
            "python_version": info.get("python_version"),
        }
        if self.gpu:  # checked by refusal(): a GPU target's adapter reported it
            about["gpu"] = info["gpu"]
        rest = {key: value for key, value in reported.items() if key not in OWN_FIELDS}
        return {**about, **rest, "adapter_info": reported}


# What header.json records of a target as the harness knows it
# (Target.recorded): never taken from its adapter's info(), which can say
# anything of itself (a CPU adapter claiming an H200, profile cuda, or
# another runtime's name would be gated with those entries and baseline).
OWN_FIELDS = ("name", "adapter", "profile", "requested", "device", "gpu", "python")
# What the worker itself sets beside its adapter's info(): not the adapter's report.
WORKER_FIELDS = ("python", "python_version")


# The thread settings of each runtime, by its own property names.
THREAD_PROPERTIES = ("INFERENCE_NUM_THREADS", "intra_op_num_threads")
# adapters that compute in one thread whatever is set
SINGLE_THREADED = frozenset(r.name for r in registry.RUNTIMES if r.single_threaded)


def threads_of(adapter: str | None, settings: dict, cores: int) -> int:
    """Threads one worker computes with, from its thread setting (requested
    properties, or the effective ones a worker reported); unset or 0: the
    runtime takes every core."""
    if adapter in SINGLE_THREADED:
        return 1
    for name in THREAD_PROPERTIES:
        try:
            value = int(settings.get(name) or 0)
        except (TypeError, ValueError):
            value = 0
        if value > 0:
            return min(value, cores)
    return cores


def threads(target: Target, cores: int) -> int:
    """Threads one worker of the target computes with, from what it asks."""
    return threads_of(target.adapter, target.properties, cores)


def adapter_of(name: str) -> str:
    """The adapter of a target named on the command line, as
    :func:`conformance.adapters.parse` reads it (``openvino:1thread`` is
    OpenVINO; a ``module:Class`` is its own). A name it does not read (a
    targets file's, mapped by the run header) is its own adapter."""
    try:
        return adapters.parse(name).adapter
    except adapters.UnknownRuntime:
        return name


def auto_workers(chosen: Iterable[Target], cores: int) -> int:
    """Workers per target so that together they compute with about as many
    threads as there are cores (at least one each): a default-profile target
    takes every core by itself, so it gets one worker, and one-thread targets
    alone get one per core. GPU targets do not count: their workers are
    :func:`gpu_workers`'."""
    cpu = [t for t in chosen if not t.gpu]
    return max(1, cores // max(1, sum(threads(t, cores) for t in cpu)))


# Workers the GPU targets of a run share (--gpu-workers): each holds a CUDA
# context and its own sessions' handles on the one GPU the run uses, which
# ran out at 16 (docs/gpu.md, "What a GPU worker costs").
DEFAULT_GPU_WORKERS = 4


def gpu_workers(chosen: Iterable[Target], cap: int = DEFAULT_GPU_WORKERS) -> dict[Target, int]:
    """Workers of each GPU target: its own ``gpu_workers`` when its file gives
    one, else an even share of ``cap`` among the others (at least one each).
    Every target runs on the first GPU the process sees (CUDA_VISIBLE_DEVICES)."""
    gpus = [t for t in chosen if t.gpu]
    sharing = [t for t in gpus if t.gpu_workers is None]
    share = max(1, cap // max(1, len(sharing)))
    return {t: t.gpu_workers if t.gpu_workers is not None else share for t in gpus}


def _device_problem(adapter: str, profile: str | None, properties: dict, device: str) -> str:
    """Why a targets file's ``device`` contradicts what a built-in runtime's
    properties say of where it computes ("" where it agrees, or where the
    adapter is not one whose device the table knows: then ``device`` says it)."""
    if registry.declared(adapter) is None or (device == "gpu") == on_gpu(adapter, properties):
        return ""
    said = f"{adapter} in profile {profile}" if profile else f"{adapter} with these properties"
    if device == "cpu":
        return f"{said} runs on an NVIDIA GPU: give a profile that runs on the CPU"
    on_a_gpu = [name for name, given in PROFILES.get(adapter, {}).items() if on_gpu(adapter, given)]
    hint = f"; on a GPU: profile {' or '.join(on_a_gpu)}" if on_a_gpu else ""
    return (
        f"{said} computes on the CPU: device: gpu would judge it there under a GPU's "
        f"name{hint} (docs/gpu.md)"
    )


def _profile(adapter: str, profile: str) -> dict:
    known = PROFILES.get(adapter, {DEFAULT: {}})
    if profile not in known:
        raise TargetError(f"{adapter} has no profile {profile!r}; its profiles: {', '.join(known)}")
    return dict(known[profile])


def parse(spec: str) -> Target:
    """A target from ``--runtime``: ``NAME``, ``NAME:PROFILE`` or ``module:Class``
    (:func:`conformance.adapters.parse` reads it)."""
    try:
        named = adapters.parse(spec)
    except adapters.UnknownRuntime as error:
        raise TargetError(str(error)) from None
    if named.is_class:
        return Target("", spec)  # module:Class: named by the adapter itself
    profile = named.profile or DEFAULT
    properties = _profile(named.adapter, profile)
    return Target(spec if profile != DEFAULT else named.adapter, named.adapter, profile, properties)


def parse_all(specs: Iterable[str]) -> list[Target]:
    targets = [parse(spec) for spec in specs]
    names = [t.name for t in targets if t.name]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise TargetError(f"runtime given twice: {', '.join(repeated)}")
    return targets


class _TargetsReader(YamlFileReader):
    """Reads a targets file; every problem as ``file:line: field: message``.
    The file is held to ``docs/schemas/targets.schema.json`` (its fields, their
    types, the names, the profiles there are, a profile or properties but not
    both: :mod:`conformance.cases.yaml_schema`); what no schema can say is
    checked here, for each target the schema passed."""

    def read(self) -> list[Target]:
        found = self._read()
        self.errors.sort(key=lambda error: error.line or 0)  # the schema's and the code's, by line
        return found

    def _read(self) -> list[Target]:
        if not self.load_yaml():
            return []
        wrong = yaml_schema.check(self, "targets")
        named = self.root.get("targets") if isinstance(self.root, dict) else None
        if not isinstance(named, dict):
            return []  # said by the schema
        found = []
        for name, raw in named.items():
            at = ("targets", name)
            if any(path[:2] == at for path in wrong):
                continue
            target = self._target(name, raw)
            if target is not None:
                found.append(target)
        return found

    def _target(self, name: str, raw: dict) -> Target | None:
        at = ("targets", name)
        before = len(self.errors)
        # Which names are runtimes is known at run time only (entry points
        # register more): parse() says, for the name and for the adapter.
        adapter = raw["adapter"]
        try:
            named = adapters.parse(adapter)
        except adapters.UnknownRuntime as error:
            self.error((*at, "adapter"), str(error))
            return None
        if named.profile is not None:
            self.error(
                (*at, "adapter"),
                f"{adapter!r}: the adapter alone ({named.adapter}); give the profile as "
                f"'profile: {named.profile}'",
            )
            return None
        profile: str | None = DEFAULT
        properties: dict = {}
        if "properties" in raw:
            given = self._properties(raw["properties"], (*at, "properties"))
            if given is None:
                return None
            properties = given
            profile = None
        elif "profile" in raw:
            profile = raw["profile"]
            try:  # the schema knows every profile; which are this adapter's, the table
                properties = _profile(named.adapter, profile)
            except TargetError as error:
                self.error((*at, "profile"), str(error))
                return None
        python = self._python(raw["python"], (*at, "python")) if "python" in raw else None
        device, workers = raw.get("device"), raw.get("gpu_workers")
        if device is not None:
            wrong = _device_problem(named.adapter, profile, properties, device)
            if wrong:
                self.error((*at, "device"), wrong)
        if workers is not None and not (device == "gpu" or on_gpu(named.adapter, properties)):
            self.error(  # the schema says what it is; whether the target is on a GPU, the code
                (*at, "gpu_workers"),
                "for a target on a GPU (profile cuda, a GPU provider or driver, or device: gpu)",
            )
        if len(self.errors) > before:
            return None
        try:  # a name that is a runtime name stands for that target, not another
            same = adapters.parse(name)
        except adapters.UnknownRuntime:
            same = None
        if same is not None and same.profile == DEFAULT:  # one name for one thing
            self.error(
                ("targets",),
                f"{name!r} is the target {same.adapter}: call it {same.adapter!r}",
                line=yaml_lines.line_of(self.root, at),
            )
            return None
        if same is not None and (
            same.adapter != named.adapter or (same.profile or DEFAULT) != profile
        ):
            said = f"{named.adapter}, " + (f"profile {profile}" if profile else "its properties")
            self.error(
                ("targets",),
                f"{name!r} is the name of the target {same.adapter} in profile "
                f"{same.profile or DEFAULT}; this one is {said}: give it another name",
                line=yaml_lines.line_of(self.root, at),
            )
            return None
        return Target(name, named.adapter, profile, properties, python, device, workers)

    def _properties(self, raw: dict, at: tuple) -> dict | None:
        """The properties, each value held to property_problem: the one rule
        for a profile's properties and a file's (no null, NaN or infinity,
        integers within int64, whole thread counts), kept with the profiles'
        table rather than restated as a schema."""
        for key, value in raw.items():
            problem = property_problem(key, value)
            if problem:
                below, message = problem
                self.error((*at, key, *below), message)
                return None
        return dict(raw)

    def _python(self, raw: str, at: tuple) -> str | None:
        """The interpreter, relative to this file's folder unless absolute:
        never looked up on $PATH, never made relative to the working folder.
        Whether it is there is a fact of this machine, not of the file."""
        given = Path(raw)
        folder = self.path.parent.resolve()  # the file's folder; the interpreter's own
        path = given if given.is_absolute() else folder / given  # link is kept (a venv's python)
        beside = "" if given.is_absolute() else f" (relative to {folder}, this file's folder)"
        if not path.exists():
            self.error(at, f"no interpreter at {path}{beside}")
        elif not path.is_file() or not os.access(path, os.X_OK):
            self.error(at, f"{path} is not an executable file{beside}")
        else:
            return str(path)
        return None


def load_file(path: Path) -> list[Target]:
    """The targets of a targets file; CaseErrors names every problem."""
    return _TargetsReader(Path(path)).read_or_raise()


__all__ = [
    "DEFAULT_GPU_WORKERS",
    "MAX_NAME",
    "CaseErrors",
    "Target",
    "TargetError",
    "gpu_workers",
    "load_file",
    "parse",
    "parse_all",
]
