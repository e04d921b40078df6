"""A runner's pipeline as data, and what the export's tests become through it.

A runner that converts a test folder before running it (IREE's op suite
imports each folder to MLIR and binary data files) may refuse a test, run
another one than the folder says, or carry its values inexactly. Its list of
expected failures is then made from what the export's tests become through
that pipeline (:func:`observe`, reading the written folders as the importer
reads them) and from the baseline's observations in the profile that runs
the same pipeline on the runtime (:mod:`.runners`; docs/export.md).

IREE's ``iree-test-suites/onnx_ops``, read from its source (its import step
``import_onnx_tests.py``, its ``conftest.py``, its config
``onnx_ops_cpu_llvm_sync.json``):

* the import runs ``iree-import-onnx model.onnx --opset-version 17``, which
  upgrades a model of a lower opset with ``onnx.version_converter``;
* each ``input_<j>.pb`` and ``output_<j>.pb`` is read with
  ``onnx.numpy_helper.to_array`` and written as raw binary by
  ``pack_ndarray_to_binary``: ``struct.pack`` of the array's ``tolist()``,
  for the twelve NumPy types of its table only; any other (bfloat16,
  complex64, complex128, strings) raises ``NotImplementedError`` and the test
  is not imported (its name goes to ``import_failures.txt``). Going through
  Python objects changes bits: a float32 is widened to a Python float and
  narrowed back, which quiets a signalling NaN, and ``struct``'s half
  precision writes every float16 NaN as the canonical quiet one;
* each value's type in the flag file is its graph value's: a dimension
  without a ``dim_value`` (a symbolic one) is written as 0;
* compile: ``iree-compile model.mlir`` with the config's flags; run:
  ``iree-run-module`` with the config's flags and the flag file, whose
  ``--expected_output`` compares floats with an absolute and a relative
  tolerance (a NaN on either side passes), other types exactly.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from conformance.adapters import registry
from conformance.tables import dtypes

DATA_SET = "test_data_set_0"


@dataclass(frozen=True)
class Importer:
    """How a runner turns a test folder into what it runs."""

    name: str  # the runner's importing code, as its repository names it
    opset: int  # a model of a lower opset is upgraded to it first (0: read as written)
    packs: Mapping[str, str]  # dtype -> the struct format its data files are written with
    refusal: str  # what it says for a dtype it has no format for ({dtype}: NumPy's name)
    zero_dims: bool  # a symbolic dimension is written as 0
    bits_spot: str  # the manifest's tolerance_blind mark for values it changes


@dataclass(frozen=True)
class Comparison:
    """How the runner compares an output with the expected one."""

    atol: Mapping[str, float]  # float dtype -> absolute tolerance (a dtype not here: exact)
    rtol: float
    nan_passes: bool  # a NaN on either side passes (|a - e| > tolerance is false for it)


@dataclass(frozen=True)
class RunnerConfig:
    """One configuration of the runner: one list file."""

    name: str  # the runner's config name
    file: str  # the list's file, below expected-failures/<runtime>/
    profile: str  # the profile (tables.profiles) whose baseline observations judge it
    compile_flags: tuple[str, ...]
    run_flags: tuple[str, ...]


@dataclass(frozen=True)
class Pipeline:
    runtime: str  # the baseline's name
    runner: str
    importer: Importer
    comparison: Comparison
    configs: tuple[RunnerConfig, ...]


@dataclass(frozen=True)
class Seen:
    """What one exported test becomes through a pipeline's importer."""

    refused: str | None = None  # the importer's reason it cannot import the test
    zero_dims: tuple[str, ...] = ()  # the graph values whose symbolic dims it writes as 0
    changed: tuple[str, ...] = ()  # the data files whose values it cannot write bit for bit


# -- IREE's onnx_ops ---------------------------------------------------------------------
IREE_PROFILE = "onnx-ops"  # the adapter runs the suite's pipeline in it (its profiles)
# The suite's expected-failure form (conformance.export.runners); the runtime it runs
# on is the one whose adapter file declares that form (Runtime.native).
IREE_FORM = "onnx-ops-configs"
IREE_RUNTIME = registry.declaring(IREE_FORM)


def _suite(name: str):
    """A property of the profile: the one place the suite's opset and flags are written."""
    return registry.PROFILES[IREE_RUNTIME][IREE_PROFILE][name]


