"""Targets: what a run judges. A target is an adapter, a configuration of it
(a profile of :mod:`conformance.tables.profiles`, or properties given
directly) and the Python environment its worker runs in.

``--runtime`` takes ``NAME[:PROFILE]`` (``openvino``, ``openvino:1thread``);
a bare name is the ``default`` profile. ``module:Class`` (a third-party or
test adapter) still works where the part before the colon is not a runtime
name. ``--targets FILE`` names targets in YAML, checked like case files::

    targets:
      ov2025:                      # the name results carry (`runtime`)
        adapter: openvino
        profile: default           # or: properties: {INFERENCE_NUM_THREADS: 1}
        python: envs/ov2025/bin/python   # another environment (relative to the file)

Results carry the target's name in ``runtime``; the header says, per target,
the adapter, profile, requested and effective properties, the package
version and the interpreter.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from conformance import adapters
from conformance.cases.loader import CaseErrors, YamlFileReader
from conformance.tables.profiles import DEFAULT, PROFILES


class TargetError(ValueError):
    """A runtime or profile that does not exist; the message says which exist."""


@dataclass(frozen=True)
class Target:
    name: str  # what results call it ("openvino:1thread"); "" = the adapter's own name
    adapter: str  # a registered runtime name, or a module:Class
    profile: str | None = DEFAULT  # None when properties were given directly
    properties: dict = field(default_factory=dict, hash=False, compare=False)
    python: str | None = None  # the interpreter of another environment; None: this one

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


# The thread settings of each runtime, by its own property names.
THREAD_PROPERTIES = ("INFERENCE_NUM_THREADS", "intra_op_num_threads")
SINGLE_THREADED = {"reference"}  # adapters that compute in one thread whatever is set


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
    """The adapter of a target named on the command line (``openvino:1thread``
    is OpenVINO; a ``module:Class`` is its own); a targets file's names are
    mapped by the run header."""
    return name.partition(":")[0] if ":" in name and "." not in name else name


def auto_workers(chosen: Iterable[Target], cores: int) -> int:
    """Workers per target so that together they compute with about as many
    threads as there are cores (at least one each): a default-profile target
    takes every core by itself, so it gets one worker, and one-thread targets
    alone get one per core."""
    return max(1, cores // max(1, sum(threads(t, cores) for t in chosen)))


def _profile(adapter: str, profile: str) -> dict:
    known = PROFILES.get(adapter, {DEFAULT: {}})
    if profile not in known:
        raise TargetError(f"{adapter} has no profile {profile!r}; its profiles: {', '.join(known)}")
    return dict(known[profile])


def parse(spec: str) -> Target:
    """A target from ``--runtime``: ``NAME``, ``NAME:PROFILE`` or ``module:Class``."""
    name, _, profile = spec.partition(":")
    registered = adapters.registered()
    if name in registered:
        profile = profile or DEFAULT
        properties = _profile(name, profile)
        return Target(spec if profile != DEFAULT else name, name, profile, properties)
    if profile and ("." in name or profile[:1].isupper()):
        return Target("", spec)  # module:Class: named by the adapter itself
    raise TargetError(f"unknown runtime {name!r}; known: {', '.join(sorted(registered))}")


def parse_all(specs: Iterable[str]) -> list[Target]:
    targets = [parse(spec) for spec in specs]
    names = [t.name for t in targets if t.name]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise TargetError(f"runtime given twice: {', '.join(repeated)}")
    return targets


class _TargetsReader(YamlFileReader):
    """Reads a targets file; every problem as ``file:line: field: message``."""

    def read(self) -> list[Target]:
        if not self.load_yaml():
            return []
        root = self.root
        if not isinstance(root, dict) or not isinstance(root.get("targets"), dict):
            self.error((), "a targets file is a mapping with 'targets': {name: {adapter, ...}}")
            return []
        found = []
        for name, raw in root["targets"].items():
            target = self._target(str(name), raw)
            if target is not None:
                found.append(target)
        return found

    def _target(self, name: str, raw) -> Target | None:
        at = ("targets", name)
        if not isinstance(raw, dict):
            self.error(at, "give a mapping: {adapter, profile or properties, python}")
            return None
        unknown = sorted(set(raw) - {"adapter", "profile", "properties", "python"})
        if unknown:
            self.error(
                (*at, unknown[0]), "unknown field; give adapter, profile, properties, python"
            )
        adapter = raw.get("adapter")
        if not isinstance(adapter, str) or not adapter:
            self.error((*at, "adapter"), "required: a runtime name (openvino) or module:Class")
            return None
        try:
            adapters.resolve(adapter)
        except adapters.UnknownRuntime as error:
            self.error((*at, "adapter"), str(error))
            return None
        if "profile" in raw and "properties" in raw:
            self.error((*at, "properties"), "give a profile or properties, not both")
            return None
        profile, properties = DEFAULT, {}
        if "properties" in raw:
            if not isinstance(raw["properties"], dict):
                self.error((*at, "properties"), "a mapping of property name to value")
                return None
            profile, properties = None, {str(k): v for k, v in raw["properties"].items()}
        elif "profile" in raw:
            profile = str(raw["profile"])
            try:
                properties = _profile(adapter, profile)
            except TargetError as error:
                self.error((*at, "profile"), str(error))
                return None
        python = raw.get("python")
        if python is not None:
            path = Path(str(python))
            path = path if path.is_absolute() else self.path.parent / path
            if not path.exists():
                self.error((*at, "python"), f"no interpreter at {path}")
                return None
            python = str(path)
        return Target(name, adapter, profile, properties, python)


def load_file(path: Path) -> list[Target]:
    """The targets of a targets file; CaseErrors names every problem."""
    return _TargetsReader(Path(path)).read_or_raise()


__all__ = ["CaseErrors", "Target", "TargetError", "load_file", "parse", "parse_all"]
