"""The report's families: a group's discrepancies by the mechanism that
explains them (a baseline entry's reason, an explanation that fits, or
nothing yet: the new ones)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from conformance.messages import cause, first_line
from conformance.report.views.group import Group
from conformance.report.views.tensors import Tensor, elements
from conformance.tables import explanations

MESSAGE_WIDTH = 160  # characters of a group's example message or an entry's reason


@dataclass
class Family:
    """Discrepancies one mechanism explains, on one runtime and kind: the
    results a baseline entry covers (its reason is the mechanism), or the new
    results (nothing explains them yet; the mechanism is the first message)."""

    id: str  # "f1", "f2"...: the report's filter value, in the order shown
    runtime: str
    kind: str
    op: str  # the ops, comma-separated
    mechanism: str  # one line
    where: str | None  # the baseline entry (file:line) of a known family
    count: int = 0  # results
    groups: int = 0
    # its smallest input: the record with the fewest elements among its own results
    # whose input the run kept (groups.json: each group's smallest), else among all
    example: dict | None = None
    data: Tensor | None = None  # the example's input, when the run kept it
    indices: Tensor | None = None

    @property
    def new(self) -> bool:
        return self.where is None


def families(groups: list[Group], baseline: str | None, known_by: dict) -> list[Family]:
    """The groups' results by mechanism: per runtime and kind, one family per
    covering baseline entry and one of the new results (across ops). Without
    a gate verdict (``baseline`` None: no folder held them), one family per
    runtime, kind and op. ``known_by``: a record's id -> the baseline entry covering it."""
    found: dict[tuple, tuple[Family, list[Group]]] = {}
    ranks: dict[tuple, tuple] = {}  # family key -> the rank of its example

    def rank(group: Group, record: dict) -> tuple:
        """Inputs the run kept first, then the fewest elements."""
        return (record is not group.example or group.data is None, elements(record))

    def add(group: Group, where: str | None, mechanism: str, count: int, mine: list) -> None:
        """``count`` results of ``group`` in the family, ``mine`` those known to be:
        split by the explanation that fits each result (a group's results may
        each fit another: int64 data keeps its low 32 bits here, saturates there)."""
        by_fit: dict[str | None, list] = defaultdict(list)
        for record in mine:
            by_fit[_fit(record)].append(record)
        if len(by_fit) > 1:
            for fit, part in sorted(by_fit.items(), key=lambda item: str(item[0])):
                _add(group, where, mechanism, len(part), part, fit)
            return
        _add(group, where, mechanism, count, mine, next(iter(by_fit), None))

    def _add(group, where, mechanism, count, mine, fit) -> None:
        key = (group.runtime, group.kind, where, None if baseline else group.op, fit)
        if fit is not None:
            explanation = explanations.BY_NAME[fit]
            mechanism = f"{mechanism} ({fit}: {explanation.description})"
        if key not in found:
            found[key] = (Family("", group.runtime, group.kind, "", mechanism, where), [])
        family, members = found[key]
        family.count += count
        family.groups += 1
        if group.op not in family.op.split(", "):
            family.op = ", ".join(sorted(filter(None, [*family.op.split(", "), group.op])))
        smallest = min(mine or group.records, key=lambda record: rank(group, record))
        if key not in ranks or rank(group, smallest) < ranks[key]:
            ranks[key] = rank(group, smallest)
            kept = smallest is group.example
            family.example = smallest
            family.data, family.indices = (group.data, group.indices) if kept else (None, None)
        members.append(group)

    for group in groups:
        message = cause(group.example.get("message"), MESSAGE_WIDTH)  # what failed, and why
        if not baseline:
            add(group, None, message, group.count, group.records)
            continue
        # each result with the entry covering it (:func:`_mark`): a group several
        # entries cover is in each of their families, with the results each covers
        by_entry: dict[str | None, list[dict]] = defaultdict(list)
        for record in group.records:
            cover = known_by.get(id(record))
            by_entry[cover["where"] if cover else None].append(record)
        new = by_entry.pop(None, [])
        if group.new:
            add(group, None, message, group.new, new)
        known = group.count - group.new
        if known and sum(map(len, by_entry.values())) != known:
            # gate.json marks that do not say which result is whose (merged runs)
            first = next(iter(group.known))
            reason = first_line(group.known[first].get("reason"), MESSAGE_WIDTH)
            add(group, first, reason, known, [])
        elif known:
            for where, mine in sorted(by_entry.items(), key=lambda item: (-len(item[1]), item[0])):
                reason = first_line(group.known[where].get("reason"), MESSAGE_WIDTH)
                add(group, where, reason, len(mine), mine)
    # New first, then by runtime and size: what a reader must act on leads.
    ordered = sorted(found.values(), key=lambda f: (not f[0].new, f[0].runtime, -f[0].count))
    for number, (family, members) in enumerate(ordered, start=1):
        family.id = f"f{number}"
        for group in members:
            group.families.append(family.id)
    return [family for family, _ in ordered]


def _fit(record: dict) -> str | None:
    """The first explanation (in the table's order) that fits a result, if any."""
    fitting = [n for n in record.get("explained_by") or () if n in explanations.BY_NAME]
    if not fitting:
        return None
    return min(fitting, key=lambda n: explanations.EXPLANATIONS.index(explanations.BY_NAME[n]))