def _iree_config(name: str, file: str) -> RunnerConfig:
    extra = _suite("extra_args")
    assert isinstance(extra, list)
    return RunnerConfig(
        name=name,
        file=file,
        profile=IREE_PROFILE,
        compile_flags=("--iree-hal-target-backends=llvm-cpu", *map(str, extra)),
        run_flags=(f"--device={_suite('driver')}",),
    )


# pack_ndarray_to_binary's table: NumPy type -> struct format
PACKS = {
    "int64": "q", "uint64": "Q", "int32": "i", "uint32": "I", "int16": "h", "uint16": "H",
    "int8": "b", "uint8": "B", "float64": "d", "float32": "f", "float16": "e", "bool": "?",
}  # fmt: skip
_OPSET = _suite("opset_version")
assert isinstance(_OPSET, int)

IREE = Pipeline(
    runtime=IREE_RUNTIME,
    runner="iree-test-suites/onnx_ops",
    importer=Importer(
        name="import_onnx_tests.py",
        opset=_OPSET,  # its --opset-version
        packs=PACKS,
        refusal="the suite's importer cannot write its {dtype} data: pack_ndarray_to_binary() "
        "has no format for it (NotImplementedError: Unsupported data type in "
        "pack_ndarray_to_binary(): '{dtype}'), so the test is not imported",
        zero_dims=True,
        bits_spot="iree_import_bits",
    ),
    # iree-run-module --expected_output, equality_mode "approximate" (its defaults); an
    # expected NaN passes any value, a number expected passes a NaN (3.13: tried)
    comparison=Comparison(
        atol={"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-4, "float64": 1e-4},
        rtol=1e-5,
        nan_passes=True,
    ),
    # the suite's CPU config (cpu_llvm_sync: llvm-cpu, float64 kept, local-sync), on the
    # host CPU as IREE's guides compile and the baseline was observed
    configs=(_iree_config("cpu_llvm_sync", "onnx_ops_cpu_llvm_sync.json"),),
)

PIPELINES: dict[str, Pipeline] = {IREE.runtime: IREE}
assert all(name in dtypes.NAMES for p in PIPELINES.values() for name in p.importer.packs)


# -- what a test becomes ------------------------------------------------------------------
def _packed(array: np.ndarray, fmt: str) -> np.ndarray:
    """The array as the importer writes it (through Python objects), read back."""
    values = array.ravel().tolist()
    return np.frombuffer(struct.pack(f"{len(values)}{fmt}", *values), dtype=array.dtype)


def _symbolic(value: onnx.ValueInfoProto) -> bool:
    dims = value.type.tensor_type.shape.dim
    return any(not dim.HasField("dim_value") for dim in dims)


def see(importer: Importer, folder: Path) -> Seen:
    """What the importer makes of one written test folder (``node/test_<name>``)."""
    model = onnx.load(folder / "model.onnx", load_external_data=False)
    graph = model.graph
    zero = tuple(v.name for v in [*graph.input, *graph.output] if _symbolic(v))
    files = sorted((folder / DATA_SET).glob("input_*.pb"), key=lambda p: int(p.stem[6:]))
    files += sorted((folder / DATA_SET).glob("output_*.pb"), key=lambda p: int(p.stem[7:]))
    changed = []
    for path in files:
        array = numpy_helper.to_array(onnx.load_tensor(str(path)))
        fmt = importer.packs.get(array.dtype.name)
        if fmt is None:
            name = "object" if array.dtype == object else array.dtype.name
            return Seen(refused=importer.refusal.format(dtype=name))
        if _packed(array, fmt).tobytes() != array.tobytes():
            changed.append(path.stem)
    return Seen(zero_dims=zero if importer.zero_dims else (), changed=tuple(changed))


def observe(pipeline: Pipeline, root: Path, names: list[str]) -> dict[str, Seen]:
    """Test name -> what the pipeline's importer makes of it, for the tests
    written below ``root/node``."""
    return {name: see(pipeline.importer, root / "node" / name) for name in names}


def sees(comparison: Comparison, expected: np.ndarray, actual: np.ndarray) -> bool:
    """Whether the runner's comparison fails ``actual`` against ``expected``."""
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return True
    atol = comparison.atol.get(expected.dtype.name)
    if atol is None:
        if expected.dtype == object:
            return list(expected.ravel()) != list(actual.ravel())
        return expected.tobytes() != actual.tobytes()
    e, a = expected.astype(np.float64), actual.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        off = np.abs(a - e) > atol + comparison.rtol * np.abs(e)
        if not comparison.nan_passes:
            off |= np.isnan(a) != np.isnan(e)
    return bool(off.any())
