"""The front-ends hand the engine and the gate plain settings
(:mod:`conformance.gate.settings`): no ``argparse.Namespace`` travels past
``conformance/cli/``, and the pytest plugin imports nothing of the cli."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.gate.settings import build
from conformance.gate.verdict import GateError

PACKAGE = Path(__file__).resolve().parent.parent / "conformance"


def test_the_pytest_plugin_imports_nothing_from_the_cli():
    code = (
        "import sys, conformance.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.startswith('conformance.cli')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]", done.stdout


def _receives_parsed_options(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A parameter annotated with a Namespace, or named ``args`` (argparse's
    habit) outside a pytest hook, whose ``args`` is pytest's own list."""
    every = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    for parameter in every:
        if parameter.annotation is not None and "Namespace" in ast.unparse(parameter.annotation):
            return True
        if parameter.arg == "args" and not function.name.startswith("pytest_"):
            return True
    return False


def test_no_function_outside_the_cli_receives_parsed_options():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if function and _receives_parsed_options(node):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}")
    assert not found, found


def test_the_check_finds_a_function_that_takes_args():
    tree = ast.parse("def header(files, args): ...\ndef f(x: argparse.Namespace): ...")
    assert all(_receives_parsed_options(node) for node in tree.body)


def test_the_gate_options_without_the_gate_are_refused_before_anything_is_read(tmp_path):
    with pytest.raises(GateError, match="options of the gate: add --gate"):
        build(runtimes=["reference"], known=[tmp_path], gate=False, engine=False)


def test_a_missing_baseline_folder_is_named_with_the_front_ends_flag(tmp_path):
    absent = tmp_path / "absent"
    with pytest.raises(GateError, match=f"--conformance-known {absent}: no such folder"):
        build(runtimes=["reference"], known=[absent], known_flag="--conformance-known")


def test_a_bad_baseline_file_stops_a_run_whose_gate_decides(tmp_path):
    (tmp_path / "reference.yaml").write_text("entries: [1]\n", encoding="utf-8")
    for gate in (None, True):  # fuzz (the gate always decides); run --gate
        with pytest.raises(GateError, match="bad baseline file"):
            build(runtimes=["reference"], known=[tmp_path], gate=gate, engine=False)


def test_the_settings_hold_the_targets_and_the_engine_options():
    settings = build(runtimes=["reference"], jobs=3, variants=["static", "static"], pack=2)
    assert settings.names == ["reference"] and settings.variants == ("static",)
    assert settings.engine is not None
    assert (settings.engine.workers, settings.engine.pack) == (3, 2)
    assert settings.baselines is not None and set(settings.baselines) == {"reference"}
