"""The package as a user installs it: a real wheel and sdist, a fresh virtual
environment with one runtime extra, runs from an empty folder (issue 22).

The wheel is built once (``python -m build``: sdist, then the wheel from it)
and installed with ``uv`` under constraints.txt into a venv that has the
``[onnxruntime]`` extra only: no OpenVINO, no tract. These tests need the
package index (or uv's cache) for the dependencies.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from conformance import __version__, shipped

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adapter-package"
UV = shutil.which("uv")

pytestmark = pytest.mark.skipif(UV is None, reason="uv builds the fresh environment")


def run(args: list, cwd: Path, env: dict | None = None, timeout: float = 600):
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def test_every_package_folder_is_listed_in_pyproject():
    """A package folder missing from [tool.setuptools] packages is missing from the wheel."""
    listed = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "conformance").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert folders, "no package found"
    assert folders - listed == set(), "package folders missing from pyproject.toml"


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """sdist and wheel of the working tree (the wheel built from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    # Built from a copy: a build writes its egg-info and build/ beside the sources,
    # and an egg-info in the working tree would shadow the installed metadata.
    tree = tmp_path_factory.mktemp("tree") / "src"
    shutil.copytree(REPO, tree, ignore=shutil.ignore_patterns(
        ".git", ".nox", ".venv", "reports", "build", "dist", "*.egg-info", "__pycache__",
        ".pytest_cache", ".hypothesis", ".ruff_cache"))  # fmt: skip
    result = run([sys.executable, "-m", "build", "--installer", "uv", "--outdir", out, tree],
                 cwd=out)  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def wheel_of(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def test_sdist_and_wheel_pass_twine_check_and_carry_the_corpus(dist):
    files = sorted(dist.iterdir())
    assert sorted(f.suffix for f in files) == [".gz", ".whl"], files
    result = run([sys.executable, "-m", "twine", "check", "--strict", *files], cwd=dist)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2, result.stdout
    names = zipfile.ZipFile(wheel_of(dist)).namelist()
    corpus = {n.removeprefix("conformance/corpus/") for n in names if "/corpus/" in n}
    edited = {p.relative_to(REPO / "cases").as_posix() for p in (REPO / "cases").rglob("*.yaml")}
    assert edited <= corpus  # every case file and baseline
    assert "conformance/schemas/header.schema.json" in names
    # the schemas the readers of baselines, targets files and store entries hold them to,
    # and the definitions they share (which every validator resolves: shipped.schema_registry)
    assert {
        "conformance/schemas/baseline.schema.json",
        "conformance/schemas/targets.schema.json",
        "conformance/schemas/store-entry.schema.json",
        "conformance/schemas/defs.schema.json",
    } <= set(names)


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory) -> Path:
    """A fresh venv with the wheel and its [onnxruntime] extra only."""
    root = tmp_path_factory.mktemp("venv") / "env"
    made = run([UV, "venv", "--python", sys.executable, root], cwd=root.parent)
    assert made.returncode == 0, made.stderr
    wheel = wheel_of(dist)
    installed = run(
        [UV, "pip", "install", "--python", root / "bin" / "python",
         "-c", REPO / "constraints.txt", f"{wheel}[onnxruntime]"],
        cwd=root.parent,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    return root


def env_of(venv: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    return env


def cli(venv: Path, cwd: Path, *args):
    return run([venv / "bin" / "conformance", *args], cwd=cwd, env=env_of(venv))


@pytest.fixture
def empty(tmp_path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_installed_wheel_reads_its_own_files_not_the_clone(venv):
    probe = run(
        [venv / "bin" / "python", "-c",
         "import conformance, conformance.shipped as s; print(conformance.__version__); "
         "print(s.corpus()); print(s.baselines())"],
        cwd=venv.parent, env=env_of(venv),
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    version, corpus, known = probe.stdout.split()
    # shown relative to the working directory when below it (here: the venv's parent)
    corpus, known = (str((venv.parent / path).resolve()) for path in (corpus, known))
    assert version == __version__
    assert Path(corpus).parts[-2:] == ("conformance", "corpus")
    assert str(venv) in corpus and str(REPO) not in corpus
    assert Path(known) == Path(corpus) / "known"


def test_gate_on_the_whole_shipped_corpus_from_an_empty_folder(venv, empty):
    """The [onnxruntime] install gates the whole shipped corpus with the shipped
    baseline, from a folder that has nothing of the project (about 20 s)."""
    out = empty / "out"
    result = cli(venv, empty, "run", "--gate", "--runtime", "onnxruntime", "--no-progress",
                 "--out", out)  # fmt: skip
    print(result.stdout, result.stderr)  # the gate's verdict, in the test's log
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "gate PASSED" in result.stdout
    header = json.loads((out / "header.json").read_text())
    corpus = header["corpus"]
    assert corpus["shipped"] is True and corpus["paths"] == ["shipped"]
    clone = shipped.corpus()  # the same files in the clone: the same digest
    from conformance.cases.loader import discover

    assert corpus["digest"] == shipped.digest(discover([clone]), clone)
    assert corpus["files"] == len(discover([clone]))
    assert header["conformance"] == __version__
    gate = json.loads((out / "gate.json").read_text())
    assert gate["passed"] is True and gate["discrepancies"] > 0  # the known ones: judged
    assert str(venv) in gate["baseline"] and gate["baseline"].endswith("conformance/corpus/known")
    entries = {e["where"].rsplit(":", 1)[0] for e in gate["entries"]}
    assert entries == {str(Path(gate["baseline"]) / "onnxruntime.yaml")}


def test_a_cases_folder_in_the_working_directory_is_not_read(venv, empty):
    (empty / "cases").mkdir()
    (empty / "cases" / "broken.yaml").write_text("cases: [{id: Not An Id}]\n")
    result = cli(venv, empty, "cases", "list", "-k", "ge-onnx-example-1")
    assert result.returncode == 0, result.stderr
    assert "ge-onnx-example-1" in result.stdout
    # named, it is read: and refused
    named = cli(venv, empty, "cases", "list", "cases")
    assert named.returncode == 2 and "broken.yaml" in named.stderr + named.stdout


def test_a_runtime_not_installed_is_named_with_its_extra(venv, empty):
    result = cli(venv, empty, "run", "--runtime", "openvino", "-k", "ge-onnx-example-1")
    assert result.returncode == 2
    assert "openvino is not installed: pip install 'onnx-gather-conformance[openvino]'" in (
        result.stderr
    )
    default = cli(venv, empty, "run", "--gate", "-k", "ge-onnx-example-1", "--no-progress",
                  "--out", empty / "default")  # fmt: skip
    assert default.returncode == 0, default.stderr
    skipped = [line for line in default.stderr.splitlines() if "skipped" in line]
    assert skipped == [
        "not installed, skipped: openvino (pip install 'onnx-gather-conformance[openvino]'), "
        "tract (pip install 'onnx-gather-conformance[tract]')"
    ]
    header = json.loads((empty / "default" / "header.json").read_text())
    assert sorted(header["runtimes"]) == ["onnxruntime", "reference"]


def test_example_adapter_package_gates_with_its_own_baseline(venv, empty, tmp_path):
    """The example package, installed, is --runtime example-runtime (entry point),
    its cases added to the shipped ones, its baseline to the shipped baselines."""
    source = tmp_path / "adapter-package"
    shutil.copytree(EXAMPLE, source)  # a build writes beside the sources: not in the repo
    installed = run(
        [UV, "pip", "install", "--python", venv / "bin" / "python",
         "-c", REPO / "constraints.txt", source],
        cwd=tmp_path,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    args = ["run", "--gate", "--runtime", "example-runtime", "--no-progress",
            "--cases", "shipped", source / "cases", "--known", "shipped", source / "known",
            "-k", "example-runtime-"]  # fmt: skip
    result = cli(venv, empty, *args, "--out", empty / "ok")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    gate = json.loads((empty / "ok" / "gate.json").read_text())
    assert gate["discrepancies"] >= 2  # int8 indices accepted, on every variant
    assert gate["new"] == []
    mine = [e for e in gate["entries"] if e["where"].startswith(str(source / "known"))]
    own_case = [e for e in mine if "example-runtime-int8-indices" in e["match"]]
    assert len(own_case) == 1 and own_case[0]["covered"] == gate["discrepancies"]
    header = json.loads((empty / "ok" / "header.json").read_text())
    assert header["corpus"]["shipped"] is False
    assert header["corpus"]["paths"] == ["shipped", str(source / "cases")]
    assert header["runtimes"]["example-runtime"]["adapter"] == "example-runtime"
    # Without its baseline the same run fails: the entries above were what passed it.
    bare = cli(venv, empty, *args[:-5], "-k", "example-runtime-", "--out", empty / "bare")
    assert bare.returncode == 1, bare.stdout[-3000:] + bare.stderr[-3000:]
    assert "NEW:" in bare.stdout and "example-runtime-int8-indices" in bare.stdout


def test_a_case_file_named_twice_is_digested_once(tmp_path):
    """The loader reads a file named by its folder and by itself once; so does
    the digest the header records."""
    from conformance import shipped

    case = tmp_path / "a.yaml"
    case.write_text("cases: []\n")
    once = shipped.digest([case], tmp_path)
    assert shipped.digest([case, tmp_path / "." / "a.yaml"], tmp_path) == once
    case.write_text("cases: [] # changed\n")
    assert shipped.digest([case], tmp_path) != once
