"""What ``conformance export`` prints: the tests written and the cases not
exported, each runner's expected failures, where the manifest is; what
an interrupted export says; and what ``--check`` found."""

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


def check_lines(summary, out: Path) -> list[str]:
    """What ``conformance export OUT_DIR --check RESULTS`` says: each stale and
    missing line, then the counts."""
    lines = [
        f"{finding.kind}: {safe(finding.test)} ({safe(finding.where)}): {safe(finding.said)}"
        for finding in summary.findings
    ]
    for where, checked in summary.checked.items():
        absent = summary.absent.get(where, {})
        not_held = ", ".join(f"{count} {why}" for why, count in sorted(absent.items()))
        lines.append(
            f"{relative(out / where)}: {plural(checked, 'result')} checked"
            + (f"; not in the results: {not_held}" if not_held else "")
        )
    if summary.foreign:
        lines.append(f"not the export's: {plural(summary.foreign, 'result')} (not looked at)")
    stale = sum(f.kind == "stale" for f in summary.findings)
    missing = len(summary.findings) - stale
    lines.append(f"{plural(stale, 'stale line')}, {plural(missing, 'missing line')}")
    return lines
