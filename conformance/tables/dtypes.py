"""The dtype table: one row per tensor element type the project knows.

Every other module derives its dtype lists from this table (or from the spec
model in :mod:`conformance.tables.spec`, which reads ONNX's own schemas); no module
spells a dtype list inline.

Names are NumPy-style (``float32``, not ONNX's ``float``) because case files and
reports are read by people who think in NumPy; the ONNX name is kept alongside
so that the ``tensor(float)`` strings of ``onnx.defs`` map back to a row.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
from onnx import TensorProto


@dataclass(frozen=True)
class DType:
    name: str  # the project's canonical name, used in case files and reports
    onnx_name: str  # as in onnx.defs type strings: tensor(<onnx_name>)
    numpy: np.dtype  # the dtype an array of this type has in memory
    proto: int  # onnx.TensorProto element type

    @property
    def onnx_type_str(self) -> str:
        return f"tensor({self.onnx_name})"

    @property
    def kind(self) -> str:
        """'string', 'bool', 'int', 'uint', 'float' or 'complex'."""
        if self.name == "string":
            return "string"
        if self.name == "bool":
            return "bool"
        if self.name == "bfloat16":
            return "float"
        return {"i": "int", "u": "uint", "f": "float", "c": "complex"}[self.numpy.kind]


# Strings are object arrays of Python str: that is what onnx.numpy_helper and
# both runtimes' Python bindings produce and accept.
DTYPES: tuple[DType, ...] = (
    DType("bool", "bool", np.dtype(np.bool_), TensorProto.BOOL),
    DType("int8", "int8", np.dtype(np.int8), TensorProto.INT8),
    DType("int16", "int16", np.dtype(np.int16), TensorProto.INT16),
    DType("int32", "int32", np.dtype(np.int32), TensorProto.INT32),
    DType("int64", "int64", np.dtype(np.int64), TensorProto.INT64),
    DType("uint8", "uint8", np.dtype(np.uint8), TensorProto.UINT8),
    DType("uint16", "uint16", np.dtype(np.uint16), TensorProto.UINT16),
    DType("uint32", "uint32", np.dtype(np.uint32), TensorProto.UINT32),
    DType("uint64", "uint64", np.dtype(np.uint64), TensorProto.UINT64),
    DType("float16", "float16", np.dtype(np.float16), TensorProto.FLOAT16),
    DType("bfloat16", "bfloat16", np.dtype(ml_dtypes.bfloat16), TensorProto.BFLOAT16),
    DType("float32", "float", np.dtype(np.float32), TensorProto.FLOAT),
    DType("float64", "double", np.dtype(np.float64), TensorProto.DOUBLE),
    DType("complex64", "complex64", np.dtype(np.complex64), TensorProto.COMPLEX64),
    DType("complex128", "complex128", np.dtype(np.complex128), TensorProto.COMPLEX128),
    DType("string", "string", np.dtype(object), TensorProto.STRING),
)

BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES}
BY_ONNX_TYPE_STR: dict[str, DType] = {d.onnx_type_str: d for d in DTYPES}
BY_PROTO: dict[int, DType] = {d.proto: d for d in DTYPES}  # onnx.TensorProto element type
NAMES: tuple[str, ...] = tuple(d.name for d in DTYPES)


def by_name(name: str) -> DType:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown dtype {name!r}; known: {', '.join(NAMES)}") from None


def of_array(array: np.ndarray) -> DType:
    """The table row for an array's dtype (object arrays are strings)."""
    for d in DTYPES:
        if array.dtype == d.numpy:
            return d
    raise KeyError(f"dtype {array.dtype} is not one of the project's tensor types")


def name_of(array: np.ndarray) -> str:
    """The project's name for an array's dtype, or NumPy's own name if it has none."""
    try:
        return of_array(array).name
    except KeyError:
        return str(array.dtype)
