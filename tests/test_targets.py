"""Targets: NAME[:PROFILE], targets files, and what the header records of
each target (real runtimes, real worker processes)."""

from __future__ import annotations

import json
import sys

import pytest

from conformance.cases.loader import CaseErrors
from conformance.engine import records, targets
from conformance.engine.pool import WorkerPool
from conformance.tables.profiles import PACKAGES, PROFILES
from tests.conftest import conformance


def test_a_bare_name_is_the_default_profile_which_sets_nothing():
    target = targets.parse("openvino")
    assert (target.name, target.adapter, target.profile, target.properties) == (
        "openvino", "openvino", "default", {},
    )  # fmt: skip
    one = targets.parse("openvino:1thread")
    assert one.name == "openvino:1thread" and one.properties == {"INFERENCE_NUM_THREADS": 1}
    assert targets.parse("onnxruntime:default").name == "onnxruntime"  # one name for one thing
    assert targets.parse("onnxruntime:no-opt").properties == {
        "graph_optimization_level": "ORT_DISABLE_ALL"
    }
    # module:Class is an adapter, named by itself once its worker reports
    faulty = targets.parse("tests.faulty_adapter:FaultyAdapter")
    assert faulty.name == "" and faulty.adapter == "tests.faulty_adapter:FaultyAdapter"


def test_unknown_profiles_and_runtimes_say_what_exists():
    with pytest.raises(targets.TargetError, match=r"openvino has no profile 'fast'.*1thread"):
        targets.parse("openvino:fast")
    with pytest.raises(targets.TargetError, match="unknown runtime 'openvina'"):
        targets.parse("openvina")
    with pytest.raises(targets.TargetError, match="given twice: openvino:1thread"):
        targets.parse_all(["openvino:1thread", "openvino:1thread"])


def test_every_profile_is_accepted_by_its_runtime():
    """Each profile's properties are names and values the runtime takes: the
    worker starts and reads them back as effective. (A profile of another
    package, the OpenVINO EP, starts in its own environment: test_openvino_ep.)"""
    specs = [
        f"{name}:{profile}"
        for name, known in PROFILES.items()
        for profile in known
        if (name, profile) not in PACKAGES
    ]
    with WorkerPool(specs) as pool:
        info = pool.info
    assert sorted(info) == sorted(t.name for t in targets.parse_all(specs))
    ov = info["openvino:1thread"]
    assert ov["requested"] == {"INFERENCE_NUM_THREADS": 1}
    assert ov["effective"]["INFERENCE_NUM_THREADS"] == "1"
    assert info["openvino:f32"]["effective"]["INFERENCE_PRECISION_HINT"] == "f32"
    assert info["openvino:accuracy"]["effective"]["EXECUTION_MODE_HINT"] == "ACCURACY"
    # The default sets nothing; what the runtime picked is recorded (it depends on the CPU).
    assert info["openvino"]["requested"] == {}
    assert info["openvino"]["effective"]["INFERENCE_PRECISION_HINT"] in ("f32", "bf16", "f16")
    assert info["onnxruntime:no-opt"]["effective"]["graph_optimization_level"] == "ORT_DISABLE_ALL"
    assert info["onnxruntime"]["effective"]["graph_optimization_level"] == "ORT_ENABLE_ALL"
    assert info["onnxruntime:1thread"]["effective"]["intra_op_num_threads"] == "1"
    for about in info.values():
        assert about["python"] and about["python_version"]


def _targets_file(tmp_path, text: str):
    path = tmp_path / "targets.yaml"
    path.write_text(text)
    return path


def test_a_targets_file_is_checked_like_a_case_file(tmp_path):
    path = _targets_file(
        tmp_path,
        "targets:\n"
        "  good:\n    adapter: openvino\n    profile: accuracy\n"
        "  nosuch:\n    adapter: openvina\n"
        "  both:\n    adapter: openvino\n    profile: f32\n    properties: {A: 1}\n"
        "  badprofile:\n    adapter: onnxruntime\n    profile: turbo\n"
        "  nopython:\n    adapter: onnxruntime\n    python: envs/none/bin/python\n"
        "  typo:\n    adapter: onnxruntime\n    profiel: no-opt\n",
    )
    with pytest.raises(CaseErrors) as raised:
        targets.load_file(path)
    said = [str(e) for e in raised.value.errors]
    assert f"{path}:6: targets.nosuch.adapter: unknown runtime 'openvina'" in said[0]
    assert any(
        f"{path}:10: targets.both.properties: give a profile or properties" in s for s in said
    )
    assert any(
        f"{path}:13: targets.badprofile.profile: onnxruntime has no profile" in s for s in said
    )
    assert any("targets.nopython.python: no interpreter at" in s for s in said)
    assert any(f"{path}:19: targets.typo.profiel: unknown" in s for s in said)


