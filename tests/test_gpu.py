"""GPU targets without a GPU (CI has none; docs/gpu.md says what only a GPU checks).

The device record is read through a stand-in for NVIDIA's binding
(tests/gpu_adapter.py: StubNvml); resource failures come from a fake GPU
adapter raising the messages the CUDA provider gave on the recorded H200 run;
IREE compiles for CUDA for real (it needs no GPU to compile), and the
profiles' refusals are the real ones of this machine, which has no GPU.
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from conformance import oracle
from conformance.adapters import LoadError, gpu, probe_model
from conformance.adapters.registry import PROFILES, on_gpu
from conformance.cases import loader
from conformance.cases.loader import CaseErrors
from conformance.engine import models, records, rejudge, targets
from conformance.engine.pool import EngineError, Job, WorkerPool
from conformance.engine.run import cpu_budget
from conformance.engine.worker import run_job
from conformance.gate import baseline, verdict
from conformance.oracle import compare
from tests import faulty_adapter as faulty
from tests import gpu_adapter
from tests.conftest import REPO, conformance_here

FAKE = "tests.gpu_adapter:FakeGpuAdapter"


def test_the_recorded_resource_failures_are_told_apart_from_refusals():
    """The two texts of the H200 run, and the named CUDA conditions; a refusal
    of the model, a kernel's failure or an index error are none."""
    assert gpu.resource_failure(gpu_adapter.CUBLAS) == "CUBLAS failure 3"
    assert gpu.resource_failure(gpu_adapter.CUDNN) == "expr=cudnnCreate("
    for said in (
        "CUDA failure 2: out of memory ; GPU=0 ; expr=cudaMalloc((void**)&p, size);",
        "IREE: RESOURCE_EXHAUSTED; allocation failed",
        "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        "CUDA failure 46: all CUDA-capable devices are busy or unavailable",
    ):
        assert gpu.resource_failure(said), said
    for refusal in (
        "[ONNXRuntimeError] : 1 : FAIL : Exception during loading: MLDataType for: "
        "tensor(complex64) is not currently registered or supported",
        "CUDA failure 700: an illegal memory access was encountered",  # may be the kernel's bug
        "indices element out of data bounds, idx=4 must be within the inclusive range [-4,3]",
        "",
    ):
        assert gpu.resource_failure(refusal) is None, refusal


