"""How long `conformance model` takes on a model with a GatherND node, against
the same model with that node written as the Gather it equals (issue 46, item
6: "within 2x of today's time for the same model").

The two models are built here: an embedding lookup of a constant table
(30 x 8 float32) by token ids fed as a graph input, and beside it a Gather
every model has (a column of another input). In ``nd`` the lookup is
``GatherND(table, ids[batch, seq, 1])`` (batch_dims 0, one component per
tuple); in ``gather`` it is ``Gather(table, ids[batch, seq], axis 0)``: the
same values, one node each. Both are judged as a user runs the command (a
real process), on onnxruntime, openvino and reference with the default
variants and draws, without and with ``--inputs``; the pairs alternate, so a
load that changes while they run hits both alike.

``--package DIR`` runs the ``nd`` model with the package found in DIR on
``PYTHONPATH`` too (``git archive <commit> conformance | tar -x -C DIR``: the
version before, where a GatherND node was listed, not judged).

    python benchmarks/gather_nd_model.py [--repeats 3] [--package DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
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

TARGETS = ["onnxruntime", "openvino", "reference"]
REPO = Path(__file__).resolve().parents[1]


def build(folder: Path) -> dict[str, tuple[Path, Path]]:
    """(model, inputs) of ``nd`` and ``gather``."""
    table = nh.from_array(np.arange(240, dtype=np.float32).reshape(30, 8), "table")
    one = nh.from_array(np.array(1, np.int64), "one")
    ids = np.array([[1, 29, 3], [0, 7, 5]], np.int64)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    made = {}
    for name, lookup, shape, fed in (
        ("nd", h.make_node("GatherND", ["table", "ids"], ["y"], name="embed"),
         ["batch", "seq", 1], ids[..., None]),
        ("gather", h.make_node("Gather", ["table", "ids"], ["y"], axis=0, name="embed"),
         ["batch", "seq"], ids),
    ):  # fmt: skip
        graph = h.make_graph(
            [lookup, h.make_node("Gather", ["x", "one"], ["z"], axis=1, name="col")],
            name,
            [
                h.make_tensor_value_info("ids", T.INT64, shape),
                h.make_tensor_value_info("x", T.FLOAT, ["batch", 4]),
            ],
            [h.make_tensor_value_info(o, T.FLOAT, None) for o in ("y", "z")],
            initializer=[table, one],
        )
        model = folder / f"{name}.onnx"
        onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], ir_version=8), model)
        inputs = folder / f"{name}.npz"
        np.savez(inputs, ids=fed, x=x)
        made[name] = (model, inputs)
    return made


def timed(model: Path, inputs: Path | None, out: Path, package: Path) -> tuple[float, int]:
    args = [sys.executable, "-m", "conformance", "model", str(model), "--runtime", *TARGETS,
            "--out", str(out), "--no-progress"]  # fmt: skip
    if inputs is not None:
        args += ["--inputs", str(inputs)]
    env = {**os.environ, "PYTHONPATH": str(package)}
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{model.name}: exit {done.returncode}\n{done.stderr[-2000:]}")
    summary = json.loads((out / "summary.json").read_text())
    return wall, int(summary["records"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--package", type=Path, help="a package folder to time `nd` with too")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    packages = {"here": REPO}
    if options.package is not None:
        packages["package"] = options.package.resolve()
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="gnd-model-") as scratch:
        folder = Path(scratch)
        made = build(folder)
        for repeat in range(options.repeats):
            for fed in (False, True):
                for name, (model, inputs) in made.items():
                    for where, package in packages.items():
                        if where != "here" and name != "nd":
                            continue
                        key = f"{name}{'' if where == 'here' else '@' + where}"
                        key += " --inputs" if fed else ""
                        out = folder / f"run-{repeat}-{key.replace(' ', '')}"
                        wall, _ = timed(model, inputs if fed else None, out, package)
                        times.setdefault(key, []).append(wall)
    best = {key: min(walls) for key, walls in times.items()}
    if options.json:
        print(json.dumps({"best_s": best, "all_s": times}, indent=2))
        return
    for key, walls in times.items():
        shown = ", ".join(f"{w:.1f}" for w in walls)
        print(f"{key:<28} best {best[key]:6.1f} s   ({shown})")
    for fed in ("", " --inputs"):
        if f"nd{fed}" in best and f"gather{fed}" in best:
            ratio = best[f"nd{fed}"] / best[f"gather{fed}"]
            print(f"nd / gather{fed}: {ratio:.2f}x")
        if f"nd@package{fed}" in best:
            print(f"nd here / nd@package{fed}: {best[f'nd{fed}'] / best[f'nd@package{fed}']:.2f}x")


if __name__ == "__main__":
    main()
