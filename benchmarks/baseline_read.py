"""How long reading the shipped baselines takes: what every gate pays first.

Times ``conformance.gate.baseline.load`` on the shipped baselines of every
built-in runtime (each file parsed and checked, as ``run --gate``, ``gate``,
``fuzz`` and the pytest plugin read them), in a fresh process so that the
first reading (which builds the schema's validator) is measured as well as
the later ones: best and median wall time of ``--repeats`` fresh readings,
and of the first one, each in its own interpreter.

    python benchmarks/baseline_read.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

_ONE = """
import json, time
start = time.perf_counter()
from conformance.gate import baseline
imported = time.perf_counter()
names = ["onnxruntime", "openvino", "reference", "tract", "tvm", "iree"]
baseline.load(baseline.default_folder(), names)
first = time.perf_counter()
again = []
for _ in range({repeats}):
    t = time.perf_counter()
    baseline.load(baseline.default_folder(), names)
    again.append(time.perf_counter() - t)
print(json.dumps({{"first": first - imported, "again": again}}))
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
    ms = 1000
    print(
        f"first reading (validator built): best {min(firsts) * ms:.1f} ms, "
        f"median {statistics.median(firsts) * ms:.1f} ms"
    )
    print(
        f"later readings: best {min(agains) * ms:.1f} ms, "
        f"median {statistics.median(agains) * ms:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
