"""onnxruntime-web's targets against the real onnxruntime-web (docs/browser.md):
its WebAssembly backend in Node, its WebGPU backend in headless Chromium.

A round trip per backend (valid cases bit for bit; an out-of-range index
refused by wasm, read as zeros by WebGPU, as observed in issue 48), the
JavaScript side killed mid-run (a crash record, the run going on), and the
line that names what to install when a tool is missing. Each skips, saying
why, where Node, the npm install (``python -m
conformance.adapters.ortweb_js.install``) or Chromium is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from conformance.adapters import ortweb
from conformance.adapters.contract import RunError
from tests.conftest import conformance_here
from tests.ortweb_killing_adapter import KILL

pytestmark = pytest.mark.xdist_group("browser")  # one Chromium at a time on CI's two cores


def needs(backend: str) -> None:
    lacking = ortweb.missing(backend)
    if lacking:
        pytest.skip(lacking)


def gather_model(op: str, rank: int) -> bytes:
    graph = helper.make_graph(
        [helper.make_node(op, ["data", "indices"], ["output"], axis=0)],
        op,
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, [3, 2]),
            helper.make_tensor_value_info("indices", TensorProto.INT64, [2] * rank),
        ],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


DATA = np.arange(1, 7, dtype=np.float32).reshape(3, 2)


@pytest.fixture(scope="module", params=[ortweb.WASM, ortweb.WEBGPU])
def adapter(request):
    needs(request.param)
    started = ortweb.OrtWebAdapter({"backend": request.param})
    yield started
    if started._runner is not None:
        # Its stdin closed, the runner exits and kills the browser it started; a
        # SIGKILL here (no worker's group kill after it) left Chromium running.
        started._runner.stdin.close()
        try:
            started._runner.wait(timeout=30)
        except subprocess.TimeoutExpired:
            started._runner.kill()
            started._runner.wait()


def test_info_records_the_version_and_the_device(adapter):
    info = adapter.info()
    assert info["version"] == "1.30.0"  # the lockfile's pin
    if adapter.backend == ortweb.WEBGPU:
        gpu = info["webgpu_adapter"]
        assert set(gpu) >= {"vendor", "architecture", "software"}
        assert info["device"].startswith("WebGPU ")
    else:
        assert info["webgpu_adapter"] is None


@pytest.mark.parametrize(
    ("op", "indices", "expected"),
    [
        ("Gather", [0, 2], [[1, 2], [5, 6]]),
        ("Gather", [-1, -3], [[5, 6], [1, 2]]),
        ("GatherElements", [[2, 0], [1, 2]], [[5, 2], [3, 6]]),
    ],
)
def test_valid_cases_come_back_bit_for_bit(adapter, op, indices, expected):
    indices = np.array(indices, dtype=np.int64)
    timed = adapter.run(gather_model(op, indices.ndim), {"data": DATA, "indices": indices})
    (output,) = timed.outputs
    assert output.dtype == np.float32
    assert np.array_equal(output, np.array(expected, dtype=np.float32))


def test_an_out_of_range_index_refused_by_wasm_read_as_zeros_by_webgpu(adapter):
    feeds = {"data": DATA, "indices": np.array([3, 0], dtype=np.int64)}
    if adapter.backend == ortweb.WASM:
        with pytest.raises(RunError, match="out of data bounds"):
            adapter.run(gather_model("Gather", 1), feeds)
    else:  # issue 48: WebGPU's Gather reads zeros outside the data
        (output,) = adapter.run(gather_model("Gather", 1), feeds).outputs
        assert output.tolist() == [[0, 0], [1, 2]]


CASES = f"""
defaults: {{op: Gather, opset: 13, dtype: float32, indices_dtype: int64, description: a case,
  spec: "004_d4766443270c2fb5.txt: Gather"}}
cases:
  - {{id: before, data: [1.0, 2.0, 3.0], indices: [2, 0], expected: oracle}}
  - {{id: killed, data: [{KILL}, 2.0, 3.0], indices: [1], expected: oracle}}
  - {{id: after, data: [4.0, 5.0, 6.0], indices: [0], expected: oracle}}
