"""IREE's own ONNX op suite (iree-test-suites ``onnx_ops``) run over an export,
as far as it can run here: IREE's own tools do the work (``iree-import-onnx``
through its own ``main``, ``iree-compile``, ``iree-run-module``); the suite's
two Python files, which are no package, are re-implemented from what they do
(read in the suite's repository; docs/export.md, "IREE"):

* :func:`import_tests`, its import step (``import_onnx_tests.py``): each test
  folder imported at ``--opset-version 17``, each ``.pb`` read with
  ``onnx.numpy_helper`` and written as raw binary through Python values
  (``struct.pack`` of ``tolist()``) for the NumPy types its table has, a flag
  file of ``--input=<dims>x<type>=@input_<j>.bin`` and ``--expected_output=``
  lines typed from the model's graph values (a dim without a value: 0); a
  folder that fails is removed and named in ``import_failures.txt``;
* this module as a pytest plugin (``-p tests.iree_onnx_ops --iree-config FILE``),
  its ``conftest.py``: one item per folder with a ``run_module_io_flags.txt``,
  named ``model.mlir::<config_name>``, with the user properties
  ``relative_test_directory_name``, ``input_mlir_name`` and ``test_name``;
  ``skip_compile_tests`` are not collected, ``expected_compile_failures`` and
  ``expected_run_failures`` are strict xfails raising at that step,
  ``skip_run_tests`` only compile.

``python -m tests.iree_onnx_ops OUT_DIR CONFIG WORK_DIR [pytest args]``
imports ``OUT_DIR/node`` into ``WORK_DIR/gather_conformance/generated`` and runs
the suite's pytest there with CONFIG (``--junitxml=...`` to keep the results
for ``conformance export OUT_DIR --check``).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

OPSET = 17  # import_onnx_tests.py: ONNX_CONVERTER_OUTPUT_MIN_VERSION
FLAGFILE = "run_module_io_flags.txt"
GENERATED = Path("gather_conformance") / "generated"  # runners.IREE_FOLDER
# The importer's table of NumPy types it writes: struct format (pack_ndarray_to_binary)
FORMATS = {
    np.dtype(np.int64): "q", np.dtype(np.uint64): "Q", np.dtype(np.int32): "i",
    np.dtype(np.uint32): "I", np.dtype(np.int16): "h", np.dtype(np.uint16): "H",
    np.dtype(np.int8): "b", np.dtype(np.uint8): "B", np.dtype(np.float64): "d",
    np.dtype(np.float32): "f", np.dtype(np.float16): "e", np.dtype(np.bool_): "?",
}  # fmt: skip
# ONNX element type -> the type the flag file names (signless integers)
P = onnx.TensorProto
TYPES = {
    P.FLOAT: "f32", P.DOUBLE: "f64", P.FLOAT16: "f16", P.BFLOAT16: "bf16", P.BOOL: "i1",
    P.INT8: "i8", P.UINT8: "i8", P.INT16: "i16", P.UINT16: "i16", P.INT32: "i32",
    P.UINT32: "i32", P.INT64: "i64", P.UINT64: "i64", P.COMPLEX64: "complex<f32>",
    P.COMPLEX128: "complex<f64>",
}  # fmt: skip


# -- the import step -----------------------------------------------------------------------
def _iree_import(model: Path, mlir: Path) -> None:
    """``iree-import-onnx MODEL --opset-version 17 -o MLIR``, by the tool's own
    main in this process (the same code, without starting a Python per test)."""
    from iree.compiler.tools.import_onnx import __main__ as tool

    tool.main(tool.parse_arguments([str(model), "--opset-version", str(OPSET), "-o", str(mlir)]))


def _type_string(value: onnx.ValueInfoProto) -> str:
    tensor = value.type.tensor_type
    dims = "x".join(str(dim.dim_value) for dim in tensor.shape.dim)  # 0 where symbolic
    kind = TYPES.get(tensor.elem_type, "")
    return f"{dims}x{kind}" if dims else kind


def _write_data(pb: Path, target: Path) -> None:
    array = numpy_helper.to_array(onnx.load_tensor(str(pb)))
    if array.dtype not in FORMATS:
        raise NotImplementedError(
            f"Unsupported data type in pack_ndarray_to_binary(): '{array.dtype}'"
        )
    values = array.flatten().tolist()
    target.write_bytes(struct.pack(f"{len(values)}{FORMATS[array.dtype]}", *values))


def import_test(folder: Path, out: Path) -> None:
    """One test folder imported the suite's way into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    _iree_import(folder / "model.onnx", out / "model.mlir")
    data_sets = sorted(folder.glob("test_data_set*"))
    if len(data_sets) != 1:
        raise NotImplementedError(f"{len(data_sets)} data sets")
    model = onnx.load(folder / "model.onnx")
    lines = []
    for flag, prefix, values in (
        ("--input", "input_", model.graph.input),
        ("--expected_output", "output_", model.graph.output),
    ):
        for j, pb in enumerate(sorted(data_sets[0].glob(f"{prefix}*.pb"))):
            _write_data(pb, out / f"{pb.stem}.bin")
            lines.append(f"{flag}={_type_string(values[j])}=@{pb.stem}.bin\n")
    (out / FLAGFILE).write_text("".join(lines))


