"""Throughput of `conformance run`: packed, --pack 1, the raw-call ceiling, the naive loop.

Four ways to run the same (case, variant, runtime) jobs, side by side, per runtime:

- packed: the run engine as `conformance run` uses it by default (oracle,
  models, isolated worker processes, judging, results.jsonl; many cases per
  model, conformance/engine/packs.py), wall time;
- pack 1: the same with `--pack 1`, every case alone in its one-node model;
- ceiling: the same one-node calls made directly in this process, sessions
  cached by model, models serialized beforehand, no oracle, no judging, no records;
- naive: build, serialize and compile a model for every job, then run it.

Rates are jobs per second, a job being one (case, variant, runtime) run.
Packed and pack 1 are timed over all cases (crashes, refusals and timeouts
included: what a run costs) and compared outcome kind by outcome kind (they
must agree on every one); the ceiling and the naive loop on the cases every
runtime passes in every variant (they have no isolation, and a misbehaving
runtime can take them down). Then both runtimes in one run, packed and pack
1: the main job's shape. Peak memory is the sum of the resident memory of
this process and all its children, sampled every 20 ms.

Two workloads: the case corpus (cases/, every variant), and N small generated
cases (a fixed palette of shapes and axes, random values and indices, ~1 in
10 invalid) in the static and dynamic variants: the workload of a fuzzing
campaign, where shapes recur and values change.

    python benchmarks/run_throughput.py [--generated 2000] [--naive-sample 300] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from conformance import adapters
from conformance.cases import default_case_paths, load
from conformance.cases.case import Case, Expectation, Source
from conformance.engine import models
from conformance.engine.run import Options, run_cases

RUNTIMES = ("onnxruntime", "openvino")
_PAGE = os.sysconf("SC_PAGE_SIZE")

# (op, data shape, indices shape, axis): small, and recurring as in a fuzzing campaign.
PALETTE = [
    ("Gather", (5,), (3,), 0),
    ("Gather", (4, 3), (2,), 0),
    ("Gather", (4, 3), (2, 2), 1),
    ("Gather", (2, 3, 4), (), 2),
    ("Gather", (2, 3, 4), (3,), -1),
    ("Gather", (3, 1, 2), (1, 2), 0),
    ("Gather", (6,), (2, 3), 0),
    ("Gather", (2, 2, 2, 2), (2,), 3),
    ("GatherElements", (5,), (3,), 0),
    ("GatherElements", (4, 3), (2, 3), 0),
    ("GatherElements", (4, 3), (4, 5), 1),
    ("GatherElements", (2, 3, 4), (2, 3, 2), -1),
    ("GatherElements", (3, 1, 2), (3, 1, 2), 0),
    ("GatherElements", (2, 2, 2, 2), (2, 2, 2, 1), 3),
]
DTYPES = (np.float32, np.int64, np.uint8, np.float16)


class PeakMemory:
    """Peak of (this process + its children) resident memory, sampled in a thread."""

    def __init__(self, interval: float = 0.02) -> None:
        self.interval, self.peak, self._stop = interval, 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @staticmethod
    def _rss(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
                return int(statm.read().split()[1]) * _PAGE
        except OSError:
            return 0

    @staticmethod
    def _children(pid: int) -> list[int]:
        found = []
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as children:
                    found += [int(c) for c in children.read().split()]
        except OSError:
            pass
        return found

    def _sample(self) -> None:
        me = os.getpid()
        while not self._stop.is_set():
            total = self._rss(me) + sum(self._rss(child) for child in self._children(me))
            self.peak = max(self.peak, total)
            time.sleep(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def generated_cases(count: int, seed: int = 7) -> list[Case]:
    rng = random.Random(seed)
    values = np.random.default_rng(seed)
    cases = []
    for number in range(count):
        op, data_shape, indices_shape, axis = rng.choice(PALETTE)
        dtype = np.dtype(rng.choice(DTYPES))
        if dtype.kind == "f":
            data = values.standard_normal(data_shape).astype(dtype)
        else:
            info = np.iinfo(dtype)
            data = values.integers(info.min, info.max, data_shape, dtype=dtype, endpoint=True)
        size = data_shape[axis]
        high = size + 1 if rng.random() < 0.1 else size  # ~1 in 10 out of range
        indices = values.integers(-size, high, indices_shape, dtype=np.int64)
        cases.append(
            Case(
                id=f"generated-{number}",
                base_id="generated",
                op=op,
                opset=13,
                axis=axis,
                data=data,
                indices=indices,
                expectation=Expectation("oracle"),
                description="generated",
                spec="",
                decisions=(),
                tags=(),
                source=Source(Path("<generated>"), number),
            )
        )
    return cases


def harness(cases, variants, runtimes, pack=None) -> tuple[float, int, list[dict]]:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        options = Options(runtimes=runtimes, variants=variants, pack=pack)
        summary = run_cases(cases, Path(out), options)
        elapsed = time.perf_counter() - started
        records = [json.loads(line) for line in (Path(out) / "results.jsonl").open()]
    return elapsed, summary.records, records


def _prepared(cases, variants):
    """(runtime-independent) serialized models and feeds, built before any timing."""
    jobs = []
    for case in cases:
        for variant in variants:
            model = models.build_for_case(case, variant).SerializeToString()
            key = hashlib.blake2b(model, digest_size=16).digest()
            jobs.append((key, model, models.feeds(case.data, case.indices, variant)))
    return jobs


def _call(adapter, model, feeds, key=None) -> None:
    # A refusal is a result too; it costs what it costs.
    with contextlib.suppress(adapters.AdapterError, adapters.HarnessUnsupported):
        adapter.run(model, feeds, key)


def ceiling(cases, variants, runtimes) -> tuple[float, int]:
    jobs = _prepared(cases, variants)
    elapsed = 0.0
    for name in runtimes:
        adapter = adapters.instantiate(adapters.resolve(name))
        adapter.cache_size = 1 << 30  # every session kept: the best case
        started = time.perf_counter()
        for key, model, feeds in jobs:
            _call(adapter, model, feeds, key)
        elapsed += time.perf_counter() - started
    return elapsed, len(jobs) * len(runtimes)


def naive(cases, variants, runtimes, sample: int, seed: int = 3) -> tuple[float, int]:
    rng = random.Random(seed)
    chosen = [(c, v) for c in cases for v in variants]
    chosen = rng.sample(chosen, min(sample, len(chosen)))
    elapsed = 0.0
    for name in runtimes:
        adapter = adapters.instantiate(adapters.resolve(name))
        started = time.perf_counter()
        for case, variant in chosen:
            model = models.build_for_case(case, variant).SerializeToString()
            _call(adapter, model, models.feeds(case.data, case.indices, variant))
        elapsed += time.perf_counter() - started
    return elapsed, len(chosen) * len(runtimes)


def _safe(cases, records) -> list[Case]:
    """Cases that every runtime passes in every variant.

    The ceiling and the naive loop have no isolation, and a runtime that
    misbehaves on an input (an out-of-range read, a crash that recurs only
    after other cases) can take this process down; a case that passes
    everywhere cannot. The harness is timed on the same cases.
    """
    bad = {r["case_id"] for r in records if r["kind"] != "pass" or r.get("note")}
    return [c for c in cases if c.id not in bad]


def _log(message: str) -> None:
    print(f"[{time.strftime('%X')}] {message}", file=sys.stderr, flush=True)


def _kinds(records: list[dict]) -> dict[tuple, str]:
    return {(r["case_id"], r["variant"], r["runtime"]): r["kind"] for r in records}


def _timed(name, cases, variants, runtimes, pack) -> dict:
    label = "packed" if pack is None else f"pack {pack}"
    _log(f"{name}: {', '.join(runtimes)}: {label} over {len(cases)} cases")
    with PeakMemory() as memory:
        seconds, jobs, records = harness(cases, variants, runtimes, pack)
    return {"seconds": seconds, "jobs": jobs, "records": records, "peak": memory.peak}


def workload(name, cases, variants, runtimes, sample) -> dict:
    per_runtime, everything = {}, []
    for runtime in runtimes:
        packed = _timed(name, cases, variants, [runtime], None)
        alone = _timed(name, cases, variants, [runtime], 1)
        everything += packed["records"]
        differ = [key for key, kind in _kinds(packed["records"]).items()
                  if _kinds(alone["records"]).get(key) != kind]  # fmt: skip
        safe = _safe(cases, packed["records"])
        _log(f"{name}: {runtime}: packed, ceiling, naive loop on the {len(safe)} cases that pass")
        packed_safe = _timed(name, safe, variants, [runtime], None)
        ceiling_s, ceiling_n = ceiling(safe, variants, [runtime])
        naive_s, naive_n = naive(safe, variants, [runtime], sample)
        rates = {
            "packed": packed["jobs"] / packed["seconds"],
            "pack_1": alone["jobs"] / alone["seconds"],
            "packed_passing": packed_safe["jobs"] / packed_safe["seconds"],
            "ceiling": ceiling_n / ceiling_s,
            "naive": naive_n / naive_s,
        }
        per_runtime[runtime] = {
            "jobs": packed["jobs"],
            "seconds": {"packed": packed["seconds"], "pack_1": alone["seconds"]},
            "jobs_per_s": rates,
            "packed_vs_pack_1": rates["packed"] / rates["pack_1"],
            "packed_vs_naive": rates["packed_passing"] / rates["naive"],  # the same cases
            "kinds_differing": len(differ),
            "packed_records": sum(bool(r.get("packed")) for r in packed["records"]),
            "confirmed_alone": sum(r.get("confirmed") is True for r in packed["records"]),
            "peak_memory_mib": max(packed["peak"], alone["peak"]) / (1 << 20),
        }
    together = {}
    if len(runtimes) > 1:
        packed = _timed(name, cases, variants, list(runtimes), None)
        alone = _timed(name, cases, variants, list(runtimes), 1)
        differ = [key for key, kind in _kinds(packed["records"]).items()
                  if _kinds(alone["records"]).get(key) != kind]  # fmt: skip
        together = {
            "jobs": packed["jobs"],
            "seconds": {"packed": packed["seconds"], "pack_1": alone["seconds"]},
            "packed_vs_pack_1": alone["seconds"] / packed["seconds"],
            "kinds_differing": len(differ),
            "peak_memory_mib": max(packed["peak"], alone["peak"]) / (1 << 20),
        }
    return {
        "workload": name,
        "cases": len(cases),
        "variants": list(variants),
        "runtimes": per_runtime,
        "together": together,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", type=int, default=2000, help="generated cases (2000)")
    parser.add_argument("--naive-sample", type=int, default=300, help="jobs timed naively")
    parser.add_argument("--runtime", nargs="+", default=list(RUNTIMES), dest="runtimes")
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    results = []
    if not args.skip_corpus:
        corpus = load(default_case_paths())
        results.append(
            workload("corpus", corpus, models.VARIANTS, args.runtimes, args.naive_sample)
        )
    small = generated_cases(args.generated)
    results.append(
        workload("generated", small, ("static", "dynamic"), args.runtimes, args.naive_sample)
    )
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return 0
    for r in results:
        print(f"{r['workload']}: {r['cases']} cases x {len(r['variants'])} variants")
        for runtime, f in r["runtimes"].items():
            rates = f["jobs_per_s"]
            print(
                f"  {runtime:12} packed {rates['packed']:7.0f} jobs/s  pack 1 "
                f"{rates['pack_1']:6.0f}  -> {f['packed_vs_pack_1']:.1f}x; on the cases that "
                f"pass: packed {rates['packed_passing']:6.0f}, ceiling {rates['ceiling']:6.0f}, "
                f"naive {rates['naive']:5.0f} -> packed/naive {f['packed_vs_naive']:.1f}x "
                f"(goal >= 10x); {f['packed_records']} of "
                f"{f['jobs']} results from packs, {f['confirmed_alone']} re-run alone; "
                f"kinds differing {f['kinds_differing']}; peak {f['peak_memory_mib']:.0f} MiB"
            )
        t = r["together"]
        if t:
            print(
                f"  together     packed {t['seconds']['packed']:.1f} s, pack 1 "
                f"{t['seconds']['pack_1']:.1f} s for {t['jobs']} jobs -> "
                f"{t['packed_vs_pack_1']:.1f}x (goal >= 5x); kinds differing "
                f"{t['kinds_differing']}; peak "
                f"{t['peak_memory_mib']:.0f} MiB (goal < 1536)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
