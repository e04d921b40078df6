"""The compiler adapters (tvm, iree) against the real compilers: round trips of
every dtype each carries, typed refusals, packs, and what the binding cannot carry.

Each model costs a compile (TVM ~0.15 s, IREE ~0.6 s on 2 cores), so these
tests are few: two variants per dtype for IREE, every variant for TVM, and
skipped where the compiler is not installed (extras ``tvm`` and ``iree``).
Neither compiler runs an out-of-range index in-process here: both read out
of bounds (and may die of SIGSEGV); the corpus run records that.
"""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

from conformance import adapters
from conformance.adapters import HarnessUnsupported, LoadError, RunError
from conformance.adapters.registry import PROFILES
from conformance.engine import models
from conformance.oracle import compare
from conformance.tables import dtypes
from tests.test_adapters import PACK_CASES, PACK_OUTPUTS, full_range

# What the compiler itself refuses (LoadError), whatever the adapter does:
# TVM has no complex or string dtype (its frontend: "unknown dtype"); IREE's
# compiler has no string element type (torch-mlir: "conversion of dtype
# '!torch.str'"; its importer refuses string initializers).
REFUSED = {
    "tvm": {"complex64", "complex128", "string"},
    "iree": {"string"},
}
# IREE demotes f64 to f32 by default (--iree-input-demote-f64-to-f32): a float64
# or complex128 model's output view is declared f64 over an f32-sized buffer,
# which its runtime refuses while running (OUT_OF_RANGE); complex128
# initializers do not even compile.
FAILS_AT_RUN = {"iree": {"float64", "complex128"}}
VARIANTS = {"tvm": models.VARIANTS, "iree": ("static", "both_initializers")}


def installed(name: str) -> bool:
    return name in adapters.installed()


COMPILERS = [
    pytest.param(name, marks=pytest.mark.skipif(not installed(name), reason=f"no {name} here"))
    for name in ("tvm", "iree")
]


_ADAPTERS: dict[str, adapters.Adapter] = {}


def adapter_of(name: str) -> adapters.Adapter:
    """One adapter per compiler for the module: its compiled-model cache is shared."""
    if name not in _ADAPTERS:
        _ADAPTERS[name] = adapters.instantiate(adapters.resolve(name))
    return _ADAPTERS[name]


@pytest.fixture(params=COMPILERS)
def compiler(request):
    return adapter_of(request.param)


def gather(adapter, data, indices, variant, op="Gather", axis=0):
    model = models.build(op, 13, data, indices, axis, variant).SerializeToString()
    return adapter.run(model, models.feeds(data, indices, variant))


@pytest.mark.parametrize(
    "runtime,variant",
    [
        pytest.param(param.values[0], variant, marks=param.marks, id=f"{param.values[0]}-{variant}")
        for param in COMPILERS
        for variant in VARIANTS[param.values[0]]
    ],
)
@pytest.mark.parametrize("name", dtypes.NAMES)
def test_every_dtype_comes_back_exactly(runtime, variant, name):
    compiler = adapter_of(runtime)
    data = full_range(name)
    indices = np.arange(data.size - 1, -1, -1, dtype=np.int64)  # reversed: every element moves
    if name in REFUSED[compiler.name]:
        with pytest.raises(LoadError):
            gather(compiler, data, indices, variant)
        return
    if name in FAILS_AT_RUN.get(compiler.name, ()):
        with pytest.raises((LoadError, RunError)):
            gather(compiler, data, indices, variant)
        return
    (output,) = gather(compiler, data, indices, variant).outputs
    assert compare.difference(data[indices], output) is None


def test_a_pack_gives_every_output_in_order(compiler):
    for variant in VARIANTS[compiler.name]:
        model = models.build_pack(PACK_CASES, variant).SerializeToString()
        outputs = compiler.run(model, models.pack_feeds(PACK_CASES, variant)).outputs
        assert [o.tolist() for o in outputs] == PACK_OUTPUTS


def test_unsigned_and_bool_outputs_keep_their_dtype(compiler):
    """IREE's ABI erases signedness: the adapter reads the model's declared type."""
    for dtype in (np.uint8, np.uint64, np.bool_):
        data = (
            np.array([1, 0, 1], dtype=dtype)
            if dtype is np.bool_
            else np.iinfo(dtype).max - (np.arange(3, dtype=dtype))
        )
        (output,) = gather(compiler, data, np.array([2, 0]), "static").outputs
        assert output.dtype == data.dtype and compare.difference(data[[2, 0]], output) is None


def test_load_errors_are_typed(compiler):
    with pytest.raises(LoadError):
        compiler.run(b"not an onnx model", {})
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises(LoadError):  # axis 2 of rank-2 data
        gather(compiler, data, np.array([0]), "static", axis=2)


def test_a_string_fed_is_refused_before_the_runtime(compiler):
    """Never reached in a run (the model is refused first), but the binding says why."""
    with pytest.raises(HarnessUnsupported, match="input 'data' is string"):
        if compiler.name == "tvm":
            from conformance.adapters import tvm as module

            module._to_tensor("data", np.array(["a"], dtype=object))
        else:
            compiler._buffer_view("data", np.array(["a"], dtype=object))


@pytest.mark.parametrize("name", COMPILERS)
def test_the_other_profile_is_recorded_as_effective(name):
    """tvm:host compiles for the host CPU TVM detects; iree:generic for LLVM's generic CPU.
    (iree:cuda needs a GPU: tests/test_gpu.py; iree:onnx-ops is the op suite's pipeline.)"""
    other = {"tvm": "host", "iree": "generic"}[name]
    effective = adapters.instantiate(adapters.resolve(name), PROFILES[name][other]).info()[
        "effective"
    ]
    if name == "tvm":
        assert effective["mcpu"] == effective["host_cpu"]
    else:
        assert effective["extra_args"] == ["--iree-llvmcpu-target-cpu=generic"]


