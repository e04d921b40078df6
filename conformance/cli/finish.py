"""The end of ``run`` and ``fuzz``, once the results are written: the folder
read back once, the gate (gate.json), the report (HTML, JUnit, report.json)
and the exit code. What it prints is made in :mod:`conformance.report.terminal.finish` (and the
gate's, fuzz's and Markdown's modules beside it)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from conformance.cli import exits
from conformance.engine import files, records
from conformance.engine.groups import Grouping, GroupKey
from conformance.gate import baseline, verdict
from conformance.gate.settings import Settings
from conformance.report.terminal import cases as cases_text
from conformance.report.terminal import escape as escape_text
from conformance.report.terminal import finish as finish_text
from conformance.report.terminal import fuzz as fuzz_text
from conformance.report.terminal import gate as gate_text
from conformance.report.terminal import markdown as markdown_text

REPORT, JUNIT, REPORT_JSON = "report.html", "junit.xml", "report.json"
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"  # GitHub Actions: a file a job's summary is appended to


def add_output(parser) -> None:
    """-v/--verbose and --summary-md FILE: run, fuzz and gate alike."""
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="the gate's bookkeeping in full (targets not observed, entries not reproduced, "
        "not judged, not used), not one line each",
    )
    parser.add_argument(
        "--summary-md",
        type=Path,
        metavar="FILE",
        help="write the verdict and the new discrepancy groups as Markdown to FILE (also "
        f"appended to ${STEP_SUMMARY} when it is set)",
    )


def finish(
    summary, written: records.RunFolder, settings: Settings, err: Console, *,
    kept: str, label_width: int,
    preamble: Callable[[verdict.GateVerdict | None], list[str]] | None = None,
    judge: Callable[[verdict.GateVerdict | None], tuple[bool, list[str], str]] | None = None,
) -> int:  # fmt: skip
    """Gate the run (when the ``settings`` have baselines; its verdict
    decides the exit code, or with ``settings.decides`` False only says why
    the run exits as it does), write its report,
    whatever the gate did, and return the exit code: :func:`exit_status` of
    what was ``found``, a discrepancy or with the gate a failing verdict.
    ``kept`` says what an interrupted run keeps; ``label_width`` aligns the
    report's line with the lines printed before it. ``preamble`` makes the
    lines printed before the verdict's, knowing it (None: no gate). ``judge``
    (``conformance model``) decides what is ``found`` itself, knowing the
    gate's verdict: (found, its verdict lines, printed first and heading the
    Markdown summary, why it exits so); the gate's own line then only counts."""
    found = bool(summary.discrepancies)
    decides = settings.decides
    try:
        decided = None
        headline: list[str] = []
        reason = None
        try:
            if settings.baselines is not None:  # before the report, which shows its verdict
                decided = gate_run(written, settings, err)
        finally:  # what ran is said even when the gate cannot decide
            if judge is not None:
                found, headline, reason = judge(decided)
                print("\n".join(headline))
            if preamble is not None:
                print("\n".join(preamble(decided)))
        if decided is not None:
            if judge is None:
                found = not decided.passed if decides else found
            code = exit_code(summary, found)
            places = gate_text.fuzz_class_places([written])
            lines = gate_text.gate_lines(
                decided.gate,
                settings.allow_fixed,
                str(decided.folder),
                places=places,
                unobserved=decided.unobserved,
                verbose=settings.verbose,
                decides=decides,
                troubles=finish_text.run_troubles(summary),
                code=code,
                reason=reason,
            )
            print("\n".join(lines))
            markdown = summary_of(f"conformance {settings.command}", decided, lines, places)
            if headline:
                markdown = "\n".join(["```", *headline, "```", "", markdown])
            write_summaries(settings.summary_md, err, markdown)
    finally:  # a gate that cannot decide still leaves the report of what ran
        # the gate's groups are the report's: grouped once
        grouping = decided.gate.grouping if decided is not None else None
        print(finish_text.path_line("report:", write_report(written, grouping), label_width))
    return exit_status(summary, err, found, kept)