def test_a_targets_file_runs_beside_runtime_targets_in_another_interpreter(tmp_path):
    """A target's worker runs in the interpreter the file names (here this
    one, by path): the header says which, results carry the file's name."""
    path = _targets_file(
        tmp_path,
        "targets:\n"
        "  ort-plain:\n    adapter: onnxruntime\n"
        "    properties: {graph_optimization_level: ORT_DISABLE_ALL}\n"
        f"    python: {sys.executable}\n",
    )  # fmt: skip
    out = tmp_path / "run"
    done = conformance(
        "run", "--runtime", "onnxruntime:1thread", "--targets", str(path),
        "-k", "gather-example-axis0",
        "--variants", "static", "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    header = json.loads((out / records.HEADER).read_text())
    plain = header["runtimes"]["ort-plain"]
    assert plain["adapter"] == "onnxruntime" and plain["profile"] is None
    assert plain["requested"] == {"graph_optimization_level": "ORT_DISABLE_ALL"}
    assert plain["effective"]["graph_optimization_level"] == "ORT_DISABLE_ALL"
    assert plain["python"] == sys.executable
    assert "cpu_flags" in header and isinstance(header["cpu_flags"], list)
    runtimes = {r["runtime"] for r in records.read_records(out / records.RESULTS)}
    assert runtimes == {"onnxruntime:1thread", "ort-plain"}
    # The report shows one column per target with what it asked for and got.
    html = (out / "report.html").read_text(encoding="utf-8")
    judged = html[html.index('id="targets"') : html.index("</table>", html.index('id="targets"'))]
    assert '<th data-runtime="ort-plain">ort-plain</th>' in judged
    assert "<code>graph_optimization_level=ORT_DISABLE_ALL</code>" in judged
    assert "<code>intra_op_num_threads=1</code>" in judged  # onnxruntime:1thread's effective
    # Both are ONNX Runtime: both are gated against cases/known/onnxruntime.yaml.
    gate = json.loads((out / records.GATE).read_text())
    assert gate["passed"] and "onnxruntime.yaml" in json.dumps(gate["entries"])


def test_a_bad_targets_file_exits_2_with_its_line(tmp_path):
    path = _targets_file(tmp_path, "targets:\n  x:\n    adapter: nothing\n")
    done = conformance("run", "--targets", str(path), "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert f"{path}:3: targets.x.adapter: unknown runtime 'nothing'" in done.stderr
    assert "Traceback" not in done.stderr


def test_auto_workers_leave_each_target_its_cores():
    """-j auto: a default-profile target computes on every core, so it gets one
    worker; one-thread targets share the cores between them."""
    parse = targets.parse_all
    assert targets.auto_workers(parse(["openvino"]), 2) == 1
    assert targets.auto_workers(parse(["openvino", "onnxruntime"]), 8) == 1
    assert targets.auto_workers(parse(["openvino:1thread"]), 4) == 4
    assert targets.auto_workers(parse(["openvino:1thread", "onnxruntime:1thread"]), 4) == 2
    assert targets.auto_workers(parse(["reference"]), 2) == 2  # pure Python: one thread
    assert targets.auto_workers(parse(["openvino:1thread", "onnxruntime"]), 2) == 1


def test_the_header_says_how_many_workers_and_why(tmp_path):
    out = tmp_path / "run"
    done = conformance("run", "--runtime", "openvino:1thread", "-k", "gather-example-axis0",
                       "--variants", "static", "--out", str(out), "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    budget = json.loads((out / records.HEADER).read_text())["cpu_budget"]
    cores = budget["cores"]
    assert budget["workers_chosen"] == "auto" and budget["workers_per_runtime"] == cores
    assert budget["threads_per_worker"] == {"openvino:1thread": 1}
    assert budget["threads_at_most"] == cores and not budget["oversubscribed"]
    bad = conformance("run", "-j", "0", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "'0': give a positive number of workers, or auto" in bad.stderr
