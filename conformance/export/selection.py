"""What an export holds: the (case, variant) tests whose verdict is an
output, and the cases whose verdict is an error (the layout has no "must
fail", so they are listed, not written)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conformance.cases.case import Case
from conformance.cases.check import OverMemory, problems, verdict_of
from conformance.errors import ConformanceError
from conformance.export import exactness, names
from conformance.oracle import Defined
from conformance.tables.operators import OPERATORS

# Why a case of an operator that writes is not exported (issue 47): its test
# folder would hold a third input the export's layout does not write yet,
# and one output where the spec admits a set (duplicates, a reduction's order).
WRITES = (
    "an operator that writes (a third input, updates; its output a set where the spec "
    "leaves it open): not exported by this version, judged by conformance run"
)


class ExportError(ConformanceError, ValueError):
    """An export that cannot be written as asked: ``error: FILE: REASON``."""

    def __init__(self, message: str) -> None:
        super().__init__(f"error: {message}")


@dataclass(frozen=True)
class Test:
    """One exported test folder."""

    name: str
    case: Case
    variant: str
    verdict: Defined  # a test is exported for a valid input only

    @property
    def output(self) -> np.ndarray:
        return self.verdict.output

    @property
    def blind(self) -> tuple[str, ...]:
        return exactness.blind_spots(self.output)


@dataclass(frozen=True)
class NotExported:
    """A case the oracle refuses (an error verdict), or one it was not asked
    about (over the memory guard): listed in the manifest, never written."""

    case: Case
    clause: str | None  # the decision id it breaks; None: not judged
    reason: str


def select(
    cases: list[Case], variants: tuple[str, ...], memory: int
) -> tuple[list[Test], list[NotExported]]:
    """The tests of ``cases`` in ``variants`` (in the cases' order, then the
    variants'), and the cases not exported. Two tests that would share a
    folder name are an ExportError (names.py makes it impossible for ids of
    the corpus form; two case files can still give one id)."""
    tests, refused, wrong = [], [], []
    seen: dict[str, Test] = {}
    for case in cases:
        if OPERATORS[case.op].writes:
            refused.append(NotExported(case, None, WRITES))
            continue
        try:
            verdict = verdict_of(case, memory)
        except OverMemory as over:
            refused.append(NotExported(case, None, str(over)))
            continue
        # a case file that disagrees with the oracle: the file or the oracle is
        # wrong, and no test data may be built on either (exit 2, as run does)
        wrong += [f"{case.source}: {case.id}: {problem}" for problem in problems(case, verdict)]
        if not verdict.valid:
            clause = verdict.violation.clause
            refused.append(NotExported(case, clause, f"the spec's verdict is an error ({clause})"))
            continue
        for variant in variants:
            test = Test(names.test_name(case.id, variant), case, variant, verdict)
            other = seen.setdefault(test.name, test)
            if other is not test:
                raise ExportError(
                    f"{case.source}: {case.id} [{variant}]: its test name {test.name} is "
                    f"taken by {other.case.id} [{other.variant}] ({other.case.source}); "
                    "give the cases distinct ids"
                )
            tests.append(test)
    if wrong:
        raise ExportError(
            "\n".join(wrong) + f"\n{len(wrong)} problem(s) of case files against the oracle "
            "(conformance cases validate): nothing was exported"
        )
    clash = names.prefix_clash(seen)
    if clash:
        first, second = seen[clash[0]], seen[clash[1]]
        raise ExportError(
            f"{second.case.source}: {second.case.id} [{second.variant}]: its test name "
            f"{second.name} starts with the name of {first.case.id} [{first.variant}] "
            f"({first.case.source}), which runners matching ^{first.name} would confuse; "
            "give the cases distinct ids"
        )
    return tests, refused
