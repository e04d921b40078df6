"""Gather (ONNX opsets 1, 11, 13; spec document "ONNX Gather", tables.decisions.S004).

output[i_0, ..., i_{q-1}, j_0, ..., j_{r-2}] = data[k, j_0, ..., j_{r-2}]  (axis = 0)
with k = indices[i_0, ..., i_{q-1}], and likewise on any axis:
"concatenates them in an output tensor of rank q + (r - 1)" with "the q
dimensions taking the place of the original axis that is being indexed into".
"""

from __future__ import annotations

import numpy as np

from conformance.oracle import checks
from conformance.tables.operators import GATHER
from conformance.tables.spec import op_spec

OPERATOR = GATHER


def evaluate(opset: int, data: np.ndarray, indices: np.ndarray, axis: int | None):
    """Return (output, disputed decision ids) or raise SpecViolation."""
    spec = op_spec(OPERATOR.name, opset)
    checks.check_dtypes(spec, data, indices)
    checks.check_data_rank(data)
    axis = checks.normalize_axis(axis, data.ndim, spec.axis_default)
    size = data.shape[axis]
    has_negative = checks.check_index_bounds(indices, size, axis)
    disputed = ("gather1-negative-indices",) if has_negative and opset == 1 else ()
    # The shape rule, allocated up front: np.take alone returns a bare scalar
    # (a Python str for string data) when both data and indices are rank 0/1.
    shape = OPERATOR.output_shape(OPERATOR.shapes(data.shape, indices.shape), axis)
    assert shape is not None  # the checks above passed
    out = np.empty(shape, dtype=data.dtype)
    if out.size == 0:
        return out, disputed  # nothing is read
    positions = checks.normalized(indices, size) if has_negative else indices
    np.take(data, positions, axis=axis, out=out)
    return out, disputed
