"""Versions: constraints.txt pins what the baselines describe, every nox session
installs under it, and the adapters work on the oldest versions pyproject allows."""

from __future__ import annotations

import ast
import itertools
import re
import tomllib

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from conformance.adapters.ort import _bfloat16_from, _to_ort_value
from conformance.gate import baseline

from .conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
REQUIREMENTS = [
    Requirement(text)
    for text in [
        *PYPROJECT["dependencies"],
        *(r for extra in PYPROJECT["optional-dependencies"].values() for r in extra),
    ]
    if Requirement(text).name != PYPROJECT["name"]  # [all]: this package's own extras
]


def pins(text: str) -> dict[str, str]:
    """``name==version`` lines of a constraints file, by canonical name."""
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][^\s;]*)", line)
        assert match, f"constraints.txt:{number}: not an exact pin: {line!r}"
        name = canonicalize_name(match[1])
        assert name not in found, f"constraints.txt:{number}: {name} pinned twice"
        found[name] = match[2]
    return found


PINS = pins((REPO / "constraints.txt").read_text())


@pytest.mark.parametrize("requirement", REQUIREMENTS, ids=str)
def test_constraints_pin_every_dependency_in_a_version_pyproject_allows(requirement):
    name = canonicalize_name(requirement.name)
    assert name in PINS, f"constraints.txt does not pin {requirement.name}"
    assert requirement.specifier.contains(PINS[name], prereleases=True), (
        f"constraints.txt pins {name}=={PINS[name]}, outside pyproject's {requirement}"
    )


def test_a_missing_pin_is_found():
    assert "onnxruntime" not in pins("numpy==2.4.6\nonnx==1.23.2  # comment\n")
    with pytest.raises(AssertionError, match="not an exact pin"):
        pins("onnxruntime>=1.20\n")


@pytest.mark.parametrize(
    ("runtime", "package"),
    [("onnxruntime", "onnxruntime"), ("openvino", "openvino"), ("reference", "onnx")],
)
def test_baselines_name_the_pinned_version(runtime, package):
    """A pin moves together with the baseline that describes it."""
    text = (REPO / "cases" / "known" / f"{runtime}.yaml").read_text()
    header = "\n".join(line for line in text.splitlines()[:10] if line.startswith("#"))
    named = re.findall(rf"\b{package} (\d+\.\d+(?:\.\d+)?)", header)
    assert named, f"cases/known/{runtime}.yaml: its header names no {package} version"
    assert named == [PINS[package]] * len(named), (
        f"cases/known/{runtime}.yaml describes {package} {named}; constraints.txt pins "
        f"{PINS[package]}"
    )


@pytest.mark.parametrize("package", ["onnxruntime", "openvino", "numpy", "ml_dtypes", "onnx"])
def test_the_runtimes_have_a_lower_bound_for_nox_versions(package):
    """`nox -s versions` builds the oldest environment from these lower bounds."""
    (requirement,) = [r for r in REQUIREMENTS if r.name == package]
    assert any(spec.operator == ">=" for spec in requirement.specifier), requirement


