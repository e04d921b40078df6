"""``conformance model``: every Gather and GatherElements node of ONNX models
made into cases (:mod:`conformance.graphs`), run as ``run`` runs cases, with
``nodes.json`` beside the results and a verdict per node."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from conformance.cli import exits, finish, options
from conformance.cli import run as run_command
from conformance.engine import files
from conformance.engine.pool import DEFAULT_BATCH, DEFAULT_WORKER_MEMORY, RUN_TIMEOUTS
from conformance.errors import ConformanceError
from conformance.graphs import capture, drawing, nodes, reading, saving
from conformance.report import node_verdicts

NODES = node_verdicts.NODES


def add_parser(commands) -> None:
    model = commands.add_parser(
        "model",
        help="judge every Gather and GatherElements node of ONNX models on the runtimes",
        description="Read ONNX models (with their external data), make every Gather and "
        "GatherElements node of every graph (If/Loop/Scan bodies, model-local functions) into "
        "cases, and run them as `run` runs cases: results in DIR/results.jsonl, the nodes in "
        "DIR/nodes.json, a verdict per node (docs/models.md).",
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
    model.add_argument(
        "--gate",
        action="store_true",
        help="exit 0 when every discrepancy is a known one (cases/known/<runtime>.yaml)",
    )
    options.add_gate(model)
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
    runtimes = options.chosen_runtimes(args)
    if not args.gate and (args.known is not None or args.allow_fixed):
        err.print("--known and --allow-fixed are options of the gate: add --gate")
        return exits.USAGE
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
    captured = None
    if fed is not None:
        start = time.perf_counter()
        captured = capture.capture(read, fed)
        cases += capture.captured_cases(groups, captured, dims, args.case_memory, read)
        timings["capture_s"] = time.perf_counter() - start
    found = [site for each in read for site in each.sites]
    for line in node_verdicts.found_lines(read):
        print(line)
    if not found:
        return exits.OK
    if args.save_cases is not None:
        save_cases(args.save_cases, groups, args.case_memory, args.force)
        print(f"node cases written to {args.save_cases}")
    out = args.out or options.default_out("model")
    document = nodes.document(read, groups, dims, args.draws, captured)
    if not cases:
        out.mkdir(parents=True, exist_ok=True)
        files.write_json(out / NODES, document)
        print(node_verdicts.nothing_judged_line(out / NODES))
        return exits.OK
    baselines = _baselines(args, runtimes, err)
    if baselines is None and args.gate:
        return exits.USAGE
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConformanceError(f"{out}: cannot create the output folder: {error}") from None
    files.write_json(out / NODES, document)
    header = {"corpus": None, "graphs": nodes.header(read, dims, args, captured, timings)}
    return run_command.execute(
        cases,
        args,
        runtimes,
        baselines,
        out,
        header,
        after=lambda written: node_verdicts.table_lines(document, written.records),
    )


def _baselines(args, runtimes, err):
    from conformance.cli import inputs

    return inputs.baselines(args, runtimes, err, deciding=args.gate)


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
