"""``conformance model``: every Gather and GatherElements node of ONNX models
made into cases (:mod:`conformance.graphs`), run as ``run`` runs cases, with
``nodes.json`` beside the results and a verdict per node."""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from conformance.cli import exits, finish, options
from conformance.cli import run as run_command
from conformance.engine import capturing, files, whole_model
from conformance.engine.pool import DEFAULT_BATCH, DEFAULT_WORKER_MEMORY, RUN_TIMEOUTS
from conformance.errors import ConformanceError
from conformance.graphs import capture, drawing, nodes, reading, saving
from conformance.report import node_verdicts
from conformance.report.terminal import gate as gate_text

NODES = node_verdicts.NODES


def add_parser(commands) -> None:
    model = commands.add_parser(
        "model",
        help="judge every Gather and GatherElements node of ONNX models on the runtimes",
        description="Read ONNX models (with their external data), make every Gather and "
        "GatherElements node of every graph (If/Loop/Scan bodies, model-local functions) into "
        "cases, and run them as `run` runs cases: results in DIR/results.jsonl, the nodes in "
        "DIR/nodes.json. Each node is judged as built (in the storage the model gives it, on "
        "the values it can receive); the whole model loads on every target, and with --inputs "
        "runs there with each node judged in situ. The verdict comes first, per model and "
        "target: safe, differs (what to do), not judged, cannot load. The exit code comes from "
        "the as-built verdicts alone: 1 when a target cannot load or run a model, differs in "
        "situ, differs as built (with --gate: outside its baseline), or has a judged node with "
        "no as-built result, and when the --inputs break the spec at a node (said first); "
        "what-if results (other storage, values the model never feeds) never set it "
        "(docs/models.md).",
        epilog=exits.epilog(exits.OK, exits.FAILED, exits.USAGE, exits.INTERRUPTED),
    )
    model.add_argument("models", nargs="+", type=Path, metavar="MODEL", help="ONNX model files")
    options.add_runtime(model)
    options.add_variants(model.add_argument)
    options.add_jobs(model)
    options.add_pack(model)
    options.add_out(model, "model")
    options.add_timeout(model, RUN_TIMEOUTS, "case (load and run)", ", as run")
    options.add_case_memory(model, "are not judged (listed with the reason in nodes.json)")
    model.add_argument(
        "--dims",
        nargs="+",
        action="extend",
        type=dim,
        metavar="NAME=SIZE",
        help=f"sizes of symbolic dims (default: from --inputs, else {drawing.DEFAULT_DIM})",
    )
    model.add_argument(
        "--draws",
        type=draws,
        default=drawing.DEFAULT_DRAWS,
        metavar="N",
        help="random index tensors per node whose indices are computed at run time, beside "
        f"the bounds -s, s-1, -1, 0 and the out-of-range cases (default {drawing.DEFAULT_DRAWS})",
    )
    model.add_argument(
        "--inputs",
        type=Path,
        metavar="FILE.npz",
        help="one array per graph input, by name: the model is run once (onnx.reference) and "
        "every Gather node's inputs become cases too; the dims take their sizes",
    )
    model.add_argument(
        "--save-cases",
        type=Path,
        metavar="FILE.yaml",
        help="also write the node cases as a case file (`conformance run --cases FILE.yaml`), "
        "its large tensors in files beside it; an existing FILE.yaml (or file beside it) is "
        "replaced only when --save-cases wrote it (docs/models.md)",
    )
    model.add_argument(
        "--force",
        action="store_true",
        help="let --save-cases replace FILE.yaml and the files beside it that it did not write",
    )
    model.add_argument("--no-progress", action="store_true", help="no progress bar")
    options.add_gate(model, optional=True)
    finish.add_output(model)
    model.set_defaults(func=command, batch_size=DEFAULT_BATCH, worker_memory=DEFAULT_WORKER_MEMORY)


def dim(text: str) -> tuple[str, int]:
    """NAME=SIZE, SIZE a whole number >= 0."""
    name, sep, size = text.partition("=")
    if not sep or not name or not (size.isascii() and size.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r}: give NAME=SIZE, e.g. batch=2")
    return name, int(size)


def draws(text: str) -> int:
    """A whole number >= 0."""
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number >= 0")
    return int(text)


