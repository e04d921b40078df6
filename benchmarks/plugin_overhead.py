"""What the installed pytest plugin costs a pytest run that did not ask for it.

Times `python -m pytest --collect-only -q` in an empty tmp project (one
trivial test, no ini file, no `cases/` folder), three ways, interleaved run by
run so drift hits all three alike: the switch blocked (`-p no:conformance`:
as if the package were not installed), the default (the entry point's
switch loaded, the plugin not enabled), and the plugin enabled
(`--conformance`: what every pytest run paid before issue 22). Prints the
median wall time of each and the default's overhead over the blocked run,
and the switch module's own import time from `python -X importtime`.

Target: the default at most 20 ms over the blocked run. `--check` exits 1
when it is missed.

    python benchmarks/plugin_overhead.py [--runs 21] [--check] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MS = 20.0
MODES = {
    "blocked (-p no:conformance)": ["-p", "no:conformance"],
    "default (not enabled)": [],
    "enabled (--conformance)": ["--conformance"],
}


def pytest_once(folder: Path, extra: list[str]) -> float:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only",
               "-q", *extra]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    start = time.perf_counter()
    subprocess.run(command, cwd=folder, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def import_time_us() -> tuple[int, int]:
    """(self, cumulative) microseconds of importing the switch module, pytest
    imported first as it is in a pytest run."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import pytest, conformance.pytest_switch"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    for line in done.stderr.splitlines():
        if line.rstrip().endswith("conformance.pytest_switch"):
            own, cumulative = (int(x.strip()) for x in line.split(":", 1)[1].split("|")[:2])
            return own, cumulative
    raise SystemExit("conformance.pytest_switch not in the -X importtime output")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="runs of each mode (default 21)")
    parser.add_argument("--check", action="store_true", help=f"exit 1 over {TARGET_MS:g} ms")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_one.py").write_text("def test_one():\n    pass\n")
        for extra in MODES.values():  # warm the file cache once
            pytest_once(folder, extra)
        times: dict[str, list[float]] = {mode: [] for mode in MODES}
        for _ in range(args.runs):
            for mode, extra in MODES.items():
                times[mode].append(pytest_once(folder, extra))
    medians = {mode: statistics.median(t) * 1000 for mode, t in times.items()}
    blocked, default, enabled = medians.values()
    own, cumulative = import_time_us()
    figures = {
        "python": platform.python_version(),
        "runs": args.runs,
        "median_ms": medians,
        "overhead_ms": default - blocked,
        "enabled_over_blocked_ms": enabled - blocked,
        "switch_import_us": {"self": own, "cumulative": cumulative},
    }
    for mode, ms in medians.items():
        print(f"{mode:30} median {ms:7.1f} ms over {args.runs} runs")
    print(f"overhead of the installed, not enabled plugin: {default - blocked:+.1f} ms "
          f"(target at most {TARGET_MS:g} ms)")  # fmt: skip
    print(f"enabled plugin over blocked: {enabled - blocked:+.1f} ms")
    print(f"import conformance.pytest_switch: {own} us self, {cumulative} us cumulative")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 1 if args.check and default - blocked > TARGET_MS else 0


if __name__ == "__main__":
    sys.exit(main())
