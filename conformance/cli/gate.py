"""``conformance gate RUN...``: finished runs (shards merged) held against the baselines."""

from __future__ import annotations

from pathlib import Path

from conformance.cli import exits, finish, options
from conformance.engine import records
from conformance.gate import verdict
from conformance.gate.settings import known_folders
from conformance.report.terminal.gate import fuzz_class_places, gate_lines


def add_parser(commands) -> None:
    gate = commands.add_parser(
        "gate",
        help="hold finished runs against the known-discrepancy baseline",
        description="Read run folders (or results.jsonl files; shards are merged) and check "
        "every discrepancy against cases/known/<runtime>.yaml: known ones pass, new ones fail, "
        "and an entry whose results conform now is reported as 'fixed upstream?'.",
        epilog=exits.epilog(exits.OK, exits.FAILED, exits.USAGE),
    )
    gate.add_argument("paths", nargs="+", type=Path, metavar="RUN", help="run folders or results")
    options.add_gate(gate)
    gate.add_argument("--out", type=Path, metavar="DIR", help="also write DIR/gate.json")
    finish.add_output(gate)
    gate.set_defaults(func=command)


def command(args) -> int:
    finish.check_outputs(args.summary_md)
    err = options.stderr()
    folder = known_folders(args.known)
    runs = records.read_folders(args.paths)
    decided = verdict.decide(runs, folder, args.allow_fixed, finished_only=True)
    if args.out is not None:  # first: a verdict that cannot be written is not printed as one
        verdict.write(decided, args.out)
    places = fuzz_class_places(runs)
    lines = gate_lines(
        decided.gate,
        args.allow_fixed,
        str(folder),
        places=places,
        unobserved=decided.unobserved,
        verbose=args.verbose,
    )
    print("\n".join(lines))
    markdown = finish.summary_of("conformance gate", decided, lines, places)
    finish.write_summaries(args.summary_md, err, markdown)
    return exits.OK if decided.passed else exits.FAILED