def command(args) -> int:
    err = options.stderr()
    settings = options.run_settings(args, "model", err)
    if settings.ungated:  # a baseline that does not load, in a run it does not stop
        for line in gate_text.ungated_lines(list(settings.ungated)):
            err.print(line, markup=False)
    runtimes = list(settings.targets)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    read = [reading.load(path) for path in args.models]
    timings["shape_inference_s"] = sum(f.inference_s for f in read)
    timings["reading_s"] = time.perf_counter() - start - timings["shape_inference_s"]
    given = dict(args.dims or [])
    dims = nodes.check_dims(read, given)
    fed = None
    if args.inputs is not None:
        fed = capture.read_inputs(args.inputs, read, args.case_memory)
        dims = {**capture.input_dims(read, fed), **dims}
    start = time.perf_counter()
    groups = drawing.group_nodes(read, dims, args.case_memory)
    cases = drawing.make_cases(groups, args.draws)
    timings["cases_s"] = time.perf_counter() - start
    found = [site for each in read for site in each.sites]
    for line in node_verdicts.found_lines(read):
        print(line)
    limit = capturing.limit_of(args.timeout)
    if not found:
        if fed is not None:  # what stopped its run is still said
            alone = capturing.run(read, fed, limit, args.worker_memory)
            for line in node_verdicts.capture_lines(alone.failed):
                print(line)
        return exits.OK
    if args.save_cases is not None:
        save_cases(args.save_cases, groups, args.case_memory, args.force)
        print(f"node cases written to {args.save_cases}")
    out = settings.out
    assert out is not None  # built with one
    beside = None
    if fed is not None:  # the capture runs in the whole model's first pool, beside its runs
        start = time.perf_counter()
        result, jobs = capturing.prepare(read, fed)
        memory = args.worker_memory
        beside = whole_model.Beside(
            capturing.TARGET,
            jobs,
            lambda got: capturing.settled(result, jobs, got, limit, memory),
        )
        preparing = time.perf_counter() - start
    # the whole model runs even when no node can be judged: a model no target
    # loads is *cannot load*, never silence (issue 44)
    start = time.perf_counter()
    wholes, in_situ = whole_model.run(
        read,
        runtimes,
        fed,
        dims,
        drawing.DEFAULT_DIM,
        args.timeout,
        args.worker_memory,
        beside=beside,
    )
    timings["whole_model_s"] = time.perf_counter() - start
    captured = None
    if beside is not None:
        captured = result
        # its run overlaps whole_model_s (docs/formats.md)
        timings["capture_s"] = preparing + beside.seconds
        cases += capture.captured_cases(groups, captured, dims, args.case_memory, read)
    for line in node_verdicts.capture_lines(captured.failed if captured else {}):
        print(line)
    document = nodes.document(read, groups, dims, args.draws, captured)
    document["whole_model"] = wholes
    for entry in document["nodes"]:
        entry["in_situ"] = in_situ.get((entry["model"], entry["graph"], entry["node"]), {})
    if not cases:
        out.mkdir(parents=True, exist_ok=True)
        files.write_json(out / NODES, document)
        print(node_verdicts.nothing_judged_line(out / NODES))
        made = node_verdicts.verdicts(document, [])
        for line in node_verdicts.headline_lines(made):
            print(line)
        return exits.FAILED if node_verdicts.cannot_load(made) else exits.OK
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConformanceError(f"{out}: cannot create the output folder: {error}") from None
    files.write_json(out / NODES, document)
    graphs = nodes.header(read, dims, args.draws, args.inputs, captured, timings)
    header = {"corpus": None, "graphs": graphs}
    if args.variants:  # each node is judged as built whatever else is asked
        built = {entry["as_built"]["variant"] for entry in document["nodes"] if entry["as_built"]}
        variants = (*settings.variants, *sorted(built - set(settings.variants)))
        assert settings.engine is not None  # built with the engine's options
        engine = replace(settings.engine, variants=variants)
        settings = replace(settings, variants=variants, engine=engine)
    return run_command.execute(
        replace(settings, cases=tuple(cases)),
        header,
        after=lambda written: node_verdicts.table_lines(document, written.records),
        judge=lambda written: _judge(document, written, args.gate),
    )


def _judge(document: dict, written, gated: bool):
    """finish's judge: the exit from the as-built verdicts alone (docs/models.md)."""

    def judge(decided):
        made = node_verdicts.verdicts(document, written.records)
        unexpected = None
        if gated and decided is not None:
            unexpected = {
                (r["runtime"], r["case_id"], r.get("variant")) for r in decided.gate.unexpected
            }
        found = node_verdicts.failing(document, written.records, made, unexpected)
        if node_verdicts.inputs_break_spec(made):
            reason = (
                "exit 1: the --inputs break the spec at a node (said first): no run on them "
                "is a valid run of the model; validate them before inference"
            )
        elif gated:
            reason = (
                "exit 1: a target cannot load or run a model, differs in situ, has a node with "
                "no as-built result, or differs as built outside its baseline"
                if found
                else "exit 0: every as-built difference is in the baseline (what-if results "
                "never decide)"
            )
        else:
            reason = (
                "exit 1: a target cannot load or run a model, differs as built or in situ, or "
                "has a node with no as-built result"
                if found
                else "exit 0: every target computes every node right as built (what-if "
                "results never decide)"
            )
        return found, node_verdicts.headline_lines(made), reason

    return judge


def save_cases(path: Path, groups, case_memory: int, force: bool = False) -> None:
    """The node cases as a case file, large tensors in files beside it; a file
    there that --save-cases did not write is replaced only with ``force``
    (saving.SaveRefused, before anything is written)."""
    content, arrays = saving.document(path, groups, case_memory)
    if not force:
        saving.check_replaceable(path, list(arrays))
    for name, data in arrays.items():
        files.write_bytes(path.parent / name, data)
    files.write_text(path, saving.text(content))
