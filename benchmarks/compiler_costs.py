"""Compile + run cost of the compiler adapters (tvm, iree): one-node models and packs.

    python benchmarks/compiler_costs.py --runtime tvm [--one-node 20] [--packs 1,4,8,16,32,64]

One-node: the first N packable corpus cases (every dtype the runtime carries,
variant static), each model compiled fresh (no session cache) and run once;
prints the median, min and max of load (import + compile + load) and run.
Packs: packable float32/int64 corpus cases of one opset and variant, in packs
of each size; prints the load time per pack and per case, and checks every
case's output against the oracle (bit-exact).
"""

from __future__ import annotations

import argparse
import statistics
import time

from conformance import adapters
from conformance.cases import default_case_paths, load
from conformance.cases.check import verdict_of
from conformance.engine import models, packs
from conformance.oracle import compare


def corpus():
    cases = load(default_case_paths())
    for case in cases:
        try:
            verdict = verdict_of(case)
        except Exception:
            continue
        yield case, verdict


def one_node(adapter, cases, variant, count):
    loads, runs, kinds = [], [], {}
    for case, verdict in cases[:count]:
        model = models.build_for_case(case, variant).SerializeToString()
        feeds = models.feeds(case.data, case.indices, variant)
        start = time.perf_counter()
        try:
            timed = adapter.run(model, feeds)
        except adapters.AdapterError as error:
            kinds[type(error).__name__] = kinds.get(type(error).__name__, 0) + 1
            loads.append(time.perf_counter() - start)
            continue
        except adapters.HarnessUnsupported:
            kinds["unsupported"] = kinds.get("unsupported", 0) + 1
            continue
        loads.append(timed.load_s)
        runs.append(timed.run_s)
        same = compare.difference(verdict.output, timed.outputs[0]) is None
        kinds["pass" if same else "differs"] = kinds.get("pass" if same else "differs", 0) + 1
    return loads, runs, kinds


def stats(values):
    if not values:
        return "-"
    return (
        f"median {statistics.median(values) * 1000:.0f} ms, min {min(values) * 1000:.0f}, "
        f"max {max(values) * 1000:.0f} (n={len(values)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--one-node", type=int, default=20)
    parser.add_argument("--packs", default="1,4,8,16,32,64")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--variant", default="static")
    args = parser.parse_args()
    adapter = adapters.instantiate(adapters.resolve(args.runtime))
    start = time.perf_counter()
    info = adapter.info()
    print(f"{args.runtime}: start + info {time.perf_counter() - start:.2f} s; {info['effective']}")
    everything = list(corpus())
    packable = [(c, v) for c, v in everything if packs.packable(c, v)]
    print(f"corpus: {len(everything)} cases, {len(packable)} packable")
    if args.one_node:
        for variant in ("static", "dynamic", "both_initializers"):
            # a spread of dtypes: every k-th packable case
            step = max(1, len(packable) // args.one_node)
            chosen = packable[::step][: args.one_node]
            loads, runs, kinds = one_node(adapter, chosen, variant, args.one_node)
            print(f"one-node {variant}: load {stats(loads)}; run {stats(runs)}; {kinds}")
    sizes = [int(s) for s in args.packs.split(",") if s]
    pool = [
        (c, v)
        for c, v in packable
        if c.dtype == args.dtype and c.opset == max(x.opset for x, _ in packable)
    ]
    print(f"pack pool ({args.dtype}, opset {pool[0][0].opset if pool else '-'}): {len(pool)} cases")
    for size in sizes:
        if size > len(pool):
            print(f"pack {size}: not enough cases")
            continue
        chunk = pool[:size]
        cases = [c for c, _ in chunk]
        model = models.build_pack(cases, args.variant).SerializeToString()
        feeds = models.pack_feeds(cases, args.variant)
        start = time.perf_counter()
        try:
            timed = adapter.run(model, feeds)
        except (adapters.AdapterError, adapters.HarnessUnsupported) as error:
            took = time.perf_counter() - start
            print(
                f"pack {size}: FAILED after {took:.2f} s: {type(error).__name__}: "
                f"{str(error)[:300]}"
            )
            continue
        wrong = sum(
            compare.difference(v.output, out) is not None
            for (_, v), out in zip(chunk, timed.outputs, strict=True)
        )
        print(
            f"pack {size}: load {timed.load_s:.2f} s ({timed.load_s / size * 1000:.0f} ms/case), "
            f"run {timed.run_s * 1000:.1f} ms; {wrong} of {size} differ from the oracle"
        )


if __name__ == "__main__":
    main()
