"""Check that a case's written expectation is what the oracle says.

Literal expectations come from the spec documents; this is where the oracle
is held to them (and where a wrongly transcribed case is caught).
"""

from __future__ import annotations

from conformance import oracle
from conformance.cases.model import Case
from conformance.oracle import compare
from conformance.tables import decisions


def verdict_of(case: Case) -> oracle.Verdict:
    return oracle.verdict(case.op, case.opset, case.data, case.indices, case.axis)


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
            diff = compare.difference(verdict.output, expectation.output)
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
