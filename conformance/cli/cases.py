"""``conformance cases list|validate``: the case files, and their expectations
held against the oracle."""

from __future__ import annotations

import sys
from collections import Counter

import onnx

from conformance.cases.check import OverMemory, problems, verdict_of
from conformance.cli import exits, options
from conformance.engine import models
from conformance.report.terminal import say


def add_parser(commands) -> None:
    cases = commands.add_parser("cases", help="list or validate case files")
    actions = cases.add_subparsers(dest="cases_command", required=True, metavar="ACTION")
    listing = actions.add_parser(
        "list", help="list concrete cases", epilog=exits.epilog(exits.OK, exits.USAGE)
    )
    options.add_case_paths(listing)
    listing.add_argument(
        "-k", metavar="PATTERN", help="only ids containing PATTERN (or matching a glob)"
    )
    listing.set_defaults(func=list_cases)
    validate = actions.add_parser(
        "validate",
        help="check case files and every expectation against the oracle",
        epilog=exits.epilog(exits.OK, exits.FAILED, exits.USAGE),
    )
    options.add_case_paths(validate)
    validate.add_argument(
        "--check-models",
        action="store_true",
        help="also build every valid case's model in all five variants and "
        "run onnx.checker (full_check) on it",
    )
    options.add_case_memory(validate, "the oracle refuses to compute")
    validate.set_defaults(func=validate_cases)


def list_cases(args) -> int:
    cases = options.load_cases(args.paths)
    if cases is None:
        return exits.USAGE
    for case in options.select(cases, args.k):
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
            found.append(f"{variant} model fails onnx.checker: {str(error).splitlines()[0]}")
    return found


def validate_cases(args) -> int:
    cases = options.load_cases(args.paths)
    if cases is None:
        return exits.USAGE
    failed = 0
    kinds = Counter(c.expectation.kind for c in cases)
    disputed = Counter()
    for case in cases:
        try:
            verdict = verdict_of(case, args.case_memory)
        except OverMemory as refused:
            say(f"{case.source}: {case.id}: {refused}", file=sys.stderr)
            failed += 1
            continue
        found = problems(case, verdict)
        disputed.update(verdict.disputed)
        if args.check_models and verdict.valid:
            found += _check_models(case)
        for problem in found:
            say(f"{case.source}: {case.id}: {problem}", file=sys.stderr)
        failed += bool(found)
    files = len({c.source.path for c in cases})
    say(
        f"{len(cases)} cases from {files} files: {kinds['output']} literal outputs and "
        f"{kinds['error']} expected errors checked against the oracle, {kinds['oracle']} "
        f"computed by it"
        + (", models of every valid case checked in 5 variants" if args.check_models else "")
    )
    if disputed:
        say(
            "under disputed decisions: "
            + ", ".join(f"{d} ({n})" for d, n in sorted(disputed.items()))
        )
    if failed:
        say(f"FAILED: {failed} case(s) with problems", file=sys.stderr)
        return exits.FAILED
    say("all cases agree with the oracle")
    return exits.OK
