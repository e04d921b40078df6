"""Examples per second of `conformance fuzz`: each runtime alone and all three together,
packed (the default) and with --pack 1.

Each campaign is a real `conformance fuzz` process (same seed, same budget);
the rate is the campaign's own (findings.json ``examples_per_s``: examples over
the seconds spent fuzzing, shrinking left out). Also reported: the share of
results that came from packs and of those re-run alone, which bound what
packing can give (an invalid example, and every discrepancy a pack shows, run
alone).

    python benchmarks/fuzz_rate.py [--budget 30] [--seed 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SETS = (["onnxruntime"], ["openvino"], ["reference"], ["onnxruntime", "openvino", "reference"])


def campaign(runtimes: list[str], budget: float, seed: int, pack: int | None) -> dict:
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "conformance", "fuzz", "--runtime", *runtimes,
                   "--time-budget", str(budget), "--seed", str(seed), "--no-progress",
                   "--out", out]  # fmt: skip
        if pack is not None:
            command += ["--pack", str(pack)]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
        findings = json.loads((Path(out) / "findings.json").read_text())
        lines = (Path(out) / "results.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
    return {
        "runtimes": runtimes,
        "pack": pack,
        "examples": findings["examples"],
        "examples_per_s": findings["examples_per_s"],
        "wall_s": wall,
        "results": len(records),
        "packed": sum(bool(r.get("packed")) for r in records),
        "confirmed_alone": sum(r.get("confirmed") is True for r in records),
        "classes": len(findings.get("classes", [])),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=30.0, help="seconds per campaign (30)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    found = []
    for runtimes in SETS:
        for pack in (None, 1):
            print(f"[{time.strftime('%X')}] {'+'.join(runtimes)} pack {pack or 'default'}",
                  file=sys.stderr, flush=True)  # fmt: skip
            found.append(campaign(runtimes, args.budget, args.seed, pack))
    if args.json:
        json.dump(found, sys.stdout, indent=2)
        print()
        return 0
    for f in found:
        print(
            f"{'+'.join(f['runtimes']):34} {'packed' if f['pack'] is None else 'pack 1':7}"
            f"{f['examples_per_s']:7.1f} examples/s ({f['examples']} examples, "
            f"{f['results']} results: {f['packed']} from packs, {f['confirmed_alone']} "
            f"re-run alone; {f['classes']} classes)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
