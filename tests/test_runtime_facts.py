"""A built-in runtime is one file: its adapter declares its facts, and nothing
else in the package names it (CONTRIBUTING.md, "Where each kind of change goes").

What counts as naming a runtime, in any module of the package but the
runtime's own adapter file: a string in code (docstrings are prose, and so
are comments, which are not code) that is the runtime's name, a target of it
(``NAME:PROFILE``), a path segment (``/NAME/``) or the name quoted inside it;
an identifier that is the name (``reference`` excepted: it is an English
word, a variable's name in many a module, never the runtime's module). Text
built from the registry (help texts, messages listing the runtimes) is fine:
the registry is read, not spelled.
"""

from __future__ import annotations

import ast
import inspect
import sys
import tomllib
from pathlib import Path

import pytest

from conformance.adapters import registry

PACKAGE = Path(registry.__file__).resolve().parents[1]
NAMES = [runtime.name for runtime in registry.RUNTIMES]
ENGLISH = {"reference"}  # a runtime's name that is also a common identifier
# Strings that are another program's word, equal to a runtime's name by chance:
# (file, runtime, the string) -> what it is.
NOT_OURS = {
    ("conformance/export/runners.py", "openvino", "'openvino'"): (
        "ONNX Runtime's name for its OpenVINO provider in GetBrokenTestsForProvider"
    ),
}


def _own_files() -> dict[str, Path]:
    """Each built-in runtime's adapter file, the one place its name may be spelled."""
    modules = {name: target.partition(":")[0] for name, (target, _) in registry.BUILTIN.items()}
    return {name: Path(inspect.getfile(sys.modules[m])).resolve() for name, m in modules.items()}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _names_in(value: str, name: str) -> bool:
    return (
        value == name
        or value.startswith(f"{name}:")
        or f"/{name}/" in value
        or f"'{name}'" in value
        or f'"{name}"' in value
    )


def naming(source: str, names: list[str]) -> list[tuple[int, str, str]]:
    """(line, runtime, how) for each place the source names a runtime."""
    tree = ast.parse(source)
    prose = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            found += [(node.lineno, n, repr(node.value)[:80]) for n in names
                      if _names_in(node.value, n)]  # fmt: skip
        elif isinstance(node, ast.Name | ast.alias | ast.Attribute):
            ident = {ast.Name: "id", ast.alias: "asname", ast.Attribute: "attr"}[type(node)]
            word = getattr(node, ident)
            if word in names and word not in ENGLISH:
                found.append((getattr(node, "lineno", 0), word, f"identifier {word}"))
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names]
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.append(node.module)
            for module in modules:
                top = module.split(".")[0]
                if top in names and top not in ENGLISH:
                    found.append((node.lineno, top, f"import {module}"))
    return found


def test_no_module_but_its_adapter_names_a_runtime():
    own = _own_files()
    found = []
    for path in sorted(p.resolve() for p in PACKAGE.rglob("*.py")):
        names = [n for n in NAMES if own[n] != path]
        where = str(path.relative_to(PACKAGE.parent))
        for line, name, how in naming(path.read_text(encoding="utf-8"), names):
            if (where, name, how) not in NOT_OURS:
                found.append(f"{where}:{line}: {name}: {how}")
    assert found == []


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ('X = {"tract": 1}', True),
        ('X = "openvino:f32"', True),
        ('X = f"expected-failures/iree/{y}"', True),
        ("import tvm", True),
        ("def f():\n    return tract.version()", True),
        ('X = "the onnx.reference evaluator"', False),  # a library's module, not the name
        ("reference = 1", False),  # the English word
        ('X = "reference"', True),
        ('"""The module: tract, tvm and \'iree\'."""', False),  # a docstring is prose
        ('X = "iree-compile"', False),  # a tool of the runtime's, not its name
    ],
)
def test_what_names_a_runtime(source, names):
    assert bool(naming(source, ["tract", "openvino", "iree", "tvm", "reference"])) is names


def test_the_extras_of_the_declarations_are_pyproject_extras():
    """One line in pyproject.toml's extras is the rest of adding a runtime."""
    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    for runtime in registry.RUNTIMES:
        assert runtime.extra is None or runtime.extra in extras, runtime.name
    assert len({r.position for r in registry.RUNTIMES}) == len(registry.RUNTIMES)


def test_the_noxfile_runtimes_agree_with_the_declarations():
    """noxfile.py cannot import the package (nox runs it in its own
    environment), so its tables are held to the declarations here."""
    tree = ast.parse((PACKAGE.parent / "noxfile.py").read_text(encoding="utf-8"))
    assigned = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in ("RUNTIMES", "COMPILERS", "EXTRAS", "NOT_RUNTIMES")
    }  # fmt: skip
    for name, extra in assigned["EXTRAS"].items():
        assert (registry.declared(name).extra or "") == extra, name
    assert set(assigned["RUNTIMES"]) <= set(registry.default_builtins())
    assert set(assigned["COMPILERS"]) <= registry.OPT_IN
    # the tests install every extra but these: each declared runtime's, with no noxfile line
    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    runtime_extras = set(pyproject["project"]["optional-dependencies"]) - set(
        assigned["NOT_RUNTIMES"]
    )
    assert runtime_extras == {r.extra for r in registry.RUNTIMES if r.extra}
