"""Runtime names: the grammar every caller reads them by, and the baseline-name rule.

A runtime name is read in one place, :func:`read` (through
:func:`conformance.adapters.registry.parse`, which gives it what is
registered), by every caller (``--runtime``, the pytest plugin's
``--runtime``, a targets file's ``adapter``, ``resolve``): ``NAME`` (a
registered runtime), ``NAME:PROFILE`` (a profile that runtime declares), or
``module:Class`` where ``module`` is not a registered name: a dotted Python
module path and a class name starting with a capital letter
(``mypkg.adapters:MyAdapter``). Nothing else is a runtime name: not an empty
or blank one, not one with spaces, not ``NAME:`` with no profile, not
``foo:bar``. Whether a ``module:Class`` imports is found by its worker, in
its own interpreter.

A target's **baseline name** (its known discrepancies are ``<baseline
name>.yaml``) follows one rule (:data:`BASELINE_RULE`), so that no name ever
becomes a path outside the ``--known`` folder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from conformance.errors import ConformanceError
from conformance.tables.profiles import DEFAULT

# A baseline name becomes a file name, <name>.yaml in a --known folder: 1 to
# 64 of these characters (no separator, so never a path), and not . or ..
# (docs/cli.md). One rule for every name, built in, registered or a target's.
BASELINE_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
BASELINE_RULE = "1 to 64 letters, digits, '.', '_' and '-', and not '.' or '..'"


def is_baseline_name(name: object) -> bool:
    """Whether ``name`` may name a baseline file (:data:`BASELINE_RULE`)."""
    return (
        isinstance(name, str)
        and BASELINE_NAME.fullmatch(name) is not None
        and name not in {".", ".."}
    )


class UnknownRuntime(ConformanceError, LookupError):
    """Not a runtime name (:func:`read`); the message says what is known."""


class UnknownProfile(UnknownRuntime):
    """A registered runtime with no such profile."""


@dataclass(frozen=True)
class RuntimeName:
    """What a runtime name says (:func:`read`)."""

    adapter: str  # the registered runtime name, or the module:Class itself
    target: str  # the module:Class its worker instantiates
    profile: str | None  # the profile named after NAME: (None: none named)

    @property
    def is_class(self) -> bool:
        """A ``module:Class`` given as such, not a registered name."""
        return self.adapter == self.target


def _is_module_path(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def read(
    spec: str,
    known: Mapping[str, str],
    refused: Mapping[str, str],
    profiles: Mapping[str, Mapping[str, object]],
) -> RuntimeName:
    """The one reading of a runtime name: ``NAME``, ``NAME:PROFILE`` or
    ``module:Class``, given the registered names (name -> ``module:Class``),
    the refused entry points (name -> why) and each runtime's profiles;
    raises UnknownRuntime (UnknownProfile) saying what exists."""
    listed = ", ".join(sorted(known))
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownRuntime(f"a runtime name is empty; known: {listed}")
    if not spec.isprintable() or any(ch.isspace() for ch in spec):
        raise UnknownRuntime(
            f"{spec!r} is not a runtime name (no spaces or control characters); known: {listed}"
        )
    if spec in known:
        return RuntimeName(spec, known[spec], None)
    if spec in refused:
        raise UnknownRuntime(refused[spec])
    name, colon, after = spec.partition(":")
    if colon and name in known:
        own = profiles.get(name, {DEFAULT: {}})
        if after not in own:
            said = f"no profile {after!r}" if after else "no profile after ':'"
            raise UnknownProfile(f"{name} has {said}; its profiles: {', '.join(own)}")
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
