"""Check that a case's written expectation is what the oracle says.

Literal expectations come from the spec documents; this is where the oracle
is held to them (and where a wrongly transcribed case is caught).
"""

from __future__ import annotations

import math

from conformance import oracle
from conformance.cases.case import Case
from conformance.errors import ConformanceError
from conformance.tables import decisions

DEFAULT_CASE_MEMORY = 1 << 30  # bytes a case may declare (inputs + output)
STRING_ELEMENT_BYTES = 64  # a guess for an object-array string: pointer, header, text


class OverMemory(ConformanceError):
    """The case declares more memory than the limit: nothing was computed."""


def declared_bytes(case: Case) -> int:
    """What the case asks the oracle or a runtime to hold: its inputs and the
    output the shape rule gives. Computed from shapes alone, before anything
    is allocated: a Gather of modest inputs can declare a huge output."""
    updates_shape = None if case.updates is None else case.updates.shape
    shape = oracle.output_shape(
        case.op, case.data.shape, case.indices.shape, case.axis, updates_shape
    )
    elements = 0 if shape is None else math.prod(shape)
    itemsize = STRING_ELEMENT_BYTES if case.data.dtype == object else case.data.dtype.itemsize
    inputs = case.data.size * itemsize + case.indices.nbytes
    if case.updates is not None:  # data's type (T)
        inputs += case.updates.size * itemsize
    return inputs + elements * itemsize


def over_memory(case: Case, limit: int = DEFAULT_CASE_MEMORY) -> str | None:
    """Why the memory guard refuses the case, or None when it fits."""
    size = declared_bytes(case)
    if size <= limit:
        return None
    return (
        f"memory guard: the case declares {size:,} bytes of inputs and output, over the "
        f"limit of {limit:,} (--case-memory); no output was allocated and nothing was run"
    )


def verdict_of(case: Case, memory: int = DEFAULT_CASE_MEMORY) -> oracle.Verdict:
    """The oracle's verdict on the case; OverMemory, before anything is
    computed, for a case that declares more than ``memory`` bytes. Every
    front-end that asks the oracle goes through here, so none of them can be
    made to allocate an output of any declared size."""
    refused = over_memory(case, memory)
    if refused:
        raise OverMemory(refused)
    return oracle.verdict(
        case.op,
        case.opset,
        case.data,
        case.indices,
        case.axis,
        updates=case.updates,
        reduction=case.reduction,
    )


def literal(case: Case) -> bool:
    """Whether the case writes down what to expect (an output, an error clause
    or a shape) rather than leaving it all to the oracle, as generated cases do."""
    return case.expectation.kind != "oracle" or case.expectation.shape is not None


def problems(case: Case, verdict: oracle.Verdict | None = None) -> list[str]:
    """What is wrong with the case's expectation (empty when nothing is): where
    it disagrees with the oracle, and disputed decisions it does not list.

    ``verdict`` is the oracle's verdict on the case, if the caller has it already.
    """
    verdict = verdict or verdict_of(case)
    found = disagreements(case, verdict)
    unlisted = sorted(set(verdict.disputed) - set(case.decisions))
    if unlisted:
        found.append(
            "falls under disputed decision(s) "
            + ", ".join(f"{d} ({decisions.get(d).title})" for d in unlisted)
            + ": list them under 'decisions'"
        )
    return found


def disagreements(case: Case, verdict: oracle.Verdict | None = None) -> list[str]:
    """Where the case's written expectation (``expected``, ``expect_error``,
    ``expected_shape``) disagrees with the oracle; each message says which
    side is which."""
    verdict = verdict or verdict_of(case)
    found: list[str] = []
    expectation = case.expectation
    if expectation.kind == "error":
        if verdict.valid:
            found.append(
                f"expects error {expectation.clause} but the oracle gives an output of shape "
                f"{list(verdict.output.shape)}"
            )
        elif verdict.violation.clause != expectation.clause:
            found.append(
                f"expects error {expectation.clause} but the oracle says {verdict.violation}"
            )
    elif expectation.kind == "output":
        if not verdict.valid:
            found.append(f"expects an output but the oracle says {verdict.violation}")
        else:
            assert expectation.output is not None  # kind "output" holds one
            # one member of the set, where the spec admits several
            diff = verdict.difference(expectation.output)
            if diff is not None:
                found.append(
                    "expected output differs from the oracle's: "
                    + diff.told("the file says", "the oracle computes")
                )
    if (
        expectation.shape is not None
        and verdict.valid
        and verdict.output.shape != expectation.shape
    ):
        found.append(
            f"expected_shape {list(expectation.shape)} but the oracle's output has "
            f"shape {list(verdict.output.shape)}"
        )
    return found
