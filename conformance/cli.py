"""The ``conformance`` command line: a thin front-end over the engine.

Exit codes (all commands):
  0  success
  1  a check failed (a case's expectation disagrees with the oracle, a model
     of a valid case does not pass onnx.checker)
  2  usage error or bad input (malformed case files, unknown case id)
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import onnx

from conformance import __version__, fuzz_command, gate_command, run_command
from conformance.cases import CaseErrors, default_case_paths, load
from conformance.cases.check import problems, verdict_of
from conformance.engine import models
from conformance.tables import decisions

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _load(paths: list[Path] | None):
    """Cases of the given paths (default: the repo's cases/), or None after printing errors."""
    try:
        return load(paths or default_case_paths())
    except CaseErrors as errors:
        for error in errors.errors:
            print(error, file=sys.stderr)
        print(f"{len(errors.errors)} problem(s) in case files; nothing was run", file=sys.stderr)
        return None


def _select(cases, pattern: str | None):
    if not pattern:
        return cases
    glob = pattern if any(ch in pattern for ch in "*?[") else f"*{pattern}*"
    return [c for c in cases if fnmatch.fnmatchcase(c.id, glob)]


def cmd_cases_list(args) -> int:
    cases = _load(args.paths)
    if cases is None:
        return EXIT_USAGE
    for case in _select(cases, args.k):
        expectation = case.expectation
        what = {
            "error": f"error {expectation.clause}",
            "output": "literal output",
            "oracle": "oracle",
        }[expectation.kind]
        print(f"{case.id}\t{what}\t{case.source}")
    return EXIT_OK


def _check_models(case) -> list[str]:
    found = []
    for variant in models.VARIANTS:
        model = models.build_for_case(case, variant)
        try:
            onnx.checker.check_model(model, full_check=True)
        except Exception as error:  # onnx raises several unrelated types here
            found.append(f"{variant} model fails onnx.checker: {str(error).splitlines()[0]}")
    return found


def cmd_cases_validate(args) -> int:
    cases = _load(args.paths)
    if cases is None:
        return EXIT_USAGE
    failed = 0
    kinds = Counter(c.expectation.kind for c in cases)
    disputed = Counter()
    for case in cases:
        verdict = verdict_of(case)
        found = problems(case, verdict)
        disputed.update(verdict.disputed)
        if args.check_models and verdict.valid:
            found += _check_models(case)
        for problem in found:
            print(f"{case.source}: {case.id}: {problem}", file=sys.stderr)
        failed += bool(found)
    files = len({c.source.path for c in cases})
    print(
        f"{len(cases)} cases from {files} files: {kinds['output']} literal outputs and "
        f"{kinds['error']} expected errors checked against the oracle, {kinds['oracle']} "
        f"computed by it"
        + (", models of every valid case checked in 5 variants" if args.check_models else "")
    )
    if disputed:
        print(
            "under disputed decisions: "
            + ", ".join(f"{d} ({n})" for d, n in sorted(disputed.items()))
        )
    if failed:
        print(f"FAILED: {failed} case(s) with problems", file=sys.stderr)
        return EXIT_FAILED
    print("all cases agree with the oracle")
    return EXIT_OK


def _show_array(array: np.ndarray) -> str:
    with np.printoptions(threshold=200, edgeitems=4, linewidth=100):
        return np.array2string(array, separator=", ") if array.size else "[]"


def cmd_oracle(args) -> int:
    cases = _load(args.cases)
    if cases is None:
        return EXIT_USAGE
    chosen = [c for c in cases if args.case_id in (c.id, c.base_id)]
    if not chosen:
        near = [c.id for c in cases if args.case_id in c.id][:10]
        print(
            f"no case with id {args.case_id!r}"
            + (f"; did you mean: {', '.join(near)}" if near else ""),
            file=sys.stderr,
        )
        return EXIT_USAGE
    for case in chosen:
        verdict = verdict_of(case)
        axis = "absent (0)" if case.axis is None else case.axis
        print(f"{case.id}  ({case.source})")
        print(f"  {case.op}-{case.opset}, axis {axis}: {case.description}")
        print(f"  data    {case.dtype} {list(case.data.shape)}")
        print(f"  indices {case.indices_dtype} {list(case.indices.shape)}")
        if verdict.valid:
            out = verdict.output
            print(f"  output  {case.dtype} {list(out.shape)}:")
            print("    " + _show_array(out).replace("\n", "\n    "))
        else:
            decision = decisions.get(verdict.violation.clause)
            print(f"  SpecViolation {verdict.violation.clause}: {verdict.violation.detail}")
            print(f"    ({decision.title})")
        for name in verdict.disputed:
            print(f"  disputed: {name} ({decisions.get(name).title})")
    return EXIT_OK


def cmd_decisions(args) -> int:
    chosen = decisions.DECISIONS
    if args.id:
        if args.id not in decisions.BY_ID:
            print(
                f"unknown decision id {args.id!r}; known: {', '.join(decisions.IDS)}",
                file=sys.stderr,
            )
            return EXIT_USAGE
        chosen = (decisions.get(args.id),)
    for d in chosen:
        flag = " [disputed]" if d.disputed else ""
        print(f"{d.id}  ({d.kind}, {', '.join(d.ops)}){flag}\n  {d.title}")
        if args.id or args.verbose:
            for clause in d.clauses:
                print(f'  - {clause.document}: "{clause.quote}"')
            print(f"  oracle: {d.oracle}\n  why: {d.why}")
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Conformance suite for ONNX Gather and GatherElements.",
        epilog="Exit codes: 0 success, 1 a check failed, 2 usage error or bad case files.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    cases = commands.add_parser("cases", help="list or validate case files")
    cases_commands = cases.add_subparsers(dest="cases_command", required=True, metavar="ACTION")
    listing = cases_commands.add_parser("list", help="list concrete cases")
    listing.add_argument(
        "paths", nargs="*", type=Path, help="case files or folders (default cases/)"
    )
    listing.add_argument(
        "-k", metavar="PATTERN", help="only ids containing PATTERN (or matching a glob)"
    )
    listing.set_defaults(func=cmd_cases_list)
    validate = cases_commands.add_parser(
        "validate", help="check case files and every expectation against the oracle"
    )
    validate.add_argument(
        "paths", nargs="*", type=Path, help="case files or folders (default cases/)"
    )
    validate.add_argument(
        "--check-models",
        action="store_true",
        help="also build every valid case's model in all five variants and "
        "run onnx.checker (full_check) on it",
    )
    validate.set_defaults(func=cmd_cases_validate)

    table = commands.add_parser("decisions", help="print the spec-decisions table")
    table.add_argument("id", nargs="?", help="one entry in full")
    table.add_argument("-v", "--verbose", action="store_true", help="every entry in full")
    table.set_defaults(func=cmd_decisions)

    run = commands.add_parser(
        "run",
        help="run cases on the runtimes in isolated workers and judge every outcome",
        description="Run every case on every runtime in every model variant, each runtime "
        "in its own worker process, and judge each outcome against the oracle. Results go "
        "to DIR/results.jsonl (one record per case, runtime and variant) with header.json "
        "and summary.json beside it.",
        epilog="Exit codes: 0 every outcome conforms (with --gate: every discrepancy is a "
        "known one that still reproduces), 1 discrepancies found (with --gate: new ones, or "
        "known ones fixed upstream?), 2 usage or harness error, bad baseline file, 130 "
        "interrupted (results so far are kept).",
    )
    run_command.add_arguments(run)
    run.set_defaults(func=lambda args: run_command.command(args, _load, _select))

    fuzz = commands.add_parser(
        "fuzz",
        help="a time-boxed fuzz campaign: find, classify and shrink discrepancies",
        description="Draw examples from conformance.fuzz.strategies, run each on every runtime in "
        "its drawn model variant (isolated workers, as in run), and group the discrepancies "
        "into classes by signature (runtime, op, outcome kind, dtype, variant, opset, broken "
        "clause, index and shape features). Each new class is shrunk with Hypothesis and "
        "saved under DIR/classes/ (case.yaml, model.onnx, inputs.npz, repro.py); "
        "DIR/findings.json lists them and DIR/results.jsonl holds every result.",
        epilog="Exit codes: 0 every discrepancy found is in the baseline (cases/known), 1 a "
        "discrepancy outside it or an entry that no longer reproduces (unless --allow-fixed), "
        "2 usage or harness error, bad baseline file, 130 interrupted (what was found so far "
        "is kept).",
    )
    fuzz_command.add_arguments(fuzz)
    fuzz.set_defaults(func=fuzz_command.command)

    report = commands.add_parser(
        "report",
        help="write the HTML report of one or more runs",
        description="Read run folders (or their results.jsonl files; several are merged, "
        "e.g. shards) and write one self-contained HTML file: outcome matrix, discrepancy "
        "groups with their smallest case, fuzz classes, and the spec decisions next to what "
        "each runtime did.",
        epilog="Exit codes: 0 written, 2 a results path that cannot be read.",
    )
    report.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULTS",
        help="run folders or results.jsonl files",
    )
    report.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.html")
    report.add_argument(
        "--junit", type=Path, metavar="FILE.xml", help="also JUnit XML: a test case per result"
    )
    report.add_argument(
        "--json", type=Path, metavar="FILE.json", help="also the versioned JSON summary"
    )
    report.add_argument(
        "--known",
        type=Path,
        metavar="DIR",
        help="mark discrepancies known or new against this baseline folder (default: the "
        "one the runs' gate used, else cases/known)",
    )
    report.set_defaults(func=cmd_report)

    gate = commands.add_parser(
        "gate",
        help="hold finished runs against the known-discrepancy baseline",
        description="Read run folders (or results.jsonl files; shards are merged) and check "
        "every discrepancy against cases/known/<runtime>.yaml: known ones pass, new ones fail, "
        "and an entry whose results conform now is reported as 'fixed upstream?'.",
        epilog="Exit codes: 0 passed, 1 new discrepancies or entries fixed upstream? (unless "
        "--allow-fixed), 2 a bad baseline file or an unreadable run.",
    )
    gate.add_argument("paths", nargs="+", type=Path, metavar="RUN", help="run folders or results")
    gate_command.add_arguments(gate)
    gate.add_argument("--out", type=Path, metavar="DIR", help="also write DIR/gate.json")
    gate.set_defaults(func=gate_command.command)

    diff = commands.add_parser(
        "diff",
        help="what changed between two runs: new, fixed and changed discrepancies",
        description="Pair the results of two runs by (runtime, case id, variant) and list "
        "the discrepancies that are new in B, fixed in B, or changed (another kind or another "
        "message); fuzz campaigns, which share no result, are compared by discrepancy "
        "signature. Prints the changes and writes an HTML page.",
        epilog="Exit codes: 0 nothing changed, 1 something changed, 2 a run that cannot be read.",
    )
    diff.add_argument(
        "run_a", type=Path, metavar="RUN_A", help="the run before (folder or results)"
    )
    diff.add_argument("run_b", type=Path, metavar="RUN_B", help="the run after")
    diff.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE.html",
        help="the HTML page (default RUN_B/diff.html)",
    )
    diff.set_defaults(func=cmd_diff)

    show = commands.add_parser("oracle", help="print the oracle's verdict for a case")
    show.add_argument("case_id", help="a concrete id, or a case-file id for all its expansions")
    show.add_argument(
        "--cases",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="case files or folders (default cases/)",
    )
    show.set_defaults(func=cmd_oracle)
    return parser


def cmd_report(args) -> int:
    from conformance.report import model, render  # Jinja2 only when a report is asked for

    if args.known is not None and not args.known.is_dir():
        print(f"error: --known {args.known}: no such folder", file=sys.stderr)
        return EXIT_USAGE

    try:
        written = render.write(
            args.results, args.output, junit=args.junit, summary=args.json, known=args.known
        )
    except model.ReportError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(
        f"{args.output}: {written.records} results, {len(written.groups)} discrepancy groups"
        + (f", {len(written.findings)} fuzz classes" if written.findings else "")
    )
    return EXIT_OK


def cmd_diff(args) -> int:
    from conformance.engine.records import RecordsError
    from conformance.report import diff, render

    try:
        found = diff.compare([args.run_a], [args.run_b])
    except RecordsError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    print("\n".join(diff.explain(found)))
    out = args.output or (args.run_b if args.run_b.is_dir() else args.run_b.parent) / "diff.html"
    render.write_diff(found, out)
    print(f"diff page: {out}")
    return EXIT_FAILED if found.differs else EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `conformance cases list | head` is not an error
        # Point stdout at devnull so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