def test_the_device_record_is_read_through_nvml(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    stub = gpu_adapter.StubNvml()
    device = gpu.read_device(0, stub)
    assert device == {
        "name": "NVIDIA H200",
        "compute_capability": "9.0",
        "memory_bytes": 150_754_820_096,
        "driver_version": "580.159.04",
        "cuda_driver_version": "13.0",
        "uuid": "GPU-00000000-0000-0000-0000-000000000000",
        "pci_bus_id": "00000000:00:05.0",
        "cuda_ordinal": 0,
        "cuda_visible_devices": None,
    }
    # CUDA's ordinal is counted among the visible GPUs; NVML counts them all
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,GPU-abc")
    gpu.read_device(0, stub)
    gpu.read_device(1, stub)
    assert stub.handles == [0, 3, "GPU-abc"]
    with pytest.raises(gpu.NoGpu, match=r"no NVIDIA GPU 2 among CUDA_VISIBLE_DEVICES"):
        gpu.read_device(2, stub)
    with pytest.raises(gpu.NoGpu, match=r"^no NVIDIA GPU here: NVML did not start \(Driver Not"):
        gpu.read_device(0, gpu_adapter.StubNvml(fail_init="Driver Not Loaded"))
    with pytest.raises(gpu.NoGpu, match="NVML sees no device"):
        gpu.read_device(0, gpu_adapter.StubNvml(devices=0))


def test_this_machine_has_no_gpu_and_says_so_in_one_line():
    with pytest.raises(gpu.NoGpu) as raised:
        gpu.read_device(0)
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith(("no NVIDIA GPU here", "nvidia-ml-py is not installed"))


def test_iree_takes_the_highest_cuda_target_at_or_below_the_device():
    from conformance.adapters.iree import CUDA_TARGETS

    chosen = {cc: gpu.cuda_target(cc, CUDA_TARGETS) for cc in ("9.0", "8.9", "8.7", "8.0", "7.5")}
    assert chosen == {"9.0": "sm_89", "8.9": "sm_89", "8.7": "sm_86", "8.0": "sm_80", "7.5": None}


def test_iree_compiles_for_cuda_here_and_without_a_cuda_driver_cannot_run():
    """iree-compile makes CUDA code on a CPU machine: the vmfb holds PTX for the
    target asked (sm_89, what an H200 gets), and iree-compile refuses sm_90,
    which is why CUDA_TARGETS stops at sm_89. Loading it needs the CUDA
    driver: without one, each result is harness_unsupported, never a crash."""
    from conformance.adapters.iree import IreeAdapter

    cuda = PROFILES["iree"]["cuda"]
    adapter = IreeAdapter({**cuda, "extra_args": ["--iree-cuda-target=sm_89"]})
    vmfb = adapter.compile(probe_model())
    assert b"cuda-nvptx-fb" in vmfb and b".target sm_89" in vmfb
    hopper = IreeAdapter({**cuda, "extra_args": ["--iree-cuda-target=sm_90"]})
    with pytest.raises(LoadError, match="missing GPU target"):
        hopper.compile(probe_model())
    data, indices = np.array([1.0, 2.0, 3.0, 4.0], np.float32), np.array([3, 0], np.int64)
    model = models.build("Gather", 13, data, indices, 0, "dynamic").SerializeToString()
    result = run_job(adapter, (None, model, {"data": data, "indices": indices}))
    assert result[0] == "unsupported"
    assert result[1].startswith("no CUDA driver: ") and "libcuda" in result[1]


def test_gpu_targets_by_their_properties_or_their_file():
    assert on_gpu("onnxruntime", PROFILES["onnxruntime"]["cuda"])
    assert on_gpu("iree", PROFILES["iree"]["cuda"])
    assert not on_gpu("onnxruntime", PROFILES["onnxruntime"]["openvino-ep"])
    assert not on_gpu("iree", {})
    assert targets.parse("onnxruntime:cuda").gpu and not targets.parse("onnxruntime").gpu


def _targets_file(tmp_path, text: str):
    path = tmp_path / "targets.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_gpu_workers_are_shared_on_the_device_unless_a_file_gives_its_own(tmp_path):
    path = _targets_file(
        tmp_path,
        f"""\
        targets:
          a: {{adapter: onnxruntime, properties: {{providers: [CUDAExecutionProvider]}}}}
          b: {{adapter: iree, profile: cuda}}
          c: {{adapter: {FAKE}, device: gpu, gpu_workers: 3}}
          d: {{adapter: onnxruntime}}
        """,
    )
    a, b, c, d = targets.load_file(path)
    assert (a.gpu, b.gpu, c.gpu, d.gpu) == (True, True, True, False)
    assert targets.gpu_workers([a, b, c, d], 4) == {a: 2, b: 2, c: 3}
    assert targets.gpu_workers([a, b, c], 1) == {a: 1, b: 1, c: 3}  # at least one each
    # -j auto counts the CPU targets' threads only
    assert targets.auto_workers([a, b, c, d], 8) == targets.auto_workers([d], 8)


def test_gpu_workers_is_for_gpu_targets_said_at_its_line(tmp_path):
    path = _targets_file(
        tmp_path,
        """\
        targets:
          plain:
            adapter: onnxruntime
            gpu_workers: 2
          many:
            adapter: onnxruntime
            profile: cuda
            gpu_workers: 0
        """,
    )
    with pytest.raises(CaseErrors) as raised:
        targets.load_file(path)
    said = [str(error) for error in raised.value.errors]
    assert said[0] == (
        f"{path}:4: targets.plain.gpu_workers: for a target on a GPU (profile cuda, a GPU "
        "provider or driver, or device: gpu)"
    )
    assert said[1].startswith(f"{path}:8: targets.many.gpu_workers: 0 ")


def test_a_gpu_target_runs_its_own_workers_and_the_cpu_budget_leaves_it_out():
    fake = targets.Target("fakegpu", FAKE, None, {}, device="gpu")
    with WorkerPool([fake, "tests.faulty_adapter:FaultyAdapter"], workers=1, gpu_workers=3) as p:
        assert len(p.lanes["fakegpu"].workers) == 3 and len(p.lanes["faulty"].workers) == 1
        assert p.on_gpu == {"fakegpu": 3}
        info = p.info
    assert info["fakegpu"]["gpu"]["name"] == "NVIDIA H200"
    budget = cpu_budget(info, 1, gpu=p.on_gpu)
    assert set(budget["threads_per_worker"]) == {"faulty"}


def _job(code: int, tag) -> Job:
    data = np.array([code, 1, 2, 3], dtype=np.int32)
    indices = np.array([1, 0], dtype=np.int64)
    model = models.build("Gather", 13, data, indices, 0, "dynamic").SerializeToString()
    return Job(None, model, {"data": data, "indices": indices}, tag)


def test_a_resource_failure_runs_again_alone_and_twice_is_a_harness_error():
    """BUSY fails in a worker that ran a case before and passes alone in a
    fresh one; RESOURCES fails every time. Neither is ever load_error (which
    the judge would call rejected)."""
    fake = targets.Target("fakegpu", FAKE, None, {}, device="gpu")
    codes = [0, gpu_adapter.BUSY, gpu_adapter.RESOURCES, 0]
    with WorkerPool([fake], gpu_workers=1, batch_size=8) as engine:
        results = {
            done.tag: raw
            for batch in engine.run(_job(code, index) for index, code in enumerate(codes))
            for done, _, raw in batch
        }
        events = engine.events
    assert sorted(results) == [0, 1, 2, 3]
    assert [results[i].status for i in (0, 3)] == ["ok", "ok"]
    busy = results[1]
    assert busy.status == "ok" and busy.outputs[0].tolist() == [1, gpu_adapter.BUSY]
    assert busy.note.startswith("it failed once for lack of GPU resources (CUBLAS failure 3)")
    twice = results[2]
    assert twice.status == "harness_error"
    assert twice.message.startswith("the GPU ran out of resources (or lost its device) twice")
    assert gpu_adapter.CUDNN in twice.message  # the runtime's own words, whole
    assert sum("a GPU resource failure" in event for event in events) == 3


def test_a_cpu_target_s_refusal_is_its_verdict_whatever_it_says():
    """Only a GPU target's failures are looked at so: the same text from a
    CPU target is its load error (the judge's rejected)."""
    fake = targets.Target("fakegpu", FAKE, None, {}, device="cpu")
    with WorkerPool([fake], batch_size=8) as engine:
        raws = [raw for b in engine.run([_job(gpu_adapter.RESOURCES, 0)]) for _, _, raw in b]
    assert [raw.status for raw in raws] == ["load_error"]


CASES = """\
defaults: {op: Gather, opset: 13, dtype: int32, indices_dtype: int64,
           spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension of data",
           description: resource failures on a fake GPU}
cases:
  - {id: gpu-first, expected: oracle, data: [1, 2, 3], indices: [2, 0]}
  - {id: gpu-busy, expected: oracle, data: [BUSY, 2, 3], indices: [1, 0]}
  - {id: gpu-out, expected: oracle, data: [RESOURCES, 2, 3], indices: [1, 0]}
  - {id: gpu-wrong, expected: oracle, data: [WRONG, 2, 3], indices: [1, 0]}
  - {id: gpu-out-of-range, data: [1, 2, 3, 4], indices: [0, 4, -5],
     expect_error: index-out-of-range}
""".replace("BUSY", str(gpu_adapter.BUSY)).replace("RESOURCES", str(gpu_adapter.RESOURCES))
CASES = CASES.replace("WRONG", str(faulty.WRONG))
# The fake GPU target's baseline (a module:Class adapter's is named after the
# target): one entry for its GPU's compute capability, one for another GPU.
KNOWN = """observed:
  - {version: 1.31.1, profile: default, cpu_flags: [], gpu: {name: NVIDIA H100 80GB HBM3, compute_capability: '9.0'}}
entries:
  - case: gpu-wrong
    outcome: value_mismatch
    gpu: {compute_capability: '9.0'}
    reason: the fake adapter's last element, on a Hopper GPU
    clause: bitwise-exact
  - case: gpu-wrong
    outcome: value_mismatch
    gpu: {name: 'NVIDIA H100*'}
    reason: the same, scoped to another GPU
    clause: bitwise-exact
  - signature: {violation: index-out-of-range}
    outcome: accepted_invalid
    explained_by: out-of-range-reads-zero
    reason: out-of-range indices read zero, as on the CUDA provider
    clause: index-out-of-range
"""  # noqa: E501


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory):
    """One run of the fake GPU target, gated against KNOWN: (folder, its CLI result)."""
    tmp_path = tmp_path_factory.mktemp("gpu-run")
    cases = tmp_path / "gpu.yaml"
    cases.write_text(CASES)
    path = _targets_file(tmp_path, f"targets:\n  fakegpu:\n    adapter: {FAKE}\n    device: gpu\n")
    known = tmp_path / "known"
    known.mkdir()
    (known / "fakegpu.yaml").write_text(KNOWN)
    out = tmp_path / "run"
    done = conformance_here(
        "run", "--targets", str(path), "--cases", str(cases), "--out", str(out),
        "--variants", "static", "--pack", "1", "--no-progress", "--gpu-workers", "1",
        "--gate", "--known", str(known),
    )  # fmt: skip
    return out, done


