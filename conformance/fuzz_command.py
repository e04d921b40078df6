"""``conformance fuzz``: the terminal front-end of :mod:`conformance.fuzz.campaign`.

Exit codes:
  0    every discrepancy found is in the baseline (cases/known/<runtime>.yaml; none at
       all without one), and no entry with inputs in scope stopped reproducing
  1    a discrepancy outside the baseline (DIR/findings.json lists every class), or an
       entry that no longer reproduces ("fixed upstream?") unless --allow-fixed
  2    usage error, a runtime that is unknown or does not start, or a harness error
  130  interrupted (Ctrl-C); every result and class found so far is kept
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.text import Text

from conformance import gate_command
from conformance.engine.pool import EngineError
from conformance.fuzz import strategies
from conformance.fuzz.artifacts import FINDINGS
from conformance.fuzz.campaign import Campaign, CampaignOptions, Status
from conformance.run_command import (
    EXIT_DISCREPANCIES,
    EXIT_USAGE,
    add_runtime_argument,
    add_shard_argument,
    chosen_runtimes,
    exit_status,
    write_report,
)

QUIET_EVERY_S = 10.0  # status lines when stderr is not a terminal


def add_arguments(parser) -> None:
    add_runtime_argument(parser)
    parser.add_argument(
        "--time-budget",
        type=float,
        required=True,
        metavar="SECONDS",
        help="how long the campaign runs, shrinking included",
    )
    parser.add_argument(
        "--seed", type=int, required=True, metavar="N", help="the campaign's seed (deterministic)"
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="output folder (default reports/fuzz-<time>)"
    )
    parser.add_argument(
        "--max-elements",
        type=int,
        default=None,
        metavar="N",
        help="elements per tensor at most (default $"
        f"{strategies.MAX_ELEMENTS_ENV} or {strategies.DEFAULT_MAX_ELEMENTS})",
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=1, metavar="N", help="worker processes per runtime"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=2.0,
        metavar="S",
        help="seconds per example and runtime (default 2; a healthy runtime takes milliseconds)",
    )
    add_shard_argument(parser, "shards draw different examples from the same seed")
    parser.add_argument("--no-progress", action="store_true", help="no live display")
    gate_command.add_arguments(parser)


def _status_line(status: Status) -> str:
    line = (
        f"{status.elapsed_s:6.0f} s  {status.examples:7d} examples  "
        f"{status.examples_per_s:6.1f}/s  {status.classes:4d} classes  "
        f"{status.left_s:5.0f} s left"
    )
    if status.skipped:
        line += f"  {status.skipped} skipped"
    if status.shrinking:
        line += f"  shrinking {status.shrinking}"
    return line


def _families(campaign: Campaign) -> list[str]:
    """One line per (runtime, kind, op): classes often share a cause (one dtype
    refused in every variant and opset), so the terminal shows families with
    their dtypes, and findings.json every class."""
    families: dict[tuple, list] = {}
    for found in campaign.classes.values():
        sig = found.signature
        families.setdefault((sig.runtime, sig.kind, sig.op), []).append(found)
    lines = []
    for (runtime, kind, op), members in sorted(families.items()):
        first = min(members, key=lambda m: m.first_found_s)
        dtypes = sorted({m.signature.dtype for m in members})
        shrunk = [m for m in members if m.shrunk]
        smallest = min(
            shrunk or members, key=lambda m: m.example.data.size + m.example.indices.size
        )
        hits = sum(m.hits for m in members)
        lines.append(
            f"  {runtime:12} {kind:17} {op:15} {len(members):4d} classes {hits:5d} "
            f"hits, first at {first.first_found_s:.1f} s, {len(shrunk)} shrunk; "
            f"dtypes: {' '.join(dtypes)}\n"
            f"      smallest: {smallest.files.get('case', '')}"
        )
    return lines


def command(args) -> int:
    err = Console(stderr=True, soft_wrap=True)
    if args.time_budget <= 0 or args.jobs < 1 or args.timeout <= 0:
        err.print("--time-budget, -j and --timeout must be positive")
        return EXIT_USAGE
    try:
        max_elements = args.max_elements or strategies.max_elements()
    except ValueError as error:
        err.print(str(error), markup=False)
        return EXIT_USAGE
    if max_elements < 1:
        err.print("--max-elements must be at least 1")
        return EXIT_USAGE
    runtimes = chosen_runtimes(args, err)
    if runtimes is None:
        return EXIT_USAGE
    baselines = gate_command.load_baselines(args, runtimes, err)
    if baselines is None:
        return EXIT_USAGE
    out = args.out or Path("reports") / datetime.now().strftime("fuzz-%Y%m%d-%H%M%S")
    options = CampaignOptions(
        runtimes=runtimes,
        time_budget=args.time_budget,
        seed=args.seed,
        out_dir=out,
        max_elements=max_elements,
        workers=args.jobs,
        timeout=args.timeout,
        shard=args.shard,
    )
    live = not args.no_progress and err.is_terminal
    display = Live(Text("starting workers..."), console=err, refresh_per_second=4, transient=True)
    last = [0.0]

    def on_status(status: Status) -> None:
        if live:
            display.update(Text(_status_line(status)))
        elif not args.no_progress and time.monotonic() - last[0] >= QUIET_EVERY_S:
            last[0] = time.monotonic()
            err.print(_status_line(status), markup=False)

    err.print(
        f"fuzzing {', '.join(runtimes)} for {args.time_budget:g} s, seed {args.seed}, "
        f"at most {max_elements} elements per tensor -> {out}/",
        markup=False,
    )
    campaign = Campaign(options, command=["conformance", *sys.argv[1:]], on_status=on_status)
    try:
        if live:
            with display:
                run = campaign.execute()
        else:
            run = campaign.execute()
    except EngineError as error:
        err.print(f"harness error: {error}", markup=False)
        return EXIT_USAGE
    summary = run.summary
    rate = campaign.examples / campaign.fuzz_s if campaign.fuzz_s else 0.0
    print(
        f"{campaign.examples} examples in {campaign.elapsed():.0f} s ({rate:.1f} examples/s "
        f"while fuzzing; {campaign.shrink_s:.0f} s shrinking), {summary.records} results, "
        f"{len(campaign.classes)} discrepancy classes"
        + (f", {campaign.skipped} runs skipped" if campaign.skipped else "")
    )
    if campaign.classes:
        print("discrepancy classes by runtime, kind and op:")
        print("\n".join(_families(campaign)))
    print(f"findings: {out / FINDINGS}")
    status = gate_command.evaluate([out], baselines, args, err, write_to=out)
    print(f"report:   {write_report(out)}")
    if status == EXIT_USAGE:
        return status
    return exit_status(
        summary, err, status == EXIT_DISCREPANCIES, "the results and classes found so far"
    )
