"""``conformance run``: every case on every runtime in every model variant,
each runtime in its own worker processes, each outcome judged against the
oracle; results in DIR/results.jsonl, then the gate (deciding the exit code with
--gate) and the report."""

from __future__ import annotations

import sys
from dataclasses import replace

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from conformance.cli import exits, finish, inputs, options
from conformance.engine import files, records
from conformance.engine.pool import DEFAULT_BATCH, DEFAULT_WORKER_MEMORY, RUN_TIMEOUTS
from conformance.engine.run import run_cases
from conformance.errors import ConformanceError
from conformance.gate.settings import Settings
from conformance.graphs import nodes
from conformance.report import node_verdicts
from conformance.report.terminal import cases as cases_text
from conformance.report.terminal import finish as finish_text
from conformance.report.terminal import gate as gate_text
from conformance.report.terminal import run as run_text
from conformance.report.terminal.progress import Ticker


def add_parser(commands) -> None:
    run = commands.add_parser(
        "run",
        help="run cases on the runtimes in isolated workers and judge every outcome",
        description="Run every case on every runtime in every model variant, each runtime "
        "in its own worker process, and judge each outcome against the oracle. Results go "
        "to DIR/results.jsonl (one record per case, runtime and variant) with header.json "
        "and summary.json beside it.",
        epilog=exits.epilog(exits.OK, exits.FAILED, exits.USAGE, exits.INTERRUPTED),
    )
    _add_arguments(run)
    run.set_defaults(func=command)


def _add_arguments(parser) -> None:
    options.add_runtime(parser)
    options.add_case_paths(parser, "--cases")
    parser.add_argument("-k", metavar="EXPR", help="only case ids containing EXPR (or a glob)")
    options.add_variants(parser.add_argument)
    options.add_jobs(parser)
    options.add_pack(parser)
    options.add_out(parser, "run")
    options.add_timeout(
        parser, RUN_TIMEOUTS, "case (load and run)", ": the header's timeouts_s says"
    )
    parser.add_argument(
        "--batch-size",
        type=options.positive_int,
        default=DEFAULT_BATCH,
        metavar="N",
        help="cases per worker message",
    )
    options.add_case_memory(parser, "are refused (a harness_unsupported result)")
    parser.add_argument(
        "--worker-memory",
        type=options.positive_size,
        default=DEFAULT_WORKER_MEMORY,
        metavar="SIZE",
        help="resident memory a worker may reach before it is killed and its case "
        f"recorded as a crash (default {DEFAULT_WORKER_MEMORY >> 30}GiB)",
    )
    options.add_shard(parser, "every N-th case, in the order the case files give")
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (outside a terminal: no progress line every 10 s)",
    )
    options.add_gate(parser, optional=True)
    finish.add_output(parser)


def command(args) -> int:
    finish.check_outputs(args.summary_md)
    err = options.stderr()
    settings = options.run_settings(args, "run", err)
    if settings.ungated:  # a baseline that does not load, in a run it does not stop
        for line in gate_text.ungated_lines(list(settings.ungated)):
            err.print(line, markup=False)
    cases = inputs.select(inputs.load_cases(args.cases, args.case_memory), args.k)
    if not cases:
        err.print(f"no case matches -k {args.k!r}", markup=False)
        return exits.USAGE
    index, count = args.shard
    cases = cases[index - 1 :: count]  # every N-th: each shard gets every kind of case
    if not cases:
        err.print(f"shard {index}/{count} has no case ({count} shards is more than cases)")
        return exits.USAGE
    settings = replace(settings, cases=tuple(cases))  # read after the baselines, as said
    out = settings.out
    assert out is not None  # built with one
    extra = {"shard": list(args.shard), "corpus": inputs.corpus(args.cases)}
    document = nodes.document_of_cases(cases)  # a model's saved node cases: their nodes
    if document is None:
        return execute(settings, extra)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConformanceError(f"{out}: cannot create the output folder: {error}") from None
    files.write_json(out / node_verdicts.NODES, document)
    settings = with_as_built(settings, document)

    def section(written) -> list[str]:
        made = node_verdicts.verdicts(document, written.records)
        return node_verdicts.headline_lines(made) + node_verdicts.table_lines(
            document, written.records
        )

    return execute(settings, extra, after=section)


def with_as_built(settings: Settings, document: dict) -> Settings:
    """``settings`` with every variant a node of ``document`` (nodes.json) is built
    in added after those asked: each node is judged as built whatever ``--variants``
    says, as ``conformance model`` judges it, or its verdict would rest on no result."""
    built = {entry["as_built"]["variant"] for entry in document["nodes"] if entry["as_built"]}
    missing = sorted(built - set(settings.variants))
    if not missing:
        return settings
    assert settings.engine is not None  # a run's settings have the engine's options
    variants = (*settings.variants, *missing)
    engine = replace(settings.engine, variants=variants)
    return replace(settings, variants=variants, engine=engine)


def execute(settings: Settings, extra_header: dict, after=None, judge=None) -> int:
    """Run the ``settings``' cases as ``run`` does (progress, summary, gate,
    report) and return the exit code; ``conformance model`` shares it.
    ``after(written)`` gives lines printed once the verdict and the report
    are said; ``judge(written)`` gives :func:`finish.finish`'s ``judge``."""
    err = options.stderr()
    engine, cases, out = settings.engine, settings.cases, settings.out
    assert engine is not None and out is not None  # a run's settings have both
    variants, runtimes = engine.variants, settings.targets
    total = len(cases) * len(variants) * len(runtimes)
    show = settings.progress and err.is_terminal
    bar = Progress(
        TextColumn("[bold]running"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[found]}"),
        TimeElapsedColumn(),
        console=err,
        disable=not show,
    )
    task = bar.add_task("run", total=total, found="")
    # Outside a terminal (CI), a line at most every 10 s instead of the bar.
    ticker = Ticker() if settings.progress and not show else None

    def update(done: int, summary) -> None:
        found = f"[red]{summary.discrepancies} discrepancies" if summary.discrepancies else ""
        bar.update(task, completed=done, found=found)
        if ticker is not None and done < total and ticker.due():
            line = run_text.progress_line(done, total, summary.discrepancies, ticker.elapsed())
            err.print(line, markup=False)

    err.print(run_text.run_header(len(cases), len(variants), settings.names, out), markup=False)
    with bar:
        summary = run_cases(
            list(cases),
            out,
            engine,
            progress=update,
            command=["conformance", *sys.argv[1:]],
            extra_header=extra_header,
        )
    for line in cases_text.case_problem_lines(summary.case_problems):
        err.print(line, markup=False)
    if judge is None or settings.verbose:
        Console().print(run_text.summary_table(summary, list(summary.counts)))
    # conformance model: its verdict comes first; the outcome table and the groups, mostly
    # what-if results, are in the report and the details after the verdict (-v: here too)
    written = records.read_folder(out)  # once, for the gate and the report
    for line in cases_text.not_checked_lines(written.records):
        print(line)
    said = run_text.run_result_lines(summary, out / records.RESULTS)
    print("\n".join(said if judge is None or settings.verbose else said[-1:]))
    note = finish_text.cpu_note(written.header.get("cpu_budget"))
    if note:
        err.print(note, markup=False)
    code = finish.finish(
        summary, written, settings, err,
        kept="the results recorded so far", label_width=8,
        judge=None if judge is None else judge(written),
    )  # fmt: skip
    if after is not None:
        print("\n".join(after(written)))
    return code
