"""OpenCV's DNN module's adapter against the real cv2: what its binding
carries bit for bit and what it cannot carry, OpenCV's own refusals, the
discrepancies its baseline holds, and its export list read as OpenCV's
conformance test reads it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import cv2
import numpy as np
import pytest

from conformance import adapters, export
from conformance.adapters import HarnessUnsupported, LoadError, RunError
from conformance.adapters import opencv as opencv_adapter
from conformance.cli import inputs
from conformance.engine import models
from conformance.oracle import compare
from conformance.tables import dtypes
from tests.conftest import conformance_here
from tests.test_adapters import PACK_CASES, PACK_OUTPUTS, full_range

CARRIED = [d.name for d in dtypes.DTYPES if d.numpy in opencv_adapter.CARRIED]
FED = ("static", "dynamic")  # data is a graph input in these, baked in the others
BAKED = ("data_initializer", "both_initializers")


@pytest.fixture(scope="module")
def adapter():
    return adapters.instantiate(adapters.resolve("opencv"))


def gather(adapter, data, indices, variant, op="Gather", axis=0):
    model = models.build(op, 13, data, indices, axis, variant).SerializeToString()
    return adapter.run(model, models.feeds(data, indices, variant)).outputs


def within_int32(name: str) -> np.ndarray:
    """The extremes a 64-bit integer fed through the binding may take."""
    low, high = opencv_adapter.NARROWED[dtypes.by_name(name).numpy]
    return np.array([low, high, 0, 1, high - 1], dtype=dtypes.by_name(name).numpy)


# -- what goes in comes out, bit for bit ---------------------------------------------------
def test_the_binding_carries_these_dtypes_and_64_bit_integers_within_int32():
    assert CARRIED == [
        "bool", "int8", "int16", "int32", "uint8", "uint16", "uint32",
        "float16", "float32", "float64",
    ]  # fmt: skip
    assert sorted(str(d) for d in opencv_adapter.NARROWED) == ["int64", "uint64"]


@pytest.mark.parametrize("variant", models.VARIANTS)
@pytest.mark.parametrize("name", [n for n in CARRIED if n != "float16"] + ["int64", "uint64"])
def test_every_carried_dtype_comes_back_bit_for_bit(adapter, name, variant):
    """Extremes, NaN payloads, -0.0, subnormals; 64-bit integers at their own
    extremes where OpenCV reads them (initializers), at int32's where fed."""
    fed = variant in FED or variant == "indices_initializer"
    data = within_int32(name) if name in ("int64", "uint64") and fed else full_range(name)
    indices = np.arange(data.size - 1, -1, -1, dtype=np.int64)
    (output,) = gather(adapter, data, indices, variant)
    assert compare.difference(data[indices], output) is None


def test_a_model_with_many_outputs_gives_them_in_order(adapter):
    for variant in models.VARIANTS:
        model = models.build_pack(PACK_CASES, variant).SerializeToString()
        outputs = adapter.run(model, models.pack_feeds(PACK_CASES, variant)).outputs
        assert [o.tolist() for o in outputs] == PACK_OUTPUTS


# -- what the binding cannot carry: harness_unsupported, never OpenCV's --------------------
@pytest.mark.parametrize("name", ["int64", "uint64"])
def test_a_fed_64_bit_integer_beyond_int32_is_not_fed_narrowed(adapter, name):
    data = full_range(name)  # its extremes: beyond int32
    indices = np.arange(data.size, dtype=np.int64)
    for variant in ("static", "dynamic", "indices_initializer"):
        with pytest.raises(HarnessUnsupported, match=rf"^input 'data' is {name} .*CV_32S"):
            gather(adapter, data, indices, variant)
    # The binding is what narrows: the same values baked in come back whole.
    (output,) = gather(adapter, data, indices, "data_initializer")
    assert compare.difference(data, output) is None
    big = np.array([2**32], dtype=np.int64)  # an index: the same rule
    with pytest.raises(HarnessUnsupported, match=r"^input 'indices' is int64"):
        gather(adapter, np.arange(3, dtype=np.float32), big, "static")


