"""Tensors as JSON, exactly: findings.json and groups.json hold inputs this way.

``{"dtype", "shape", "values"}``: ``values`` are nested lists; floats JSON
cannot hold (NaN, infinities) are strings with their bit pattern, e.g.
``"nan (0x7fc00001)"``; complex elements are ``[real, imaginary]`` pairs.
Above :data:`MAX_JSON_ELEMENTS` elements ``values`` is left out and ``npz``
names the file (and key) that holds the tensor, when there is one.
"""

from __future__ import annotations

import math

import numpy as np

from conformance.tables import dtypes

MAX_JSON_ELEMENTS = 10_000


def _json_element(value, kind: str):
    if kind == "complex":
        return [_json_float(np.asarray(value).real), _json_float(np.asarray(value).imag)]
    if kind == "float":
        return _json_float(np.asarray(value))
    if kind == "string":
        return value
    return value.item() if hasattr(value, "item") else value


def _json_float(array: np.ndarray):
    value = float(array)  # exact for every float dtype here, bfloat16 included
    if math.isfinite(value):
        return value
    bits = array.view(f"uint{array.dtype.itemsize * 8}")
    return f"{value!r} (0x{int(bits):0{array.dtype.itemsize * 2}x})"


def to_json(array: np.ndarray, npz: str | None = None) -> dict:
    dtype = dtypes.of_array(array)
    content = {"dtype": dtype.name, "shape": list(array.shape)}
    if array.size > MAX_JSON_ELEMENTS:
        if npz:
            content["npz"] = npz
        return content
    flat = [_json_element(v, dtype.kind) for v in array.reshape(-1)]
    content["values"] = _nest(flat, array.shape)
    return content


def _nest(flat: list, shape: tuple[int, ...]):
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return flat
    step = math.prod(shape[1:])
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
