"""What ``conformance run`` prints: its header, its progress outside a
terminal (CI logs), the table of outcomes and its discrepancy groups."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text

from conformance.engine.judge import CONFORMING, DISCREPANCIES, KINDS
from conformance.report.terminal.escape import safe
from conformance.report.terminal.finish import path_line


def summary_table(summary, runtimes: list[str]) -> Table:
    """Outcome kinds down, runtimes across: narrow enough for any terminal."""
    table = Table(title=f"{summary.cases} cases, {summary.records} results")
    table.add_column("outcome")
    for runtime in runtimes:  # Text: a name is shown as it is, never read as markup
        table.add_column(Text(safe(runtime)), justify="right")
    for kind in KINDS:
        counts = [summary.counts[rt][kind] for rt in runtimes]
        if not any(counts):
            continue
        style = "green" if kind in CONFORMING else ("red" if kind in DISCREPANCIES else "yellow")
        table.add_row(kind, *(str(n) for n in counts), style=style)
    return table


def discrepancy_groups(summary, results_path: Path, limit: int = 25) -> list[str]:
    """One line per (runtime, kind, op, case-file id): what to look at first."""
    groups = sorted(summary.groups.items())
    lines = [
        f"  {runtime:12} {kind:17} {op:15} {base_id} ({n})"
        for (runtime, kind, op, base_id), n in groups[:limit]
    ]
    if len(groups) > limit:
        lines.append(f"  ... {len(groups) - limit} more groups in {results_path}")
    return [safe(line) for line in lines]


def run_header(cases: int, variants: int, runtimes: list[str], out: Path) -> str:
    return safe(
        f"{cases} cases x {variants} variants x {len(runtimes)} runtimes "
        f"({', '.join(runtimes)}) -> {out}/"
    )


def run_result_lines(summary, results: Path) -> list[str]:
    """After a run's table: its discrepancy groups, and where its results are."""
    groups = discrepancy_groups(summary, results)
    lines = ["discrepancies (runtime, kind, op, case-file id, count):", *groups] if groups else []
    return [*lines, path_line("results:", results, 8) + f"  ({summary.duration_s:.1f} s)"]


def progress_line(done: int, total: int, discrepancies: int, elapsed_s: float) -> str:
    """A run's progress outside a terminal (CI logs): done / total, the
    discrepancies so far, and the time left at the pace so far."""
    share = f" ({100 * done / total:.0f}%)" if total else ""
    left = f"about {_duration(elapsed_s / done * (total - done))} left" if done else "starting"
    return safe(
        f"running: {done}/{total} results{share}, {discrepancies} discrepancies so far, "
        f"{_duration(elapsed_s)} elapsed, {left}"
    )


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
