"""``conformance diff RUN_A RUN_B``: what changed between two runs."""

from __future__ import annotations

from pathlib import Path

from conformance.cli import exits, options
from conformance.report import diff
from conformance.report.terminal import diff as diff_text
from conformance.report.terminal import escape as escape_text


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "diff",
        help="what changed between two runs: new, fixed and changed discrepancies",
        description="Pair the results of two runs by (runtime, case id, variant) and list "
        "the discrepancies that are new in B, fixed in B, or changed (another kind or another "
        "message; runtime messages compared without source lines, addresses, ids and type "
        "lists), and "
        "the results that went between conforming and harness_unsupported; each group with "
        "its inputs. Fuzz campaigns, which share no result, are compared by discrepancy "
        "signature. Prints the changes and writes an HTML page.",
        epilog=exits.epilog(exits.OK, exits.FAILED, exits.USAGE),
    )
    parser.add_argument(
        "run_a", type=Path, metavar="RUN_A", help="the run before (folder or results)"
    )
    parser.add_argument("run_b", type=Path, metavar="RUN_B", help="the run after")
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE.html",
        help="the HTML page (default RUN_B/diff.html)",
    )  # fmt: skip
    parser.add_argument(
        "--cross-runtime", nargs="*", metavar="NAME",
        help="hold the one runtime of A against the one runtime of B (another name, e.g. "
        "another profile), pairing results by (case id, variant); or name the runtime of A "
        "and the runtime of B to compare two targets of runs with several (RUN_A and RUN_B "
        "may be one run); without it, runs that share no runtime are refused",
    )  # fmt: skip
    parser.set_defaults(func=command)


def command(args) -> int:
    from conformance.report import render  # Jinja2 only when a page is written

    names = args.cross_runtime
    if names is not None and len(names) not in (0, 2):
        options.stderr().print("--cross-runtime takes no name, or two: A's runtime and B's")
        return exits.USAGE
    cross = tuple(names) if names else names is not None
    found = diff.compare([args.run_a], [args.run_b], cross_runtime=cross)
    out = args.output or (args.run_b if args.run_b.is_dir() else args.run_b.parent) / "diff.html"
    render.write_diff(found, out)  # first: a page that cannot be written stops the command (2)
    print("\n".join(diff_text.diff_lines(found)))
    print(escape_text.safe(f"diff page: {out}"))
    return exits.FAILED if found.differs else exits.OK
