"""GatherND's oracle against single-threaded ONNX Runtime, on two large cases.

- slices: a BERT-style batch gather, float32 data 64x512x768, int64 indices
  64x128x1 in [-512, 512), batch_dims 1 (output 64x128x768: whole rows copied);
- elements: float32 data 128x128x128, int64 indices 1048576x3 in [-128, 128),
  batch_dims 0 (one element per index tuple: the index arithmetic dominates).

Both outputs are compared bit for bit first. Times are the best of --repeats
runs (wall clock, one process), ONNX Runtime on the CPU provider with one
intra-op and one inter-op thread. Target: the oracle at most 3x ONNX
Runtime's time on each (issue 46). `--check` exits 1 when one is missed.
GatherND has no row yet, so the model is built here, not by engine.models.

    python benchmarks/gather_nd_speed.py [--repeats 5] [--check] [--json FILE]
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
from onnx import TensorProto, helper

from conformance.oracle import compare, gather_nd

OPSET, TARGET_VS_ORT = 13, 3.0
# name -> (data shape, indices shape, batch_dims)
WORKLOADS = {
    "slices": ((64, 512, 768), (64, 128, 1), 1),
    "elements": ((128, 128, 128), (1 << 20, 3), 0),
}


def best_of(repeats: int, run):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def model(data_shape, indices_shape, batch_dims: int) -> onnx.ModelProto:
    node = helper.make_node("GatherND", ["data", "indices"], ["output"], batch_dims=batch_dims)
    shape = gather_nd.output_shape(data_shape, indices_shape, batch_dims)
    graph = helper.make_graph(
        [node],
        "gather_nd_speed",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, data_shape),
            helper.make_tensor_value_info("indices", TensorProto.INT64, indices_shape),
        ],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)


def measure(name: str, repeats: int) -> dict:
    data_shape, indices_shape, batch_dims = WORKLOADS[name]
    rng = np.random.default_rng(0)
    data = rng.standard_normal(data_shape, dtype=np.float32)
    sizes = data_shape[batch_dims : batch_dims + indices_shape[-1]]
    indices = np.stack(
        [rng.integers(-s, s, size=indices_shape[:-1], dtype=np.int64) for s in sizes], axis=-1
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        model(data_shape, indices_shape, batch_dims).SerializeToString(),
        options,
        providers=["CPUExecutionProvider"],
    )
    feeds = {"data": data, "indices": indices}
    t_oracle, (out_oracle, _) = best_of(
        repeats, lambda: gather_nd.evaluate(OPSET, data, indices, batch_dims)
    )
    t_ort, out_ort = best_of(repeats, lambda: session.run(None, feeds)[0])
    diff = compare.difference(out_oracle, out_ort)
    if diff is not None:
        raise SystemExit(f"{name}: onnxruntime disagrees with the oracle: {diff.message}")
    return {
        "workload": f"GatherND-{OPSET} float32 data {'x'.join(map(str, data_shape))}, int64 "
        f"indices {'x'.join(map(str, indices_shape))}, batch_dims {batch_dims}",
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
        print(found["workload"])
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
