"""How long reading the shipped baselines takes: what every gate pays first.

Times ``conformance.gate.baseline.load`` on the shipped baselines of every
built-in runtime (each file parsed and checked, as ``run --gate``, ``gate``,
``fuzz`` and the pytest plugin read them). Each of ``--repeats`` fresh
interpreters reads them once (the first reading, which also builds the
schema's validator) and then ``--repeats`` times more; the figures are the
best and median, in wall time and in CPU time (what a shared machine
disturbs least).

    python benchmarks/baseline_read.py [--repeats 7]

To compare with another version of the package, run it with that version
first on ``PYTHONPATH`` (``git archive COMMIT | tar -x -C /tmp/old``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

_ONE = """
import json, time
from conformance.gate import baseline
names = ["onnxruntime", "openvino", "reference", "tract", "tvm", "iree"]
def timed():
    wall, cpu = time.perf_counter(), time.process_time()
    baseline.load(baseline.default_folder(), names)
    return time.perf_counter() - wall, time.process_time() - cpu
first = timed()
again = [timed() for _ in range({repeats})]
print(json.dumps({{"first": first, "again": again}}))
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    firsts, agains = [], []
    for _ in range(args.repeats):
        done = subprocess.run(
            [sys.executable, "-c", _ONE.format(repeats=args.repeats)],
            capture_output=True,
            text=True,
            check=True,
        )
        figures = json.loads(done.stdout)
        firsts.append(figures["first"])
        agains.extend(figures["again"])
    for label, spent in (("first reading", firsts), ("later readings", agains)):
        wall, cpu = [1000 * s[0] for s in spent], [1000 * s[1] for s in spent]
        print(
            f"{label}: wall best {min(wall):.1f} ms, median {statistics.median(wall):.1f} ms; "
            f"CPU best {min(cpu):.1f} ms, median {statistics.median(cpu):.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
