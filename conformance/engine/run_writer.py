"""What a run writes: its records (results.jsonl), its header, the names of its files.

``results.jsonl`` has one JSON object per (case, runtime, variant). Fields
every record has (a contract: scripts and the report read them):

  case_id, op, opset, runtime, variant, kind, message,
  base_id, dtype, indices_dtype, axis, data_shape, indices_shape, source,
  expected   {"dtype", "shape"} of the oracle's output, or {"violation": clause}
  disputed   ids of disputed decisions the case falls under
  features   input features (conformance.tables.features.FEATURES: negative,
             out_of_range, empty_indices...), what baseline entries match on
  load_ms, run_ms, cached   timings (null when the runtime never got there)

and, for an operator that writes (ScatterElements, ScatterND: its row has a
third input and a reduction attribute), ``updates_shape`` and ``reduction``
(the attribute as the node carries it; null when absent); ``expected_values``
then name every value admissible at a position (``one of A, B``) where the
spec leaves it open. By kind: ``stage`` (rejected, both_rejected: "load" or "run");
``differing``, ``elements``, ``positions``, ``expected_values``,
``actual_values`` (value_mismatch); ``actual`` {dtype, shape, values,
elements} (dtype_mismatch, shape_mismatch, accepted_invalid); ``explained_by``
(value_mismatch, and accepted_invalid of out-of-range indices); ``signal``
(crash); ``harness_error`` (harness_unsupported caused by a harness bug);
``note`` when something about the record needs saying.

The file is appended to and flushed after every batch, so a run killed
outright keeps everything but the batch in flight. docs/schemas/result.schema.json
is the contract (conformance.engine.run_schemas holds readers to it);
conformance.engine.run_folder reads a run folder back.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from conformance import __version__
from conformance.adapters import registry
from conformance.cases.case import Case
from conformance.engine import credentials, files
from conformance.engine.judge import Outcome
from conformance.engine.pool import Raw
from conformance.oracle import Verdict
from conformance.tables import dtypes
from conformance.tables.features import features
from conformance.tables.operators import OPERATORS

FORMAT = 1  # bumped when a field changes meaning or goes away
RESULTS, HEADER, SUMMARY = "results.jsonl", "header.json", "summary.json"
GATE = "gate.json"  # the gate's verdict (conformance.gate.verdict)
GROUPS = "groups.json"  # the smallest input of each discrepancy group (engine.run)
FINDINGS = "findings.json"  # a fuzz campaign's classes (conformance.fuzz.artifacts)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def about(case: Case, verdict: Verdict | None) -> dict:
    """The fields of a record that describe the input, whatever happened to it
    (the pytest plugin matches baseline entries on them before running)."""
    if verdict is None:
        expected = None
    elif verdict.valid:
        expected = {"dtype": case.dtype, "shape": list(verdict.output.shape)}
    else:
        expected = {"violation": verdict.violation.clause}
    described = {
        "case_id": case.id,
        "op": case.op,
        "opset": case.opset,
        "base_id": case.base_id,
        "dtype": case.dtype,
        "indices_dtype": case.indices_dtype,
        "axis": case.axis,
        "data_shape": list(case.data.shape),
        "indices_shape": list(case.indices.shape),
        **_written(case),
        "source": str(case.source),
        "expected": expected,
        "disputed": list(verdict.disputed) if verdict is not None else [],
        "features": list(features(case)),
    }
    if case.nodes:  # a node case of `conformance model`: the model nodes it stands for
        described["nodes"] = [{"model": m, "graph": g, "node": n} for m, g, n in case.nodes]
    return described


def _written(case: Case) -> dict:
    """The fields of an operator that writes, where its row has them: its
    third input's shape and its reduction (null: absent). None for an
    operator that reads, whose records stay as they were."""
    row = OPERATORS[case.op]
    found: dict = {}
    if "updates" in row.inputs and case.updates is not None:
        found["updates_shape"] = list(case.updates.shape)
    if row.reductions:
        found["reduction"] = case.reduction
    return found


def record(
    case: Case, variant: str, runtime: str, verdict: Verdict | None, outcome: Outcome, raw: Raw
) -> dict:
    described = about(case, verdict)
    content = {
        "case_id": described.pop("case_id"),
        "op": described.pop("op"),
        "opset": described.pop("opset"),
        "runtime": runtime,
        "variant": variant,
        "kind": outcome.kind,
        "message": outcome.message,
        **described,
        "load_ms": _ms(raw.load_s),
        "run_ms": _ms(raw.run_s),
        "cached": raw.cached,
        "packed": raw.packed,
        "confirmed": raw.confirmed,
        **outcome.details,
    }
    if raw.packed_kind is not None:
        content["packed_kind"] = raw.packed_kind
    if raw.note:
        content["note"] = raw.note
    return content


class ResultsWriter:
    """Appends records to results.jsonl; ``flush`` after each batch."""

    def __init__(self, path: Path, run_id: str | None = None) -> None:
        self.path = path
        self.run_id = run_id  # written into every record: lines of two runs never mix unseen
        self._file = files.open_append(path)

    def write(self, record: dict) -> None:
        if self.run_id is not None:
            record["run_id"] = self.run_id
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")

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


# ISA extensions that change what a runtime computes or how (OpenVINO's CPU
# plugin picks bf16 inference where avx512_bf16 or AMX is present, f16 with
# avx512_fp16 or AMX-FP16): recorded so that a verdict names what it depends on.
CPU_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "avx_vnni",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    "amx_fp16",
)


def cpu_flags() -> list[str]:
    """The CPU's flags among :data:`CPU_FLAGS` (Linux: /proc/cpuinfo; else empty)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("flags"):
                    present = set(line.split(":", 1)[1].split())
                    return [flag for flag in CPU_FLAGS if flag in present]
    except OSError:
        pass
    return []


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def header(runtimes: dict[str, dict], options: dict, command: list[str] | None) -> dict:
    """The run header: what ran, where, on what versions, and which corpus
    was judged (``corpus``, from ``options``: whether it is the shipped one,
    the case paths, files and their digest; None for a fuzz campaign)."""
    return {
        "format": FORMAT,
        "started": now(),
        # A store URL on the command line may hold a password: never recorded.
        "command": credentials.mask_command(command if command is not None else sys.argv),
        "cwd": os.getcwd(),
        "conformance": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": _cpu(),
        "cpu_flags": cpu_flags(),
        "os": f"{platform.system()} {platform.release()}",
        "cores": os.cpu_count(),
        "packages": {
            name: _package_version(name)
            for name in ("numpy", "onnx", "ml_dtypes", *registry.HEADER_PACKAGES)
        },
        "dtypes": list(dtypes.NAMES),
        "runtimes": runtimes,
        "corpus": None,
        **options,
    }
