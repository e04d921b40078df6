"""The end of ``conformance run`` and ``fuzz`` (``conformance.cli.finish``):
what else makes the exit code (:func:`run_troubles`), harness errors, an
interruption, a CPU note, the paths written."""

from __future__ import annotations

from pathlib import Path

from conformance.report.terminal.escape import safe
from conformance.report.terminal.fuzz import unjudged_troubles


def run_troubles(summary) -> list[str]:
    """What makes a run (or campaign) exit non-zero whatever its verdict says:
    Ctrl-C (130), harness errors and case files the oracle contradicts (2),
    as :func:`conformance.cli.finish.exit_status` decides, and a campaign's
    targets that judged nothing (2, :func:`unjudged_troubles`)."""
    if summary.interrupted:
        return ["interrupted (exit 130)"]
    found = []
    if summary.harness_errors:
        found.append(f"{summary.harness_errors} harness error(s) (exit 2)")
    if summary.case_problems:
        found.append(f"{len(summary.case_problems)} case problem(s) (exit 2)")
    found += unjudged_troubles(summary.unjudged)
    return found


def path_line(label: str, path: Path, width: int) -> str:
    """``label`` padded to ``width``, then the path: ``report:  reports/run-1/report.html``."""
    return safe(f"{label:<{width}} {path}")


def cpu_note(budget: dict | None) -> str | None:
    """A note when the workers' threads outnumber the cores (header.json
    ``cpu_budget``), else None."""
    if not budget or not budget.get("oversubscribed"):
        return None
    return (
        f"note: up to {budget['threads_at_most']} compute threads on {budget['cores']} "
        "cores (targets in their default profile use every core): results are exact all "
        "the same, but a starved worker may time out (fewer workers, -j, or targets per run "
        "give each more)"
    )


def interrupted_line(kept: str) -> str:
    return f"interrupted: {kept} are kept"


def harness_error_lines(summary) -> list[str]:
    """Why a run with harness errors exits 2, and the first of them."""
    lines = [
        f"{summary.harness_errors} harness error(s) (bugs of the harness, not verdicts "
        "on the runtime; 'harness_error' records in results.jsonl):"
    ]
    for example in summary.harness_error_examples:
        lines.append(
            f"  {example['runtime']}: {example['case_id']} [{example['variant']}]: "
            f"{example['error']}"
        )
    return [safe(line) for line in lines]
