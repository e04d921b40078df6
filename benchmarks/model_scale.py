"""How long `conformance model` takes on the two models whose size once made
it slow (issue 44 item 16, issue 49 item 7), built here into a scratch folder:

- ``gathers``: N alike Gathers (default 10 000) on one graph input, each a
  row of it by a constant index, summed into the one output: without
  ``--inputs``, so the whole model only loads on each target (the in-situ
  exposure makes 3 N graph outputs);
- ``bert``: a BERT-size encoder's embeddings (a 30 522 x 768 float32 word
  table, about 94 MB, position and token-type tables: 3 Gathers), a layer
  norm and a dense layer, judged with ``--inputs`` (token ids and types).

Each is judged by ``conformance model`` as a user runs it (a real process),
on onnxruntime, openvino and reference by default. What it prints: the wall
time and how it splits, from the run's header (``graphs.timings_s``: reading,
shape inference, making the cases, the whole-model step and within it the
capture, which runs beside its runs) and ``summary.json`` (the case runs), the
rest being the interpreter's start, imports, the gate and the report.
``--keep DIR`` builds and runs in DIR and keeps it (run folders to compare).

    python benchmarks/model_scale.py [gathers|bert ...] [--count N] [--runtime ...] [--json]
        [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

VOCAB, HIDDEN, POSITIONS, SEQUENCE = 30522, 768, 512, 16


def alike_gathers(count: int) -> onnx.ModelProto:
    """``count`` Gathers of rows of ``x`` by constant indices, summed."""
    rows = 16
    inits = [nh.from_array(np.array(i % rows, np.int64), f"i{i % rows}") for i in range(rows)]
    nodes = [
        h.make_node("Gather", ["x", f"i{i % rows}"], [f"g{i}"], name=f"Gather_{i}", axis=0)
        for i in range(count)
    ]
    nodes.append(h.make_node("Sum", [f"g{i}" for i in range(count)], ["y"]))
    graph = h.make_graph(
        nodes,
        "alike_gathers",
        [h.make_tensor_value_info("x", T.FLOAT, [rows, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, [8])],
        initializer=inits,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def bert_embeddings() -> onnx.ModelProto:
    """A BERT encoder's embeddings: word, position and token-type Gathers,
    summed, normalised, then a dense layer; about 96 MB of initializers."""
    rng = np.random.default_rng(0)

    def table(name: str, *shape: int):
        return nh.from_array((rng.standard_normal(shape, np.float32) * 0.02), name)

    inits = [
        table("word", VOCAB, HIDDEN),
        table("position", POSITIONS, HIDDEN),
        table("token_type", 2, HIDDEN),
        table("dense", HIDDEN, HIDDEN),
        nh.from_array(np.ones(HIDDEN, np.float32), "gamma"),
        nh.from_array(np.zeros(HIDDEN, np.float32), "beta"),
        nh.from_array(np.array(0, np.int64), "zero"),
        nh.from_array(np.array(1, np.int64), "one"),
        nh.from_array(np.array([1], np.int64), "axis1"),
    ]
    nodes = [
        h.make_node("Gather", ["word", "input_ids"], ["w"], name="word_embeddings"),
        h.make_node("Shape", ["input_ids"], ["shape"]),
        h.make_node("Gather", ["shape", "one"], ["length"], name="sequence_length"),
        h.make_node("Range", ["zero", "length", "one"], ["positions"]),
        h.make_node("Unsqueeze", ["positions", "zero"], ["position_ids"]),
        h.make_node("Gather", ["position", "position_ids"], ["p"], name="position_embeddings"),
        h.make_node("Gather", ["token_type", "token_type_ids"], ["t"], name="token_embeddings"),
        h.make_node("Add", ["w", "p"], ["wp"]),
        h.make_node("Add", ["wp", "t"], ["e"]),
        h.make_node("LayerNormalization", ["e", "gamma", "beta"], ["n"], axis=-1),
        h.make_node("MatMul", ["n", "dense"], ["hidden"]),
    ]
    graph = h.make_graph(
        nodes,
        "bert_embeddings",
        [
            h.make_tensor_value_info("input_ids", T.INT64, ["batch", "sequence"]),
            h.make_tensor_value_info("token_type_ids", T.INT64, ["batch", "sequence"]),
        ],
        [h.make_tensor_value_info("hidden", T.FLOAT, ["batch", "sequence", HIDDEN])],
        initializer=inits,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def conformance(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "conformance", *args], capture_output=True, text=True, timeout=3600
    )
    return time.perf_counter() - start, done


def measure(folder: Path, label: str, runtimes: list[str], count: int) -> dict:
    """One model built, judged and timed."""
    extra: list[str] = []
    if label == "gathers":
        proto = alike_gathers(count)
    else:
        proto = bert_embeddings()
        ids = np.random.default_rng(1).integers(0, VOCAB, (1, SEQUENCE), dtype=np.int64)
        np.savez(folder / "inputs.npz", input_ids=ids, token_type_ids=np.zeros_like(ids, np.int64))
        extra = ["--inputs", str(folder / "inputs.npz")]
    path = folder / f"{label}.onnx"
    onnx.save(proto, path)
    out = folder / f"{label}-run"
    wall, done = conformance(
        "model", str(path), "--runtime", *runtimes, "--out", str(out), "--no-progress", *extra
    )
    if done.returncode not in (0, 1):
        sys.exit(f"conformance model failed ({done.returncode}):\n{done.stderr}")
    header = json.loads((out / "header.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    timings = header["graphs"]["timings_s"]
    runs = summary["duration_s"]
    return {
        "label": label,
        "model_mb": round(path.stat().st_size / 2**20, 1),
        "cases": summary["cases"],
        "wall_s": round(wall, 2),
        **{k: round(v, 2) for k, v in timings.items()},
        "runs_s": round(runs, 2),
        # the capture runs in the whole-model step's pool, beside its runs: within it
        "rest_s": round(wall - sum(v for k, v in timings.items() if k != "capture_s") - runs, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", choices=("gathers", "bert"), default=[])
    parser.add_argument("--count", type=int, default=10_000, help="Gathers of `gathers`")
    parser.add_argument("--runtime", nargs="+", default=["onnxruntime", "openvino", "reference"])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--keep", type=Path, help="build and run in this folder, kept (to compare run folders)"
    )
    args = parser.parse_args()
    figures = []
    with tempfile.TemporaryDirectory(prefix="model-scale-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for label in args.models or ["gathers", "bert"]:
            figures.append(measure(folder, label, args.runtime, args.count))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for run in figures:
        parts = ", ".join(f"{k} {v}" for k, v in run.items() if k.endswith("_s") and k != "wall_s")
        print(
            f"{run['label']}: {run['model_mb']} MB, {run['cases']} cases on "
            f"{', '.join(args.runtime)}: {run['wall_s']} s wall; {parts}"
        )


if __name__ == "__main__":
    main()
