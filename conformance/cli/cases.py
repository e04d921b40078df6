"""``conformance cases list|validate``: the case files, and their expectations
held against the oracle.

``validate`` exits 2 for any problem of a case file (malformed, an
expectation that disagrees with the oracle, a model that fails onnx.checker:
the rule of :mod:`conformance.cli.exits`). A case over the memory guard is
not checked: said with its reason, it does not fail the command."""

from __future__ import annotations

import sys
from collections import Counter

import onnx

from conformance.cases.check import OverMemory, problems, verdict_of
from conformance.cli import exits, inputs, options
from conformance.engine import models
from conformance.messages import first_line
from conformance.report.terminal import cases as cases_text
from conformance.report.terminal.escape import say


def add_parser(commands) -> None:
    cases = commands.add_parser("cases", help="list or validate case files")
    actions = cases.add_subparsers(dest="cases_command", required=True, metavar="ACTION")
    listing = actions.add_parser(
        "list",
        help="list concrete cases",
        epilog=exits.epilog(exits.OK, exits.USAGE),
        intermixed=True,
    )
    options.add_case_paths(listing)
    listing.add_argument(
        "-k", metavar="PATTERN", help="only ids containing PATTERN (or matching a glob)"
    )
    listing.set_defaults(func=list_cases)
    validate = actions.add_parser(
        "validate",
        help="check case files and every expectation against the oracle",
        epilog=exits.epilog(exits.OK, exits.USAGE),
        intermixed=True,
    )
    options.add_case_paths(validate)
    validate.add_argument(
        "--check-models",
        action="store_true",
        help="also build every valid case's model in all five variants and "
        "run onnx.checker (full_check) on it",
    )
    options.add_case_memory(validate, "are not checked (said, with the reason; not a failure)")
    validate.set_defaults(func=validate_cases)


def list_cases(args) -> int:
    for case in inputs.select(inputs.load_cases(args.paths), args.k):
        expectation = case.expectation
        what = {
            "error": f"error {expectation.clause}",
            "output": "literal output",
            "oracle": "oracle",
        }[expectation.kind]
        say(f"{case.id}\t{what}\t{case.source}")
    return exits.OK


def _check_models(case) -> list[str]:
    found = []
    for variant in models.VARIANTS:
        model = models.build_for_case(case, variant)
        try:
            onnx.checker.check_model(model, full_check=True)
        except Exception as error:  # onnx raises several unrelated types here
            why = first_line(error) or type(error).__name__
            found.append(f"{variant} model fails onnx.checker: {why}")
    return found


def validate_cases(args) -> int:
    cases = inputs.load_cases(args.paths, args.case_memory)
    failed = unchecked = 0
    kinds: Counter[str] = Counter()  # of the cases checked
    disputed: Counter[str] = Counter()
    for case in cases:
        try:
            verdict = verdict_of(case, args.case_memory)
        except OverMemory as refused:  # nothing to hold it against: not checked, not failed
            say(cases_text.not_checked(str(refused), f"{case.source}: {case.id}"))
            unchecked += 1
            continue
        kinds[case.expectation.kind] += 1
        found = problems(case, verdict)
        disputed.update(verdict.disputed)
        if args.check_models and verdict.valid:
            found += _check_models(case)
        for problem in found:
            say(f"{case.source}: {case.id}: {problem}", file=sys.stderr)
        failed += bool(found)
    files = len({c.source.path for c in cases})
    say(cases_text.validate_summary(len(cases), files, kinds, args.check_models, unchecked))
    if disputed:
        say(
            "under disputed decisions: "
            + ", ".join(f"{d} ({n})" for d, n in sorted(disputed.items()))
        )
    if failed:
        say(cases_text.validate_failed_line(failed, unchecked), file=sys.stderr)
        return exits.USAGE
    say(cases_text.validated_line(unchecked))
    return exits.OK
