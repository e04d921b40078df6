"""``conformance run``: the terminal front-end of :mod:`conformance.engine.run`.

Exit codes:
  0    every outcome conforms (pass, both_rejected; harness_unsupported is listed, not failed);
       with --gate: every discrepancy is in the baseline (cases/known) and still reproduces
  1    at least one discrepancy (value/dtype/shape mismatch, rejected, accepted_invalid,
       crash, timeout); with --gate: one not in the baseline, or an entry that no longer
       reproduces (unless --allow-fixed)
  2    usage error, bad case files, a runtime that is unknown or does not start,
       or a harness error during the run
  130  interrupted (Ctrl-C); everything recorded so far is kept
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from conformance import adapters, gate_command
from conformance.engine import models, records
from conformance.engine.judge import DISCREPANCIES, KINDS
from conformance.engine.pool import DEFAULT_TIMEOUT, EngineError
from conformance.engine.run import Options, run_cases

EXIT_OK, EXIT_DISCREPANCIES, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def size(text: str) -> int:
    """'512MiB', '2g', '1.5GiB' or plain bytes."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([kmgt]?)(i?b)?\s*", text.lower())
    if not match:
        raise ValueError(f"not a size: {text!r} (examples: 512MiB, 2GiB, 1000000)")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def default_out() -> Path:
    return Path("reports") / datetime.now().strftime("run-%Y%m%d-%H%M%S")


REPORT, JUNIT, REPORT_JSON = "report.html", "junit.xml", "report.json"


def write_report(out: Path) -> Path:
    """The HTML report of a finished (or interrupted) run, with JUnit XML and
    the JSON summary, beside its results."""
    from conformance.report import render  # Jinja2 only when a report is written

    render.write([out], out / REPORT, junit=out / JUNIT, summary=out / REPORT_JSON)
    return out / REPORT