def test_a_run_records_resource_failures_as_harness_errors_never_rejected(gpu_run):
    out, done = gpu_run
    assert done.returncode == 2, done.stderr  # a harness error: the run does not stand
    assert "1 harness error(s)" in done.stderr
    found = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        found[record["base_id"]] = record
    assert found["gpu-first"]["kind"] == "pass"
    # an output for out-of-range indices carries the explanations that make it exactly
    read = found["gpu-out-of-range"]
    assert read["kind"] == "accepted_invalid" and read["actual"]["values"] == ["1", "0", "0"]
    assert "out-of-range-reads-zero" in read["explained_by"]  # past data's end: unchecked too
    assert found["gpu-busy"]["kind"] == "pass"
    assert "lack of GPU resources" in found["gpu-busy"]["note"]
    out_of = found["gpu-out"]
    assert (out_of["kind"], out_of["harness_error"]) == ("harness_unsupported", True)
    header = json.loads((out / "header.json").read_text())
    assert header["gpu_workers"] == {"fakegpu": 1}
    assert header["runtimes"]["fakegpu"]["gpu"]["compute_capability"] == "9.0"
    assert "fakegpu" not in header["cpu_budget"]["threads_per_worker"]


def test_the_report_shows_the_gpu_beside_the_cpu(gpu_run):
    out, _ = gpu_run
    page = (out / "report.html").read_text()
    assert "<tr><th>GPU</th>" in page
    assert "NVIDIA H200, compute capability 9.0, 140.4 GiB" in page
    assert "driver 580.159.04 (CUDA 13.0), runtime built for CUDA 13.0" in page


