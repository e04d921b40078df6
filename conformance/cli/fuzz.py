"""``conformance fuzz``: a time-boxed campaign (:mod:`conformance.fuzz.campaign`)
that finds, classifies and shrinks discrepancies, then the gate and the report."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.live import Live
from rich.text import Text

from conformance.cli import exits, finish, inputs, options, progress
from conformance.engine import records
from conformance.engine.records import FINDINGS
from conformance.fuzz import strategies
from conformance.fuzz.campaign import Campaign, CampaignOptions, Status
from conformance.report import terminal


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
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no live display (outside a terminal: no status line every 10 s)",
    )
    options.add_gate(parser)
    finish.add_output(parser)


def command(args) -> int:
    err = options.stderr()
    try:  # $CONFORMANCE_MAX_ELEMENTS, when --max-elements does not say
        max_elements = args.max_elements or strategies.max_elements()
    except ValueError as error:
        err.print(str(error), markup=False)
        return exits.USAGE
    runtimes = options.chosen_runtimes(args)
    baselines = inputs.load_baselines(args, runtimes, err)
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
    ticker = progress.Ticker()  # outside a terminal (CI): a line at most every 10 s

    def on_status(status: Status) -> None:
        if live:
            display.update(Text(terminal.status_line(status)))
        elif not args.no_progress and ticker.due():
            err.print(terminal.status_line(status), markup=False)

    names = [t.name or t.adapter for t in runtimes]
    header = terminal.fuzz_header(names, args.time_budget, args.seed, max_elements, out)
    err.print(header, markup=False)
    campaign = Campaign(settings, command=["conformance", *sys.argv[1:]], on_status=on_status)
    if live:
        with display:
            run = campaign.execute()
    else:
        run = campaign.execute()
    summary = run.summary
    print("\n".join(terminal.campaign_lines(campaign, summary.records)))
    print(terminal.path_line("findings:", out / FINDINGS, 9))
    written = records.read_folder(out)  # once, for the gate and the report
    return finish.finish(
        summary, written, baselines, args, err,
        decides=True, kept="the results and classes found so far", label_width=9,
    )  # fmt: skip
