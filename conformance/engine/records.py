"""What a run leaves on disk: results.jsonl, header.json and summary.json.

``results.jsonl`` has one JSON object per (case, runtime, variant). Fields
every record has (a contract: scripts and the report read them):

  case_id, op, opset, runtime, variant, kind, message,
  base_id, dtype, indices_dtype, axis, data_shape, indices_shape, source,
  expected   {"dtype", "shape"} of the oracle's output, or {"violation": clause}
  disputed   ids of disputed decisions the case falls under
  load_ms, run_ms, cached   timings (null when the runtime never got there)

and, by kind: ``stage`` (rejected, both_rejected: "load" or "run");
``differing``, ``elements``, ``positions``, ``expected_values``,
``actual_values`` (value_mismatch); ``actual`` {dtype, shape, values,
elements} (dtype_mismatch, shape_mismatch, accepted_invalid); ``signal``
(crash); ``harness_error`` (harness_unsupported caused by a harness bug);
``note`` when something about the record needs saying.

The file is appended to and flushed after every batch, so a run killed
outright keeps everything but the batch in flight.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from conformance import __version__, dtypes
from conformance.cases.model import Case
from conformance.engine.judge import Outcome
from conformance.engine.pool import Raw
from conformance.oracle import Verdict

FORMAT = 1  # bumped when a field changes meaning or goes away
RESULTS, HEADER, SUMMARY = "results.jsonl", "header.json", "summary.json"


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def record(
    case: Case, variant: str, runtime: str, verdict: Verdict | None, outcome: Outcome, raw: Raw
) -> dict:
    if verdict is None:
        expected = None
    elif verdict.valid:
        expected = {"dtype": case.dtype, "shape": list(verdict.output.shape)}
    else:
        expected = {"violation": verdict.violation.clause}
    entry = {
        "case_id": case.id,
        "op": case.op,
        "opset": case.opset,
        "runtime": runtime,
        "variant": variant,
        "kind": outcome.kind,
        "message": outcome.message,
        "base_id": case.base_id,
        "dtype": case.dtype,
        "indices_dtype": case.indices_dtype,
        "axis": case.axis,
        "data_shape": list(case.data.shape),
        "indices_shape": list(case.indices.shape),
        "source": str(case.source),
        "expected": expected,
        "disputed": list(verdict.disputed) if verdict is not None else [],
        "load_ms": _ms(raw.load_s),
        "run_ms": _ms(raw.run_s),
        "cached": raw.cached,
        **outcome.details,
    }
    if raw.note:
        entry["note"] = raw.note
    return entry


class ResultsWriter:
    """Appends records to results.jsonl; ``flush`` after each batch."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = path.open("a", encoding="utf-8")

    def write(self, entry: dict) -> None:
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def _package_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def header(runtimes: dict[str, dict], options: dict, command: list[str] | None) -> dict:
    """The run header: what ran, where, on what versions."""
    return {
        "format": FORMAT,
        "started": now(),
        "command": command if command is not None else sys.argv,
        "cwd": os.getcwd(),
        "conformance": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "packages": {
            name: _package_version(name)
            for name in ("numpy", "onnx", "ml_dtypes", "onnxruntime", "openvino")
        },
        "dtypes": list(dtypes.NAMES),
        "runtimes": runtimes,
        **options,
    }


def write_json(path: Path, content: dict) -> None:
    """Write atomically: a reader never sees half a file."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(path)
