"""Examples per second of `conformance fuzz`, and what the campaigns found.

Each campaign is a real `conformance fuzz` process (same seed, same budget, no
regression store: `--store off`, so that no campaign inherits another's bugs);
the rate is the campaign's own (findings.json ``examples_per_s``: examples
over the seconds spent fuzzing, shrinking left out). Also reported, so that
speed is never bought with discovery: the bugs and classes found, the
coverage cells reached, and the share of results that came from packs and of
those re-run alone (a pack's discrepancy is re-run alone for the first few of
each bug only; the rest rest on the pack).

The sets: each default runtime alone, ONNX Runtime + OpenVINO, and the four
default runtimes together (issue targets on 2 cores: at least 250 examples/s
for onnxruntime+openvino, 100 for the four).

    python benchmarks/fuzz_rate.py [--budget 120] [--seed 3] [--sets all|pairs] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ALONE = (["onnxruntime"], ["openvino"], ["reference"], ["tract"])
PAIR = ["onnxruntime", "openvino"]
FOUR = ["onnxruntime", "openvino", "reference", "tract"]
SETS = {"all": (*ALONE, PAIR, FOUR), "pairs": (PAIR, FOUR)}


def campaign(runtimes: list[str], budget: float, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "conformance", "fuzz", "--runtime", *runtimes,
                   "--time-budget", str(budget), "--seed", str(seed), "--no-progress",
                   "--store", "off", "--out", out]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
        findings = json.loads((Path(out) / "findings.json").read_text())
        lines = (Path(out) / "results.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
    coverage = findings.get("coverage") or {}
    return {
        "runtimes": runtimes,
        "examples": findings["examples"],
        "examples_per_s": findings["examples_per_s"],
        "wall_s": round(wall, 1),
        "results": len(records),
        "packed": sum(bool(r.get("packed")) for r in records),
        "confirmed_alone": sum(r.get("confirmed") is True for r in records),
        "resting_on_pack": sum(r.get("confirmed") is False for r in records),
        "bugs": len(findings.get("bugs", [])),
        "classes": len(findings.get("classes", [])),
        "coverage": f"{coverage.get('reached', 0)}/{coverage.get('meaningful', 0)}",
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0, help="seconds per campaign (120)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--sets", choices=sorted(SETS), default="all", help="which runtime sets")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    found = []
    for runtimes in SETS[args.sets]:
        print(f"[{time.strftime('%X')}] {'+'.join(runtimes)}", file=sys.stderr, flush=True)
        found.append(campaign(runtimes, args.budget, args.seed))
    if args.json:
        json.dump(found, sys.stdout, indent=2)
        print()
        return 0
    for f in found:
        print(
            f"{'+'.join(f['runtimes']):36}{f['examples_per_s']:7.1f} examples/s "
            f"({f['examples']} examples; {f['bugs']} bugs, {f['classes']} classes, coverage "
            f"{f['coverage']}; {f['results']} results: {f['packed']} from packs, "
            f"{f['confirmed_alone']} re-run alone, {f['resting_on_pack']} resting on the pack)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
