"""The oracle's one exception: the input breaks a clause of the spec."""

from __future__ import annotations

from conformance.tables import decisions


class SpecViolation(ValueError):
    """The spec forbids this input.

    ``clause`` is an id of :mod:`conformance.tables.decisions` (for example
    ``index-out-of-range``); ``detail`` says what exactly broke it.
    """

    def __init__(self, clause: str, detail: str) -> None:
        decisions.get(clause)  # an unknown id is a bug in the oracle, fail loudly
        super().__init__(f"[{clause}] {detail}")
        self.clause = clause
        self.detail = detail

    def __reduce__(self):  # picklable across worker processes
        return (type(self), (self.clause, self.detail))
