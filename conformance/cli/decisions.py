"""``conformance decisions [ID]``: the spec-decisions table."""

from __future__ import annotations

import sys

from conformance.cli import exits
from conformance.tables import decisions


def add_parser(commands) -> None:
    table = commands.add_parser(
        "decisions",
        help="print the spec-decisions table",
        epilog=exits.epilog(exits.OK, exits.USAGE),
    )
    table.add_argument("id", nargs="?", help="one entry in full")
    table.add_argument("-v", "--verbose", action="store_true", help="every entry in full")
    table.set_defaults(func=show)


def show(args) -> int:
    chosen = decisions.DECISIONS
    if args.id:
        if args.id not in decisions.BY_ID:
            print(
                f"unknown decision id {args.id!r}; known: {', '.join(decisions.IDS)}",
                file=sys.stderr,
            )
            return exits.USAGE
        chosen = (decisions.get(args.id),)
    for d in chosen:
        flag = " [disputed]" if d.disputed else ""
        print(f"{d.id}  ({d.kind}, {', '.join(d.ops)}){flag}\n  {d.title}")
        if args.id or args.verbose:
            for clause in d.clauses:
                title = decisions.TITLES.get(clause.document, clause.document)
                print(f'  - {title} ({clause.document}): "{clause.quote}"')
            print(f"  oracle: {d.oracle}\n  why: {d.why}")
    return exits.OK
