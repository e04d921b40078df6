"""tract's adapter against the real tract: its binding's limits, exact bits,
load and run errors, and a Rust panic turned into a crash record.

tract aborts the process on an out-of-range Gather index (a panic cannot
unwind through libtract's C API), so no test here runs one in-process: the
crash test runs `conformance run`, whose workers die instead of pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest
import tract

from conformance import adapters
from conformance.adapters import HarnessUnsupported, LoadError, RunError
from conformance.adapters import tract as tract_adapter
from conformance.engine import models
from conformance.oracle import compare
from conformance.tables import dtypes
from tests.conftest import REPO, conformance_here
from tests.test_adapters import PACK_CASES, PACK_OUTPUTS, full_range

CARRIED = [d.name for d in dtypes.DTYPES if d.numpy in tract_adapter.CARRIED]

# Bit patterns a lossy conversion would change: signalling and quiet NaNs with
# payloads (both signs), the smallest and largest subnormals, -0.0, ±inf, ±max.
SPECIAL_BITS = {
    "float16": [0x7C01, 0xFD55, 0x7E01, 0x0001, 0x03FF, 0x8001, 0x8000, 0x7C00, 0xFC00, 0x7BFF],
    "float32": [
        0x7F800001, 0xFFA00005, 0x7FC00001, 0x00000001, 0x007FFFFF, 0x80000001,
        0x80000000, 0x7F800000, 0xFF800000, 0x7F7FFFFF,
    ],
    "float64": [
        0x7FF0000000000001, 0xFFF4000000000005, 0x7FF8000000000001, 0x0000000000000001,
        0x000FFFFFFFFFFFFF, 0x8000000000000001, 0x8000000000000000, 0x7FF0000000000000,
        0xFFF0000000000000, 0x7FEFFFFFFFFFFFFF,
    ],
}  # fmt: skip


def special(name: str) -> np.ndarray:
    width = dtypes.by_name(name).numpy.itemsize * 8
    bits = np.array(SPECIAL_BITS[name], dtype=f"uint{width}")
    return bits.view(dtypes.by_name(name).numpy)


def values(name: str) -> np.ndarray:
    return special(name) if name in SPECIAL_BITS else full_range(name)


@pytest.fixture(scope="module")
def adapter():
    return adapters.instantiate(adapters.resolve("tract"))


def gather(adapter, data, indices, variant, op="Gather", axis=0):
    model = models.build(op, 13, data, indices, axis, variant).SerializeToString()
    return adapter.run(model, models.feeds(data, indices, variant))


# -- the binding: what goes in comes out -------------------------------------------------
def test_the_binding_carries_exactly_the_libtract_datum_types():
    assert CARRIED == [
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64",
    ]  # fmt: skip


@pytest.mark.parametrize("name", CARRIED)
def test_full_range_bits_cross_the_binding_both_ways(name):
    """tract.Tensor in and out without a model: the binding's own conversions."""
    data = values(name).reshape(2, -1)
    back = tract_adapter._from_tensor(
        tract_adapter._to_tensor("data", data), dtypes.by_name(name).numpy
    )
    assert compare.difference(data, back) is None


@pytest.mark.parametrize("variant", models.VARIANTS)
@pytest.mark.parametrize("name", sorted(SPECIAL_BITS))
def test_nan_payloads_subnormals_and_signed_zeros_come_back_from_a_run(adapter, name, variant):
    data = special(name)
    indices = np.arange(data.size - 1, -1, -1, dtype=np.int64)
    (output,) = gather(adapter, data, indices, variant).outputs
    assert compare.difference(data[indices], output) is None


@pytest.mark.parametrize("variant", models.VARIANTS)
@pytest.mark.parametrize(
    ("data_shape", "indices"),
    [
        ((3,), np.array(2)),  # a rank-0 index: a rank-0 output
        ((0, 3), np.zeros((0,), np.int64)),  # empty data and indices
        ((2, 0, 3), np.array([1, 0])),  # a zero-size dimension off the axis
        ((4,), np.zeros((2, 0), np.int64)),  # empty indices: an empty output
    ],
)
@pytest.mark.parametrize("name", ["bool", "int64", "float16", "float64"])
def test_rank_0_and_empty_tensors_come_back(adapter, name, data_shape, indices, variant):
    data = np.resize(values(name), data_shape)
    (output,) = gather(adapter, data, indices, variant).outputs
    expected = np.take(data, indices, axis=0)
    assert output.shape == expected.shape
    assert compare.difference(expected, output) is None


def test_a_model_with_many_outputs_gives_them_in_order(adapter):
    for variant in models.VARIANTS:
        model = models.build_pack(PACK_CASES, variant).SerializeToString()
        outputs = adapter.run(model, models.pack_feeds(PACK_CASES, variant)).outputs
        assert [o.tolist() for o in outputs] == PACK_OUTPUTS


