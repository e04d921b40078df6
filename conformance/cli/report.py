"""``conformance report RUN...``: the HTML report (and JUnit, JSON) of finished runs."""

from __future__ import annotations

from pathlib import Path

from conformance.cli import exits, inputs, options
from conformance.report.terminal.escape import safe


def add_parser(commands) -> None:
    report = commands.add_parser(
        "report",
        help="write the HTML report of one or more runs",
        description="Read run folders (or their results.jsonl files; several are merged, "
        "e.g. shards) and write one self-contained HTML file: the gate's verdict, the "
        "discrepancy families and groups with their smallest input, fuzz classes, the "
        "outcome matrix, and the spec decisions next to what each runtime did.",
        epilog=exits.epilog(exits.OK, exits.USAGE),
    )
    report.add_argument(
        "results", nargs="+", type=Path, metavar="RESULTS", help="run folders or results.jsonl"
    )
    report.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="FILE.html",
        help="the HTML report to write",
    )
    report.add_argument(
        "--junit", type=Path, metavar="FILE.xml", help="also JUnit XML: a test case per result"
    )
    options.add_json(report, "the versioned JSON summary")
    options.add_known(report.add_argument, now="gate the runs against this baseline folder now")
    report.set_defaults(func=command)


def command(args) -> int:
    from conformance.report import render  # Jinja2 only when a report is asked for

    runs, known = inputs.finished_runs(args.results, args.known)
    written = render.write(runs, args.output, junit=args.junit, report_json=args.json, known=known)
    print(
        safe(
            f"{args.output}: {written.total} results, {len(written.groups)} discrepancy groups"
            + (f", {len(written.findings)} fuzz classes" if written.findings else "")
        )
    )
    return exits.OK
