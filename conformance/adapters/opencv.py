"""OpenCV's DNN module (``cv2.dnn``) through ``opencv-python-headless``.

The default configuration is OpenCV's own documented Python usage, nothing
else::

    net = cv2.dnn.readNetFromONNX(buffer)   # the engine left to OpenCV (ENGINE_AUTO)
    net.setInput(array, name)               # each fed input, by name
    net.forward([output names])             # the graph's outputs, in its order

on the default backend and target (``DNN_BACKEND_OPENCV``, CPU), which
``info()['effective']`` records with the layer types OpenCV made of the
probe model and its thread count.

Traps handled here (opencv-python-headless 5.0.0):
- The binding converts a NumPy int64 or uint64 array to a ``CV_32S`` Mat,
  keeping the low 32 bits (``cv2.utils.dumpInputArray`` shows the type; the
  network then widens it back to the declared type): such an input is carried
  exactly only when its values are int32's ([-2**31, 2**31) for int64,
  [0, 2**31) for uint64). Anything else is refused as harness-unsupported,
  never fed narrowed and blamed on OpenCV. The same values baked into the
  model as initializers are read by OpenCV itself, bit for bit.
- bfloat16, complex and string arrays have no Mat type in the binding
  (``setInput``: "Expected Ptr<cv::UMat> for argument 'blob'"), and an output
  the model declares bfloat16, complex or string cannot come back (a bfloat16
  Mat comes out as a uint64 array of other values): harness-unsupported.
  OpenCV's ONNX importer itself refuses string tensors ("unsupported datatype
  'STRING'") and complex initializers at load: those refusals are its own.
- The binding returns ``None`` for an empty Mat (no data pointer), so an
  output with no element comes back with neither shape nor dtype:
  harness-unsupported.
- OpenCV's refusals are ``cv2.error``: at ``readNetFromONNX`` a ``LoadError``
  (a model whose inputs are all initializers is computed while it loads, so
  an index it refuses is refused there), at ``forward`` a ``RunError``; the message is
  OpenCV's, source line included.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from conformance.adapters.contract import (
    Adapter,
    HarnessUnsupported,
    LoadError,
    NativeList,
    RunError,
    Runtime,
    compiled_inputs,
    probe_model,
    runtime_module,
)
from conformance.tables import dtypes

if TYPE_CHECKING:
    import cv2
else:
    cv2 = runtime_module("cv2")

RUNTIME_NAME = "opencv"
PIPELINE = "cv2.dnn.readNetFromONNX(buffer); net.setInput(array, name); net.forward(names)"

# The NumPy dtypes the binding turns into a Mat of the same type, bit for bit.
CARRIED = frozenset(
    dtypes.by_name(name).numpy
    for name in (
        "bool",
        "int8",
        "int16",
        "int32",
        "uint8",
        "uint16",
        "uint32",
        "float16",
        "float32",
        "float64",
    )
)
# Carried only through CV_32S: exact for these values (the module docstring).
NARROWED = {
    np.dtype(np.int64): (-(2**31), 2**31 - 1),
    np.dtype(np.uint64): (0, 2**31 - 1),
}
# Element types an output cannot come back as.
_NOT_RETURNED = frozenset(
    dtypes.by_name(name).proto for name in ("bfloat16", "complex64", "complex128", "string")
)


def message(error: Exception) -> str:
    """OpenCV's own text (a ``cv2.error``): where it was raised, and why."""
    return str(error).strip()


def _fed(name: str, array: np.ndarray) -> np.ndarray:
    """The array as the binding will carry it exactly, or HarnessUnsupported."""
    if array.dtype in NARROWED:
        low, high = NARROWED[array.dtype]
        if array.size and (array.min() < low or array.max() > high):
            raise HarnessUnsupported(
                f"input {name!r} is {dtypes.name_of(array)} with values beyond "
                f"[{low}, {high}]: OpenCV's Python binding converts a 64-bit integer array "
                "to a CV_32S Mat, keeping the low 32 bits"
            )
    elif array.dtype not in CARRIED:
        raise HarnessUnsupported(
            f"input {name!r} is {dtypes.name_of(array)}: OpenCV's Python binding makes no "
            "Mat of it (bool, 8- to 32-bit integers, float16/32/64, and 64-bit integers "
            "within int32's range only)"
        )
    return np.require(array, requirements="C")  # ascontiguousarray would make 0-d arrays 1-d


