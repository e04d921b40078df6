"""The order of the outcome kinds in the report, worst first: a matrix cell's
colour is its worst outcome, groups and bugs are listed in it."""

from __future__ import annotations

from conformance.tables import outcomes

# Worst first: the colour of a matrix cell is its worst outcome.
SEVERITY: tuple[str, ...] = tuple(
    k.name for k in sorted(outcomes.OUTCOME_KINDS, key=lambda k: k.severity)
)


def by_severity(item) -> int:
    """The sort key of a (kind, count) pair: worst first."""
    return SEVERITY.index(item[0])


def severity(kind: str) -> int:
    """A kind's place in :data:`SEVERITY`; a kind it does not know goes last."""
    return SEVERITY.index(kind) if kind in SEVERITY else len(SEVERITY)
