"""ScatterElements' and ScatterND's oracles against single-threaded ONNX Runtime,
on large cases.

- kv-cache: ScatterND-18, float32 data 32x4096x128 (a key cache: heads,
  positions, head size), int64 indices 32x256x2 (each head's 256 new
  positions, distinct), updates 32x256x128: whole rows written, no duplicates;
- elements: ScatterElements-18, float32 data 1024x1024, int64 indices
  1024x1024 on axis 1, each row a permutation (every element written once);
- duplicates-add: ScatterElements-18, int32 data 1024x1024, int64 indices
  1024x1024 in [-1024, 1024) on axis 1 (random: about 37% of the elements
  written twice or more), reduction add (integers: one result in any order);
- duplicates-none: the same indices on float32 data without a reduction
  (every element written more than once gets its set of admissible values).

ONNX Runtime's output is judged against the oracle's set first (it must be
a member, bit for bit). Times are the best of --repeats runs (wall clock,
one process), ONNX Runtime on the CPU provider with one intra-op and one
inter-op thread. Target: the oracle at most 3x ONNX Runtime's time on each
(issue 47). `--check` exits 1 when one is missed. The Scatter operators
have no row yet, so the models are built here, not by engine.models.

    python benchmarks/scatter_speed.py [--repeats 5] [--check] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

from conformance.oracle import admissible, scatter_elements, scatter_nd

OPSET, TARGET_VS_ORT = 18, 3.0


def _kv_cache(rng):
    data = rng.standard_normal((32, 4096, 128), dtype=np.float32)
    positions = np.stack([rng.permutation(4096)[:256] for _ in range(32)])
    heads = np.broadcast_to(np.arange(32)[:, None], (32, 256))
    indices = np.stack([heads, positions - 4096 * (positions % 2)], axis=-1).astype(np.int64)
    updates = rng.standard_normal((32, 256, 128), dtype=np.float32)
    return "ScatterND", data, indices, updates, {}


def _elements(rng):
    data = rng.standard_normal((1024, 1024), dtype=np.float32)
    indices = np.argsort(rng.random((1024, 1024)), axis=1).astype(np.int64)
    updates = rng.standard_normal((1024, 1024), dtype=np.float32)
    return "ScatterElements", data, indices, updates, {"axis": 1}


def _duplicates(rng, dtype, reduction):
    data = rng.integers(-1000, 1000, (1024, 1024)).astype(dtype)
    indices = rng.integers(-1024, 1024, (1024, 1024), dtype=np.int64)
    updates = rng.integers(-1000, 1000, (1024, 1024)).astype(dtype)
    attributes = {"axis": 1} | ({"reduction": reduction} if reduction else {})
    return "ScatterElements", data, indices, updates, attributes


WORKLOADS = {
    "kv-cache": _kv_cache,
    "elements": _elements,
    "duplicates-add": lambda rng: _duplicates(rng, np.int32, "add"),
    "duplicates-none": lambda rng: _duplicates(rng, np.float32, None),
}


def best_of(repeats: int, run):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def model(op, data, indices, updates, attributes) -> onnx.ModelProto:
    node = helper.make_node(op, ["data", "indices", "updates"], ["output"], **attributes)
    element = helper.np_dtype_to_tensor_dtype(data.dtype)
    graph = helper.make_graph(
        [node],
        "scatter_speed",
        [
            helper.make_tensor_value_info("data", element, data.shape),
            helper.make_tensor_value_info("indices", onnx.TensorProto.INT64, indices.shape),
            helper.make_tensor_value_info("updates", element, updates.shape),
        ],
        [helper.make_tensor_value_info("output", element, data.shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)


def measure(name: str, repeats: int) -> dict:
    op, data, indices, updates, attributes = WORKLOADS[name](np.random.default_rng(0))
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        model(op, data, indices, updates, attributes).SerializeToString(),
        options,
        providers=["CPUExecutionProvider"],
    )
    feeds = {"data": data, "indices": indices, "updates": updates}
    reduction = attributes.get("reduction")
    if op == "ScatterND":
        run = lambda: scatter_nd.evaluate(OPSET, data, indices, updates, reduction)  # noqa: E731
    else:
        run = lambda: scatter_elements.evaluate(  # noqa: E731
            OPSET, data, indices, updates, attributes["axis"], reduction
        )
    t_oracle, (found, _) = best_of(repeats, run)
    t_ort, out_ort = best_of(repeats, lambda: session.run(None, feeds)[0])
    diff = admissible.difference(found, out_ort)
    if diff is not None:
        raise SystemExit(f"{name}: onnxruntime's output is not admissible: {diff.message}")
    shown = ", ".join(f"{k} {v}" for k, v in attributes.items())
    return {
        "workload": f"{op}-{OPSET} {data.dtype} data {'x'.join(map(str, data.shape))}, int64 "
        f"indices {'x'.join(map(str, indices.shape))}" + (f", {shown}" if shown else ""),
        "open_elements": int(found.positions.size),
        "oracle_s": t_oracle,
        "onnxruntime_1thread_s": t_ort,
        "oracle_time_vs_onnxruntime": t_oracle / t_ort,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    figures: dict = {
        "target_time_vs_onnxruntime_max": TARGET_VS_ORT,
        "numpy": np.__version__,
        "onnxruntime": ort.__version__,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
    }
    met = True
    for name in WORKLOADS:
        found = figures[name] = measure(name, args.repeats)
        ratio = found["oracle_time_vs_onnxruntime"]
        met &= ratio <= TARGET_VS_ORT
        print(f"{name}: {found['workload']} ({found['open_elements']} elements with a set)")
        print(
            f"  oracle                 {found['oracle_s'] * 1e3:9.1f} ms  (best of {args.repeats})"
        )
        print(f"  onnxruntime, 1 thread  {found['onnxruntime_1thread_s'] * 1e3:9.1f} ms")
        print(
            f"  oracle vs onnxruntime: {ratio:6.2f}x its time "
            f"(target <= {TARGET_VS_ORT:.0f}x: {'met' if ratio <= TARGET_VS_ORT else 'MISSED'})"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
