"""What ``conformance export`` prints: the tests written and the cases not
exported, each runner's expected failures, where the manifest is; and what
an interrupted export says."""

from __future__ import annotations

from pathlib import Path

from conformance.messages import relative
from conformance.report.terminal.escape import plural, safe


def export_lines(summary, seconds: float) -> list[str]:
    """What ``conformance export`` says when it has written OUT_DIR."""
    refused = [r for r in summary.refused if r.clause]
    unjudged = len(summary.refused) - len(refused)
    lines = [
        f"exported {plural(summary.tests, 'test')} of {plural(summary.cases, 'case')} "
        f"({summary.bytes / 1e6:.1f} MB, {seconds:.1f} s): {relative(summary.out / 'node')}",
        f"not exported: {plural(len(refused), 'case')} whose verdict is an error "
        "(listed in manifest.json with their clause)"
        + (f", {unjudged} over the memory guard" if unjudged else ""),
    ]
    for runtime, counts in summary.known.items():
        lines.append(
            f"expected failures of {safe(runtime)}: {counts['fails']} failing, "
            f"{counts['may_fail']} that may fail, in "
            + ", ".join(safe(name.rsplit("/", 1)[-1]) for name in summary.failure_files[runtime])
        )
    lines.append(f"manifest: {relative(summary.out / 'manifest.json')}")
    return lines


def export_interrupted_line(out: Path) -> str:
    return f"interrupted: nothing was written to {relative(out)}"
