"""The end of ``run`` and ``fuzz``, once the results are written: the folder
read back once, the gate (gate.json), the report (HTML, JUnit, report.json)
and the exit code. What it prints is made in :mod:`conformance.report.terminal`."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from conformance.cli import exits, options
from conformance.engine import records
from conformance.gate import verdict
from conformance.report import terminal

REPORT, JUNIT, REPORT_JSON = "report.html", "junit.xml", "report.json"


def finish(
    summary, written: records.RunFolder, baselines: dict | None, args, err: Console, *,
    decides: bool, kept: str, label_width: int,
) -> int:  # fmt: skip
    """Gate the run (when there are ``baselines``; its verdict ``decides`` the
    exit code or only says its last line), write its report, whatever the
    gate did, and return the exit code: :func:`exit_status` of what was
    ``found``, a discrepancy or with the gate a failing verdict. ``kept``
    says what an interrupted run keeps; ``label_width`` aligns the report's
    line with the lines printed before it."""
    found = bool(summary.discrepancies)
    try:
        if baselines is not None:  # before the report, which shows its verdict
            passed = gate_run(written, baselines, args, err, decides)
            found = not passed if decides else found
    finally:  # a gate that cannot decide still leaves the report of what ran
        print(terminal.path_line("report:", write_report(written), label_width))
    return exit_status(summary, err, found, kept)


def gate_run(
    run: records.RunFolder, baselines: dict, args, err: Console, decides: bool = True
) -> bool:
    """Gate the run just written: print the verdict (only its last line when
    it ``decides`` nothing), write gate.json beside the results (and keep it
    on ``run`` for the report); whether it passed. GateError when it cannot decide."""
    folder = options.known_folder(args, err)
    decided = verdict.decide([run], folder, args.allow_fixed, baselines)
    lines = terminal.gate_lines(
        decided.gate,
        args.allow_fixed,
        str(decided.folder),
        places=terminal.fuzz_class_places([run]),
        unobserved=decided.unobserved,
    )
    run.gate = verdict.write(decided, run.folder)  # first: a verdict not written is not shown
    print("\n".join(lines if decides else [terminal.not_deciding(lines[-1])]))
    return decided.passed


def write_report(run: records.RunFolder) -> Path:
    """The HTML report of a finished (or interrupted) run, with JUnit XML and
    the JSON summary, beside its results."""
    from conformance.report import render  # Jinja2 only when a report is written

    out = run.folder
    render.write([run], out / REPORT, junit=out / JUNIT, summary=out / REPORT_JSON)
    return out / REPORT


def exit_status(summary, err: Console, found: bool, kept: str) -> int:
    """The exit code of run and fuzz, once everything is written: Ctrl-C
    (130) first, then what makes the verdict untrustworthy (2: a harness
    error, a case file that disagrees with the oracle), then the verdict
    (1 when something was ``found``). A case not checked counts for none."""
    if summary.interrupted:
        err.print(terminal.interrupted_line(kept), markup=False)
        return exits.INTERRUPTED
    if summary.harness_errors:
        for line in terminal.harness_error_lines(summary):
            err.print(line, markup=False)
        return exits.USAGE
    if summary.case_problems:
        err.print(terminal.case_problems_line(summary.case_problems), markup=False)
        return exits.USAGE
    return exits.FAILED if found else exits.OK