def test_gpu_scoped_entries_hold_on_their_gpu_only_and_the_gate_says_which(gpu_run):
    """The entry for compute capability 9.0 covers the run's value mismatch on
    the (stubbed) H200; the one for H100s is not used, and the gate says why;
    the baseline was observed on an H100, which the gate says too."""
    out, done = gpu_run
    gate = json.loads((out / "gate.json").read_text())
    assert gate["new"] == []  # the value mismatch and the zeros read, each covered
    assert [item["holds"] for item in gate["not_used"]] == ["GPU NVIDIA H100*"]
    assert "not used: 1 entry for other versions, profiles, CPUs or GPUs: " in done.stdout
    assert "holds for GPU NVIDIA H100*" in done.stdout
    assert "GPU NVIDIA H200 (compute capability 9.0) (observed NVIDIA H100 80GB HBM3" in (
        " ".join(gate["unobserved"])
    )
    # on a target without a GPU (a CPU one of the same baseline), neither entry holds
    entries = baseline.load_file(out.parent / "known" / "fakegpu.yaml")
    cpu = baseline.Where("1.31.1", None, frozenset())
    hopper = baseline.Where("1.31.1", None, frozenset(), ("NVIDIA H200", "9.0"))
    assert [entry.applies_to(cpu) for entry in entries[:2]] == [False, False]
    assert [entry.applies_to(hopper) for entry in entries[:2]] == [True, False]


