"""A runtime's own adapter keeps its baseline; --runtime picks targets-file
targets; --cases and --known add to the shipped sets with the word 'shipped'
(issue 22). The CLI in this process, its workers real processes; the example
adapter package's class given as module:Class (its installed, entry-point form
is tests/test_packaging.py's)."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

from conformance import adapters, shipped
from conformance.gate import baseline
from tests.conftest import conformance_here

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adapter-package"
CLASS = "example_runtime:ExampleRuntimeAdapter"


def cli(cwd: Path, *args) -> subprocess.CompletedProcess:
    """The CLI in ``cwd``, the example package on its workers' path."""
    return conformance_here(*map(str, args), cwd=cwd, env={"PYTHONPATH": str(EXAMPLE / "src")})


def test_module_class_adapter_reads_the_baseline_of_its_class_name(tmp_path):
    args = ["run", "--gate", "--runtime", CLASS, "--no-progress",
            "--cases", "shipped", EXAMPLE / "cases", "-k", "example-runtime-int8"]  # fmt: skip
    good = cli(tmp_path, *args, "--known", EXAMPLE / "known", "--out", tmp_path / "good")
    assert good.returncode == 0, good.stdout + good.stderr
    gate = json.loads((tmp_path / "good" / "gate.json").read_text())
    assert gate["discrepancies"] == 5 and gate["new"] == []
    assert {r["runtime"] for r in gate["entries"]} == {"example-runtime"}
    # the shipped baselines have no example-runtime.yaml: the same results are new
    bare = cli(tmp_path, *args, "--out", tmp_path / "bare")
    assert bare.returncode == 1, bare.stdout + bare.stderr
    assert "NEW:" in bare.stdout


def test_a_broken_baseline_of_a_module_class_adapter_is_refused(tmp_path):
    """Its name is known once its workers report it (the parent never imports a
    module:Class): the file is read then, and refused with its file:line, exit
    2, no verdict written. A targets file's target of that adapter is named
    by the file: refused before anything runs."""
    known = tmp_path / "known"
    known.mkdir()
    broken = "entries:\n  - case: example-runtime-int8-indices\n    outcome: exploded\n"
    (known / "example-runtime.yaml").write_text(broken)
    result = cli(tmp_path, "run", "--gate", "--runtime", CLASS, "--known", known,
                 "--cases", EXAMPLE / "cases", "--out", tmp_path / "out")  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{known / 'example-runtime.yaml'}:3" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out" / "gate.json").exists()
    (known / "mine.yaml").write_text(broken)
    (tmp_path / "targets.yaml").write_text(f"targets:\n  mine: {{adapter: '{CLASS}'}}\n")
    named = cli(tmp_path, "run", "--gate", "--targets", "targets.yaml", "--known", known,
                "--cases", EXAMPLE / "cases", "--out", tmp_path / "named")  # fmt: skip
    assert named.returncode == 2, named.stdout + named.stderr
    assert f"{known / 'mine.yaml'}:3" in named.stderr
    assert not (tmp_path / "named").exists()  # refused before anything ran


def test_runtime_selects_a_target_of_the_targets_file(tmp_path):
    (tmp_path / "targets.yaml").write_text(
        "targets:\n"
        "  ort1t: {adapter: onnxruntime, profile: 1thread}\n"
        "  ref2: {adapter: reference}\n"
    )
    out = tmp_path / "out"
    result = cli(tmp_path, "run", "--targets", "targets.yaml", "--runtime", "ref2",
                 "-k", "ge-onnx-example-1.op13.float32", "--out", out, "--no-progress")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(json.loads((out / "header.json").read_text())["runtimes"]) == ["ref2"]
    unknown = cli(tmp_path, "run", "--targets", "targets.yaml", "--runtime", "ort120",
                  "-k", "ge-onnx-example-1", "--out", tmp_path / "x")  # fmt: skip
    assert unknown.returncode == 2 and "unknown runtime 'ort120'" in unknown.stderr


def test_known_folders_union_each_entry_with_its_own_file_line(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "onnxruntime.yaml").write_text(
        "entries:\n"
        "  - case: my-own-case\n"
        "    outcome: crash\n"
        "    reason: mine\n"
        "    clause: index-out-of-range\n"
    )
    folders = baseline.folders(["shipped", mine])
    assert list(folders) == [shipped.baselines(), mine]
    union = baseline.load(folders, {"onnxruntime": "onnxruntime"})["onnxruntime"]
    alone = baseline.load(baseline.folders([mine]), ["onnxruntime"])["onnxruntime"]
    shipped_only = baseline.load(baseline.folders(None), ["onnxruntime"])["onnxruntime"]
    assert [e.where for e in alone] == [f"{mine / 'onnxruntime.yaml'}:2"]
    assert [e.where for e in union] == [e.where for e in shipped_only + alone]
    assert all(e.path.parent == shipped.baselines() for e in shipped_only)


def ids(result: subprocess.CompletedProcess) -> set[str]:
    assert result.returncode == 0, result.stderr
    return {line.split("\t")[0] for line in result.stdout.splitlines()}


def test_cases_shipped_adds_and_a_working_dir_cases_folder_is_not_read(tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "junk.yaml").write_text("not: a case file\n")
    default = ids(cli(tmp_path, "cases", "list"))  # the shipped corpus, not ./cases
    own = ids(cli(tmp_path, "cases", "list", EXAMPLE / "cases"))  # replaces it
    both = ids(cli(tmp_path, "cases", "list", "shipped", EXAMPLE / "cases"))  # adds to it
    assert "ge-onnx-example-1.op13.float32.int64" in default
    assert "example-runtime-int8-indices.op13.float32.int8" in own
    assert default.isdisjoint(own)
    assert both == default | own
    named = cli(tmp_path, "cases", "list", "cases")  # ./cases when named: read, refused
    assert named.returncode == 2 and "junk.yaml" in named.stderr


def test_one_baseline_name_rule_and_the_extra_of_each_builtin():
    assert adapters.baseline_name("openvino", "openvino:1thread") == "openvino"
    assert adapters.baseline_name("openvino", "ov2025") == "openvino"  # a targets file's
    assert adapters.baseline_name(CLASS, "example-runtime") == "example-runtime"
    assert adapters.baseline_name(CLASS, CLASS) is None  # not yet reported: no file
    assert adapters.baseline_name(CLASS, "../x") is None and not baseline.files_of(
        [REPO / "cases" / "known"], CLASS, "../known/onnxruntime"
    )
    assert adapters.not_installed("reference") is None
    for name in ("onnxruntime", "openvino", "tract"):
        assert adapters.install_hint(name) == f"pip install 'onnx-gather-conformance[{name}]'"
    # onnx.reference comes with the core; onnxruntime-web from npm (its lockfile), not pip
    assert set(adapters.EXTRAS) == set(adapters.BUILTIN) - {"reference", "onnxruntime-web"}
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert set(adapters.EXTRAS.values()) <= set(extras["optional-dependencies"])
