"""``conformance scoreboard RUN...``: every target of finished runs side by side, one page."""

from __future__ import annotations

from pathlib import Path

from conformance.cli import exits, inputs, options
from conformance.engine import files, records
from conformance.report import scoreboard
from conformance.report.terminal.escape import safe


def add_parser(commands) -> None:
    board = commands.add_parser(
        "scoreboard",
        help="write the scoreboard of finished runs: every target side by side",
        description="Read run folders (several are merged, one target per runtime name) and "
        "write one static HTML page: per target and (op, opset) the share of judged results "
        "that conform, crashes counted apart; the families of each target's discrepancies "
        "with their mechanism (the baseline entry's reason, or 'not triaged') and smallest "
        "input; what could not be judged, and why; the versions and CPU flags measured on. "
        "`nox -s scoreboard` runs the corpus on every target and writes docs/scoreboard.html.",
        epilog=exits.epilog(exits.OK, exits.USAGE),
    )
    board.add_argument(
        "results", nargs="+", type=Path, metavar="RESULTS", help="run folders or results.jsonl"
    )
    board.add_argument(
        "-o", "--output", type=Path, required=True, metavar="FILE.html", help="the page to write"
    )
    options.add_json(board, "the same data as JSON (format 1)")
    options.add_known(
        board.add_argument,
        now="hold the runs against this baseline folder now, and record its files' sha256",
    )
    board.add_argument(
        "--elsewhere",
        nargs=2,
        action="append",
        default=[],
        type=Path,
        metavar=("RUN", "TARGET"),
        help="one target of a run recorded on another machine (a GPU's: docs/gpu.md) as one "
        "more column, labelled with its device; may be given again",
    )
    board.set_defaults(func=command)


def command(args) -> int:
    from conformance.report import render  # Jinja2 only when a page is written

    err = options.stderr()
    runs, known = inputs.finished_runs(args.results, args.known)
    elsewhere = [(records.read_folder(run), str(target)) for run, target in args.elsewhere]
    board = scoreboard.build(runs, args.output, known, elsewhere)  # ScoreboardError: cli.main
    if board["baseline_error"]:
        err.print(f"error: {board['baseline_error']}", markup=False)
        return exits.USAGE
    files.write_text(args.output, render.render_scoreboard(board))
    if args.json:
        files.write_json(args.json, board)
    targets = ", ".join(
        f"{t['label']} {t['scores']['total']['percent']} %" for t in board["targets"]
    )
    print(
        safe(
            f"{args.output}: {len(board['targets'])} targets ({targets}), "
            f"{len(board['families'])} discrepancy families"
        )
    )
    return exits.OK
