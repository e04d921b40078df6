"""What the ``pytest11`` entry point (named ``conformance``) loads into every
pytest run of every project where the package is installed: the switch of the
pytest plugin, and nothing more.

It adds one flag, ``--conformance``, and one ini option, ``conformance``
(a bool), and imports nothing at module import time but ``pytest`` itself
(already imported by then): no NumPy, ONNX or engine in a pytest run that did
not ask for case files. The plugin (:mod:`conformance.pytest_plugin`: case
files as items, the ``--conformance-*`` options) is registered only when one
of these asks for it, before the command line is parsed, so its options exist
for the parse:

* ``-p conformance`` (this entry point's name), on the command line, in
  ``PYTEST_ADDOPTS`` or in the ini file's ``addopts``;
* ``--conformance``;
* ``conformance = true`` in the ini file (``[tool.pytest.ini_options]``,
  ``pytest.ini``...).

``-p conformance.pytest_plugin`` (or ``pytest_plugins`` naming it in a
conftest) registers the plugin itself, as any plugin module, with or without
this entry point. ``-p no:conformance`` blocks the switch, ini or not.
Otherwise a folder named ``cases`` is just a folder.
"""

from __future__ import annotations

import pytest

NAME = "conformance"  # the entry point's name: `-p conformance`, `-p no:conformance`
PLUGIN = "conformance.pytest_plugin"


def pytest_addoption(parser) -> None:
    group = parser.getgroup("conformance", "ONNX Gather conformance (YAML case files)")
    group.addoption(
        "--conformance",
        action="store_true",
        default=False,
        help="collect YAML case files below a folder named cases as conformance items "
        "(as -p conformance; adds the --conformance-* options)",
    )
    parser.addini(
        "conformance",
        type="bool",
        default=False,
        help="collect YAML case files below a folder named cases as conformance items "
        "(as -p conformance)",
    )


def enabled(config) -> bool:
    """Whether the run asked for the plugin: ``-p conformance``, ``--conformance``
    or ``conformance = true`` in the ini file."""
    namespace = config.known_args_namespace
    if getattr(namespace, "conformance", False):
        return True
    if NAME in (plugin.strip() for plugin in getattr(namespace, "plugins", None) or ()):
        return True
    try:
        return bool(config.getini("conformance"))
    except ValueError as error:  # `conformance = maybe`
        raise pytest.UsageError(f"ini option conformance: {error}") from None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Register the plugin when asked: here, after the first reading of the
    command line and the ini file, before the full parse (which must know the
    plugin's options) and before collection. Once the initial conftests are
    loaded (they may define ``--runtime`` too, and may name the plugin in
    ``pytest_plugins``), the plugin's deprecated spellings whose names are
    still free are added (``add_deprecated``): a project's own option wins,
    whichever loaded first."""
    if enabled(early_config):
        early_config.pluginmanager.import_plugin(PLUGIN)  # no-op when blocked or there
    elif not early_config.pluginmanager.has_plugin(PLUGIN):
        given = sorted({a.split("=")[0] for a in args if a.startswith("--conformance-")})
        if given:  # ours by their prefix: say how to enable them, not "unrecognized"
            raise pytest.UsageError(
                f"{', '.join(given)}: the conformance plugin is not enabled; "
                "add -p conformance (or --conformance, or conformance = true in the ini file)"
            )
    try:
        return (yield)
    finally:
        plugin = early_config.pluginmanager.get_plugin(PLUGIN)
        if plugin is not None:
            plugin.add_deprecated(parser)