@pytest.mark.parametrize("name", ["bfloat16", "complex64", "complex128"])
def test_bfloat16_and_complex_inputs_cannot_go_in(adapter, name):
    for variant in ("static", "dynamic", "indices_initializer"):
        with pytest.raises(HarnessUnsupported, match=rf"^input 'data' is {name}: .*no Mat"):
            gather(adapter, full_range(name), np.array([0]), variant)


def test_a_bfloat16_output_cannot_come_out(adapter):
    for variant in BAKED:
        with pytest.raises(HarnessUnsupported, match=r"^output 'output' is bfloat16"):
            gather(adapter, full_range("bfloat16"), np.array([1, 0]), variant)


def test_an_empty_output_cannot_come_out(adapter):
    """The binding returns None for an empty Mat: no shape, no dtype."""
    data = np.arange(3, dtype=np.float32)
    for variant in ("static", "dynamic", "data_initializer"):
        with pytest.raises(HarnessUnsupported, match=r"^output 'output' is empty: .*None"):
            gather(adapter, data, np.zeros((0,), np.int64), variant)


# -- OpenCV's own refusals ---------------------------------------------------------------
def test_load_and_run_errors_are_told_apart(adapter):
    with pytest.raises(LoadError, match="not an ONNX model"):
        adapter.run(b"not an onnx model", {})
    strings = np.array(["a", "bb"], dtype=object)
    for variant in models.VARIANTS:
        with pytest.raises(LoadError, match="unsupported datatype 'STRING'"):
            gather(adapter, strings, np.array([1, 0]), variant)
    data = np.arange(3, dtype=np.float32)
    with pytest.raises(RunError, match="some of indices are outside of range"):
        gather(adapter, data, np.array([3]), "static")
    # The same node with both inputs baked in is computed while the model loads.
    with pytest.raises(LoadError, match="some of indices are outside of range"):
        gather(adapter, data, np.array([3]), "both_initializers")
    with pytest.raises(RunError, match=r"(?s)GatherElements.*CV_64FC1"):  # not a type it takes
        gather(adapter, data.astype(np.float64), np.array([0]), "static", op="GatherElements")


# -- what OpenCV gets wrong, as the adapter returns it --------------------------------------
def test_a_float16_output_comes_back_as_float32_with_the_values_widened(adapter):
    data = full_range("float16")
    for variant in models.VARIANTS:
        (output,) = gather(adapter, data, np.arange(data.size), variant)
        assert output.dtype == np.float32
        assert compare.difference(data.astype(np.float32), output) is None


def test_gather_elements_wraps_an_index_past_the_axis(adapter):
    """The issue's probe: index 5 on an axis of size 2 returns element 1."""
    data = np.array([[1, 2], [3, 4]], dtype=np.float32)
    indices = np.array([[5, 0]], dtype=np.int64)
    for variant in models.VARIANTS:
        (output,) = gather(adapter, data, indices, variant, op="GatherElements")
        assert output.tolist() == [[3, 2]]


PROBE_CASES = """\
description: the issue's probe of OpenCV, and a float16 Gather
cases:
  - id: opencv-ge-wraps-past-the-axis
    description: index 5 on an axis of size 2 (OpenCV returns element 1)
    spec: "000_2a6c56bbed5bfbf5.txt: It is an error if any of the index values are out of bounds."
    op: GatherElements
    opset: 13
    dtype: float32
    indices_dtype: int64
    attributes: {axis: 0}
    data: [[1, 2], [3, 4]]
    indices: [[5, 0]]
    expect_error: index-out-of-range
  - id: opencv-gather-float16
    description: a float16 Gather (OpenCV returns float32)
    spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension of data"
    op: Gather
    opset: 13
    dtype: float16
    indices_dtype: int64
    attributes: {axis: 0}
    data: [1.5, -0.0, 2.5]
    indices: [2, 0]
    expected: [2.5, 1.5]
"""


