"""``conformance export OUT_DIR [PATHS ...]``: the case files as ONNX backend
test data, with a manifest and each baselined runtime's expected failures in
its runners' own forms (:mod:`conformance.export`, docs/export.md).

Exit 2 for anything that keeps the export from being whole (an OUT_DIR it may
not replace, a case file that does not load, fewer tests written than
selected, nothing to export): nothing is put in OUT_DIR then.

``conformance export OUT_DIR --check RESULTS ...`` writes nothing: it holds a
runner's results to the lists OUT_DIR holds for it (:mod:`conformance.export.check`),
exit 1 when a line is stale or missing."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from conformance import export as exporting
from conformance.cli import exits, inputs, options
from conformance.engine import models
from conformance.export import check as checking
from conformance.gate import baseline
from conformance.gate.settings import build
from conformance.report.terminal import export as export_text
from conformance.report.terminal.escape import say


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "export",
        intermixed=True,
        help="write the cases as ONNX backend test folders, with each runtime's "
        "expected failures in its runners' own forms",
        epilog=exits.epilog(exits.OK, exits.FAILED, exits.USAGE, exits.INTERRUPTED),
    )
    parser.add_argument(
        "out",
        type=Path,
        metavar="OUT_DIR",
        help="the folder to write (absent or empty; a previous export with --force)",
    )
    options.add_case_paths(parser)
    parser.add_argument(
        "-k", metavar="PATTERN", help="only ids containing PATTERN (or matching a glob)"
    )
    options.add_variants(parser.add_argument)
    options.add_known(parser.add_argument)
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace OUT_DIR when it holds a previous export (only files its manifest lists)",
    )
    parser.add_argument(
        "--check",
        nargs="+",
        type=Path,
        metavar="RESULTS",
        help="write nothing: hold a runner's results (IREE's onnx_ops: pytest's --junitxml "
        "file or --report-log, its importer's import_failures.txt) to the lists of the "
        "export OUT_DIR; list the stale and the missing lines, exit 1 when there are any",
    )
    parser.set_defaults(func=export_cases)


def check_results(args) -> int:
    given = [flag for flag, value in (("PATHS", args.paths), ("-k", args.k),
             ("--variants", args.variants), ("--known", args.known), ("--force", args.force))
             if value]  # fmt: skip
    if given:
        say(f"error: --check reads the export OUT_DIR as written: {', '.join(given)} "
            "do not apply", file=sys.stderr)  # fmt: skip
        return exits.USAGE
    summary = checking.check(args.out, args.check)
    for line in export_text.check_lines(summary, args.out):
        say(line)
    return exits.FAILED if summary.findings else exits.OK


def export_cases(args) -> int:
    if args.check:
        return check_results(args)
    settings = build(
        known=args.known, variants=args.variants, choose=False, read_baselines=False, engine=False
    )
    cases = inputs.select(inputs.load_cases(args.paths), args.k)
    variants = tuple(v for v in models.VARIANTS if v in set(settings.variants))
    started = time.perf_counter()
    try:
        summary = exporting.export(
            args.out,
            cases,
            inputs.corpus(args.paths),
            variants=variants,
            known=baseline.known(settings.known),
            force=args.force,
            pattern=args.k,
        )
    except KeyboardInterrupt:
        say(export_text.export_interrupted_line(args.out), file=sys.stderr)
        return exits.INTERRUPTED
    for line in export_text.export_lines(summary, time.perf_counter() - started):
        say(line)
    return exits.OK