@pytest.mark.skipif(not installed("iree"), reason="no iree here")
def test_iree_onnx_ops_runs_the_pipeline_of_irees_own_op_suite():
    """iree:onnx-ops imports as iree-import-onnx --opset-version 17 does (a lower
    opset upgraded first), keeps float64 and runs on local-sync: a float64
    GatherElements-11, which the default profile refuses (no conversion below
    opset 13, float64 demoted), is computed bit for bit."""
    suite = adapters.instantiate(adapters.resolve("iree"), PROFILES["iree"]["onnx-ops"])
    effective = suite.info()["effective"]
    assert (effective["opset_version"], effective["driver"]) == (17, "local-sync")
    assert "--iree-input-demote-f64-to-f32=false" in effective["extra_args"]
    data = np.array([[1.5, -0.0], [np.inf, 1e300]])
    indices = np.array([[1, 0], [0, 1]], dtype=np.int64)
    model = models.build("GatherElements", 11, data, indices, 1, "static").SerializeToString()
    feeds = models.feeds(data, indices, "static")
    (got,) = suite.run(model, feeds).outputs
    expected = np.take_along_axis(data, indices, axis=1)
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    with pytest.raises(LoadError, match=r"onnx\.GatherElements"):
        adapter_of("iree").run(model, feeds)


def test_compilers_are_built_in_but_not_run_by_default():
    assert {"tvm", "iree"} <= set(adapters.BUILTIN)
    assert not {"tvm", "iree"} & set(adapters.installed_builtins())
    assert not {"tvm", "iree"} & set(adapters.default_builtins())


CRASH_AND_PASS = """\
defaults: {opset: 13, dtype: int32}
cases:
  - id: compilers-far-index
    description: int32 extremes read far out of bounds (both compilers die of SIGSEGV)
    spec: "004_d4766443270c2fb5.txt: It is an error if any of the index values are out of bounds."
    op: Gather
    attributes: {axis: 0}
    indices_dtype: int32
    data: [10, 20, 30]
    indices: [2147483647, -2147483648]
    expect_error: index-out-of-range
  - id: compilers-spec-example
    description: the spec's first Gather example
    spec: "004_d4766443270c2fb5.txt: Example 1"
    op: Gather
    attributes: {axis: 0}
    dtype: float32
    data: [[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]]
    indices: [[0, 1], [1, 2]]
    expected: oracle
"""


@pytest.mark.skipif(
    not (installed("tvm") and installed("iree")), reason="needs both compilers (extras tvm, iree)"
)
def test_a_run_survives_their_crashes_and_gates_on_the_shipped_baselines(tmp_path):
    """`conformance run --runtime tvm iree` as a user runs it: workers, packs, the
    crash confirmed alone in a fresh worker, every result recorded, the gate held
    against cases/known/tvm.yaml and iree.yaml (their out-of-range families)."""
    from tests.conftest import conformance

    (tmp_path / "cases.yaml").write_text(CRASH_AND_PASS)
    out = tmp_path / "run"
    done = conformance(
        "run", "--runtime", "tvm", "iree", "--cases", str(tmp_path / "cases.yaml"),
        "--variants", "static", "dynamic", "--gate", "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    kinds = {(r["runtime"], r["base_id"], r["variant"]): r["kind"] for r in records}
    assert len(kinds) == 8  # 2 cases x 2 variants x 2 runtimes, each recorded once
    for (runtime, base_id, variant), kind in kinds.items():
        expected = "crash" if base_id == "compilers-far-index" else "pass"
        assert kind == expected, (runtime, base_id, variant, kind)
    assert "gate PASSED" in done.stdout


BFLOAT16_BITS = np.array([0xFF81, 0x3F80, 0x0001], np.uint16).view(ml_dtypes.bfloat16)
UINT64_TOP = np.iinfo(np.uint64).max - np.arange(3, dtype=np.uint64)


# Each costs a Python start and a compile (IREE's import as a subprocess, as
# its guide runs it): the bfloat16 path (no ABI type in IREE's wrapper) on
# both, and IREE's signedness on uint64.
@pytest.mark.parametrize(
    "name,data",
    [
        pytest.param(name, data, id=f"{name}-{data.dtype}", marks=compiler.marks)
        for compiler, name in zip(COMPILERS, ("tvm", "iree"), strict=True)
        for data in ([BFLOAT16_BITS] if name == "tvm" else [BFLOAT16_BITS, UINT64_TOP])
    ],
)
def test_a_fuzz_reproducer_runs_on_the_compiler(tmp_path, name, data):
    """repro.py, written for a fuzz class, runs stand-alone on tvm and iree (their
    documented flows) and gives the oracle's bits for a valid input fed."""
    import subprocess
    import sys

    from conformance.fuzz import artifacts
    from conformance.fuzz.campaign import FoundClass
    from conformance.fuzz.signature import signature_of
    from conformance.oracle import verdict
    from conformance.strategies import Example

    made = Example("Gather", 13, 0, data, np.array([2, 0], np.int64), "dynamic")
    found = FoundClass(
        1, signature_of(made, name, "value_mismatch", None), "b-000000000000", 0.5, made,
        verdict(made.op, made.opset, made.data, made.indices, made.axis),
    )  # fmt: skip
    artifacts.write_class(found, tmp_path)
    folder = artifacts.class_dir(found, tmp_path)
    done = subprocess.run(
        [sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"running model.onnx on {name}" in done.stdout
    assert "same as expected, bit for bit" in done.stdout, done.stdout
