"""Time, size and test count of exporting the whole shipped corpus.

    python benchmarks/export_speed.py [--repeat 3] [--out DIR]

Runs ``conformance export OUT_DIR`` (the command line, in a fresh process
each time, as a user runs it: the Python start, the imports, reading the
case files and baselines, the oracle, building and writing every model and
tensor, the expected-failure files, the rename into place) and prints, for
each run, the wall time and the CPU time; then the tests written, the files
and bytes of OUT_DIR, and the limit of docs/export.md (30 s on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT_S = 30.0


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, help="where to export (default: a temporary folder)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="export-speed-"))
    out = args.out or scratch / "out"
    walls = []
    try:
        for attempt in range(args.repeat):
            cpu = _cpu_children()
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "conformance", "export", str(out), "--force"],
                capture_output=True,
                text=True,
            )
            wall = time.perf_counter() - start
            if done.returncode != 0:
                print(done.stdout, done.stderr, file=sys.stderr)
                return done.returncode
            walls.append(wall)
            print(f"run {attempt + 1}: {wall:.1f} s wall, {_cpu_children() - cpu:.1f} s CPU")
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        files = [p for p in out.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        node = sum(p.stat().st_size for p in (out / "node").rglob("*") if p.is_file())
        print(
            f"tests {manifest['counts']['tests']} of {manifest['counts']['cases']} cases "
            f"({manifest['counts']['not_exported']} cases not exported: error verdicts)"
        )
        print(f"files {len(files)}, {size / 1e6:.1f} MB ({node / 1e6:.1f} MB of test folders)")
        print(
            f"best {min(walls):.1f} s, median {sorted(walls)[len(walls) // 2]:.1f} s "
            f"on {os.cpu_count()} cores (limit {LIMIT_S:.0f} s on 2 cores)"
        )
        return 0 if min(walls) < LIMIT_S else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
