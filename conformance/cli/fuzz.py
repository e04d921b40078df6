"""``conformance fuzz``: a time-boxed campaign (:mod:`conformance.fuzz.campaign`)
that finds, classifies and shrinks discrepancies, then the gate and the report."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rich.live import Live
from rich.text import Text

from conformance.cli import exits, options
from conformance.engine import records
from conformance.engine.pool import EngineError
from conformance.engine.records import FINDINGS
from conformance.fuzz import strategies
from conformance.fuzz.campaign import Campaign, CampaignOptions, Status
from conformance.report import terminal

QUIET_EVERY_S = 10.0  # status lines when stderr is not a terminal


def add_parser(commands) -> None:
    fuzz = commands.add_parser(
        "fuzz",
        help="a time-boxed fuzz campaign: find, classify and shrink discrepancies",
        description="Draw examples from conformance.strategies, run each on every runtime in "
        "its drawn model variant (isolated workers, as in run), and group the discrepancies "
        "into classes by signature (runtime, op, outcome kind, dtype, variant, opset, broken "
        "clause, index and shape features). Each new class is shrunk with Hypothesis and "
        "saved under DIR/classes/ (case.yaml, model.onnx, inputs.npz, repro.py); "
        "DIR/findings.json lists them and DIR/results.jsonl holds every result.",
        epilog=exits.epilog(exits.OK, exits.FAILED, exits.USAGE, exits.INTERRUPTED),
    )
    _add_arguments(fuzz)
    fuzz.set_defaults(func=command)


def _add_arguments(parser) -> None:
    options.add_runtime(parser)
    parser.add_argument(
        "--time-budget",
        type=options.positive_seconds,
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
        type=options.element_cap,
        default=None,
        metavar="N",
        help="elements per tensor at most (default $"
        f"{strategies.MAX_ELEMENTS_ENV} or {strategies.DEFAULT_MAX_ELEMENTS})",
    )
    options.add_jobs(parser)
    options.add_pack(parser)
    parser.add_argument(
        "--timeout",
        type=options.positive_seconds,
        default=2.0,
        metavar="S",
        help="seconds per example and runtime (default 2; a healthy runtime takes milliseconds)",
    )
    options.add_shard(parser, "shards draw different examples from the same seed")
    parser.add_argument("--no-progress", action="store_true", help="no live display")
    options.add_gate(parser)


def command(args) -> int:
    err = options.stderr()
    if args.time_budget <= 0 or args.timeout <= 0:
        err.print("--time-budget, -j and --timeout must be positive")
        return exits.USAGE
    try:
        max_elements = args.max_elements or strategies.max_elements()
    except ValueError as error:
        err.print(str(error), markup=False)
        return exits.USAGE
    if max_elements < 1:
        err.print("--max-elements must be at least 1")
        return exits.USAGE
    runtimes = options.chosen_runtimes(args, err)
    if runtimes is None:
        return exits.USAGE
    baselines = options.load_baselines(args, runtimes, err)
    if baselines is None:
        return exits.USAGE
    out = args.out or options.default_out("fuzz")
    settings = CampaignOptions(
        runtimes=runtimes,
        time_budget=args.time_budget,
        seed=args.seed,
        out_dir=out,
        max_elements=max_elements,
        workers=options.workers(args.jobs, runtimes),
        workers_chosen="auto" if args.jobs == "auto" else "given",
        timeout=args.timeout,
        shard=args.shard,
        pack=args.pack,
    )
    live = not args.no_progress and err.is_terminal
    display = Live(Text("starting workers..."), console=err, refresh_per_second=4, transient=True)
    last = [0.0]

    def on_status(status: Status) -> None:
        if live:
            display.update(Text(terminal.status_line(status)))
        elif not args.no_progress and time.monotonic() - last[0] >= QUIET_EVERY_S:
            last[0] = time.monotonic()
            err.print(terminal.status_line(status), markup=False)

    err.print(
        f"fuzzing {', '.join(t.name or t.adapter for t in runtimes)} "
        f"for {args.time_budget:g} s, seed {args.seed}, "
        f"at most {max_elements} elements per tensor -> {out}/",
        markup=False,
    )
    campaign = Campaign(settings, command=["conformance", *sys.argv[1:]], on_status=on_status)
    try:
        if live:
            with display:
                run = campaign.execute()
        else:
            run = campaign.execute()
    except EngineError as error:
        err.print(f"harness error: {error}", markup=False)
        return exits.USAGE
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
        print("\n".join(terminal.fuzz_families(campaign)))
    print(terminal.safe(f"findings: {out / FINDINGS}"))
    try:
        written = records.read_folder(out)  # once, for the gate and the report
    except records.RecordsError as error:
        err.print(str(error), markup=False)
        return exits.USAGE
    status = options.gate_run(written, baselines, args, err)
    print(terminal.safe(f"report:   {options.write_report(written)}"))
    if status == exits.USAGE:
        return status
    return options.exit_status(
        summary, err, status == exits.FAILED, "the results and classes found so far"
    )
