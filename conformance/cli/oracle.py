"""``conformance oracle ID``: the oracle's verdict on a case, inputs included."""

from __future__ import annotations

import sys

import numpy as np

from conformance.cases.check import OverMemory, verdict_of
from conformance.cli import exits, inputs, options
from conformance.report.terminal.escape import say
from conformance.tables import decisions

SHOWN_ELEMENTS = 200  # a tensor above this is summarised (first and last elements)


def add_parser(commands) -> None:
    show = commands.add_parser(
        "oracle",
        help="print the oracle's verdict for a case",
        epilog=exits.epilog(exits.OK, exits.USAGE),
    )
    # Optional to argparse only, so that an id swallowed by --cases PATH... gets its own
    # message (show_verdict), not "the following arguments are required".
    show.add_argument(
        "case_id",
        nargs="?",
        help="a concrete id, or a case-file id for all its expansions (required; "
        "after --cases PATH..., write -- before it)",
    )
    options.add_case_paths(show, "--cases")
    options.add_case_memory(show, "the oracle refuses to compute")
    show.set_defaults(func=show_verdict)


def _show_array(array: np.ndarray) -> str:
    with np.printoptions(threshold=SHOWN_ELEMENTS, edgeitems=4, linewidth=100):
        return np.array2string(array, separator=", ") if array.size else "[]"


def _indented(array: np.ndarray) -> str:
    return "    " + _show_array(array).replace("\n", "\n    ")


def show_verdict(args) -> int:
    if args.case_id is None:
        swallowed = f" ({args.cases[-1]} was read as a case path)" if args.cases else ""
        say(
            f"conformance oracle: error: give a case id{swallowed}: "
            "conformance oracle ID --cases PATH..., or --cases PATH... -- ID",
            file=sys.stderr,
        )
        return exits.USAGE
    cases = inputs.load_cases(args.cases, args.case_memory)
    chosen = [c for c in cases if args.case_id in (c.id, c.base_id)]
    if not chosen:
        near = [c.id for c in cases if args.case_id in c.id][:10]
        say(
            f"no case with id {args.case_id!r}"
            + (f"; did you mean: {', '.join(near)}" if near else ""),
            file=sys.stderr,
        )
        return exits.USAGE
    for case in chosen:
        try:  # refused (exit 2): the user asked for this verdict, and may lift the guard
            verdict = verdict_of(case, args.case_memory)
        except OverMemory as refused:
            raise OverMemory(f"{case.source}: {case.id}: {refused}") from None
        axis = "absent (0)" if case.axis is None else case.axis
        say(f"{case.id}  ({case.source})")
        say(f"  {case.op}-{case.opset}, axis {axis}: {case.description}")
        if case.spec:
            say(f"  spec: {decisions.titled(case.spec)}")
        say(f"  data    {case.dtype} {list(case.data.shape)}:")
        say(_indented(case.data))
        say(f"  indices {case.indices_dtype} {list(case.indices.shape)}:")
        say(_indented(case.indices))
        if case.updates is not None:
            reduction = "absent (none)" if case.reduction is None else case.reduction
            say(f"  updates {case.dtype} {list(case.updates.shape)}, reduction {reduction}:")
            say(_indented(case.updates))
        if verdict.valid:
            out = verdict.output
            several = verdict.admissible is not None and not verdict.admissible.unique
            say(f"  output  {case.dtype} {list(out.shape)}" + (
                " (one of the admissible outputs: the writes in row-major order)" if several
                else "") + ":")  # fmt: skip
            say(_indented(out))
        else:
            decision = decisions.get(verdict.violation.clause)
            say(f"  SpecViolation {verdict.violation.clause}: {verdict.violation.detail}")
            say(f"    ({decision.title})")
        for name in verdict.disputed:
            say(f"  disputed: {name} ({decisions.get(name).title})")
    return exits.OK
