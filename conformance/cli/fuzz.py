"""``conformance fuzz``: a time-boxed campaign (:mod:`conformance.fuzz.campaign`)
that finds, classifies and shrinks discrepancies, then the gate and the report;
``conformance fuzz replay``: the regression store's bugs on the current targets
(:mod:`conformance.fuzz.replay`), then the gate and the report."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from rich.live import Live
from rich.text import Text

from conformance.cli import exits, finish, options
from conformance.engine import files, records
from conformance.engine.records import FINDINGS
from conformance.engine.run import Run
from conformance.fuzz import limits
from conformance.fuzz.options import FUZZ_TIMEOUTS, CampaignOptions
from conformance.fuzz.store import Store, StoreError, open_store
from conformance.report.terminal import cases as cases_text
from conformance.report.terminal import finish as finish_text
from conformance.report.terminal import fuzz as fuzz_text
from conformance.report.terminal.progress import Ticker


def add_parser(commands) -> None:
    fuzz = commands.add_parser(
        "fuzz",
        help="a time-boxed fuzz campaign: find, classify and shrink discrepancies",
        description="Draw examples from conformance.strategies, run each on every runtime in "
        "its drawn model variant (isolated workers, as in run), and group the discrepancies "
        "into classes by signature (runtime, op, outcome kind, dtype, variant, opset, broken "
        "clause, index and shape features). Each new class is shrunk with Hypothesis and "
        "saved under DIR/classes/ (case.yaml, model.onnx, inputs.npz, repro.py); "
        "DIR/findings.json lists them and DIR/results.jsonl holds every result. Classes "
        "are gathered into bugs (root causes); each bug's smallest reproducer goes into the "
        "regression store (--store), which `conformance fuzz replay` runs again.",
        epilog=exits.epilog(exits.OK, exits.FAILED, exits.USAGE, exits.INTERRUPTED),
    )
    _add_arguments(fuzz)
    fuzz.set_defaults(func=command)
    actions = fuzz.add_subparsers(dest="fuzz_action", metavar="ACTION")
    again = actions.add_parser(
        "replay",
        help="run every bug of the regression store on the current targets: still there, "
        "fixed or changed",
        description="Run each stored bug's smallest reproducer (in its variant) on the current "
        "targets and say, for each bug, whether it is still there, fixed, changed (another "
        "discrepancy) or not run (its runtime is not a target). The results are gated as a "
        "run's: the nightly job after a runtime upgrade. DIR/replay.json lists the bugs, "
        "DIR/replay/ their case files.",
        epilog=exits.epilog(exits.OK, exits.FAILED, exits.USAGE, exits.INTERRUPTED),
    )
    options.add_runtime(again)
    _add_store(again, required=True)
    again.add_argument(
        "--out", type=Path, metavar="DIR", help="output folder (default reports/replay-<time>)"
    )
    options.add_jobs(again)
    again.add_argument(
        "--timeout",
        type=options.positive_seconds,
        default=None,
        metavar="S",
        help="seconds per job (default: each runtime's, as in run)",
    )
    options.add_gate(again)
    finish.add_output(again)
    again.set_defaults(func=replay_command)


# Workers per runtime of a campaign with -j auto, where there are two cores or
# more. A fuzz job is a tiny tensor: a runtime's threads do not matter, but a
# second worker keeps its lane busy while the first compiles a model or
# restarts after a crash (onnxruntime+openvino, 40 s, seed 3, 2 cores:
# 76 examples/s with one worker each, 105 with two).
FUZZ_AUTO_WORKERS = 2


STORE_ENV = "CONFORMANCE_FUZZ_STORE"
NO_STORE = "off"


def default_store() -> str:
    """$CONFORMANCE_FUZZ_STORE, else the user's cache folder (so that every
    campaign remembers what earlier ones found, with no option given)."""
    given = os.environ.get(STORE_ENV)
    if given:
        return given
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "onnx-gather-conformance", "fuzz-store")


def _add_store(parser, required: bool = False) -> None:
    where = "a folder, or redis://HOST:PORT/DB for a store a fleet of shards shares"
    parser.add_argument(
        "--store",
        required=required,
        default=None,
        metavar="DIR|URL",
        help=f"the regression store: {where}"
        + (
            ""
            if required
            else f" (default ${STORE_ENV}, else ~/.cache/onnx-gather-conformance/fuzz-store; "
            f"'{NO_STORE}': none). A campaign replays the store's bugs first, shrinks only "
            "bugs no shard has claimed, and stores each one's smallest reproducer"
        ),
    )


def _open_store(spec: str | None, out: Path) -> Store | None:
    spec = spec or default_store()
    if spec == NO_STORE:
        return None
    return open_store(spec, spool=out / "store-spool")


def _replayed_store(spec: str) -> Store:
    """The store a replay reads: it must exist (a replay never creates one)."""
    if not spec or spec == NO_STORE:
        raise StoreError(
            f"fuzz replay: --store {spec!r} names no store; give the store's folder or its "
            "redis:// URL"
        )
    return open_store(spec, create=False)


def _add_arguments(parser) -> None:
    options.add_runtime(parser)
    parser.add_argument(
        "--time-budget",
        type=options.positive_seconds,
        metavar="SECONDS",
        help="how long the campaign runs, shrinking included (required)",
    )
    parser.add_argument(
        "--seed", type=int, metavar="N", help="the campaign's seed (deterministic; required)"
    )
    parser.add_argument(
        "--max-examples",
        type=options.positive_int,
        default=None,
        metavar="N",
        help="end once the campaign has run N examples of its own, or at --time-budget if "
        "sooner: the seed's first N examples, however loaded the machine",
    )
    options.add_out(parser, "fuzz")
    parser.add_argument(
        "--max-elements",
        type=options.element_cap,
        default=None,
        metavar="N",
        help="elements per tensor at most (default $"
        f"{limits.MAX_ELEMENTS_ENV} or {limits.DEFAULT_MAX_ELEMENTS})",
    )
    options.add_jobs(
        parser,
        f"as for run, but at least {FUZZ_AUTO_WORKERS} on two cores or more: fuzz jobs are "
        "tiny, and a second worker keeps a runtime busy while the first compiles or restarts",
    )
    options.add_pack(parser)
    # A healthy runtime takes milliseconds; the compilers compile every pack.
    options.add_timeout(
        parser,
        FUZZ_TIMEOUTS,
        "job (a pack of examples, or one alone)",
        ", which compile every pack",
    )
    options.add_shard(parser, "shards draw different examples from the same seed")
    _add_store(parser)
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no live display (outside a terminal: no status line every 10 s)",
    )
    parser.add_argument(
        "--model",
        nargs="+",
        action="extend",
        type=Path,
        metavar="MODEL",
        help="ONNX models: draw only around their Gather/GatherElements nodes' signatures "
        "(ops, opsets, dtypes, ranks and axes, shapes near theirs; docs/models.md)",
    )
    options.add_gate(parser)
    finish.add_output(parser)


def model_strategy(paths: list[Path], max_elements: int):
    """(the strategy, the header's ``graphs``) of fuzz --model; a ConformanceError
    when no node of the models can be fuzzed."""
    from conformance.cases.check import DEFAULT_CASE_MEMORY
    from conformance.errors import ConformanceError
    from conformance.fuzz import model_nodes
    from conformance.graphs import drawing, reading

    read = [reading.load(path) for path in paths]
    groups = drawing.group_nodes(read, {}, DEFAULT_CASE_MEMORY)
    signatures = [model_nodes.NodeSignature.of(g) for g in groups]
    usable = [s for s in signatures if model_nodes.fuzzable(s)]
    if not usable:
        names = ", ".join(str(p) for p in paths)
        raise ConformanceError(f"error: {names}: no Gather or GatherElements node to fuzz around")
    about = {
        "models": [str(f.path) for f in read],
        "opsets": [f.opset for f in read],
        "dims": {},
        "default_dim": drawing.DEFAULT_DIM,
        "draws": 0,
        "inputs": None,
        "captured_with": None,
        "timings_s": {},
    }
    return model_nodes.examples(usable, max_elements), {"graphs": about}


# A campaign compiles models that never recur (its own cache keeps the shapes
# that do): OpenVINO's compiled-model cache would only grow by a blob each
# (docs/cli.md, "OpenVINO's compiled-model cache"), so it is off unless asked.
OPENVINO_CACHE_ENV = "CONFORMANCE_OPENVINO_CACHE"  # conformance.adapters.ov.CACHE_ENV


def command(args) -> int:
    # Hypothesis comes with the campaign: imported here, not at every command's start.
    from conformance.fuzz.campaign import Campaign, Status

    os.environ.setdefault(OPENVINO_CACHE_ENV, "off")  # its workers inherit it
    finish.check_outputs(args.summary_md)
    err = options.stderr()
    missing = [flag for flag, value in (("--time-budget", args.time_budget), ("--seed", args.seed))
               if value is None]  # fmt: skip
    if missing:  # not argparse's `required`: `fuzz replay` has neither
        err.print(f"conformance fuzz: the following arguments are required: "
                  f"{', '.join(missing)}", markup=False)  # fmt: skip
        return exits.USAGE
    try:  # $CONFORMANCE_MAX_ELEMENTS, when --max-elements does not say
        max_elements = args.max_elements or limits.max_elements()
    except ValueError as error:
        err.print(str(error), markup=False)
        return exits.USAGE
    around = model_strategy(args.model, max_elements) if args.model else (None, None)
    settings = options.settings_of(
        args,
        "fuzz",
        err,
        auto_at_least=FUZZ_AUTO_WORKERS,
        pack=args.pack,
        progress=not args.no_progress,
    )
    runtimes, engine, out = list(settings.targets), settings.engine, settings.out
    assert engine is not None and out is not None  # built with both
    store = _open_store(args.store, out)
    campaign_options = CampaignOptions(
        runtimes=runtimes,
        time_budget=args.time_budget,
        seed=args.seed,
        out_dir=out,
        max_elements=max_elements,
        workers=engine.workers,
        workers_chosen=engine.workers_chosen,
        gpu_workers=engine.gpu_workers,
        timeout=engine.timeout,
        shard=args.shard,
        pack=engine.pack,
        store=store,
        max_examples=args.max_examples,
    )
    campaign_options.strategy, campaign_options.extra_header = around
    live = settings.progress and err.is_terminal
    display = Live(Text("starting workers..."), console=err, refresh_per_second=4, transient=True)
    ticker = Ticker()  # outside a terminal (CI): a line at most every 10 s

    def on_status(status: Status) -> None:
        if live:
            display.update(Text(fuzz_text.status_line(status)))
        elif settings.progress and ticker.due():
            err.print(fuzz_text.status_line(status), markup=False)

    header = fuzz_text.fuzz_header(
        settings.names, args.time_budget, args.seed, max_elements, out, args.max_examples
    )
    err.print(header, markup=False)
    if store is not None:
        err.print(f"store: {store.location}", markup=False)
    campaign = Campaign(
        campaign_options, command=["conformance", *sys.argv[1:]], on_status=on_status
    )
    try:
        with display if live else contextlib.nullcontext():
            run = campaign.execute()
    finally:  # a Redis connection, whatever stopped the campaign
        if store is not None:
            store.close()
    if store is not None:
        for line in fuzz_text.skipped_entry_lines(store.skipped):
            err.print(line, markup=False)
    summary = run.summary
    for line in cases_text.case_problem_lines(summary.case_problems):  # the store's reproducers
        err.print(line, markup=False)
    findings = campaign.written  # as the campaign holds them, not read back
    assert findings is not None  # written whenever the campaign ran
    written = records.read_folder(out)  # once, for the gate and the report

    def found(decided) -> list[str]:  # the bugs, the new ones apart once the gate has spoken
        new = fuzz_text.new_bugs(findings, decided.gate) if decided is not None else None
        lines = fuzz_text.campaign_lines(
            findings, summary.records, out, new, verbose=settings.verbose
        )
        return [*lines, finish_text.path_line("findings:", out / FINDINGS, 9)]

    return finish.finish(
        summary, written, settings, err,
        kept="the results and classes found so far", label_width=9, preamble=found,
    )  # fmt: skip


def replay_command(args) -> int:
    """``conformance fuzz replay``: the store's bugs on the current targets, gated."""
    from conformance.fuzz import replay  # with Hypothesis (see command)

    finish.check_outputs(args.summary_md)
    err = options.stderr()
    settings = options.settings_of(args, "replay", err)
    engine, out = settings.engine, settings.out
    assert engine is not None and out is not None  # built with both
    store = _replayed_store(args.store)
    with store:
        entries = store.entries()
    for line in fuzz_text.skipped_entry_lines(store.skipped):
        err.print(line, markup=False)
    if not entries:
        err.print(fuzz_text.no_bug_line(store.location, len(store.skipped)), markup=False)
        return exits.USAGE
    command_line = ["conformance", *sys.argv[1:]]
    header = {"replay": {"store": store.location, "bugs": len(entries)}}
    err.print(f"replaying {len(entries)} bugs of {store.location} -> {out}/", markup=False)
    with Run(out, engine, command_line, header) as run:
        replayed = replay.replay(run, entries, out)
        versions = {name: about.get("version") for name, about in run.pool.info.items()}
        content = {"store": store.location, "versions": versions,
                   "bugs": [item.to_json() for item in replayed],
                   "skipped": list(store.skipped)}  # fmt: skip
        files.write_json(out / replay.REPLAY_JSON, content)
    print("\n".join(fuzz_text.replay_lines(content)))
    for line in cases_text.case_problem_lines(run.summary.case_problems):
        err.print(line, markup=False)
    written = records.read_folder(out)
    return finish.finish(
        run.summary, written, settings, err, kept="the results replayed so far", label_width=9
    )  # fmt: skip
