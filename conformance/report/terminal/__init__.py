"""What the commands print, one module per command (the HTML and
machine-readable forms are :mod:`conformance.report.render` and
:mod:`conformance.report.machine`):

==============  ==========================================================
``escape``      :func:`safe` and :func:`say` (untrusted text made harmless),
                :func:`error_lines` (a user-facing error, as ``cli.main``
                prints it), :func:`plural`
``run``         ``conformance run``: header, progress, the outcome table,
                discrepancy groups
``finish``      the end of ``run`` and ``fuzz``: what else sets the exit
                code, harness errors, interruption, CPU note, paths
``gate``        the gate's verdict, failures and bookkeeping (``gate``, and
                the end of ``run``, ``fuzz``, ``model``)
``markdown``    the same verdict in GitHub Markdown (``--summary-md``,
                ``$GITHUB_STEP_SUMMARY``)
``fuzz``        ``conformance fuzz``: header, status line, the campaign's
                bugs and coverage, ``fuzz replay``
``diff``        ``conformance diff``
``cases``       ``conformance cases validate``, cases not checked, case
                problems, folders among ``--cases`` not taken
``export``      ``conformance export``
``progress``    when a progress line is due outside a terminal (``run``,
                ``fuzz``, the pytest plugin): :class:`progress.Ticker`
==============  ==========================================================

The harness imports each from its module; the names below are also here,
where scripts and tests written before the split import them.
"""

from __future__ import annotations

from conformance.report.terminal.cases import (
    case_errors_note,
    case_problem_lines,
    case_problems_line,
    not_checked,
    not_checked_lines,
    not_taken_lines,
    validate_failed_line,
    validate_summary,
    validated_line,
)
from conformance.report.terminal.diff import DIFF_WIDTH, NOISE_SHOWN, diff_lines
from conformance.report.terminal.escape import error_lines, plural, safe, safe_cut, say
from conformance.report.terminal.export import export_interrupted_line, export_lines
from conformance.report.terminal.finish import (
    cpu_note,
    harness_error_lines,
    interrupted_line,
    path_line,
    run_troubles,
)
from conformance.report.terminal.fuzz import (
    BUG_WIDTH,
    BUGS_SHOWN,
    COLD_SHOWN,
    bug_lines,
    campaign_lines,
    coverage_line,
    fuzz_families,
    fuzz_header,
    known_bugs_line,
    new_bugs,
    no_bug_line,
    replay_lines,
    skipped_entry_lines,
    status_line,
    unjudged_lines,
    unjudged_troubles,
)
from conformance.report.terminal.gate import (
    SHOWN_PLACES,
    bookkeeping_lines,
    fuzz_class_places,
    gate_lines,
    message_line,
    ungated_lines,
    verdict_line,
)
from conformance.report.terminal.markdown import MD_GROUPS, md, summary_markdown
from conformance.report.terminal.run import (
    discrepancy_groups,
    progress_line,
    run_header,
    run_result_lines,
    summary_table,
)

__all__ = [
    "BUGS_SHOWN",
    "BUG_WIDTH",
    "COLD_SHOWN",
    "DIFF_WIDTH",
    "MD_GROUPS",
    "NOISE_SHOWN",
    "SHOWN_PLACES",
    "bookkeeping_lines",
    "bug_lines",
    "campaign_lines",
    "case_errors_note",
    "case_problem_lines",
    "case_problems_line",
    "coverage_line",
    "cpu_note",
    "diff_lines",
    "discrepancy_groups",
    "error_lines",
    "export_interrupted_line",
    "export_lines",
    "fuzz_class_places",
    "fuzz_families",
    "fuzz_header",
    "gate_lines",
    "harness_error_lines",
    "interrupted_line",
    "known_bugs_line",
    "md",
    "message_line",
    "new_bugs",
    "no_bug_line",
    "not_checked",
    "not_checked_lines",
    "not_taken_lines",
    "path_line",
    "plural",
    "progress_line",
    "replay_lines",
    "run_header",
    "run_result_lines",
    "run_troubles",
    "safe",
    "safe_cut",
    "say",
    "skipped_entry_lines",
    "status_line",
    "summary_markdown",
    "summary_table",
    "ungated_lines",
    "unjudged_lines",
    "unjudged_troubles",
    "validate_failed_line",
    "validate_summary",
    "validated_line",
    "verdict_line",
]
