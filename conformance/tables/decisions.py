"""The spec-decisions table: every clause the oracle enforces, every point where
the documents are silent, and every point where the ONNX and OpenVINO documents
disagree -- each named once, by a short id.

Code (``SpecViolation.clause``), case files (``expect_error``, ``decisions``)
and reports refer to entries by id; nothing else restates them.

Documents are named by their file in ``shared/specs`` (see its README):

- 000: ONNX GatherElements (opsets 11, 13)
- 001: OpenVINO GatherElements-6 (earlier rendering)
- 002: ONNX GatherElements generated reference page (backend test examples)
- 003: OpenVINO GatherElements-6 (later rendering)
- 004: ONNX Gather (opsets 1, 11, 13)
- 005: ONNX GatherND (opsets 11, 12, 13)
- 006: OpenVINO GatherND-5, GatherND-8

``disputed`` marks entries where a runtime that follows one of the documents
could reasonably differ from the oracle on a valid ONNX model; a discrepancy on
a case under such an entry is reported as disputed rather than as a plain
failure. ``kind`` is one of:

- ``rule``: the ONNX text states it; the oracle enforces it.
- ``silent``: the documents say nothing; the oracle's behaviour is a decision.
- ``disagreement``: the documents contradict each other.
- ``erratum``: a document's rendering is wrong; cases carry the correction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from conformance.tables.operators import GATHER, GATHER_ELEMENTS, GATHER_ND, OPERATORS

S000 = "000_2a6c56bbed5bfbf5.txt"
S001 = "001_65505e48bce3c01b.txt"
S002 = "002_c0ec54416ec5e6eb.txt"
S003 = "003_e9807c24fc4f5749.txt"
S004 = "004_d4766443270c2fb5.txt"
S005 = "005_onnx-GatherND.txt"
S006 = "006_openvino-GatherND.txt"
ONNX_DEFS_GATHER_1 = "onnx.defs.get_schema('Gather', 1) (the ONNX schema text of Gather-1)"

# What a person calls each document: the files are named by hash.
TITLES = {
    S000: "ONNX GatherElements",
    S001: "OpenVINO GatherElements-6",
    S002: "ONNX GatherElements (reference page)",
    S003: "OpenVINO GatherElements-6 (later rendering)",
    S004: "ONNX Gather",
    S005: "ONNX GatherND",
    S006: "OpenVINO GatherND-5, GatherND-8",
    ONNX_DEFS_GATHER_1: "ONNX Gather-1 schema (onnx.defs)",
}


def titled(text: str) -> str:
    """``text`` with every document file name replaced by its title, for a
    person ("000_2a6c56bbed5bfbf5.txt: ..." reads "ONNX GatherElements: ...")."""
    for document, title in TITLES.items():
        text = text.replace(document, title)
    return text


@dataclass(frozen=True)
class Clause:
    """A quote from a document; " ... " separates fragments quoted in order.

    Quotes are verbatim up to markup (backticks, asterisks) and white space:
    tests/test_decisions.py finds every fragment in its document.
    """

    document: str
    quote: str


@dataclass(frozen=True)
class Decision:
    id: str
    title: str
    kind: str
    ops: tuple[str, ...]
    clauses: tuple[Clause, ...]
    oracle: str  # what the oracle does
    why: str
    disputed: bool = False


_ALL = tuple(OPERATORS)  # a decision of every operator
_GE = (GATHER_ELEMENTS.name,)
_G = (GATHER.name,)
_ND = (GATHER_ND.name,)
# The operators with an axis attribute and a Tind (GatherND has batch_dims and int64 indices).
_AXIS = (GATHER.name, GATHER_ELEMENTS.name)

_SHARED: tuple[Decision, ...] = (
    Decision(
        id="index-out-of-range",
        title="Index values outside [-s, s-1] are an error",
        kind="rule",
        ops=_ALL,
        clauses=(
            Clause(
                S000,
                "All index values are expected to be within bounds [-s, s-1] along axis "
                "of size s. It is an error if any of the index values are out of bounds.",
            ),
            Clause(
                S004,
                "All index values are expected to be within bounds [-s, s-1] along axis "
                "of size s. It is an error if any of the index values are out of bounds.",
            ),
        ),
        oracle="Raises SpecViolation for any index < -s or > s-1, whatever its magnitude "
        "(values far beyond the int32 range included). Never wraps or clips.",
        why="The clause is explicit. Wrapping (as onnx.reference's np.choose(mode='wrap') does) "
        "would hide exactly the bugs a conformance suite exists to find.",
    ),
    Decision(
        id="zero-size-axis",
        title="On an axis of size 0 every index value is out of bounds",
        kind="silent",
        ops=_ALL,
        clauses=(Clause(S000, "within bounds [-s, s-1] along axis of size s"),),
        oracle="With s = 0 the range [-0, -1] is empty: any index value at all raises "
        "index-out-of-range; an empty indices tensor is valid and gives an empty output.",
        why="Follows from the bound with s = 0; the documents never mention zero-size axes.",
    ),
    Decision(
        id="empty-tensors",
        title="Empty indices and zero-size data dimensions are valid",
        kind="silent",
        ops=_ALL,
        clauses=(
            Clause(S000, "Its output shape is the same as the shape of indices"),
            Clause(S004, "concatenates them in an output tensor of rank q + (r - 1)"),
        ),
        oracle="Zero-size dimensions are allowed anywhere; the output has the shape the shape "
        "rule gives, possibly with zero elements. Nothing is read, so nothing is out of "
        "bounds.",
        why="The shape rules are well defined for zero-size dimensions and no clause forbids them.",
    ),
    Decision(
        id="axis-out-of-range",
        title="axis must be in [-r, r-1]",
        kind="rule",
        ops=_AXIS,
        clauses=(
            Clause(
                S000,
                "Negative value means counting dimensions from the back. Accepted range "
                "is [-r, r-1] where r = rank(data).",
            ),
            Clause(S004, "Accepted range is [-r, r-1] where r = rank(data)."),
        ),
        oracle="Normalises a negative axis by adding r; raises SpecViolation outside [-r, r-1].",
        why="The clause is explicit.",
    ),
    Decision(
        id="data-rank-zero",
        title="data must have rank >= 1",
        kind="rule",
        ops=_ALL,
        clauses=(
            Clause(S000, "data (T): Tensor of rank r >= 1."),
            Clause(S004, "data (T): Tensor of rank r >= 1."),
        ),
        oracle="Raises SpecViolation for rank-0 (scalar) data.",
        why="The clause is explicit; with r = 0 there is no axis to gather on.",
    ),
    Decision(
        id="rank-mismatch",
        title="GatherElements: indices must have the rank of data",
        kind="rule",
        ops=_GE,
        clauses=(
            Clause(S000, "Tensor of int32/int64 indices, with the same rank r as the input."),
            Clause(S001, "indices tensor of type T_IND with the same rank as the input."),
        ),
        oracle="Raises SpecViolation when rank(indices) != rank(data) (rank-0 indices included).",
        why="Both documents state it.",
    ),
    Decision(
        id="gather-scalar-indices",
        title="Gather: rank-0 indices remove the axis",
        kind="rule",
        ops=_G,
        clauses=(
            Clause(
                S004, "(P, Q) | ( )  (a scalar)   | 0 | (Q)       | output[q] = data[indices, q]"
            ),
        ),
        oracle="Accepts indices of rank 0; the output has rank r - 1.",
        why="The shape table of 004 shows it; q + (r - 1) with q = 0.",
    ),
    Decision(
        id="indices-dtype",
        title="indices must be int32 or int64 (Tind)",
        kind="rule",
        ops=_AXIS,
        clauses=(
            Clause(S000, "Tind: tensor(int32), tensor(int64)"),
            Clause(S004, "Tind: tensor(int32), tensor(int64)"),
        ),
        oracle="Raises SpecViolation for any other indices dtype (int8, int16, any unsigned "
        "type, floats...). The allowed list is read from onnx.defs, not copied.",
        why="The type constraint is explicit; a runtime that accepts uint64 indices is "
        "accepting an invalid model.",
    ),
    Decision(
        id="data-dtype",
        title="data must be of a type in T for that opset (bfloat16 only from opset 13)",
        kind="rule",
        ops=_ALL,
        clauses=(
            Clause(
                S000,
                "Opset 13: Types: tensor(bfloat16), ... Opset 11: Types: tensor(bool), "
                "tensor(complex128)",
            ),
            Clause(
                S004,
                "Opset 11: Types: tensor(bool), ... Opset 1: Types: tensor(bool), "
                "tensor(complex128)",
            ),
        ),
        oracle="Raises SpecViolation for a data dtype outside T of that (op, opset), read from "
        "onnx.defs: bfloat16 is rejected for Gather-1, Gather-11 and GatherElements-11.",
        why="The version history is explicit. Runtimes often accept bfloat16 at any opset; "
        "that is accepting an invalid model, reported as such.",
    ),
    Decision(
        id="ge-indices-larger-off-axis",
        title="GatherElements: indices larger than data on a non-axis dimension",
        kind="disagreement",
        ops=_GE,
        clauses=(
            Clause(S000, "out[i][j][k] = input[index[i][j][k]][j][k] if axis = 0"),
            Clause(S001, "indices tensor has the same shape as data except for axis dimension."),
        ),
        oracle="Raises SpecViolation.",
        why="ONNX only requires equal rank, but its formula would read data at a non-axis "
        "position beyond data's shape, which is undefined; OpenVINO forbids it outright. "
        "Both documents lead to an error.",
    ),
    Decision(
        id="ge-indices-smaller-off-axis",
        title="GatherElements: indices smaller than data on a non-axis dimension",
        kind="disagreement",
        ops=_GE,
        clauses=(
            Clause(
                S000,
                "GatherElements takes two inputs data and indices of the same rank r >= 1"
                " ... out[i][j][k] = input[index[i][j][k]][j][k] if axis = 0",
            ),
            Clause(S001, "indices tensor has the same shape as data except for axis dimension."),
        ),
        oracle="Computes the ONNX formula (well defined: every position it reads is inside "
        "data) and marks the case as disputed.",
        why="ONNX's text and its own shape inference accept it; OpenVINO's spec forbids it. A "
        "runtime that refuses it follows OpenVINO, so a refusal is a disputed outcome, not "
        "a plain failure.",
        disputed=True,
    ),
    Decision(
        id="ge-indices-any-size-on-axis",
        title="GatherElements: indices may be of any size on the axis",
        kind="silent",
        ops=_GE,
        clauses=(
            Clause(S001, "Example 2 with axis = 1 and indices having greater (than data) shape"),
            Clause(
                S003,
                '<data axis="1" /> ... <dim>3</dim> <dim>7</dim> <dim>5</dim> ... '
                "<dim>3</dim> <dim>10</dim> <dim>5</dim>",
            ),
        ),
        oracle="Accepts any size of indices on the axis, zero included.",
        why="ONNX is silent; OpenVINO's examples show larger and smaller; the formula only "
        "reads data through the index value on that axis.",
    ),
    Decision(
        id="ge-negative-indices",
        title="GatherElements: negative indices (ONNX [-s, s-1] vs OpenVINO [0, s-1])",
        kind="disagreement",
        ops=_GE,
        clauses=(
            Clause(
                S000,
                "All index values are expected to be within bounds [-s, s-1] along axis of size s.",
            ),
            Clause(
                S001,
                "All index values are expected to be within bounds [0, s-1], where s is "
                "size along axis dimension of data tensor.",
            ),
        ),
        oracle="Follows ONNX: an index i < 0 reads position i + s. Cases with a negative index "
        "are marked disputed.",
        why="The project tests ONNX models, so ONNX semantics apply; but OpenVINO's own op "
        "spec rejects negative indices, so its importer must translate them, and any "
        "discrepancy there is shown against this entry.",
        disputed=True,
    ),
    Decision(
        id="gather1-negative-indices",
        title="Gather-1: negative indices are not described",
        kind="silent",
        ops=_G,
        clauses=(
            Clause(
                ONNX_DEFS_GATHER_1,
                "All index values are expected to be within bounds. It is "
                "an error if any of the index values are out of bounds.",
            ),
            Clause(
                S004,
                "All index values are expected to be within bounds [-s, s-1] along axis of size s.",
            ),
        ),
        oracle="Accepts [-s, s-1] at opset 1 as at opsets 11 and 13 (an index i < 0 reads "
        "i + s) and marks cases with a negative index at opset 1 as disputed.",
        why="Gather-1 says only 'within bounds'; [-s, s-1] is what 004 documents for the "
        "operator and what opset 11 made explicit. A runtime that rejects negative indices "
        "at opset 1 has a defensible reading, hence disputed.",
        disputed=True,
    ),
    Decision(
        id="axis-absent",
        title="axis may be absent (default 0); OpenVINO renderings disagree on 'required'",
        kind="disagreement",
        ops=_AXIS,
        clauses=(
            Clause(S000, "axis (INT, optional)"),
            Clause(S001, "Default value: 0 ... Required: no"),
            Clause(S003, "Required : yes"),
        ),
        oracle="An absent axis attribute means axis = 0 (never 'flatten', unlike "
        "np.take(axis=None)). The model builder omits the attribute when a case omits "
        "it, so both forms are tested.",
        why="ONNX is explicit and the project tests ONNX models; OpenVINO's importer must "
        "supply the default whatever its own op requires.",
    ),
    Decision(
        id="example-extra-brackets",
        title="Some renderings print example outputs with an extra pair of brackets",
        kind="erratum",
        ops=_GE,
        clauses=(
            Clause(S001, "output = [ [ [1, 4], [1, 2], ], ]"),
            Clause(S002, "output = [ [ [1, 1], [4, 3], ], ]"),
            Clause(S000, "output (T): Tensor of the same shape as indices."),
        ),
        oracle="The output has the shape of indices. Case files hold the outputs with the "
        "extra brackets removed, and say so in their description.",
        why="Rank r + 1 outputs contradict the outputs clause of every document; 003 and the "
        "GatherElements-13 page print the same values without the brackets.",
    ),
    Decision(
        id="bitwise-exact",
        title="Gathered elements are copied bit for bit",
        kind="silent",
        ops=_ALL,
        clauses=(
            Clause(
                S000, "consists of one value (gathered from the data) for each element in indices"
            ),
        ),
        oracle="The output holds data's elements unchanged: NaN payloads, -0.0, subnormals, "
        "strings. Results are compared bytewise.",
        why="Gather and GatherElements compute nothing; any change to a value is a bug.",
    ),
)

_GATHER_ND: tuple[Decision, ...] = (
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

# The clauses GatherND's documents add to the entries of every operator
# (GatherND's oracle raises and cites them by these ids).
# Observed on 2026-12-02 for index-out-of-range and zero-size-axis: ONNX Runtime
# 1.31 and onnx.reference refuse an index 2 into a dimension of 2 and an index
# 0 into a dimension of 0; OpenVINO 2026.4 returns values that are not data's.
_JOINS: dict[str, tuple[Clause, ...]] = {
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
# Every decision: the shared entries with GatherND's clauses joined, then GatherND's own.
DECISIONS: tuple[Decision, ...] = (
    *(replace(d, clauses=d.clauses + _JOINS.get(d.id, ())) for d in _SHARED),
    *_GATHER_ND,
)
BY_ID: dict[str, Decision] = {d.id: d for d in DECISIONS}
IDS: tuple[str, ...] = tuple(BY_ID)
DISPUTED_IDS: frozenset[str] = frozenset(d.id for d in DECISIONS if d.disputed)

# Each operator's core sentence: the clause a valid case rests on (a fuzz
# finding's regression case cites it). Quoted as the decisions' clauses are
# (tests/test_decisions.py finds each in its document).
CORE: dict[str, Clause] = {
    GATHER.name: Clause(S004, "gather entries of the axis dimension of data"),
    GATHER_ELEMENTS.name: Clause(
        S000, "consists of one value (gathered from the data) for each element in indices"
    ),
    GATHER_ND.name: Clause(S005, "this operator gathers slices of `data` into an output tensor"),
}


def get(decision_id: str) -> Decision:
    try:
        return BY_ID[decision_id]
    except KeyError:
        raise KeyError(f"unknown decision id {decision_id!r}; known: {', '.join(IDS)}") from None
