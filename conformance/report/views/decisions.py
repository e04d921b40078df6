"""The report's spec decisions: each decision with what each runtime did on
the inputs it governs."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from conformance.report.views.severity import by_severity
from conformance.tables import decisions


@dataclass
class DecisionRow:
    decision: decisions.Decision
    observed: dict[str, str]  # runtime -> what it did on inputs under this decision


def decision_rows(results: list[dict], runtimes: list[str]) -> list[DecisionRow]:
    """Each decision with what each runtime did on inputs it governs: inputs
    that break its clause (refused or not), and inputs under it when disputed."""
    seen: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for record in results:
        expected = record.get("expected") or {}
        ids = set(record.get("disputed") or ())
        if "violation" in expected:
            ids.add(expected["violation"])
        for decision_id in ids:
            seen[decision_id][record["runtime"]][record["kind"]] += 1
    rows = []
    for decision in decisions.DECISIONS:
        observed = {}
        for runtime in runtimes:
            counts = seen[decision.id][runtime]
            observed[runtime] = ", ".join(
                f"{n} {kind}" for kind, n in sorted(counts.items(), key=by_severity)
            )
        rows.append(DecisionRow(decision, observed))
    return rows
