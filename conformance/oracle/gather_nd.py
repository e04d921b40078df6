"""GatherND (ONNX opsets 11, 12, 13; spec documents "ONNX GatherND" S005 and
"OpenVINO GatherND-5, -8" S006).

With b = batch_dims, m = indices.shape[-1] and r = rank(data):

    output[i_0, ..., i_{q-2}, j_0, ..., j_{r-b-m-1}]
        = data[i_0, ..., i_{b-1}, k_0, ..., k_{m-1}, j_0, ..., j_{r-b-m-1}]
    with (k_0, ..., k_{m-1}) = indices[i_0, ..., i_{q-2}, :]

so the output has the shape indices.shape[:-1] + data.shape[b + m:], rank
q + r - m - 1 - b (S005's description; its Outputs line drops the b).

NOT YET JUDGED BY ANY RUN: GatherND has no row in ``tables/operators.py``
(the row's ``dims(data_rank, indices_rank, axis)`` cannot say a shape that
depends on ``indices.shape[-1]``), so this module is not in
``oracle.OPERATORS`` and its own decisions (:data:`DECISIONS`, ids
``gnd-...``) are not yet in ``tables/decisions.py`` (whose entries name the
rows' operators only, and whose ids the JSON Schemas' enums copy). They are
Decision values ready to join it; :data:`JOINS` holds the clauses GatherND
adds to the table's shared entries (``index-out-of-range``, ``data-dtype``,
``data-rank-zero``, ``zero-size-axis``, ``empty-tensors``, ``bitwise-exact``),
which this module already raises and cites by their ids.

How it is fast: the batch dims and the m indexed dims of data are viewed
as one axis of B * M rows, each row the S elements of a slice; each index
tuple becomes one row number (batch * M + the tuple's row-major offset,
negatives moved by s first) and ``np.take`` copies whole rows.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import onnx.defs

from conformance.oracle import checks
from conformance.oracle.errors import SpecViolation
from conformance.tables import dtypes
from conformance.tables.decisions import Clause, Decision
from conformance.tables.spec import OpSpec, UnknownOpset

NAME = "GatherND"
OPSETS = (11, 12, 13)  # S005: "All versions: 11, 12, 13"
S005 = "005_onnx-GatherND.txt"
S006 = "006_openvino-GatherND.txt"
TITLES = {S005: "ONNX GatherND", S006: "OpenVINO GatherND-5, GatherND-8"}
_ND = (NAME,)

# GatherND's own decisions, in the form of tables/decisions.DECISIONS, to
# join it (ops and all) when GatherND becomes a row; tests/test_oracle_gather_nd.py
# finds every quote in its document as tests/test_decisions.py does the table's.
DECISIONS: tuple[Decision, ...] = (
    Decision(
        id="gnd-indices-dtype",
        title="GatherND: indices must be int64 (no Tind: int32 is not allowed)",
        kind="disagreement",
        ops=_ND,
        clauses=(
            Clause(S005, "<dt><tt>indices</tt> (non-differentiable) : tensor(int64)</dt>"),
            Clause(S006, "T_IND: any supported integer types."),
        ),
        oracle="Raises SpecViolation for any indices dtype but int64, int32 included (read "
        "from onnx.defs: GatherND's indices input is tensor(int64) at 11, 12 and 13).",
        why="ONNX's type is explicit and has no type parameter, unlike Gather's Tind; OpenVINO "
        "takes any integer type, so its importer may accept int32. Observed on 2026-12-02: "
        "ONNX Runtime 1.31 refuses int32 indices as an invalid model; OpenVINO 2026.4 and "
        "onnx.reference (onnx 1.23) compute them.",
    ),
    Decision(
        id="gnd-indices-rank-zero",
        title="GatherND: indices must have rank q >= 1",
        kind="rule",
        ops=_ND,
        clauses=(
            Clause(S005, "1) r >= 1 and q >= 1 are to be honored."),
            Clause(S006, "A tensor of a rank not less than 1."),
        ),
        oracle="Raises SpecViolation for rank-0 (scalar) indices: there is no last dimension "
        "to hold an index tuple.",
        why="Both documents state it. ONNX Runtime 1.31 refuses it in shape inference.",
    ),
    Decision(
        id="gnd-batch-dims-opset-11",
        title="GatherND-11 has no batch_dims attribute",
        kind="rule",
        ops=_ND,
        clauses=(
            Clause(
                S005,
                "GatherND-11 ... Given `data` tensor of rank `r` >= 1, and `indices` tensor of "
                "rank `q` >= 1, this operator gathers ... The `indices_shape[-1]` should have a "
                "value between 1 (inclusive) and rank `r` (inclusive)",
            ),
            Clause(
                S005,
                "GatherND-12 ... This version of the operator has been available since version "
                "12 of the default ONNX operator set. #### Attributes ... batch_dims",
            ),
        ),
        oracle="At opset 11 batch_dims must be absent (None); any value, 0 included, raises "
        "SpecViolation. Absent means 0 at every opset.",
        why="GatherND-11 lists no attribute: a node that carries batch_dims is not a "
        "GatherND-11 node. ONNX Runtime 1.31 refuses it ('Unrecognized attribute'); OpenVINO "
        "2026.4 and onnx.reference (onnx 1.23) accept batch_dims = 0 there.",
    ),
    Decision(
        id="gnd-batch-dims-out-of-range",
        title="GatherND: batch_dims must be in [0, min(q, r))",
        kind="silent",
        ops=_ND,
        clauses=(
            Clause(S005, "3) b < min(q, r) is to be honored."),
            Clause(
                S006,
                "Range of values: integer number that belongs to [0; min(data.rank, indices.rank))",
            ),
        ),
        oracle="Raises SpecViolation for batch_dims < 0 or >= min(q, r). A negative batch_dims "
        "is not counted from the back.",
        why="ONNX bounds b from above only and is silent on negative values (unlike axis, it "
        "says nothing of counting from the back); OpenVINO's range starts at 0. On batch_dims "
        "= -1 ONNX Runtime 1.31 fails with an integer overflow, onnx.reference with a "
        "reshape error, OpenVINO 2026.4 refuses the model: none a clear refusal.",
    ),
    Decision(
        id="gnd-batch-dims-unequal",
        title="GatherND: batch dims of data and indices must be equal (OpenVINO: broadcastable)",
        kind="disagreement",
        ops=_ND,
        clauses=(
            Clause(
                S005,
                "2) The first `b` dimensions of the shape of `indices` tensor and `data` tensor "
                "must be equal.",
            ),
            Clause(
                S006,
                "It requires the first b dimensions in data and indices tensors to be "
                "broadcastable (i.e., either equal or one of them equals 1",
            ),
        ),
        oracle="Raises SpecViolation when data.shape[:b] != indices.shape[:b], a dimension of "
        "size 1 against another size included.",
        why="ONNX is explicit and the project tests ONNX models. A runtime that broadcasts a "
        "batch dim of 1 follows OpenVINO (which does not say which size the output takes): "
        "ONNX Runtime 1.31 accepts data's batch dim 1 against indices' 2 and refuses the "
        "reverse ('not divisible'); OpenVINO 2026.4 broadcasts both ways; onnx.reference "
        "fails with a reshape error.",
    ),
    Decision(
        id="gnd-last-dim-out-of-range",
        title="GatherND: indices.shape[-1] must be in [1, r - b]",
        kind="rule",
        ops=_ND,
        clauses=(
            Clause(
                S005,
                "4) The `indices_shape[-1]` should have a value between 1 (inclusive) and rank "
                "`r-b` (inclusive) ... 1) If `indices_shape[-1] > r-b` => error condition",
            ),
            Clause(S006, "indices.shape[-1] <= data.rank"),
        ),
        oracle="Raises SpecViolation for indices.shape[-1] = 0 or > r - b (r at opset 11, "
        "where b = 0), whether or not indices has elements.",
        why="ONNX states both bounds; an empty tuple (m = 0) would select the whole batch, "
        "which ONNX Runtime 1.31 does (it accepts m = 0), but 1 is the stated lower bound. "
        "OpenVINO 2026.4 accepts m = 0 and returns values that are not data's; "
        "onnx.reference fails with a reshape error.",
    ),
    Decision(
        id="gnd-negative-indices",
        title="GatherND: negative indices (ONNX [-s, s-1], GatherND-5 [0, s-1])",
        kind="disagreement",
        ops=_ND,
        clauses=(
            Clause(
                S005,
                "All values in `indices` are expected to be within bounds [-s, s-1] along axis "
                "of size `s` (i.e.) `-data_shape[i] <= indices[...,i] <= data_shape[i] - 1`.",
            ),
            Clause(
                S006,
                "It requires that all indices from this tensor are be in the range of [0, s-1]",
            ),
            Clause(
                S006,
                "Behavior before 2025.3 OpenVINO release: Negative indices were not supported.",
            ),
        ),
        oracle="Follows ONNX: index k_i < 0 reads k_i + s_i, s_i the size of data dimension "
        "b + i. Inputs with a negative index are marked disputed.",
        why="The project tests ONNX models; but GatherND-5 and OpenVINO before 2025.3 refuse "
        "negative indices, so a runtime built on them may differ (ONNX Runtime 1.31, "
        "OpenVINO 2026.4 and onnx.reference normalise them).",
        disputed=True,
    ),
    Decision(
        id="gnd-batch-dims-kept",
        title="GatherND: the output keeps the b batch dims (GatherND-5 flattens them)",
        kind="disagreement",
        ops=_ND,
        clauses=(
            Clause(
                S005,
                "this operator gathers slices of `data` into an output tensor of rank "
                "`q + r - indices_shape[-1] - 1 - b`.",
            ),
            Clause(
                S006,
                "the output shape is calculated as (multiplication of indices.shape[:b]) + "
                "indices.shape[b:-1] + data.shape[(indices.shape[-1] + b):]",
            ),
            Clause(
                S006,
                "The shape of the output is calculated as indices.shape[:batch_dims] + "
                "indices.shape[batch_dims:-1]",
            ),
            Clause(S005, "corresponding to `data[0:b-1, indices_slice , :]` is filled"),
        ),
        oracle="The output shape is indices.shape[:-1] + data.shape[b + m:] (batch dims kept, "
        "as GatherND-8 and onnx's gather_nd_impl); ONNX's data[0:b-1, indices_slice, :] is "
        "read as: the b batch coordinates, then the tuple, then every remaining dimension.",
        why="The rank in ONNX's description (q + r - m - 1 - b) only holds with the batch dims "
        "kept; GatherND-5's flattening is OpenVINO's own op, which its note calls incorrect "
        "for b > 1. '0:b-1' is not Python slice notation (it would drop the last batch dim).",
    ),
    Decision(
        id="gnd-output-rank-without-b",
        title="GatherND: the Outputs line gives rank q + r - indices_shape[-1] - 1, without b",
        kind="erratum",
        ops=_ND,
        clauses=(
            Clause(S005, "Tensor of rank q + r - indices_shape[-1] - 1."),
            Clause(S005, "batch_dims = 1 ... output_shape  = [2, 2]"),
        ),
        oracle="Follows the description's rank q + r - m - 1 - b; the Outputs line is wrong "
        "for b > 0 (Example 5: q = 2, r = 3, m = 1, b = 1 gives output_shape [2, 2], rank 2, "
        "not 3).",
        why="The description, Example 5 and the backend example int32_batchdim_1 all agree "
        "on the rank with b subtracted.",
    ),
)

# Clauses GatherND adds to decisions the table already has (and GatherND to
# their ops), when it joins: this module raises and cites them by these ids.
# Observed on 2026-12-02 for index-out-of-range and zero-size-axis: ONNX Runtime
# 1.31 and onnx.reference refuse an index 2 into a dimension of 2 and an index
# 0 into a dimension of 0; OpenVINO 2026.4 returns values that are not data's.
JOINS: dict[str, tuple[Clause, ...]] = {
    "index-out-of-range": (
        Clause(S005, "It is an error if any of the index values are out of bounds."),
        Clause(S006, "It requires all indices from this tensor to be in the range [-s, s-1]"),
    ),
    "data-dtype": (
        Clause(
            S005,
            "available since version 11 of the default ONNX operator set. ... "
            "tensor(int32), tensor(int64), tensor(float16)",
        ),
        Clause(
            S005,
            "available since version 12 of the default ONNX operator set. ... "
            "tensor(int32), tensor(int64), tensor(float16)",
        ),
        Clause(
            S005,
            "available since version 13 of the default ONNX operator set. ... "
            "tensor(int32), tensor(int64), tensor(bfloat16)",
        ),
    ),
    "data-rank-zero": (Clause(S005, "Tensor of rank r >= 1."),),
    "zero-size-axis": (Clause(S005, "`-data_shape[i] <= indices[...,i] <= data_shape[i] - 1`"),),
    "empty-tensors": (
        Clause(S005, "into an output tensor of rank `q + r - indices_shape[-1] - 1 - b`"),
        Clause(S006, "The shape of the output is calculated as"),
    ),
    "bitwise-exact": (
        Clause(S005, "Each *scalar value* corresponding to `data[0:b-1,indices_slice]`"),
    ),
}
BY_ID: dict[str, Decision] = {d.id: d for d in DECISIONS}


class GatherNDViolation(SpecViolation):
    """A SpecViolation whose clause is one of :data:`DECISIONS` (not yet in the
    table, which ``SpecViolation`` checks its clause against). When they join
    the table, this class goes and the module raises ``SpecViolation``."""

    def __init__(self, clause: str, detail: str) -> None:
        if clause not in BY_ID:  # an unknown id is a bug in the oracle, fail loudly
            raise KeyError(f"unknown GatherND decision id {clause!r}")
        ValueError.__init__(self, f"[{clause}] {detail}")
        self.clause = clause
        self.detail = detail


@cache
def op_spec(opset: int) -> OpSpec:
    """GatherND's types at ``opset``, from onnx.defs as ``tables.spec.op_spec``
    reads a row's (which needs a row, a ``Tind`` and an ``axis``: GatherND's
    indices are a fixed tensor(int64) and its attribute is ``batch_dims``)."""
    if opset not in OPSETS:
        raise UnknownOpset(
            f"{NAME} has no opset {opset} in this project; known: {', '.join(map(str, OPSETS))}"
        )
    schema = onnx.defs.get_schema(NAME, opset)
    (data_types,) = (
        c.allowed_type_strs for c in schema.type_constraints if c.type_param_str == "T"
    )
    allowed = {dtypes.BY_ONNX_TYPE_STR[t].name for t in data_types}
    index = dtypes.BY_ONNX_TYPE_STR[schema.inputs[1].type_str].name
    return OpSpec(
        op=NAME,
        opset=opset,
        since_version=schema.since_version,
        data_dtypes=tuple(n for n in dtypes.NAMES if n in allowed),
        index_dtypes=(index,),
        axis_default=0,  # batch_dims' default, 0 (absent at 11)
        axis_required=False,
    )


def output_shape(data_shape, indices_shape, batch_dims: int | None) -> tuple[int, ...] | None:
    """The shape rule alone, from shapes: indices.shape[:-1] + data.shape[b + m:]
    (decision gnd-batch-dims-kept); None when the shapes have no valid output."""
    rank, q = len(data_shape), len(indices_shape)
    b = 0 if batch_dims is None else batch_dims
    if rank == 0 or q == 0 or not 0 <= b < min(q, rank):
        return None
    m = indices_shape[-1]
    if not 1 <= m <= rank - b or tuple(data_shape[:b]) != tuple(indices_shape[:b]):
        return None
    return tuple(indices_shape[:-1]) + tuple(data_shape[b + m :])


def check_dtypes(spec: OpSpec, data: np.ndarray, indices: np.ndarray) -> None:
    name = dtypes.name_of(data)
    if name not in spec.data_dtypes:
        raise SpecViolation(
            "data-dtype",
            f"data dtype {name} is not in T of {NAME}-{spec.opset} "
            f"(allowed: {', '.join(spec.data_dtypes)})",
        )
    name = dtypes.name_of(indices)
    if name not in spec.index_dtypes:
        raise GatherNDViolation(
            "gnd-indices-dtype",
            f"indices dtype {name} is not {NAME}'s indices type "
            f"(allowed: {', '.join(spec.index_dtypes)})",
        )


def check_batch_dims(opset: int, batch_dims: int | None, rank: int, q: int) -> int:
    """b in [0, min(q, r)); None means absent (0)."""
    if batch_dims is None:
        return 0
    if isinstance(batch_dims, bool) or not isinstance(batch_dims, (int, np.integer)):
        raise TypeError(f"batch_dims must be an int or None, not {type(batch_dims).__name__}")
    b = int(batch_dims)
    if opset == 11:
        raise GatherNDViolation(
            "gnd-batch-dims-opset-11", f"batch_dims={b} is given, but {NAME}-11 has no batch_dims"
        )
    if not 0 <= b < min(q, rank):
        raise GatherNDViolation(
            "gnd-batch-dims-out-of-range",
            f"batch_dims {b} is outside [0, {min(q, rank) - 1}] = [0, min(q={q}, r={rank}) - 1]",
        )
    return b


def check_shapes(data: np.ndarray, indices: np.ndarray, b: int) -> int:
    """Raise on unequal batch dims or a last dimension outside [1, r - b]; return m."""
    if data.shape[:b] != indices.shape[:b]:
        raise GatherNDViolation(
            "gnd-batch-dims-unequal",
            f"the first {b} dimensions differ: data {list(data.shape[:b])}, "
            f"indices {list(indices.shape[:b])}",
        )
    m = indices.shape[-1]
    if not 1 <= m <= data.ndim - b:
        raise GatherNDViolation(
            "gnd-last-dim-out-of-range",
            f"indices.shape[-1] = {m} is outside [1, r - b] = [1, {data.ndim - b}] "
            f"(r={data.ndim}, b={b})",
        )
    return m


def check_index_bounds(columns: np.ndarray, sizes: tuple[int, ...], b: int) -> bool:
    """Raise unless column i of ``columns`` (N, m) is in [-s_i, s_i - 1]; return
    whether any index is negative. Raw values: nothing is truncated first."""
    negative = False
    for i, size in enumerate(sizes):
        column = columns[:, i]
        low, high = int(column.min()), int(column.max())
        if low < -size or high > size - 1:
            _raise_out_of_range(columns, sizes, b)
        negative |= low < 0
    return negative


def _raise_out_of_range(columns: np.ndarray, sizes: tuple[int, ...], b: int) -> None:
    bounds = np.array(sizes, dtype=np.int64)
    bad = (columns < -bounds) | (columns > bounds - 1)
    row, i = (int(x) for x in np.argwhere(bad)[0])
    size = sizes[i]
    count = int(np.count_nonzero(bad))
    raise SpecViolation(
        "index-out-of-range",
        f"index {int(columns[row, i])} (tuple {row}, component {i}) is outside "
        f"[-{size}, {size - 1}] for data dimension {b + i} of size {size}"
        + (f" ({count} indices out of range)" if count > 1 else ""),
    )


def evaluate(opset: int, data: np.ndarray, indices: np.ndarray, batch_dims: int | None):
    """Return (output, disputed decision ids) or raise SpecViolation.

    The checks run in a fixed order (dtypes, data rank, indices rank,
    batch_dims, batch dims, last dimension, index bounds), so an input that
    breaks several clauses always reports the same one."""
    checks.require_arrays(data, indices)  # called directly: no oracle.evaluate checks first
    spec = op_spec(opset)
    check_dtypes(spec, data, indices)
    checks.check_data_rank(data)
    if indices.ndim == 0:
        raise GatherNDViolation(
            "gnd-indices-rank-zero", "indices is a scalar (rank 0); the spec needs q >= 1"
        )
    b = check_batch_dims(opset, batch_dims, data.ndim, indices.ndim)
    m = check_shapes(data, indices, b)
    sizes = tuple(data.shape[b : b + m])
    out = np.empty(indices.shape[:-1] + data.shape[b + m :], dtype=data.dtype)
    columns = indices.reshape(-1, m)
    if columns.shape[0] == 0:
        return out, ()  # no index tuple: nothing is read, nothing is out of range
    negative = check_index_bounds(columns, sizes, b)
    disputed = ("gnd-negative-indices",) if negative else ()
    if out.size == 0:
        return out, disputed  # every slice is empty
    rows = _rows(columns, sizes, math.prod(data.shape[:b]), negative)
    slices = data.reshape(-1, math.prod(data.shape[b + m :]))
    # mode="clip": "raise" buffers ``out`` (a second full copy, 4x slower on
    # benchmarks/gather_nd_speed.py); every row is in range by construction
    # (the bounds were checked above) and clip can never read outside data.
    np.take(slices, rows, axis=0, out=out.reshape(rows.shape[0], -1), mode="clip")
    return out, disputed


def _rows(columns: np.ndarray, sizes: tuple[int, ...], batches: int, negative: bool) -> np.ndarray:
    """Each tuple's row of data viewed as (B * M, S): its batch * M plus its
    row-major offset among the M = prod(sizes) indexed positions."""
    rows = np.zeros(columns.shape[0], dtype=np.int64)
    scratch = np.empty_like(rows)
    for i, size in enumerate(sizes):
        stride = math.prod(sizes[i + 1 :])
        column = columns[:, i]
        if negative:
            np.add(rows, checks.negative_offset(column, size * stride, scratch), out=rows)
        if stride == 1:
            np.add(rows, column, out=rows)
        else:
            np.multiply(column, stride, out=scratch)
            np.add(rows, scratch, out=rows)
    if batches > 1:
        per_batch = columns.shape[0] // batches
        rows.reshape(batches, per_batch)[...] += (
            np.arange(batches, dtype=np.int64) * math.prod(sizes)
        )[:, None]
    return rows