def shard(text: str) -> tuple[int, int]:
    """'I/N' with 1 <= I <= N: this process's share of the work."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise argparse.ArgumentTypeError(f"{text!r}: give I/N with 1 <= I <= N, e.g. 2/4")
    return int(match.group(1)), int(match.group(2))


def add_shard_argument(parser, what: str) -> None:
    """--shard, shared by run and fuzz."""
    parser.add_argument(
        "--shard",
        type=shard,
        default=(1, 1),
        metavar="I/N",
        help=f"run shard I of N ({what}); `conformance report` merges the shards' folders",
    )


def add_runtime_argument(parser) -> None:
    """--runtime, shared by run and fuzz."""
    parser.add_argument(
        "--runtime",
        dest="runtimes",
        nargs="+",
        action="extend",
        metavar="NAME",
        help="runtimes to run (default: every installed one: "
        + ", ".join(adapters.installed())
        + "); a module:Class target works too",
    )


def chosen_runtimes(args, err: Console) -> list[str] | None:
    """The runtimes asked for (default: every installed one), or None after
    saying which name is unknown."""
    runtimes = args.runtimes or adapters.installed()
    try:
        for name in runtimes:
            adapters.resolve(name)
    except adapters.UnknownRuntime as error:
        err.print(str(error), markup=False)
        return None
    return runtimes


def add_arguments(parser) -> None:
    add_runtime_argument(parser)
    parser.add_argument(
        "--cases",
        nargs="+",
        action="extend",
        type=Path,
        metavar="PATH",
        help="case files or folders (default cases/)",
    )
    parser.add_argument("-k", metavar="EXPR", help="only case ids containing EXPR (or a glob)")
    parser.add_argument(
        "--variants",
        nargs="+",
        action="extend",
        choices=models.VARIANTS,
        metavar="VARIANT",
        help="model variants (default all five: " + ", ".join(models.VARIANTS) + ")",
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=1, metavar="N", help="worker processes per runtime"
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="output folder (default reports/run-<time>)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds per case and runtime, load and run (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--batch-size", type=int, default=32, metavar="N", help="cases per worker message"
    )
    parser.add_argument(
        "--case-memory",
        type=size,
        default="1GiB",
        metavar="SIZE",
        help="refuse cases declaring more than SIZE of inputs and output (default 1GiB)",
    )
    parser.add_argument(
        "--worker-memory",
        type=size,
        default="4GiB",
        metavar="SIZE",
        help="heap limit of each worker process (default 4GiB)",
    )
    add_shard_argument(parser, "every N-th case, in the order the case files give")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--gate",
        action="store_true",
        help="exit 0 when every discrepancy is a known one (cases/known/<runtime>.yaml)",
    )
    gate_command.add_arguments(parser)


def _summary_table(summary, runtimes: list[str]) -> Table:
    """Outcome kinds down, runtimes across: narrow enough for any terminal."""
    table = Table(title=f"{summary.cases} cases, {summary.records} results")
    table.add_column("outcome")
    for runtime in runtimes:
        table.add_column(runtime, justify="right")
    for kind in KINDS:
        counts = [summary.counts[rt][kind] for rt in runtimes]
        if not any(counts):
            continue
        style = (
            "green"
            if kind in ("pass", "both_rejected")
            else ("red" if kind in DISCREPANCIES else "yellow")
        )
        table.add_row(kind, *(str(n) for n in counts), style=style)
    return table


def _discrepancy_groups(summary, results_path: Path, limit: int = 25) -> list[str]:
    """One line per (runtime, kind, op, case-file id): what to look at first."""
    groups = sorted(summary.groups.items())
    lines = [
        f"  {runtime:12} {kind:17} {op:15} {base_id} ({n})"
        for (runtime, kind, op, base_id), n in groups[:limit]
    ]
    if len(groups) > limit:
        lines.append(f"  ... {len(groups) - limit} more groups in {results_path}")
    return lines


def command(args, load_cases, select) -> int:
    err = Console(stderr=True, soft_wrap=True)  # long paths must not be broken
    if args.jobs < 1 or args.batch_size < 1 or args.timeout <= 0:
        err.print("-j, --batch-size and --timeout must be positive")
        return EXIT_USAGE
    runtimes = chosen_runtimes(args, err)
    if runtimes is None:
        return EXIT_USAGE
    if not args.gate and (args.known is not None or args.allow_fixed):
        err.print("--known and --allow-fixed are options of the gate: add --gate")
        return EXIT_USAGE
    baselines = gate_command.load_baselines(args, runtimes, err) if args.gate else {}
    if baselines is None:
        return EXIT_USAGE
    cases = load_cases(args.cases)
    if cases is None:
        return EXIT_USAGE
    cases = select(cases, args.k)
    if not cases:
        err.print(f"no case matches -k {args.k!r}", markup=False)
        return EXIT_USAGE
    index, count = args.shard
    cases = cases[index - 1 :: count]  # every N-th: each shard gets every kind of case
    if not cases:
        err.print(f"shard {index}/{count} has no case ({count} shards is more than cases)")
        return EXIT_USAGE
    variants = tuple(dict.fromkeys(args.variants or models.VARIANTS))
    out = args.out or default_out()
    options = Options(
        runtimes=runtimes,
        variants=variants,
        workers=args.jobs,
        batch_size=args.batch_size,
        timeout=args.timeout,
        worker_memory=args.worker_memory,
        case_memory=args.case_memory,
    )
    total = len(cases) * len(variants) * len(runtimes)
    show = not args.no_progress and err.is_terminal
    progress = Progress(
        TextColumn("[bold]running"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[found]}"),
        TimeElapsedColumn(),
        console=err,
        disable=not show,
    )
    task = progress.add_task("run", total=total, found="")

    def update(done: int, summary) -> None:
        found = f"[red]{summary.discrepancies} discrepancies" if summary.discrepancies else ""
        progress.update(task, completed=done, found=found)

    err.print(
        f"{len(cases)} cases x {len(variants)} variants x {len(runtimes)} runtimes "
        f"({', '.join(runtimes)}) -> {out}/",
        markup=False,
    )
    try:
        with progress:
            summary = run_cases(
                cases,
                out,
                options,
                progress=update,
                command=["conformance", *sys.argv[1:]],
                extra_header={"shard": list(args.shard)},
            )
    except EngineError as error:
        err.print(f"harness error: {error}", markup=False)
        return EXIT_USAGE
    console = Console()
    console.print(_summary_table(summary, list(summary.counts)))
    groups = _discrepancy_groups(summary, out / records.RESULTS)
    if groups:
        print("discrepancies (runtime, kind, op, case-file id, count):")
        print("\n".join(groups))
    print(f"results: {out / records.RESULTS}  ({summary.duration_s:.1f} s)")
    found = bool(summary.discrepancies)
    status = EXIT_OK
    if args.gate:  # before the report, which marks each group known or new from gate.json
        status = gate_command.evaluate([out], baselines, args, err, write_to=out)
        found = status == EXIT_DISCREPANCIES
    print(f"report:  {write_report(out)}")
    if status == EXIT_USAGE:
        return status
    return exit_status(summary, err, found, "the results recorded so far")


def exit_status(summary, err: Console, found: bool, kept: str) -> int:
    """The exit code of run and fuzz, once everything is written."""
    if summary.interrupted:
        err.print(f"interrupted: {kept} are kept")
        return EXIT_INTERRUPTED
    if summary.harness_errors:
        err.print(f"{summary.harness_errors} harness error(s): see 'harness_error' records")
        return EXIT_USAGE
    return EXIT_DISCREPANCIES if found else EXIT_OK