def test_the_baseline_holds_the_wrap_and_the_float16_output(tmp_path):
    """Both gated against the shipped baseline, in every variant: known."""
    cases = tmp_path / "probe.yaml"
    cases.write_text(PROBE_CASES)
    out = tmp_path / "run"
    ran = conformance_here(
        "run", "--cases", str(cases), "--runtime", "opencv", "--out", str(out), "-j", "1",
        "--no-progress", "--gate",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").open()]
    assert {(r["base_id"], r["kind"]) for r in records} == {
        ("opencv-ge-wraps-past-the-axis", "accepted_invalid"),
        ("opencv-gather-float16", "dtype_mismatch"),
    }
    assert len(records) == 10
    assert "10 known, 0 new" in ran.stdout


def test_an_opencv_finding_repro_py_reproduces_it(tmp_path):
    """A fuzz class's repro.py runs OpenCV's runner from its adapter file: the
    wrap above, which the spec forbids, exit 1 by the template's contract."""
    from conformance.fuzz import artifacts

    data = np.array([[1, 2], [3, 4]], dtype=np.float32)
    indices = np.array([[5, 0]], dtype=np.int64)
    model = models.build("GatherElements", 13, data, indices, 0, "static")
    (tmp_path / "model.onnx").write_bytes(model.SerializeToString())
    feeds = {f"feed.{k}": v for k, v in models.feeds(data, indices, "static").items()}
    np.savez(tmp_path / "inputs.npz", **feeds, data=data, indices=indices)
    (tmp_path / "case.yaml").write_text("expect_error: index-out-of-range\n")
    found = types.SimpleNamespace(signature=types.SimpleNamespace(runtime="opencv", slug="wrap"))
    (tmp_path / "repro.py").write_text(artifacts.repro_py(found))
    ran = subprocess.run(
        [sys.executable, "-I", str(tmp_path / "repro.py")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "DISCREPANCY: the input is invalid, but the runtime returned an output" in ran.stdout
    assert "actual: dtype float32, shape [1, 2]" in ran.stdout


# -- configuration ------------------------------------------------------------------------
def test_info_reads_back_the_default_pipeline(adapter):
    info = adapter.info()
    assert info["name"] == "opencv" and info["version"] == cv2.__version__
    assert info["effective"]["pipeline"] == opencv_adapter.PIPELINE
    assert info["effective"]["layers"] == ["Gather2"]  # the probe model's one layer
    assert info["effective"]["threads"] == cv2.getNumThreads()


def test_properties_are_refused():
    with pytest.raises(ValueError, match="opencv takes no properties"):
        opencv_adapter.OpenCvAdapter({"engine": 1})


# -- the export's deny list, read as OpenCV's conformance test reads it ------------------------
# modules/dnn/test/test_onnx_conformance.cpp fills a std::set<std::string> with
# #include "test_onnx_conformance_layer_filter_opencv_cpu_denylist.inl.hpp" and
# skips a test on the OpenCV backend's CPU target when its name is in the set.
READER = """\
#include <iostream>
#include <set>
#include <string>
int main() {
    const std::set<std::string> cpu_deny_list = {
        #include "LIST"
    };
    for (const auto& name : cpu_deny_list) std::cout << name << "\\n";
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler to read the list with")
def test_the_export_deny_list_is_what_opencvs_test_includes(tmp_path):
    out = tmp_path / "export"
    cases = inputs.select(inputs.load_cases(None), "ge-every-dtype")
    export.export(out, cases, inputs.corpus(None), pattern="ge-every-dtype")
    base = out / "expected-failures" / "opencv"
    (form,) = opencv_adapter.RUNTIME.native
    listed = base / form.file
    source = tmp_path / "reader.cpp"
    source.write_text(READER.replace("LIST", str(listed)))
    binary = tmp_path / "reader"
    subprocess.run(["g++", "-std=c++17", "-o", str(binary), str(source)], check=True)
    read = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    failing = {
        line.split("\t")[0]
        for line in (base / "failing.txt").read_text().splitlines()
        if not line.startswith("#") and line.split("\t")[1] == "default"
    }
    assert set(read.split()) == failing
    assert any("float16" in name for name in failing)  # the list is not empty
    assert all(re.fullmatch(r"test_[a-z0-9_]+", name) for name in failing)
    assert Path(listed).read_text().startswith("// Generated by `conformance export`")
