"""The report's coverage heat map: what fuzz campaigns reached
(findings.json ``coverage``, :mod:`conformance.fuzz.coverage`'s format)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass


@dataclass
class HeatCell:
    """One cell of the coverage heat map."""

    key: tuple[str, ...]  # its key in the findings.json table
    count: int
    meaningful: bool  # False: the spec makes it meaningless (shown hatched)
    level: int  # 0 (never reached) to HEAT_LEVELS, on a log scale of its table's counts

    @property
    def cold(self) -> bool:
        """Meaningful, and never reached."""
        return self.meaningful and not self.count


@dataclass
class OpCoverage:
    """An operator's part of the heat map: dtype rows by variant columns,
    then a row per other table (features, axis lengths, index classes)."""

    op: str
    variants: list[str]
    dtype_rows: list[tuple[str, list[HeatCell]]]
    rows: list[tuple[str, list[tuple[str, HeatCell]]]]  # (label, [(value, cell)])


@dataclass
class CoverageView:
    """What fuzz campaigns reached (findings.json ``coverage``, summed over runs)."""

    examples: int
    reached: int
    meaningful: int
    max_elements: list[int]  # the caps of the campaigns
    ops: list[OpCoverage]
    cold: list[str]  # the meaningful cells never reached, as text


HEAT_LEVELS = 5  # shades of a reached cell
# The heat map's rows beside the dtype grid: table -> (label, key part).
_COVERAGE_ROWS = {
    "features": ("features", "feature"),
    "axis_lengths": ("axis length", "axis_length"),
    "index_classes": ("index class", "index_class"),
}


def _level(count: int, most: int) -> int:
    """A count's shade: 0 for none, else 1 to HEAT_LEVELS on a log scale up
    to ``most`` (a cell reached once is pale, the most reached the darkest)."""
    if count <= 0:
        return 0
    if most <= 1:
        return HEAT_LEVELS
    return max(
        1, min(HEAT_LEVELS, math.ceil(HEAT_LEVELS * math.log(count + 1) / math.log(most + 1)))
    )


def coverage_view(coverages: list[dict | None]) -> CoverageView | None:
    """The heat map of the campaigns' coverage (findings.json ``coverage``,
    :mod:`conformance.fuzz.coverage`'s format): counts summed over runs, a cell
    meaningful when any run says so. None when no run has coverage."""
    held = [c for c in coverages if isinstance(c, dict) and isinstance(c.get("tables"), dict)]
    if not held:
        return None
    counts: dict[str, Counter] = defaultdict(Counter)
    meaningful: dict[str, dict] = defaultdict(dict)  # table -> its meaningful keys, in order
    values: dict[str, dict[str, list]] = defaultdict(dict)
    for content in held:
        for table, part in content["tables"].items():
            for key, known in (part.get("values") or {}).items():
                seen = values[table].setdefault(key, [])
                seen += [str(v) for v in known if str(v) not in seen]
            for cell in part.get("cells") or []:
                key = tuple(map(str, cell.get("key") or ()))
                counts[table][key] += int(cell.get("count") or 0)
                if cell.get("meaningful"):
                    meaningful[table][key] = True

    def cells(table: str, keys: list[tuple]) -> list[HeatCell]:
        most = max(counts[table].values(), default=0)
        return [
            HeatCell(
                key, counts[table][key], key in meaningful[table], _level(counts[table][key], most)
            )
            for key in keys
        ]

    ops = []
    grid = values.get("dtypes", {})
    all_ops = list(
        dict.fromkeys(
            [*grid.get("op", []), *(v for table in values.values() for v in table.get("op", []))]
        )
    )
    for op in all_ops:
        variants = list(grid.get("variant", []))
        dtype_rows = [
            (dtype, cells("dtypes", [(op, variant, dtype) for variant in variants]))
            for dtype in grid.get("dtype", [])
        ]
        rows = []
        for table, (label, part) in _COVERAGE_ROWS.items():
            names = values.get(table, {}).get(part, [])
            if names:
                rows.append(
                    (label, list(zip(names, cells(table, [(op, n) for n in names]), strict=True)))
                )
        ops.append(OpCoverage(op, variants, dtype_rows, rows))
    cold = [
        " ".join(key)
        for table, keys in meaningful.items()
        for key in keys
        if not counts[table][key]
    ]
    return CoverageView(
        examples=sum(int(c.get("examples") or 0) for c in held),
        reached=sum(1 for table, keys in meaningful.items() for key in keys if counts[table][key]),
        meaningful=sum(len(keys) for keys in meaningful.values()),
        max_elements=sorted({c["max_elements"] for c in held if "max_elements" in c}),
        ops=ops,
        cold=cold,
    )
