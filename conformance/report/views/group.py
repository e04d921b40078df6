"""One discrepancy group as the report shows it (:class:`Group`): the page
(:mod:`~conformance.report.views.report`) holds them, the families
(:mod:`~conformance.report.views.families`) gather them."""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.engine.groups import GroupKey
from conformance.report.views.tensors import ReproducerView, Tensor


@dataclass
class Group:
    """Discrepancies of one group (:func:`conformance.engine.groups.group_key`):
    (runtime, kind, op, case-file id or generated input's signature)."""

    runtime: str
    kind: str
    op: str
    name: str  # the case-file id, or "generated: <signature>"
    count: int
    example: dict  # the record of the smallest case in the group
    dtypes: set[str] = field(default_factory=set)
    variants: set[str] = field(default_factory=set)
    data: Tensor | None = None
    indices: Tensor | None = None
    differing: list[dict] = field(default_factory=list)  # position, expected, actual
    records: list[dict] = field(default_factory=list, repr=False)
    new: int = 0  # results no baseline entry covers
    known: dict = field(default_factory=dict)  # "file:line" -> the baseline entry covering some
    reproducer: ReproducerView | None = None  # a value mismatch cut down (engine.reproduce)
    fuzz_class: dict | None = None  # the fuzz class of a generated group, with its links
    families: list[str] = field(default_factory=list)  # ids of the families it belongs to
    anchor: str = ""  # its id in the page ("group-3")

    @property
    def key(self) -> GroupKey:
        return GroupKey(self.runtime, self.kind, self.op, self.name)

    @property
    def baseline(self) -> str:
        """'new' when any result is outside the baseline, else 'known'."""
        return "new" if self.new else "known"