def _noxfile_constant(name: str):
    """A literal assigned at the top of noxfile.py (nox itself is not installed here)."""
    for node in ast.parse((REPO / "noxfile.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"noxfile.py assigns no {name}")


def test_the_version_sweep_covers_the_previous_pin_and_the_new_one():
    """Issue 48: the pin of ONNX Runtime moved from 1.31.1 to 1.32.0; `nox -s versions`
    builds the previous pin as its own release beside the new one, and the baseline
    says it was observed on both (the records of the two were identical: docs/findings.md)."""
    previous = _noxfile_constant("PREVIOUS")
    versioned = _noxfile_constant("VERSIONED")
    assert "previous" in _noxfile_constant("RELEASES")
    assert previous.get("onnxruntime") == "1.31.1", previous
    for runtime, version in previous.items():
        (package,) = versioned[runtime]
        assert Version(version) < Version(PINS[package]), (
            f"noxfile.py's PREVIOUS[{runtime!r}] is {version}, not older than the pin "
            f"{PINS[package]}"
        )
        seen = baseline.observed(REPO / "cases" / "known" / f"{runtime}.yaml")
        defaults = {o.version for o in seen if o.profile == "default"}
        assert {version, PINS[package]} <= defaults, (
            f"cases/known/{runtime}.yaml was observed on {sorted(defaults)} (profile "
            f"default), not on both {version} and {PINS[package]}"
        )


# -- nox sessions -------------------------------------------------------------------------


def _sessions(tree: ast.Module) -> list[ast.FunctionDef]:
    def is_session(decorator: ast.expr) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return isinstance(target, ast.Attribute) and target.attr == "session"

    return [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and any(map(is_session, node.decorator_list))
    ]


def unconstrained(source: str) -> list[str]:
    """What in a noxfile installs without ``-c CONSTRAINTS`` (CONSTRAINTS = "constraints.txt")."""
    tree = ast.parse(source)
    problems = []
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    if constants.get("CONSTRAINTS") != "constraints.txt":
        problems.append('no CONSTRAINTS = "constraints.txt"')
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "install":
            args = node.args
            constrained = any(
                isinstance(a, ast.Constant)
                and a.value == "-c"
                and isinstance(b, ast.Name)
                and b.id == "CONSTRAINTS"
                for a, b in itertools.pairwise(args)
            )
            if not constrained:
                problems.append(f"line {node.lineno}: install without -c CONSTRAINTS")
    for function in _sessions(tree):
        names = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
        if not names & {"_install", "CONSTRAINTS"}:
            problems.append(f"session {function.name}: installs nothing under the constraints")
    return problems


def test_every_nox_session_installs_under_the_constraints():
    source = (REPO / "noxfile.py").read_text()
    assert len(_sessions(ast.parse(source))) >= 6
    assert unconstrained(source) == []


def test_an_unconstrained_session_is_found():
    source = (
        'import nox\nCONSTRAINTS = "constraints.txt"\n'
        "@nox.session(python='3.11')\n"
        "def tests(session):\n    session.install('-e', '.[test]')\n"
        "@nox.session\n"
        "def lint(session):\n    session.run('ruff', 'check')\n"
    )
    assert unconstrained(source) == [
        "line 5: install without -c CONSTRAINTS",
        "session tests: installs nothing under the constraints",
        "session lint: installs nothing under the constraints",
    ]


def test_the_ci_script_runs_the_readme_test_command():
    assert "python3 -m nox -s tests" in (REPO / "README.md").read_text()
    assert "\npython3 -m nox -s tests\n" in (REPO / ".ci" / "run").read_text()


# -- the ONNX Runtime adapter on the oldest onnxruntime ---------------------------------------

# Every special bfloat16: quiet and signalling NaNs with payloads, both signs, ±inf,
# ±0, the largest and smallest subnormals, the largest finite values, 1.0.
SPECIAL = np.array(
    [
        [0x7FC1, 0xFFFF, 0x7F81, 0xFF81, 0x7F80, 0xFF80, 0x0000, 0x8000],
        [0x007F, 0x0001, 0x807F, 0x8001, 0x7F7F, 0xFF7F, 0x3F80, 0xFFC0],
    ],
    dtype=np.uint16,
)


def _gather_session(rank: int) -> ort.InferenceSession:
    graph = helper.make_graph(
        [helper.make_node("Gather", ["data", "indices"], ["out"], axis=rank - 1)],
        "gather",
        [
            helper.make_tensor_value_info("data", TensorProto.BFLOAT16, [None] * rank),
            helper.make_tensor_value_info("indices", TensorProto.INT64, None),
        ],
        [helper.make_tensor_value_info("out", TensorProto.BFLOAT16, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


class OrtValueOf120:
    """A real OrtValue seen through the methods onnxruntime 1.20 has (no
    ``tensor_size_in_bytes``): what the adapter may use on the oldest version."""

    def __init__(self, value: ort.OrtValue) -> None:
        self._value = value

    def shape(self):
        return self._value.shape()

    def data_ptr(self):
        return self._value.data_ptr()


@pytest.mark.parametrize(
    ("data", "indices"),
    [
        (SPECIAL, np.arange(7, -1, -1)),  # every special value, reversed
        (SPECIAL, np.array([[0, 7], [3, 2]])),  # rank 3 out
        (SPECIAL, np.zeros(0, dtype=np.int64)),  # empty out: no bytes to read
        (SPECIAL[0], np.array(1)),  # 0-d out: one element, from a 1-d input
    ],
    ids=["reversed", "rank3", "empty", "scalar"],
)
def test_bfloat16_outputs_come_back_bit_for_bit_with_the_oldest_ortvalue_api(data, indices):
    session = _gather_session(data.ndim)
    feeds = {
        "data": _to_ort_value(data.view(ml_dtypes.bfloat16)),
        "indices": ort.OrtValue.ortvalue_from_numpy(indices.astype(np.int64)),
    }
    (value,) = session.run_with_ort_values(["out"], feeds)
    got = _bfloat16_from(OrtValueOf120(value))
    expected = np.take(data, indices, axis=data.ndim - 1)
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    assert got.shape == expected.shape
    assert got.view(np.uint16).tobytes() == expected.tobytes()
    assert got.flags.writeable and got.flags.owndata  # a copy, not a view of ORT's buffer
    if hasattr(value, "tensor_size_in_bytes"):  # newer versions: the same size
        assert value.tensor_size_in_bytes() == got.nbytes
