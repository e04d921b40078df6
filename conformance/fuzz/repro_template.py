#!/usr/bin/env python3
"""Stand-alone reproducer written by `conformance fuzz`.

Runs model.onnx (beside this file) on one runtime with the inputs in
inputs.npz, in this process, and prints what the runtime returned next to
what the spec defines: expected.npz (the oracle's output) or, when there is
none, the clause the input breaks (case.yaml, expect_error). Needs numpy and
the runtime (ml_dtypes for bfloat16); not the conformance package.

    python repro.py            # the runtime that showed the discrepancy
    python repro.py openvino   # another one: onnxruntime, openvino, reference, tvm, iree
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # imported where used: a reproducer needs only its runtime's module
    import onnx

RUNTIME = "onnxruntime"
SIGNATURE = ""
HERE = Path(__file__).resolve().parent
# Control characters, line separators, bidi overrides, lone surrogates: what a
# runtime's message or a target's name must not send to the terminal raw.
HIDDEN = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def shown(text) -> str:
    """Text for the terminal: every hidden character escaped (\\x1b, \\u2028).
    Not ``conformance.messages.shown`` (which cuts a value for an error
    message): this file is copied as repro.py and imports nothing of ours."""
    return HIDDEN.sub(lambda m: repr(m.group())[1:-1], str(text))


def load(name: str) -> dict[str, np.ndarray]:
    """Arrays of an npz; ``<name>.bfloat16`` keys hold bfloat16 as uint16 bits."""
    arrays = {}
    with np.load(HERE / name, allow_pickle=True) as npz:  # strings are object arrays
        for key in npz.files:
            array = npz[key]
            if key.endswith(".bfloat16"):
                import ml_dtypes

                key, array = key[: -len(".bfloat16")], array.view(ml_dtypes.bfloat16)
            arrays[key] = array
    return arrays


def run_onnxruntime(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    output = session.get_outputs()[0]
    if output.type != "tensor(bfloat16)" and not any(
        a.dtype.name == "bfloat16" for a in feeds.values()
    ):
        return session.run(None, feeds)[0]
    # The binding has no bfloat16 NumPy path: OrtValues made from the bits.
    import ctypes

    import ml_dtypes

    values = {}
    for name, array in feeds.items():
        if array.dtype.name == "bfloat16":
            values[name] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
                np.require(array.view(np.uint16), requirements="C"), 16
            )
        else:
            values[name] = ort.OrtValue.ortvalue_from_numpy(np.require(array, requirements="C"))
    result = session.run_with_ort_values([output.name], values)[0]
    raw = ctypes.string_at(result.data_ptr(), result.tensor_size_in_bytes())
    return np.frombuffer(raw, np.uint16).view(ml_dtypes.bfloat16).reshape(result.shape())


def run_openvino(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(str(model), "CPU", {"INFERENCE_NUM_THREADS": 1})
    request = compiled.create_infer_request()
    tensors = {}
    for name, array in feeds.items():
        if array.dtype == object:
            tensor = ov.Tensor(ov.Type.string, ov.Shape(list(array.shape)))
            if array.size:
                tensor.str_data = np.array(array.ravel().tolist(), dtype=str).reshape(array.shape)
        elif array.dtype.name == "bfloat16":
            tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(array.shape)))
            if array.size:
                tensor.data.view(np.uint16)[...] = array.view(np.uint16)
        else:
            tensor = ov.Tensor(np.require(array, requirements="C"), shared_memory=False)
        tensors[name] = tensor
    request.infer(tensors)
    out = request.get_output_tensor(0)
    if out.element_type == ov.Type.string:
        strings = [str(s) for s in np.asarray(out.str_data).ravel()] if out.size else []
        result = np.empty(len(strings), dtype=object)
        result[:] = strings
        return result.reshape(tuple(out.shape))
    if out.element_type == ov.Type.bf16:
        import ml_dtypes

        raw = np.require(out.data, requirements="C").tobytes()
        return np.frombuffer(raw, np.uint16).view(ml_dtypes.bfloat16).reshape(tuple(out.shape))
    return np.array(out.data, copy=True).reshape(tuple(out.shape))


def run_reference(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator

    # onnx annotates run's result list | dict: a dict only with intermediate=True
    return ReferenceEvaluator(str(model)).run(None, feeds)[0]  # type: ignore[index]


def _fed(model: Path) -> tuple[onnx.ModelProto, list[str]]:
    """The ONNX model and its graph inputs that are not initializers, in order:
    what a compiler's entry function takes, positionally."""
    import onnx

    proto = onnx.load(str(model))
    baked = {tensor.name for tensor in proto.graph.initializer}
    return proto, [value.name for value in proto.graph.input if value.name not in baked]


