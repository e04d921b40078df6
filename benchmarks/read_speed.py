"""How long reading a run folder back takes: what `gate`, `report` and `diff` pay first.

Times ``conformance.engine.records.read_folder`` on a run folder (parsing
results.jsonl, holding every file and every record to what the formats say,
checking the folder adds up), best and median of ``--repeats`` in wall time
and the best in CPU time (what a shared machine disturbs least), and, beside
it, parsing the lines alone (``json.loads`` per line: the floor any reader
pays) so that the cost of the checks reads as the difference.

Make the folder first (the main job's run, about 10 000 records):

    conformance run --runtime onnxruntime openvino reference --out /tmp/r10k -j 2
    python benchmarks/read_speed.py /tmp/r10k [--repeats 7] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from conformance.engine import records


def timed(repeats: int, call, clock=time.perf_counter) -> list[float]:
    spent = []
    for _ in range(repeats):
        start = clock()
        call()
        spent.append(clock() - start)
    return spent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a finished run folder")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)

    run = records.read_folder(args.folder)  # once: refused here, nothing is timed
    data = (args.folder / records.RESULTS).read_bytes()
    read = timed(args.repeats, lambda: records.read_folder(args.folder))
    # CPU time too: on a machine shared with other work, wall time measures the neighbours
    cpu = timed(args.repeats, lambda: records.read_folder(args.folder), time.process_time)
    parse = timed(args.repeats, lambda: [json.loads(line) for line in data.splitlines()])
    figures = {
        "folder": str(args.folder),
        "records": len(run.records),
        "bytes": len(data),
        "read_folder_best_s": round(min(read), 4),
        "read_folder_median_s": round(statistics.median(read), 4),
        "read_folder_cpu_best_s": round(min(cpu), 4),
        "json_loads_best_s": round(min(parse), 4),
        "per_record_us": round(min(read) / max(len(run.records), 1) * 1e6, 1),
    }
    for name, value in figures.items():
        print(f"{name:22} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
