"""What the harness knows of a target is the harness's (issue 44, 5 and 6):
an adapter's report of itself is recorded apart and never decides the
target's name, profile, device, baseline or the scope of its entries; a
built-in runtime said to be on a GPU it does not compute on is refused at
the targets file's line, and a GPU target whose adapter reports no GPU does
not start (exit 2), never a CPU run judged as a GPU's."""

from __future__ import annotations

import json
import textwrap

import pytest

from conformance.adapters import registry
from conformance.cases.loader import CaseErrors
from conformance.engine import targets
from tests import faulty_adapter as faulty
from tests.claiming_adapter import CLAIMS
from tests.conftest import conformance_here

CLAIMING = "tests.claiming_adapter:ClaimingAdapter"
CASES = f"""\
defaults: {{op: Gather, opset: 13, dtype: int32, indices_dtype: int64,
           spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension of data",
           description: wrong values of an adapter that claims a GPU}}
cases:
  - {{id: on-a-gpu, expected: oracle, data: [{faulty.WRONG}, 2, 3], indices: [1, 0]}}
  - {{id: in-cuda, expected: oracle, data: [{faulty.WRONG}, 5, 6], indices: [2, 0]}}
"""
# Each entry holds only where the adapter claims to be: on an H200, in profile cuda.
KNOWN = """\
entries:
  - {case: on-a-gpu, outcome: value_mismatch, gpu: {compute_capability: '9.0'},
     reason: on a Hopper GPU only, clause: bitwise-exact}
  - {case: in-cuda, outcome: value_mismatch, profile: [cuda],
     reason: in the cuda profile only, clause: bitwise-exact}
"""


def _file(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def claimed(tmp_path_factory):
    """One run of the claiming adapter, gated against entries scoped to its claims."""
    tmp_path = tmp_path_factory.mktemp("claimed")
    known = tmp_path / "known"
    known.mkdir()
    _file(known, "claimer.yaml", KNOWN)
    path = _file(tmp_path, "targets.yaml", f"targets:\n  claimer:\n    adapter: {CLAIMING}\n")
    out = tmp_path / "run"
    done = conformance_here(
        "run", "--targets", str(path), "--cases", str(_file(tmp_path, "c.yaml", CASES)),
        "--out", str(out), "--variants", "static", "--no-progress", "--gate",
        "--known", str(known),
    )  # fmt: skip
    return out, known, done


def test_an_adapter_claiming_a_gpu_and_a_profile_is_gated_as_what_it_is(claimed):
    out, known, done = claimed
    assert done.returncode == 1, done.stdout + done.stderr  # two new discrepancies
    gate = json.loads((out / "gate.json").read_text())
    assert len(gate["new"]) == 2, gate
    assert [item["holds"] for item in gate["not_used"]] == [
        "GPU compute capability 9.0",
        "profile cuda",
    ]
    about = json.loads((out / "header.json").read_text())["runtimes"]["claimer"]
    assert (about["adapter"], about["profile"], about["device"]) == (CLAIMING, "default", "CPU")
    assert "gpu" not in about and about["requested"] == {}
    # what it said of itself is kept, apart
    reported = about["adapter_info"]
    assert {key: reported[key] for key in CLAIMS} == CLAIMS
    assert reported["gpu"]["name"] == "NVIDIA H200"
    # `conformance gate` on the folder reads the same record
    again = conformance_here("gate", str(out), "--known", str(known))
    assert again.returncode == 1, again.stdout + again.stderr


def test_an_adapter_calling_itself_a_runtime_does_not_start_as_it(tmp_path):
    done = conformance_here(
        "run", "--runtime", "tests.claiming_adapter:SpoofingAdapter",
        "--cases", str(_file(tmp_path, "c.yaml", CASES)), "--out", str(tmp_path / "run"),
        "--variants", "static", "--no-progress", "--gate",
    )  # fmt: skip
    assert done.returncode == 2
    said = done.stdout + done.stderr
    assert "calls itself 'onnxruntime'" in said and "did not start" in said, said
    # and a header that says so anyway (an older run) reads no runtime's baseline
    assert registry.baseline_name("tests.claiming_adapter:SpoofingAdapter", "onnxruntime") is None
    assert registry.baseline_name("tests.x:Mine", "mine") == "mine"
    # the class a runtime's name is registered for, given as module:Class, is that runtime
    itself = registry.registered()["reference"]
    assert targets.parse(itself).refusal({"name": "reference"}) == ""
    assert registry.baseline_name(itself, "reference") == "reference"
    assert targets.parse(itself).refusal({"name": "onnxruntime"})


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("adapter: reference\n    device: gpu", "reference in profile default computes on the CPU"),
        ("adapter: onnxruntime\n    device: gpu", "on a GPU: profile cuda"),
        ("adapter: onnxruntime\n    profile: cuda\n    device: cpu", "runs on an NVIDIA GPU"),
    ],
)
def test_a_built_in_runtime_s_device_must_be_the_one_it_computes_on(tmp_path, target, said):
    path = _file(tmp_path, "targets.yaml", f"targets:\n  mine:\n    {target}\n")
    with pytest.raises(CaseErrors) as raised:
        targets.load_file(path)
    message = str(raised.value)
    assert "targets.mine.device" in message and said in message, message
    assert f"{path}:" in message  # at its line


def test_a_built_in_on_a_gpu_by_its_file_ends_the_run_at_once_with_exit_2(tmp_path):
    path = _file(
        tmp_path, "targets.yaml", "targets:\n  mine:\n    adapter: reference\n    device: gpu\n"
    )
    done = conformance_here(
        "run", "--targets", str(path), "--cases", "cases/gather/dtypes.yaml",
        "--out", str(tmp_path / "run"), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 2 and "device" in done.stderr, done.stdout + done.stderr
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_a_gpu_target_whose_adapter_reports_no_gpu_does_not_start(tmp_path):
    path = _file(
        tmp_path, "targets.yaml",
        "targets:\n  mine:\n    adapter: tests.faulty_adapter:FaultyAdapter\n    device: gpu\n",
    )  # fmt: skip
    done = conformance_here(
        "run", "--targets", str(path), "--cases", str(_file(tmp_path, "c.yaml", CASES)),
        "--out", str(tmp_path / "run"), "--variants", "static", "--no-progress",
    )  # fmt: skip
    assert done.returncode == 2
    said = done.stdout + done.stderr
    assert "runs on an NVIDIA GPU and its worker did not start" in said, said
    assert "reports no GPU" in said
