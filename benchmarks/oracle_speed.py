"""Oracle speed against onnx.reference and ONNX Runtime, side by side in one run.

The workload is the one the foundation issue names: GatherElements on float32
data of shape 1024x512x32, axis 2, int64 indices uniform in [-32, 32). All
three results are compared bit for bit first, so the figures are for the
same, correct computation. Times are the best of --repeats runs (wall clock,
one process, nothing else running), ONNX Runtime with one intra-op thread.

Targets: the oracle at least 30x faster than onnx.reference, and at most 5x
ONNX Runtime's time. `--check` exits 1 when a target is missed.

    python benchmarks/oracle_speed.py [--repeats 5] [--check] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np
import onnxruntime as ort
from onnx.reference import ReferenceEvaluator

from conformance import oracle
from conformance.engine import models
from conformance.oracle import compare

SHAPE, AXIS, OPSET = (1024, 512, 32), 2, 13
TARGET_VS_REFERENCE, TARGET_VS_ORT = 30.0, 5.0


def best_of(repeats: int, run):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--reference-repeats", type=int, default=1, help="onnx.reference takes seconds per run"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    data = rng.standard_normal(SHAPE, dtype=np.float32)
    indices = rng.integers(-SHAPE[AXIS], SHAPE[AXIS], size=SHAPE, dtype=np.int64)
    model = models.build("GatherElements", OPSET, data, indices, AXIS, "static")
    feeds = models.feeds(data, indices, "static")

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    reference = ReferenceEvaluator(model)

    t_oracle, out_oracle = best_of(
        args.repeats, lambda: oracle.evaluate("GatherElements", OPSET, data, indices, AXIS)
    )
    t_ort, out_ort = best_of(args.repeats, lambda: session.run(None, feeds)[0])
    t_ref, out_ref = best_of(args.reference_repeats, lambda: reference.run(None, feeds)[0])

    for name, out in (("onnxruntime", out_ort), ("onnx.reference", out_ref)):
        diff = compare.difference(out_oracle, out)
        if diff is not None:
            print(f"{name} disagrees with the oracle: {diff.message}", file=sys.stderr)
            return 2

    vs_reference, vs_ort = t_ref / t_oracle, t_oracle / t_ort
    figures = {
        "workload": f"GatherElements-{OPSET} float32 {'x'.join(map(str, SHAPE))}, axis {AXIS}, "
        f"int64 indices in [-{SHAPE[AXIS]}, {SHAPE[AXIS]})",
        "oracle_s": t_oracle,
        "onnxruntime_1thread_s": t_ort,
        "onnx_reference_s": t_ref,
        "oracle_speedup_vs_reference": vs_reference,
        "oracle_time_vs_onnxruntime": vs_ort,
        "targets": {
            "speedup_vs_reference_min": TARGET_VS_REFERENCE,
            "time_vs_onnxruntime_max": TARGET_VS_ORT,
        },
        "numpy": np.__version__,
        "onnxruntime": ort.__version__,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
    }
    print(figures["workload"])
    print(f"  oracle                 {t_oracle * 1e3:9.1f} ms  (best of {args.repeats})")
    print(f"  onnxruntime, 1 thread  {t_ort * 1e3:9.1f} ms  (best of {args.repeats})")
    print(f"  onnx.reference         {t_ref * 1e3:9.1f} ms  (best of {args.reference_repeats})")
    ok_ref, ok_ort = vs_reference >= TARGET_VS_REFERENCE, vs_ort <= TARGET_VS_ORT
    print(
        f"  oracle vs onnx.reference: {vs_reference:6.1f}x faster  "
        f"(target >= {TARGET_VS_REFERENCE:.0f}x: {'met' if ok_ref else 'MISSED'})"
    )
    print(
        f"  oracle vs onnxruntime:    {vs_ort:6.2f}x its time "
        f"(target <= {TARGET_VS_ORT:.0f}x: {'met' if ok_ort else 'MISSED'})"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)
    return 1 if args.check and not (ok_ref and ok_ort) else 0


if __name__ == "__main__":
    sys.exit(main())
