"""ONNX Runtime's OpenVINO execution provider (profile ``openvino-ep``), for real.

Its package, onnxruntime-openvino, is also imported as ``onnxruntime``, so it
lives in an environment of its own: `nox -s tests` builds it and names its
interpreter in CONFORMANCE_EP_PYTHON, and the workers of these runs use it
through a targets file. What is checked is what the profile promises: a
result is the EP's verdict only where a kernel ran on the EP; a node ONNX
Runtime gives the CPU provider, or folds into a constant, is harness_unsupported
and says so.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.conftest import conformance_here

EP_PYTHON = os.environ.get("CONFORMANCE_EP_PYTHON")
needs_ep = pytest.mark.skipif(
    not EP_PYTHON,
    reason="CONFORMANCE_EP_PYTHON is not set: `nox -s tests` builds the onnxruntime-openvino "
    "environment and sets it (the package cannot share this environment's onnxruntime)",
)
TARGET = "onnxruntime:openvino-ep"

CASES = """
defaults:
  opset: 13
  indices_dtype: int64
  spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension of data"
  description: the OpenVINO EP's placement
cases:
  - {id: ep-gather, op: Gather, dtype: float32, data: [[1, 2], [3, 4], [5, 6]], indices: [2, 0], expected: oracle}
  - {id: ep-gather-out-of-range, op: Gather, dtype: float32, data: [1, 2, 3], indices: [3], expect_error: index-out-of-range}
  - {id: ep-gather-strings, op: Gather, dtype: string, data: [a, b, c], indices: [2, 0], expected: oracle}
  - {id: ep-gather-elements, op: GatherElements, dtype: float32, data: [[1, 2], [3, 4]], indices: [[1, 0], [0, 1]], expected: oracle}
"""  # noqa: E501


def _run(tmp_path: Path, *variants: str) -> tuple[dict, dict]:
    cases = tmp_path / "ep.yaml"
    cases.write_text(textwrap.dedent(CASES))
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        f"targets:\n  {TARGET}:\n    adapter: onnxruntime\n    profile: openvino-ep\n"
        f"    python: {json.dumps(EP_PYTHON)}\n"
    )
    out = tmp_path / "run"
    args = ["run", "--targets", str(targets), "--cases", str(cases), "--out", str(out)]
    done = conformance_here(*args, "--no-progress", "--pack", "1", "--variants", *variants)
    assert done.returncode in (0, 1), done.stderr
    found = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        found[(record["base_id"], record["variant"])] = record
    return found, json.loads((out / "header.json").read_text())["runtimes"][TARGET]


@needs_ep
def test_only_what_the_ep_ran_is_its_verdict(tmp_path):
    found, header = _run(tmp_path, "static", "both_initializers")
    # the header says which provider was asked for and what it bundles
    assert header["provider"] == "OpenVINOExecutionProvider"
    assert header["providers"][0] == "OpenVINOExecutionProvider"
    assert header["effective"]["session.disable_cpu_ep_fallback"] == "1"
    assert header["openvino_bundled"]
    # a Gather the EP runs: its verdicts, right and wrong (no bounds check, as OpenVINO)
    assert found[("ep-gather", "static")]["kind"] == "pass"
    wrong = found[("ep-gather-out-of-range", "static")]
    assert wrong["kind"] == "accepted_invalid", wrong["message"]
    # nodes the EP does not take: named, never judged
    strings = found[("ep-gather-strings", "static")]
    assert strings["kind"] == "harness_unsupported"
    assert "places this node on CPUExecutionProvider" in strings["message"]
    lone = found[("ep-gather-elements", "static")]  # a lone GatherElements stays on the CPU
    assert lone["kind"] == "harness_unsupported"
    assert "CPUExecutionProvider" in lone["message"]
    # inputs that are all initializers: folded on the CPU before partitioning
    folded = found[("ep-gather", "both_initializers")]
    assert folded["kind"] == "harness_unsupported"
    assert "folded the node into a constant" in folded["message"]
    refused = found[("ep-gather-out-of-range", "both_initializers")]
    assert refused["kind"] == "harness_unsupported"  # ORT's constant folding refused it, not the EP
    assert "not the OpenVINOExecutionProvider's verdict" in refused["message"]


def test_the_profile_refuses_to_start_without_the_ep(tmp_path):
    """Here onnxruntime has no OpenVINO EP: ONNX Runtime would run everything on
    the CPU provider, judged under the EP's name; the run stops instead."""
    cases = tmp_path / "ep.yaml"
    cases.write_text(textwrap.dedent(CASES))
    done = conformance_here(
        "run", "--runtime", TARGET, "--cases", str(cases), "--out", str(tmp_path / "run"),
        "--no-progress",
    )  # fmt: skip
    assert done.returncode == 2
    assert "OpenVINOExecutionProvider is not available in onnxruntime" in done.stderr
    assert "Traceback" not in done.stderr
