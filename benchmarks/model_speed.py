"""How long `conformance model` takes on a model of about 50 Gather nodes.

The model is built here with onnx.helper in the shape transformer exports
have: an embedding lookup fed by a graph input, dozens of `Shape -> Gather`
with scalar constant indices (most of them alike: one case group), row
gathers with run-time indices of several shapes and axes, GatherElements
after TopK, Gathers inside If branches and a Loop body, symbolic dims
everywhere. It is judged on onnxruntime and openvino with the default draws
(`conformance model` as a user runs it, a real process), twice: without and
with `--inputs` (the capture run).

What it prints: the wall time of the command and how it splits: reading
(parse, external-data checks, the walk), shape inference, making the cases
(constants folded, indices and data drawn, deduplication), capture (the run
on onnx.reference), the runs (the engine's `summary.json` `duration_s`), and
the rest (interpreter start, imports, the report). "Beyond the environment's
start" is the wall time less the time `conformance --version` takes.

    python benchmarks/model_speed.py [--runtime onnxruntime openvino] [--json]
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


def vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def transformer_like(layers: int = 8) -> onnx.ModelProto:
    """About 50 Gather/GatherElements nodes: 6 per layer, and a few around."""
    nodes, inits, outputs = [], [], []
    inits.append(
        nh.from_array(np.random.default_rng(0).standard_normal((1000, 64), np.float32), "table")
    )
    for value, name in ((0, "i0"), (1, "i1"), (-1, "im1"), (2, "i2")):
        inits.append(nh.from_array(np.array(value, np.int64), name))
    inits.append(nh.from_array(np.array([2], np.int64), "k"))
    nodes.append(h.make_node("Gather", ["table", "ids"], ["h0"], name="embed", axis=0))
    hidden = "h0"
    for layer in range(layers):
        p = f"l{layer}"
        nodes += [
            h.make_node("Shape", [hidden], [f"{p}_shape"]),
            h.make_node("Gather", [f"{p}_shape", "i0"], [f"{p}_b"], name=f"{p}/Gather", axis=0),
            h.make_node("Gather", [f"{p}_shape", "i1"], [f"{p}_s"], name=f"{p}/Gather_1", axis=0),
            h.make_node("Gather", [f"{p}_shape", "im1"], [f"{p}_d"], name=f"{p}/Gather_2", axis=0),
            h.make_node("Gather", [hidden, "pos"], [f"{p}_rows"], name=f"{p}/Gather_3", axis=1),
            h.make_node("TopK", [hidden, "k"], [f"{p}_tv", f"{p}_ti"], axis=2),
            h.make_node("GatherElements", [hidden, f"{p}_ti"], [f"{p}_ge"], name=f"{p}/GE", axis=2),
            h.make_node("Gather", [hidden, "i2"], [f"{p}_col"], name=f"{p}/Gather_4", axis=2),
            h.make_node("Relu", [hidden], [f"{p}_out"]),
        ]
        outputs += [f"{p}_b", f"{p}_s", f"{p}_d", f"{p}_rows", f"{p}_ge", f"{p}_col"]
        hidden = f"{p}_out"
    then = h.make_graph(
        [h.make_node("Gather", [hidden, "im1"], ["t"], name="last", axis=1)],
        "then",
        [],
        [vi("t", T.FLOAT, None)],
    )
    other = h.make_graph(
        [h.make_node("Gather", [hidden, "i0"], ["t"], name="first", axis=1)],
        "else",
        [],
        [vi("t", T.FLOAT, None)],
    )
    nodes.append(
        h.make_node("If", ["flag"], ["picked"], name="If_0", then_branch=then, else_branch=other)
    )
    body = h.make_graph(
        [
            h.make_node("Gather", ["pos", "it"], ["p"], name="step", axis=0),
            h.make_node("Identity", ["c"], ["c_out"]),
        ],
        "body",
        [vi("it", T.INT64, []), vi("c", T.BOOL, [])],
        [vi("c_out", T.BOOL, []), vi("p", T.INT64, None)],
    )
    inits += [nh.from_array(np.array(3, np.int64), "trip"), nh.from_array(np.array(True), "yes")]
    nodes.append(h.make_node("Loop", ["trip", "yes"], ["steps"], name="Loop_0", body=body))
    outputs += ["picked", "steps"]
    graph = h.make_graph(
        nodes,
        "transformer_like",
        [vi("ids", T.INT64, ["batch", "seq"]), vi("pos", T.INT64, ["seq"]), vi("flag", T.BOOL, [])],
        [
            vi(
                o,
                T.FLOAT if o not in ("steps",) and not o.endswith(("_b", "_s", "_d")) else T.INT64,
                None,
            )
            for o in outputs
        ],
        initializer=inits,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def conformance(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "conformance", *args], capture_output=True, text=True, timeout=1800
    )
    return time.perf_counter() - start, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", nargs="+", default=["onnxruntime", "openvino"])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    start_s, _ = conformance("--version")
    figures = {"environment_start_s": round(start_s, 2), "runs": []}
    with tempfile.TemporaryDirectory(prefix="model-speed-") as scratch:
        folder = Path(scratch)
        proto = transformer_like()
        onnx.save(proto, folder / "model.onnx")
        count = sum(1 for _ in _gathers(proto.graph))
        np.savez(
            folder / "inputs.npz",
            ids=np.array([[5, 17, 999, 0]], np.int64),
            pos=np.array([3, 2, 1, 0], np.int64),
            flag=np.array(True),
        )
        for label, extra in (
            ("drawn", []),
            ("drawn+captured", ["--inputs", str(folder / "inputs.npz")]),
        ):
            out = folder / label
            wall, done = conformance(
                "model",
                str(folder / "model.onnx"),
                "--runtime",
                *args.runtime,
                "--out",
                str(out),
                "--no-progress",
                *extra,
            )
            if done.returncode not in (0, 1):
                sys.exit(f"conformance model failed ({done.returncode}):\n{done.stderr}")
            header = json.loads((out / "header.json").read_text())
            summary = json.loads((out / "summary.json").read_text())
            timings = header["graphs"]["timings_s"]
            runs = summary["duration_s"]
            accounted = sum(timings.values()) + runs
            figures["runs"].append(
                {
                    "label": label,
                    "gather_nodes": count,
                    "cases": summary["cases"],
                    "results": summary["records"],
                    "wall_s": round(wall, 2),
                    "beyond_start_s": round(wall - start_s, 2),
                    **{k: round(v, 2) for k, v in timings.items()},
                    "runs_s": round(runs, 2),
                    "rest_s": round(wall - accounted, 2),
                }
            )
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"environment start (conformance --version): {figures['environment_start_s']} s")
    for run in figures["runs"]:
        print(
            f"{run['label']}: {run['gather_nodes']} Gather nodes, {run['cases']} cases, "
            f"{run['results']} results on {', '.join(args.runtime)}: {run['wall_s']} s wall, "
            f"{run['beyond_start_s']} s beyond the start; reading {run['reading_s']} s, "
            f"shape inference {run['shape_inference_s']} s, "
            f"cases {run['cases_s']} s, capture {run.get('capture_s', 0)} s, "
            f"runs {run['runs_s']} s, the rest {run['rest_s']} s"
        )


def _gathers(graph):
    for node in graph.node:
        if node.op_type in ("Gather", "GatherElements"):
            yield node
        for attribute in node.attribute:
            if attribute.HasField("g"):
                yield from _gathers(attribute.g)


if __name__ == "__main__":
    main()
