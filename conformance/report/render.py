"""Render a :class:`~conformance.report.views.report.Report` to one self-contained HTML file.

The template (``report.html.j2``) carries its CSS and JS inline and loads
nothing from the network. Autoescaping is on for every value: tensor strings,
messages and case ids from the results are text, never markup.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from conformance import __version__
from conformance.engine import files, records
from conformance.engine.groups import Grouping
from conformance.engine.judge import KINDS
from conformance.gate import baseline
from conformance.report import machine
from conformance.report.views.report import Report, from_runs
from conformance.tables import decisions, outcomes

# Column heads of the matrix: five variants must fit above narrow cells.
VARIANT_SHORT = {
    "static": "S",
    "dynamic": "D",
    "indices_initializer": "I",
    "data_initializer": "Dt",
    "both_initializers": "B",
}


def kind_styles() -> list[tuple[str, str]]:
    """(selectors, declarations) of each outcome kind's cells, as the outcome
    table styles them (``_style.css.j2``): the least severe first, kinds of
    one style in one rule."""
    rules: list[tuple[list[str], str]] = []
    for kind in sorted(outcomes.OUTCOME_KINDS, key=lambda k: -k.severity):
        if rules and rules[-1][1] == kind.style:
            rules[-1][0].append(f".k-{kind.name}")
        else:
            rules.append(([f".k-{kind.name}"], kind.style))
    return [(", ".join(selectors), style) for selectors, style in rules]


@functools.cache  # one per process: compiling the templates is most of a small report's cost
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("conformance.report", "."),
        autoescape=True,  # every value is text; the template alone writes markup
        # Records are JSON: optional fields are simply absent, read as empty.
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals["kind_styles"] = kind_styles()  # every page's CSS (_style.css.j2)
    return environment


def render(report: Report) -> str:
    template = _environment().get_template("report.html.j2")
    return template.render(
        report=report,
        version=__version__,
        generated=records.now(),
        variant_short=VARIANT_SHORT,
        titles=decisions.TITLES,
    )


def render_scoreboard(board: dict) -> str:
    """The scoreboard page of :func:`conformance.report.scoreboard.build`'s document."""
    return _environment().get_template("scoreboard.html.j2").render(board=board)


def write(
    runs: list[records.RunFolder],
    out: Path,
    junit: Path | None = None,
    report_json: Path | None = None,
    known: Path | baseline.BaselineFolders | None = None,
    grouping: Grouping | None = None,
) -> Report:
    """Write the report of these runs to ``out``, and JUnit XML and report.json
    where asked; ``known`` is a baseline folder to gate the runs
    against now instead of their own gate.json; ``grouping``, the runs'
    discrepancies grouped already (by the gate of a run just finished)
    (:func:`conformance.report.views.report.from_runs`)."""
    report = from_runs(runs, out, known, grouping)
    files.write_text(out, render(report))
    if junit:
        machine.write_junit(
            report.records, junit, report.known_by, report.verdicts, report.unfinished
        )
    if report_json:
        machine.write_report_json(report, report_json)
    return report


def write_diff(diff, out: Path) -> None:
    """The HTML page of ``conformance diff``: new, fixed and changed discrepancies."""
    fixed = "Fixed" if diff.by == "result" else "Not seen again"  # absent is not fixed
    sections = [("New", "new", diff.new), (fixed, "fixed", diff.fixed)]
    sections.append(("Changed", "changed", diff.changed))
    kinds = [k for k in KINDS if any(a[k] or b[k] for a, b in diff.kinds.values())]
    page = (
        _environment()
        .get_template("diff.html.j2")
        .render(
            diff=diff, sections=sections, kinds=kinds, version=__version__, generated=records.now()
        )
    )
    files.write_text(out, page)