@pytest.mark.parametrize(
    ("scope", "said"),
    [
        ("{compute_capability: 9.0}", "entries[0].gpu.compute_capability: 9.0 is not"),
        ("{compute_capability: sm_90}", "entries[0].gpu.compute_capability: 'sm_90' is not"),
        ("{sm: '9.0'}", "entries[0].gpu.sm: unknown field (allowed: name, compute_capability)"),
        ("{}", "entries[0].gpu: {} is empty; give a mapping of name and/or compute_capability"),
    ],
)
def test_the_schema_refuses_a_bad_gpu_scope_at_its_line(tmp_path, scope, said):
    path = tmp_path / "onnxruntime.yaml"
    path.write_text(
        "entries:\n  - case: gather-index-at-s\n    outcome: accepted_invalid\n"
        f"    reason: r\n    clause: index-out-of-range\n    gpu: {scope}\n"
    )
    with pytest.raises(CaseErrors) as raised:
        baseline.load_file(path)
    assert str(raised.value.errors[0]).startswith(f"{path}:6: {said}")


def test_the_cuda_profile_without_its_provider_ends_the_run_at_once(tmp_path):
    """This environment's onnxruntime has no CUDA provider: the existing
    refusal, naming the package and docs/gpu.md, ends the whole run before
    anything runs (never a CPU run under the provider's name); so would no GPU."""
    cases = tmp_path / "gpu.yaml"
    cases.write_text(CASES)
    out = tmp_path / "run"
    done = conformance_here(
        "run", "--runtime", "onnxruntime:cuda", "reference", "--cases", str(cases),
        "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 2
    assert "CUDAExecutionProvider is not available in onnxruntime" in done.stderr
    assert "(onnxruntime-gpu: docs/gpu.md)" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text()


def test_a_gpu_profile_on_a_machine_without_a_gpu_does_not_start():
    with pytest.raises(EngineError, match=r"^iree:cuda runs on an NVIDIA GPU and its worker did"):
        WorkerPool(["iree:cuda", "reference"]).__enter__()


def _explained(op: str, data, indices, axis, actual) -> list[str]:
    data, indices, actual = np.asarray(data), np.asarray(indices), np.asarray(actual)
    reads = oracle.in_range(op, 13, data, indices, axis)
    assert reads is not None
    # this rule only (out-of-range-reads-unchecked-offset also fits an index past
    # either end of data, which reads zero there: tests/test_explanations.py)
    found = compare.explained_invalid(reads, actual.astype(data.dtype))
    return [name for name in found if name == "out-of-range-reads-zero"]


def test_out_of_range_reads_zero_is_checked_position_by_position():
    """Zero exactly where an index is out of range, the oracle's value
    everywhere else, bit for bit: the H200's [1, 0, 0], and what is not it."""
    data = np.array([1, 2, 3, 4], np.int32)
    fits = ["out-of-range-reads-zero"]
    assert _explained("Gather", data, [0, 4, -5], 0, [1, 0, 0]) == fits
    assert _explained("Gather", data, [0, 4, -5], 0, [1, 0, 4]) == []  # wrapped, not zero
    assert _explained("Gather", data, [0, 4, -5], 0, [0, 0, 0]) == []  # an in-range index zeroed
    assert _explained("Gather", data, [0, 4, -5], 0, [1, 0]) == []  # another shape
    floats = np.array([1.5, -2.5], np.float32)
    assert _explained("Gather", floats, [1, 2], 0, np.array([-2.5, -0.0], np.float32)) == []
    assert _explained("Gather", floats, [1, 2], 0, np.array([-2.5, 0.0], np.float32)) == fits
    # Gather on an inner axis: the index's whole slice reads zero
    rows = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    assert _explained("Gather", rows, [0, 3], 1, [[1, 0], [4, 0]]) == fits
    # GatherElements: the position of the index itself; an axis of size 0: all zero
    pairs = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    assert _explained("GatherElements", pairs, [[0, 3]], 0, [[1, 0]]) == fits
    assert _explained("GatherElements", pairs, [[0, 3]], 0, [[1, 1]]) == []  # int64's, on the H200
    empty = np.zeros((0, 3), np.int32)
    assert _explained("GatherElements", empty, [[0, 0, 0]], 0, [[0, 0, 0]]) == fits
    assert _explained("GatherElements", empty, [[0, 0, 0]], 0, [[0, 1, 2]]) == []
    # another clause than out-of-range indices: nothing to check against
    assert oracle.in_range("Gather", 13, data, np.array([0]), 3) is None
    assert oracle.in_range("Gather", 13, data, np.array([0]), 0) is None  # valid


@pytest.fixture(scope="module")
def h200(tmp_path_factory):
    """The recorded H200 run re-judged into a run folder: (folder, what its header says)."""
    source = REPO / "tests" / "data" / "h200-onnxruntime-cuda"
    device = json.loads((source / "device.json").read_text())
    out = tmp_path_factory.mktemp("h200")
    said = rejudge.rejudge(source, out, loader.load(loader.default_case_paths()), device)
    return out, said


def test_the_recorded_h200_run_re_judged_gates_with_0_new(h200):
    """The H200 run (tests/data/h200-onnxruntime-cuda/, recorded before these
    rules) re-judged: its 143 cuBLAS/cuDNN handle failures are harness errors,
    its zeros read are explained, and the shipped baselines know every
    discrepancy left (none new, none fixed). The run does not stand as a whole
    (harness errors), as a live run with them would not."""
    folder, said = h200
    assert (said["resource_failures"], said["profiles"]) == (143, {"onnxruntime-cuda": "cuda"})
    run = records.read_folder(folder)  # a run folder, held to the schemas
    about = run.header["runtimes"]["onnxruntime-cuda"]
    assert (about["profile"], about["device"], about["gpu"]["name"]) == (
        "cuda",
        "GPU",
        "NVIDIA H200",
    )
    counts = run.summary["counts"]["onnxruntime-cuda"]
    assert (counts["harness_unsupported"], counts["rejected"]) == (477 + 143, 140)
    assert run.summary["harness_errors"] == 143
    explained = [
        r.get("explained_by")
        for r in run.records
        if r["runtime"] == "onnxruntime-cuda" and r["kind"] == "accepted_invalid"
    ]
    assert explained.count(["out-of-range-reads-zero"]) == 285
    assert explained.count([]) == 15 and explained.count(None) == 10  # int64 GE; cut short
    decided = verdict.decide([run], baseline.default_folder())
    assert (len(decided.gate.unexpected), decided.gate.fixed) == (0, [])
    assert decided.passed
    assert run.unfinished() == f"{folder}: 143 harness error(s) in the run"


def test_a_target_recorded_elsewhere_is_a_scoreboard_column_labelled_with_its_gpu(
    h200, gpu_run, tmp_path
):
    folder, _ = h200
    page, data = tmp_path / "board.html", tmp_path / "board.json"
    known = str(gpu_run[0].parent / "known")
    done = conformance_here(
        "scoreboard", str(gpu_run[0]), "--elsewhere", str(folder), "onnxruntime-cuda",
        "-o", str(page), "--json", str(data), "--known", "shipped", known,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    board = json.loads(data.read_text())
    columns = {t["name"]: t for t in board["targets"]}
    assert sorted(columns) == ["fakegpu", "onnxruntime-cuda"]  # not the H200 run's CPU targets
    cuda = columns["onnxruntime-cuda"]
    assert (cuda["label"], cuda["elsewhere"]) == ("onnxruntime-cuda on NVIDIA H200", True)
    assert cuda["scores"]["total"]["results"] == 3335
    assert columns["fakegpu"]["label"] == "fakegpu on NVIDIA H200"
    assert not columns["fakegpu"]["elsewhere"]
    html = page.read_text()
    assert "Recorded on another machine: onnxruntime-cuda on NVIDIA H200." in html
    assert "onnxruntime-cuda on NVIDIA H200 " in done.stdout
    wrong = conformance_here(
        "scoreboard", str(gpu_run[0]), "--elsewhere", str(folder), "nosuch", "-o", str(page)
    )
    assert wrong.returncode == 2
    assert "no target 'nosuch' in this run (its targets: onnxruntime, onnxruntime-cuda" in (
        wrong.stderr
    )