# -- what the binding cannot carry, and what tract refuses --------------------------------
@pytest.mark.parametrize("variant", ["static", "dynamic", "indices_initializer"])
def test_a_string_input_cannot_go_in(adapter, variant):
    data = np.array(["a", "bb"], dtype=object)
    with pytest.raises(HarnessUnsupported, match=r"^input 'data' is string: .*C API"):
        gather(adapter, data, np.array([1, 0]), variant)


@pytest.mark.parametrize("variant", ["data_initializer", "both_initializers"])
def test_a_string_output_cannot_come_out(adapter, variant):
    """tract loads and runs the string Gather; its output has no C API datum type."""
    data = np.array(["a", "bb"], dtype=object)
    with pytest.raises(HarnessUnsupported, match=r"output \(2,string\) cannot come out: .*String"):
        gather(adapter, data, np.array([1, 0]), variant)


@pytest.mark.parametrize("variant", models.VARIANTS)
@pytest.mark.parametrize(("name", "datum"), [("bfloat16", "Bfloat16"), ("complex64", "Complex64")])
def test_bfloat16_and_complex_models_are_refused_by_the_onnx_loader(adapter, name, datum, variant):
    data = full_range(name)
    with pytest.raises(LoadError, match=f"Unknown DatumType {datum}"):
        gather(adapter, data, np.array([0]), variant)


# -- load errors, run errors ----------------------------------------------------------------
def test_load_and_run_errors_are_told_apart(adapter):
    with pytest.raises(LoadError, match="failed to decode Protobuf"):
        adapter.run(b"not an onnx model", {})
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises(LoadError):  # axis 2 of rank-2 data
        gather(adapter, data, np.array([0]), "static", axis=2)
    indices = np.array([[0, 3], [1, 0]])  # 3 on the last axis: refused, not a panic
    with pytest.raises(RunError, match="Invalid GatherElements index 3 in row 0 on axis of len 3"):
        gather(adapter, data, indices, "static", op="GatherElements", axis=1)
    # The same node constant-folded: refused while the model loads.
    with pytest.raises(LoadError, match="Invalid GatherElements index 3"):
        gather(adapter, data, indices, "both_initializers", op="GatherElements", axis=1)


