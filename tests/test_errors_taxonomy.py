"""The taxonomy in conformance/errors.py names every user-facing error the
code defines (a ConformanceError subclass anywhere in ``conformance``), and
every exception it calls a signal does not derive from ConformanceError."""

from __future__ import annotations

import importlib
import pkgutil
import re

import conformance
from conformance import errors
from conformance.errors import ConformanceError

OPTIONAL = {"tvm", "iree", "tract_onnx", "redis"}  # extras a module may need at import


def _every_module():
    for info in pkgutil.walk_packages(conformance.__path__, "conformance."):
        if info.name.endswith("__main__"):  # runs the command line when imported
            continue
        try:
            yield importlib.import_module(info.name)
        except ImportError as error:  # only an optional extra may be missing
            assert (error.name or "").split(".")[0] in OPTIONAL, (info.name, error)


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_every_user_facing_error_is_named_in_the_taxonomy():
    modules = list(_every_module())
    assert len(modules) > 50
    doc = errors.__doc__
    ours = {
        f"{cls.__module__.removeprefix('conformance.')}.{cls.__qualname__}"
        for cls in _subclasses(ConformanceError)
        if cls.__module__.startswith("conformance.") and not cls.__name__.startswith("_")
    }
    assert {"fuzz.store.errors.StoreError", "graphs.reading.GraphFileError"} <= ours
    # adapters/__init__ is named by its package: adapters.UnknownRuntime
    named = {name.replace("adapters.__init__.", "adapters.") for name in ours}
    missing = sorted(name for name in named if f"``{name}``" not in doc)
    assert not missing, f"errors.py's taxonomy misses {missing}"


def test_what_the_taxonomy_calls_a_signal_is_not_a_user_error():
    from conformance import adapters, shipped, strict_json
    from conformance.cases import npy
    from conformance.engine import forkserver
    from conformance.oracle import SpecViolation

    for signal in (SpecViolation, adapters.AdapterError, adapters.HarnessUnsupported,
                   shipped.NotShipped, forkserver.ForkServerDown, npy.NpyProblem,
                   strict_json.NotJsonText, strict_json.NotUtf8, strict_json.NotText):  # fmt: skip
        assert not issubclass(signal, ConformanceError), signal
        assert re.search(rf"``[\w.]*{signal.__name__}``", errors.__doc__), signal