def import_tests(node: Path, generated: Path, names: list[str] | None = None) -> list[str]:
    """The folders of ``node`` (those named, or all) imported below
    ``generated``; those that fail are removed and named in
    ``generated/import_failures.txt``, the others in import_successes.txt.
    Returns the failures."""
    passed, failed = [], []
    for folder in sorted(node.iterdir()):
        if names is not None and folder.name not in names:
            continue
        try:
            import_test(folder, generated / folder.name)
            passed.append(folder.name)
        except Exception:  # the importer's own rule: any error drops the test
            shutil.rmtree(generated / folder.name, ignore_errors=True)
            failed.append(folder.name)
    (generated / "import_successes.txt").write_text("\n".join(passed))
    (generated / "import_failures.txt").write_text("\n".join(failed))
    return failed


# -- the suite's pytest collection -----------------------------------------------------------
class CompileFailed(Exception):
    pass


class RunFailed(Exception):
    pass


class CompileXFailButRunFailed(Exception):
    pass


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--iree-config", action="append", required=True, help="an onnx_ops config file (each given)"
    )


def _read_config(path: str) -> dict:
    text = Path(path).read_text(encoding="utf-8")
    try:
        import pyjson5

        return pyjson5.loads(text)
    except ImportError:  # pyjson5 is not installed here: // comment lines only
        import json

        kept = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
        return json.loads("\n".join(kept))


def pytest_collect_file(parent, file_path: Path):
    if file_path.name == FLAGFILE:
        return SuiteFile.from_parent(parent, path=file_path)
    return None


class SuiteFile(pytest.File):
    def collect(self):
        folder = self.path.parent
        relative = folder.relative_to(self.config.rootpath).as_posix()
        for path in self.config.getoption("iree_config"):
            config = _read_config(path)
            if relative in config.get("skip_compile_tests", []):
                continue
            yield SuiteItem.from_parent(
                self,
                name=f"model.mlir::{config['config_name']}",
                folder=folder,
                relative=relative,
                suite=config,
            )


class SuiteItem(pytest.Item):
    def __init__(self, *, folder: Path, relative: str, suite: dict, **kwargs) -> None:
        super().__init__(**kwargs)
        self.folder, self.relative, self.suite = folder, relative, suite
        self.user_properties += [
            ("relative_test_directory_name", relative),
            ("input_mlir_name", "model.mlir"),
            ("test_name", suite["config_name"]),
        ]

    def runtest(self) -> None:
        compile_fails = self.relative in self.suite.get("expected_compile_failures", [])
        run_fails = self.relative in self.suite.get("expected_run_failures", [])
        if compile_fails:
            said = "Expected compilation to fail (included in 'expected_compile_failures')"
            self.add_marker(pytest.mark.xfail(raises=CompileFailed, strict=True, reason=said))
        if run_fails:
            said = "Expected run to fail (included in 'expected_run_failures')"
            self.add_marker(pytest.mark.xfail(raises=RunFailed, strict=True, reason=said))
        vmfb = f"model_{self.suite['config_name']}.vmfb"
        self._step(
            ["iree-compile", "model.mlir", *self.suite["iree_compile_flags"], "-o", vmfb],
            CompileFailed,
            "Error invoking iree-compile",
        )
        if self.relative in self.suite.get("skip_run_tests", []):
            return
        try:
            self._step(
                ["iree-run-module", f"--module={vmfb}", *self.suite["iree_run_module_flags"],
                 f"--flagfile={FLAGFILE}"],
                RunFailed,
                "Error invoking iree-run-module",
            )  # fmt: skip
        except RunFailed as error:
            if compile_fails:
                raise CompileXFailButRunFailed(*error.args) from error
            raise

    def _step(self, command: list[str], failure: type[Exception], said: str) -> None:
        tool = Path(sys.executable).parent / command[0]  # the environment's IREE tools
        done = subprocess.run(
            [str(tool), *command[1:]], capture_output=True, cwd=self.folder, check=False
        )
        if done.returncode != 0:
            raise failure(
                f"{said}\nError code: {done.returncode}\n"
                f"Stderr diagnostics:\n{done.stderr.decode(errors='replace')}\n"
                f"Stdout diagnostics:\n{done.stdout.decode(errors='replace')}"
            )

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CompileXFailButRunFailed):
            said = "Expected compile failure but run failed (move to 'expected_run_failures'):"
            return "\n".join((said, *excinfo.value.args))
        if isinstance(excinfo.value, (CompileFailed, RunFailed)):
            return "\n".join(excinfo.value.args)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"IREE compile and run: {self.folder.name}::{self.name}"


def run_pytest(work: Path, configs: list[Path], *pytest_args: str) -> int:
    """The suite's pytest over what :func:`import_tests` wrote below ``work``."""
    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(repo)}
    command = [sys.executable, "-m", "pytest", "-p", "tests.iree_onnx_ops",
               *(f"--iree-config={config}" for config in configs), f"--rootdir={work}",
               "-p", "no:cacheprovider", str(work / GENERATED), *pytest_args]  # fmt: skip
    return subprocess.run(command, cwd=work, env=env, check=False).returncode


if __name__ == "__main__":
    out_dir, config_file, work_dir, *rest = sys.argv[1:]
    work_path = Path(work_dir).resolve()
    import_tests(Path(out_dir) / "node", work_path / GENERATED)
    sys.exit(run_pytest(work_path, [Path(config_file).resolve()], *rest))