def test_messages_carry_no_backtrace_whatever_the_environment():
    error = tract.TractError("Evaluating #2\n\nCaused by:\n    bad\n\nStack backtrace:\n   0: f")
    assert tract_adapter.message(error) == "Evaluating #2\n\nCaused by:\n    bad"
    # In a fresh process with RUST_BACKTRACE=1: tract's own text, as the adapter
    # leaves it, and as tract gives it without the adapter.
    script = textwrap.dedent("""\
        import sys, tract
        from conformance.adapters import instantiate, resolve
        if sys.argv[1] == "adapter":
            instantiate(resolve("tract"))
        try:
            tract.onnx().load("/nonexistent/model.onnx")
        except tract.TractError as error:
            print("Stack backtrace" in str(error))
        """)
    # (without what an adapter made in this process has set)
    environment = {k: v for k, v in os.environ.items() if k not in tract_adapter.QUIET}
    environment["RUST_BACKTRACE"] = "1"
    said = {
        how: subprocess.run(
            [sys.executable, "-c", script, how], env=environment, cwd=REPO,
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        for how in ("adapter", "bare")
    }  # fmt: skip
    assert said == {"adapter": "False", "bare": "True"}


def test_the_model_file_is_removed_once_loaded(adapter, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    data = np.arange(3, dtype=np.int32)
    assert gather(adapter, data, np.array([2]), "static").outputs[0].tolist() == [2]
    with pytest.raises(LoadError):
        adapter.run(b"not an onnx model", {})
    assert list(tmp_path.iterdir()) == []


# -- configuration ---------------------------------------------------------------------------
def test_info_reads_back_the_documented_pipeline(adapter):
    info = adapter.info()
    assert (info["name"], info["device"]) == ("tract", "CPU")
    assert info["version"] == tract.version() == "0.23.9"  # what cases/known/tract.yaml observed
    assert info["effective"] == {
        "pipeline": "tract.onnx().load(path).into_model().into_runnable()",
        "runtime": "cpu",
        "tract.stage": "optimized",
        "RUST_BACKTRACE": "0",
        "RUST_LIB_BACKTRACE": "0",
    }
    json.dumps(info, allow_nan=False)


def test_properties_are_refused():
    with pytest.raises(ValueError, match="tract takes no properties"):
        tract_adapter.TractAdapter({"threads": 1})


# -- a panic in a worker ---------------------------------------------------------------------
def test_an_out_of_range_index_is_a_crash_record_and_the_run_goes_on(tmp_path):
    cases = tmp_path / "cases.yaml"
    cases.write_text(textwrap.dedent("""\
        defaults: {opset: 13, dtype: int32, attributes: {axis: 0}, spec: "t", description: "t"}
        cases:
          - {id: t-before, op: Gather, data: [1, 2, 3], indices: [2, 0], expected: oracle}
          - {id: t-gather-at-s, op: Gather, data: [1, 2, 3], indices: [0, 3],
             expect_error: index-out-of-range}
          - {id: t-ge-at-s-last-axis, op: GatherElements, data: [1, 2, 3], indices: [0, 3],
             expect_error: index-out-of-range}
          - {id: t-after, op: GatherElements, data: [[1, 2], [3, 4]], indices: [[1, 0]],
             expected: oracle}
        """))  # fmt: skip
    out = tmp_path / "run"
    result = conformance_here(
        "run", "--runtime", "tract", "--cases", str(cases), "--variants", "static", "dynamic",
        "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr  # a crash is a discrepancy
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    kinds = {(r["base_id"], r["variant"]): r["kind"] for r in records}
    assert kinds == {
        **{("t-before", v): "pass" for v in ("static", "dynamic")},
        **{("t-gather-at-s", v): "crash" for v in ("static", "dynamic")},
        **{("t-ge-at-s-last-axis", v): "both_rejected" for v in ("static", "dynamic")},
        **{("t-after", v): "pass" for v in ("static", "dynamic")},
    }
    crashes = [r for r in records if r["kind"] == "crash"]
    assert {r["signal"] for r in crashes} == {"SIGABRT"}
    assert all("non-unwinding panic" in r["message"] for r in crashes)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["records"] == 8
    # The baseline's Gather family covers the crash: the gate passes.
    gate = conformance_here("gate", str(out))
    assert gate.returncode == 0, gate.stdout + gate.stderr


def test_a_panic_leaves_no_file_behind(tmp_path):
    """Before: a panic while tract loads the model (an out-of-range index baked
    in, folded at load) aborted the worker between writing the model to a
    temporary file and removing it: a conformance-tract-*.onnx was left in
    /tmp at each one (120 after one corpus run; a fuzz campaign filled /tmp)."""
    cases = tmp_path / "cases.yaml"
    cases.write_text(textwrap.dedent("""\
        defaults: {opset: 13, dtype: int32, attributes: {axis: 0}, spec: "t", description: "t"}
        cases:
          - {id: t-ok, op: Gather, data: [1, 2, 3], indices: [2, 0], expected: oracle}
          - {id: t-panics, op: Gather, data: [1, 2, 3], indices: [0, 3],
             expect_error: index-out-of-range}
        """))  # fmt: skip
    scratch, out = tmp_path / "tmp", tmp_path / "run"
    scratch.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--runtime", "tract", "--cases", str(cases),
         "--out", str(out), "--no-progress"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "TMPDIR": str(scratch)},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # the panics: crashes
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    crashed = {r["variant"] for r in records if r["kind"] == "crash"}
    assert "both_initializers" in crashed  # the panic at load (every variant panics somewhere)
    assert {r["kind"] for r in records if r["base_id"] == "t-ok"} == {"pass"}
    assert list(scratch.iterdir()) == []


def test_a_tract_finding_repro_py_reproduces_it(tmp_path):
    """A fuzz class's repro.py runs tract's own runner, from tract's adapter
    file (it printed "unknown runtime" and exited 2): int8 indices, which the
    spec forbids and tract gathers with (cases/known/tract.yaml), are the
    discrepancy it shows, exit 1 by the template's contract."""
    import types

    import onnx
    from onnx import TensorProto, helper

    from conformance.fuzz import artifacts

    graph = helper.make_graph(
        [helper.make_node("Gather", ["data", "indices"], ["output"], axis=0)],
        "repro",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("indices", TensorProto.INT8, [2]),
        ],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "model.onnx")
    data, indices = np.array([1.0, 2.0, 3.0], np.float32), np.array([2, 0], np.int8)
    np.savez(tmp_path / "inputs.npz", **{"feed.data": data, "feed.indices": indices,
                                         "data": data, "indices": indices})  # fmt: skip
    (tmp_path / "case.yaml").write_text("expect_error: indices-dtype\n")
    found = types.SimpleNamespace(signature=types.SimpleNamespace(runtime="tract", slug="int8"))
    (tmp_path / "repro.py").write_text(artifacts.repro_py(found))
    ran = subprocess.run(
        [sys.executable, "-I", str(tmp_path / "repro.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "DISCREPANCY: the input is invalid, but the runtime returned an output" in ran.stdout
    assert "actual: dtype float32, shape [2]" in ran.stdout