def gate_run(run: records.RunFolder, settings: Settings, err: Console) -> verdict.GateVerdict:
    """Gate the run just written against the ``settings``' baselines: write
    gate.json beside the results (and keep it on ``run`` for the report) and
    return the verdict. GateError when it cannot decide."""
    folder = settings.known
    said = baseline.missing(folder, settings.known_given)
    if said:  # there when the baselines were read, before the run
        err.print(said, markup=False)
        raise verdict.GateError(["cannot gate: the baseline folder is gone since the run began"])
    decided = verdict.decide([run], folder, settings.allow_fixed, settings.baselines)
    decided.decides = settings.decides
    run.gate = verdict.write(decided, run.folder)  # first: a verdict not written is not shown
    return decided


def summary_of(
    title: str, decided: verdict.GateVerdict, lines: list[str], places: dict[GroupKey, str]
) -> str:
    """The Markdown summary of a verdict: its first line (as printed), the
    new groups (``places``: where each fuzz class's input is, as the
    printed lines had it), and the bookkeeping condensed."""
    return markdown_text.summary_markdown(
        title,
        decided.gate,
        lines[0],
        gate_text.bookkeeping_lines(decided.gate, decided.unobserved, verbose=False),
        places=places,
    )


def check_outputs(summary_md: Path | None) -> None:
    """The files the command writes at its end that the user named
    (``--summary-md``), checked before anything runs: one that cannot be
    written is an ``OSError`` naming it (``error: FILE: REASON``, exit 2:
    :func:`conformance.cli.main`), as for every other output, never said
    after a verdict."""
    if summary_md is not None:
        files.check_writable(Path(summary_md))


def write_summaries(summary_md: Path | None, err: Console, markdown: str) -> None:
    """The Markdown summary to ``--summary-md FILE`` (written whole; checked
    before the command ran: :func:`check_outputs`) and appended to
    ``$GITHUB_STEP_SUMMARY`` when it is set (a GitHub Actions job shows it on
    the run's page)."""
    if summary_md is not None:
        files.write_text(Path(summary_md), markdown)  # an OSError names the file
    step = os.environ.get(STEP_SUMMARY)
    if step:
        try:
            with open(step, "a", encoding="utf-8") as out:
                out.write(markdown + "\n")
        except OSError as error:  # the verdict stands: a summary the job cannot show is a note
            note = f"note: cannot append to ${STEP_SUMMARY}: {error}"
            err.print(escape_text.safe(note), markup=False)


def write_report(run: records.RunFolder, grouping: Grouping | None = None) -> Path:
    """The HTML report of a finished (or interrupted) run, with JUnit XML and
    the JSON summary, beside its results; ``grouping``: its discrepancies as
    the gate grouped them."""
    from conformance.report import render  # Jinja2 only when a report is written

    out = run.folder
    render.write(
        [run], out / REPORT, junit=out / JUNIT, report_json=out / REPORT_JSON, grouping=grouping
    )
    return out / REPORT


def exit_code(summary, found: bool) -> int:
    """The exit code :func:`exit_status` returns, without saying why."""
    if summary.interrupted:
        return exits.INTERRUPTED
    # A target that judged nothing (a campaign's budget spent before it judged
    # one example) gives no verdict on it: no pass, as a budget too short for
    # any example is none (the verdict line says which target).
    if summary.harness_errors or summary.case_problems or summary.unjudged:
        return exits.USAGE
    return exits.FAILED if found else exits.OK


def exit_status(summary, err: Console, found: bool, kept: str) -> int:
    """The exit code of run and fuzz, once everything is written: Ctrl-C
    (130) first, then what makes the verdict untrustworthy (2: a harness
    error, a case file that disagrees with the oracle), then the verdict
    (1 when something was ``found``). A case not checked counts for none."""
    code = exit_code(summary, found)
    if code == exits.INTERRUPTED:
        err.print(finish_text.interrupted_line(kept), markup=False)
    elif summary.harness_errors:
        for line in finish_text.harness_error_lines(summary):
            err.print(line, markup=False)
    elif summary.case_problems:
        err.print(cases_text.case_problems_line(summary.case_problems), markup=False)
    elif summary.unjudged:
        for line in fuzz_text.unjudged_lines(summary.unjudged):
            err.print(line, markup=False)
    return code
