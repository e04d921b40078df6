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

from dataclasses import dataclass

from conformance.tables.operators import GATHER, GATHER_ELEMENTS, OPERATORS

S000 = "000_2a6c56bbed5bfbf5.txt"
S001 = "001_65505e48bce3c01b.txt"
S002 = "002_c0ec54416ec5e6eb.txt"
S003 = "003_e9807c24fc4f5749.txt"
S004 = "004_d4766443270c2fb5.txt"
ONNX_DEFS_GATHER_1 = "onnx.defs.get_schema('Gather', 1) (the ONNX schema text of Gather-1)"

# What a person calls each document: the files are named by hash.
TITLES = {
    S000: "ONNX GatherElements",
    S001: "OpenVINO GatherElements-6",
    S002: "ONNX GatherElements (reference page)",
    S003: "OpenVINO GatherElements-6 (later rendering)",
    S004: "ONNX Gather",
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

DECISIONS: tuple[Decision, ...] = (
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
        ops=_ALL,
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
        ops=_ALL,
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
        ops=_ALL,
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
}


def get(decision_id: str) -> Decision:
    try:
        return BY_ID[decision_id]
    except KeyError:
        raise KeyError(f"unknown decision id {decision_id!r}; known: {', '.join(IDS)}") from None