"""


@pytest.mark.parametrize(
    ("backend", "target"),
    [(ortweb.WASM, "KillingAdapter"), (ortweb.WEBGPU, "KillingWebGpu")],
)
def test_a_killed_runner_is_a_crash_record_and_the_run_goes_on(tmp_path, backend, target):
    needs(backend)
    (tmp_path / "cases.yaml").write_text(CASES)
    out = tmp_path / "run"
    done = conformance_here(
        "run", "--runtime", f"tests.ortweb_killing_adapter:{target}", "--cases",
        str(tmp_path / "cases.yaml"), "--variants", "static", "--pack", "1", "-j", "1",
        # a generous bound on each (re)start: the kill is an event, not a timeout, and a
        # loaded machine took over 10 s to start Chromium again ("failed to restart")
        "--timeout", "120", "--no-progress", "--out", str(out),
    )  # fmt: skip
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    kinds = {record["base_id"]: record["kind"] for record in records}
    assert kinds == {"before": "pass", "killed": "crash", "after": "pass"}, done.stdout
    assert done.returncode == 1  # a discrepancy, not an error
    (crash,) = [record for record in records if record["kind"] == "crash"]
    assert f"the {ortweb.RUNTIME_NAME} runner ended" in crash["message"]
    if backend == ortweb.WASM:  # the worker dies as its runner did
        assert "SIGKILL" in crash["message"]


def test_a_missing_tool_is_one_line_naming_what_to_install(tmp_path):
    """No node on PATH, no npm install, no Chromium: the worker does not
    start, and the run says what to install (exit 2), never a traceback."""
    (tmp_path / "cases.yaml").write_text(CASES)
    bare = tmp_path / "bin"
    bare.mkdir()
    common = ["run", "--cases", str(tmp_path / "cases.yaml"), "-k", "before", "--variants",
              "static", "--no-progress", "--out"]  # fmt: skip
    said = {}
    for name, target, env in [
        ("node", "onnxruntime-web:wasm", {"PATH": str(bare)}),
        ("install", "onnxruntime-web:wasm", {ortweb.js.MODULES_ENV: str(tmp_path / "none")}),
        ("chromium", "onnxruntime-web:webgpu", {"PATH": str(_only_node(bare))}),
    ]:
        if name != "node" and ortweb.shutil.which("node") is None:
            continue  # the first missing tool is named first
        done = conformance_here(
            *common,
            str(tmp_path / name),
            "--runtime",
            target,
            env={**env, ortweb.CHROMIUM_ENV: None},
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stdout + done.stderr
        said[name] = done.stdout + done.stderr
    assert "needs Node.js 18 or newer (node) on PATH" in said["node"]
    assert "apt-get install nodejs npm" in said["node"]
    if "install" in said:
        assert "python -m conformance.adapters.ortweb_js.install" in said["install"]
        assert "apt-get install chromium" in said["chromium"]


def _only_node(folder: Path) -> Path:
    """A PATH folder holding node alone (no Chromium)."""
    node = ortweb.shutil.which("node")
    only = folder.parent / "only-node"
    only.mkdir(exist_ok=True)
    if node and not (only / "node").exists():
        os.symlink(node, only / "node")
    return only


def test_an_adapter_scoped_entry_holds_only_on_that_webgpu_adapter():
    """The float16 entry is SwiftShader's (no shader-f16): it holds on the
    software adapter the baseline was observed on, not on a real GPU's, nor
    on a target without WebGPU."""
    from conformance import shipped
    from conformance.gate import baseline

    entries = baseline.load_file(shipped.baselines() / f"{ortweb.RUNTIME_NAME}.yaml")
    (entry,) = [e for e in entries if e.signature.get("dtype") == ("float16",)]
    software = baseline.webgpu_of(
        {"vendor": "google", "architecture": "swiftshader", "software": True}
    )
    real = baseline.webgpu_of({"vendor": "nvidia", "architecture": "blackwell", "software": False})
    assert entry.applies_to(baseline.Where("1.30.0", ortweb.WEBGPU, webgpu=software))
    assert not entry.applies_to(baseline.Where("1.30.0", ortweb.WEBGPU, webgpu=real))
    assert not entry.applies_to(baseline.Where("1.30.0", ortweb.WEBGPU))
    assert "WebGPU adapter google swiftshader" in entry.conditions()


def test_a_model_verdict_names_the_browser_target(tmp_path, capsys):
    """`conformance model` on onnxruntime-web:wasm: the verdict of a one-Gather
    embedding model names the target (issue 48), its as-built cases judged
    there, exact, and the node's out-of-range what-ifs refused, as the spec
    requires."""
    needs(ortweb.WASM)
    from onnx import numpy_helper

    from conformance.cli import main

    table = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(4, 2), "table")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["vectors"], axis=0)],
        "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("vectors", TensorProto.FLOAT, [2, 2])],
        initializer=[table],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "embedding.onnx"
    path.write_bytes(model.SerializeToString())
    out = tmp_path / "run"
    target = f"{ortweb.RUNTIME_NAME}:{ortweb.WASM}"
    code = main(["model", str(path), "--runtime", target, "--variants", "data_initializer",
                 "--out", str(out), "--no-progress"])  # fmt: skip
    said = capsys.readouterr().out
    assert f"{target}: safe" in said, said
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert records and {r["runtime"] for r in records} == {target}
    kinds = {r["kind"] for r in records}
    assert kinds <= {"pass", "both_rejected"} and "both_rejected" in kinds, kinds
    assert code == 0
