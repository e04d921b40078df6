"""Where the main job's time goes: phase by phase, runtime by runtime, in CPU and wall seconds.

The main job (`nox -s conformance`) is: an environment, `conformance cases
validate --check-models`, one `conformance run` of every case on
onnxruntime, openvino and reference with `--gate`, the reports. This script
runs the same commands as real processes in the current environment (the
environment's own cost is nox's: `--nox` times the whole session too) and
reports for each its wall time and its CPU time (user + system of the
process and every process it waited for: workers and fork servers
included), with the load average before it, since wall figures on a shared
machine mean little without it.

OpenVINO's compiled-model cache (docs/development.md, "The main job's time")
is measured three ways: `off` (CONFORMANCE_OPENVINO_CACHE=off), `cold` (an
empty folder before each command) and `warm` (the folder the cold commands
filled). From the run's records it
also counts what the levers act on: onnx.reference's timeouts (and how many
were counted, not waited for), the discrepancies re-run alone to be
confirmed, and each runtime's recorded load and run seconds.

    python benchmarks/main_job.py [-j 2] [--cache off cold warm] [--per-runtime] [--nox] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNTIMES = ("onnxruntime", "openvino", "reference")
CACHE_ENV = "CONFORMANCE_OPENVINO_CACHE"
ROOT = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _load() -> float:
    return os.getloadavg()[0]


def timed(command: list[str], env: dict[str, str]) -> dict:
    """Wall and CPU seconds of one command, and the load average before it."""
    load = _load()
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    return {
        "command": " ".join(command),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "load_before": round(load, 2),
        "exit": done.returncode,
        "tail": done.stdout.strip().splitlines()[-3:] if done.returncode not in (0, 1) else [],
    }


def records(out: Path) -> dict:
    """What a run's records say about the levers: per runtime, the recorded
    load and run seconds, timeouts (counted or waited for), confirmations."""
    per = collections.defaultdict(
        lambda: {"records": 0, "load_s": 0.0, "run_s": 0.0, "timeouts": 0, "counted": 0}
    )
    confirmed = collections.defaultdict(lambda: {"count": 0, "seconds": 0.0})
    with open(out / "results.jsonl", encoding="utf-8") as lines:
        for line in lines:
            r = json.loads(line)
            if "runtime" not in r:
                continue
            row = per[r["runtime"]]
            seconds = ((r.get("load_ms") or 0) + (r.get("run_ms") or 0)) / 1000
            row["records"] += 1
            row["load_s"] += (r.get("load_ms") or 0) / 1000
            row["run_s"] += (r.get("run_ms") or 0) / 1000
            if r["kind"] == "timeout":
                row["timeouts"] += 1
                row["counted"] += "counted before running" in r.get("message", "")
            if r.get("confirmed"):
                confirmed[r["runtime"]]["count"] += 1
                confirmed[r["runtime"]]["seconds"] += seconds
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    rounded = {k: {n: round(v, 2) for n, v in row.items()} for k, row in per.items()}
    return {
        "run_s": summary.get("duration_s"),
        "per_runtime": rounded,
        "confirmed": {k: {n: round(v, 2) for n, v in c.items()} for k, c in confirmed.items()},
        "discrepancies": summary.get("discrepancies"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--cache", nargs="+", default=["off", "cold", "warm"])
    parser.add_argument("--per-runtime", action="store_true", help="each runtime alone too")
    parser.add_argument("--nox", action="store_true", help="`python -m nox -s conformance` too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    conformance = str(Path(sys.executable).with_name("conformance"))
    base = dict(os.environ)
    folder = Path(tempfile.mkdtemp(prefix="main-job-"))
    cache = folder / "openvino-cache"
    results: dict = {"cpu": _cpu_name(), "cores": os.cpu_count(), "phases": []}
    try:
        env = {**base, CACHE_ENV: "off"}
        step = timed([conformance, "cases", "validate", "--check-models"], env)
        results["phases"].append({"phase": "validate --check-models", **step})
        for mode in args.cache:
            env = {**base, CACHE_ENV: "off" if mode == "off" else str(cache)}
            if mode == "cold":
                shutil.rmtree(cache, ignore_errors=True)
            out = folder / f"run-{mode}"
            command = [conformance, "run", "--runtime", *RUNTIMES, "--gate", "--no-progress"]
            step = timed([*command, "--out", str(out), "-j", str(args.j)], env)
            step.update(records(out))
            results["phases"].append({"phase": f"run, OpenVINO cache {mode}", **step})
            if args.per_runtime:
                for runtime in RUNTIMES:
                    if mode == "cold" and runtime == "openvino":  # from an empty cache;
                        # what it fills is what the whole run's OpenVINO part compiles
                        shutil.rmtree(cache, ignore_errors=True)
                    alone = folder / f"{runtime}-{mode}"
                    command = [conformance, "run", "--runtime", runtime, "--no-progress"]
                    step = timed([*command, "--out", str(alone), "-j", str(args.j)], env)
                    step.update(records(alone))
                    results["phases"].append({"phase": f"{runtime} alone, cache {mode}", **step})
        if args.nox:
            step = timed([sys.executable, "-m", "nox", "-s", "conformance"], base)
            results["phases"].append({"phase": "nox -s conformance (whole)", **step})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{results['cpu']}, {results['cores']} cores, -j {args.j}")
    print(f"{'phase':<36} {'wall s':>7} {'CPU s':>7} {'load':>5} {'run s':>6}  exit")
    for p in results["phases"]:
        print(
            f"{p['phase']:<36} {p['wall_s']:>7} {p['cpu_s']:>7} {p['load_before']:>5} "
            f"{p.get('run_s') or '':>6}  {p['exit']}"
        )
        for runtime, row in sorted(p.get("per_runtime", {}).items()):
            confirmed = p.get("confirmed", {}).get(runtime, {"count": 0, "seconds": 0})
            print(
                f"    {runtime:<12} recorded load {row['load_s']:>6} s, run {row['run_s']:>6} s; "
                f"timeouts {row['timeouts']} ({row['counted']} counted); "
                f"confirmed alone {confirmed['count']} ({confirmed['seconds']} s)"
            )
        for line in p["tail"]:
            print(f"    {line}")
    return 0


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
