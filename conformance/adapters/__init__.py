"""Adapters: how the harness talks to one runtime.

Three modules hold the package's own part, the rest is one file per
built-in runtime (its adapter class and its ``RUNTIME`` declaration):

- :mod:`.contract`: the :class:`Adapter` base class and what it raises
  (:class:`LoadError`, :class:`RunError`, :class:`HarnessUnsupported`,
  :class:`WouldNotFinish`), and :class:`~.contract.Runtime`, what a built-in
  runtime declares about itself;
- :mod:`.registry`: the built-ins read from their declarations, the
  ``conformance.adapters`` entry points, every table of runtimes derived
  from them, :func:`resolve`;
- :mod:`.names`: the grammar of a runtime name (``NAME``,
  ``NAME:PROFILE``, ``module:Class``) and the baseline-name rule.

Adapters run inside isolated worker processes (:mod:`conformance.engine`);
nothing here protects against a crash. This package imports only
``conformance.tables``, ``conformance.errors`` and ``conformance.messages``:
it also runs inside workers of other environments. Its names are
re-exported here, where callers have always imported them.
"""

from __future__ import annotations

from conformance.adapters.contract import (
    Adapter,
    AdapterError,
    HarnessUnsupported,
    LoadError,
    RunError,
    Runtime,
    Timed,
    WouldNotFinish,
    compiled_inputs,
    probe_model,
)
from conformance.adapters.names import (
    BASELINE_NAME,
    BASELINE_RULE,
    RuntimeName,
    UnknownProfile,
    UnknownRuntime,
    is_baseline_name,
)
from conformance.adapters.registry import (
    BUILTIN,
    DISTRIBUTION,
    ENTRY_POINT_GROUP,
    EXTRAS,
    OPT_IN,
    baseline_name,
    default_builtins,
    install_hint,
    installed,
    installed_builtins,
    instantiate,
    not_installed,
    parse,
    refused_entry_points,
    registered,
    resolve,
)

__all__ = [
    "BASELINE_NAME",
    "BASELINE_RULE",
    "BUILTIN",
    "DISTRIBUTION",
    "ENTRY_POINT_GROUP",
    "EXTRAS",
    "OPT_IN",
    "Adapter",
    "AdapterError",
    "HarnessUnsupported",
    "LoadError",
    "RunError",
    "Runtime",
    "RuntimeName",
    "Timed",
    "UnknownProfile",
    "UnknownRuntime",
    "WouldNotFinish",
    "baseline_name",
    "compiled_inputs",
    "default_builtins",
    "install_hint",
    "installed",
    "installed_builtins",
    "instantiate",
    "is_baseline_name",
    "not_installed",
    "parse",
    "probe_model",
    "refused_entry_points",
    "registered",
    "resolve",
]