def run_tvm(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """Apache TVM's Relax flow, compiled for LLVM's generic CPU (target "llvm")."""
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    proto, names = _fed(model)
    module = relax.transform.LegalizeOps()(from_onnx(proto))
    machine = relax.VirtualMachine(tvm.compile(module, target="llvm"), tvm.cpu())
    tensors = [tvm.runtime.tensor(np.require(feeds[n], requirements="C")) for n in names]
    return machine["main"](*tensors).numpy()


def run_iree(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """IREE's ONNX flow: iree-import-onnx, iree-compile for the host CPU, local-task.
    Inputs and the output cross as buffer views: IREE's function wrapper has no
    bfloat16 and reads unsigned integers back as signed."""
    import subprocess
    import tempfile

    import iree.compiler as compiler
    import iree.runtime as rt
    import onnx

    proto, names = _fed(model)
    with tempfile.TemporaryDirectory() as folder:
        mlir = Path(folder) / "model.mlir"
        command = [sys.executable, "-m", "iree.compiler.tools.import_onnx", str(model), "-o"]
        subprocess.run([*command, str(mlir)], check=True)
        vmfb = compiler.compile_file(
            str(mlir), target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"]
        )
    config = rt.Config("local-task")
    module = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
    context = rt.SystemContext(vm_modules=[module], config=config)
    E = rt.HalElementType
    arguments = rt.VmVariantList(len(names))
    for name in names:
        array = np.require(feeds[name], requirements="C")
        kind = "BFLOAT_16" if array.dtype.name == "bfloat16" else None
        kind = kind or {"b": "BOOL_8", "i": "SINT", "u": "UINT", "f": "FLOAT"}[array.dtype.kind]
        if kind in ("SINT", "UINT", "FLOAT"):
            kind += f"_{array.dtype.itemsize * 8}"
        bits = array.view(np.uint16) if array.dtype.name == "bfloat16" else array
        arguments.push_ref(config.device.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
            device=config.device, buffer=bits, element_type=getattr(E, kind),
        ))  # fmt: skip
    results = rt.VmVariantList(1)
    context.vm_context.invoke(module.lookup_function(proto.graph.name), arguments, results)
    view = results.get_as_object(0, rt.HalBufferView)
    output = proto.graph.output[0].type.tensor_type.elem_type
    declared = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(output))  # ml_dtypes for bfloat16
    shape = tuple(view.shape)
    # The bytes as they are (an unsigned integer of the width; complex as it is),
    # then the model's type: IREE erases signedness.
    raw = declared if declared.kind == "c" else np.dtype(f"uint{declared.itemsize * 8}")
    if not np.prod(shape):
        return np.empty(shape, declared)
    return np.array(view.map().asarray(shape, raw), copy=True).view(declared)


def show(label: str, array: np.ndarray) -> None:
    print(f"{label}: dtype {array.dtype}, shape {list(array.shape)}")
    with np.printoptions(threshold=200, edgeitems=4):
        print(np.array2string(np.asarray(array), prefix="  ", separator=", "))
    if array.dtype.kind == "f" or array.dtype.name == "bfloat16":
        bits = np.ascontiguousarray(array).view(f"uint{array.dtype.itemsize * 8}")
        print("  bits:", np.array2string(bits, formatter={"int": hex}, threshold=64))


def main() -> int:
    runtime = sys.argv[1] if len(sys.argv) > 1 else RUNTIME
    runner = {
        "onnxruntime": run_onnxruntime,
        "openvino": run_openvino,
        "reference": run_reference,
        "tvm": run_tvm,
        "iree": run_iree,
    }
    # A target of a profile (openvino:1thread) runs on its runtime, as configured here.
    run = runner.get(runtime) or runner.get(runtime.partition(":")[0])
    if run is None:
        print(f"unknown runtime '{shown(runtime)}': give one of {', '.join(runner)}")
        return 2
    inputs = load("inputs.npz")
    feeds = {k[len("feed.") :]: v for k, v in inputs.items() if k.startswith("feed.")}
    print(f"class {SIGNATURE}")
    show("data", inputs["data"])
    show("indices", inputs["indices"])
    expected_path = HERE / "expected.npz"
    expected = load("expected.npz")["output"] if expected_path.exists() else None
    if expected is None:
        clause = [
            line for line in (HERE / "case.yaml").read_text().splitlines() if "expect_error" in line
        ]
        print(f"expected: an error ({shown(clause[0].strip()) if clause else 'see case.yaml'})")
    else:
        show("expected", expected)
    print(f"running model.onnx on {shown(runtime)} ...", flush=True)  # a crash kills this process
    try:
        actual = run(HERE / "model.onnx", feeds)
    except Exception as error:  # the runtime refused the model or the input
        print(f"{shown(runtime)} raised {type(error).__name__}: {shown(error)}")
        return 0 if expected is None else 1
    show("actual", actual)
    if expected is None:
        print("DISCREPANCY: the input is invalid, but the runtime returned an output")
        return 1
    same = (
        actual.dtype == expected.dtype
        and actual.shape == expected.shape
        and np.ascontiguousarray(actual).tobytes() == np.ascontiguousarray(expected).tobytes()
        if expected.dtype != object
        else actual.shape == expected.shape and actual.tolist() == expected.tolist()
    )
    if same:
        print("same as expected, bit for bit: the discrepancy does not reproduce here")
        return 0
    if actual.shape == expected.shape and actual.dtype == expected.dtype and expected.size:
        if expected.dtype == object:
            pairs = zip(actual.ravel(), expected.ravel(), strict=True)
            differ = np.array([a != e for a, e in pairs])
        else:
            width = (
                f"uint{expected.dtype.itemsize * 8}"
                if expected.dtype.kind in "fc" or expected.dtype.name == "bfloat16"
                else None
            )
            a = np.ascontiguousarray(actual).view(width) if width else actual
            e = np.ascontiguousarray(expected).view(width) if width else expected
            differ = (a != e).reshape(expected.shape) if width else (a != e)
        positions = np.argwhere(differ.reshape(expected.shape))[:16]
        print(f"DISCREPANCY: {int(differ.sum())} of {expected.size} elements differ; first:")
        for position in positions:
            at = tuple(int(i) for i in position)
            print(f"  at {list(at)}: expected {expected[at]!r}, actual {actual[at]!r}")
    else:
        print("DISCREPANCY: dtype or shape differs from expected")
    return 1


if __name__ == "__main__":
    sys.exit(main())