class OpenCvAdapter(Adapter):
    name = RUNTIME_NAME
    device = "CPU"

    def __init__(self, properties: dict | None = None) -> None:
        super().__init__(properties)
        if self.properties:  # no profile yet: OpenCV's defaults only
            raise ValueError(f"{self.name} takes no properties, got {sorted(self.properties)}")

    def info(self) -> dict:
        net, _, _ = self.load(probe_model())
        return {
            "name": self.name,
            "version": cv2.__version__,
            "device": self.device,
            "interface": "cv2.dnn (opencv-python-headless)",
            "effective": {
                "pipeline": PIPELINE,
                "engine": "ENGINE_AUTO",
                "backend": "DNN_BACKEND_OPENCV",
                "target": "DNN_TARGET_CPU",
                "layers": sorted(set(net.getLayerTypes())),
                "threads": cv2.getNumThreads(),
            },
        }

    def load(self, model: bytes):
        proto, fed = compiled_inputs(model)
        outputs = [(value.name, value.type.tensor_type.elem_type) for value in proto.graph.output]
        try:
            net = cv2.dnn.readNetFromONNX(np.frombuffer(model, dtype=np.uint8))
        except cv2.error as error:
            raise LoadError(message(error)) from None
        return net, fed, outputs

    def execute(self, session, feeds):
        net, fed, outputs = session
        arrays = {name: _fed(name, feeds[name]) for name in fed}
        names = [name for name, _ in outputs]
        try:
            for name, array in arrays.items():
                net.setInput(array, name)
            results = net.forward(names)
        except cv2.error as error:
            raise RunError(message(error)) from None
        returned = []
        for (name, kind), result in zip(outputs, results, strict=True):
            if kind in _NOT_RETURNED:
                raise HarnessUnsupported(
                    f"output {name!r} is {dtypes.BY_PROTO[kind].name}: OpenCV's Python "
                    "binding has no NumPy form of it"
                )
            if result is None:
                raise HarnessUnsupported(
                    f"output {name!r} is empty: OpenCV's Python binding returns None for a "
                    "Mat without data, so neither its shape nor its dtype comes back"
                )
            returned.append(np.asarray(result))
        return returned


def run_opencv(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """OpenCV's DNN module as the adapter runs it: readNetFromONNX, setInput by
    name, forward the first graph output (its defaults: engine, backend, CPU)."""
    import cv2

    net = cv2.dnn.readNetFromONNX(str(model))
    for name, array in feeds.items():
        net.setInput(np.require(array, requirements="C"), name)
    return net.forward(net.getUnconnectedOutLayersNames())[0]


RUNTIME = Runtime(
    name=RUNTIME_NAME,
    adapter=OpenCvAdapter.__name__,
    position=6,
    modules=("cv2",),
    extra="opencv",
    # run only when named, as the compilers are: not in the main job, whose
    # records stay those of the default runtimes
    opt_in=True,
    # alone: packs of 32 ran the corpus no faster (docs/development.md, "Pack sizes")
    pack_size=None,
    # OpenCV's ONNX conformance test (modules/dnn/test/test_onnx_conformance.cpp)
    # includes this file in the std::set<std::string> of its CPU target's deny list.
    native=(
        NativeList(
            file="test_onnx_conformance_layer_filter_opencv_cpu_denylist.inl.hpp",
            line='"{test}",',
            comment="//",
            about="OpenCV's test_onnx_conformance.cpp includes this file in a "
            "std::set<std::string> initializer: a test named here is skipped on the "
            "OpenCV backend's CPU target.",
        ),
    ),
    repro=run_opencv,
)
