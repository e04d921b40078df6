"""What a run leaves on disk: results.jsonl, header.json and summary.json.

``results.jsonl`` has one JSON object per (case, runtime, variant). Fields
every record has (a contract: scripts and the report read them):

  case_id, op, opset, runtime, variant, kind, message,
  base_id, dtype, indices_dtype, axis, data_shape, indices_shape, source,
  expected   {"dtype", "shape"} of the oracle's output, or {"violation": clause}
  disputed   ids of disputed decisions the case falls under
  features   input features (conformance.tables.features.FEATURES: negative,
             out_of_range, empty_indices...), what baseline entries match on
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
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from conformance import __version__
from conformance.cases.model import Case
from conformance.engine import files, targets
from conformance.engine.judge import Outcome
from conformance.engine.pool import Raw
from conformance.oracle import Verdict
from conformance.tables import dtypes
from conformance.tables.features import features

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
    return {
        "case_id": case.id,
        "op": case.op,
        "opset": case.opset,
        "base_id": case.base_id,
        "dtype": case.dtype,
        "indices_dtype": case.indices_dtype,
        "axis": case.axis,
        "data_shape": list(case.data.shape),
        "indices_shape": list(case.indices.shape),
        "source": str(case.source),
        "expected": expected,
        "disputed": list(verdict.disputed) if verdict is not None else [],
        "features": list(features(case)),
    }


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
        **outcome.details,
    }
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
        "cpu_flags": cpu_flags(),
        "os": f"{platform.system()} {platform.release()}",
        "cores": os.cpu_count(),
        "packages": {
            name: _package_version(name)
            for name in ("numpy", "onnx", "ml_dtypes", "onnxruntime", "openvino")
        },
        "dtypes": list(dtypes.NAMES),
        "runtimes": runtimes,
        **options,
    }


# -- reading runs back (the report, the gate and diff do) ------------------------------
class RecordsError(ValueError):
    """A results file or run folder that cannot be read; says which and where."""


def locate(path: Path) -> tuple[Path, Path]:
    """(results file, its folder) for a run folder or a results file."""
    path = Path(path)
    if path.is_dir():
        results = path / RESULTS
        if not results.exists():
            raise RecordsError(f"{path}: no {RESULTS} in this folder")
        return results, path
    if not path.exists():
        raise RecordsError(f"{path}: no such file or folder")
    return path, path.parent


# What a record must hold for the gate, the report and diff to read it; a
# record without them is another tool's, or corrupted.
REQUIRED_TEXT = ("case_id", "runtime", "variant", "op")


def read_records(results: Path) -> list[dict]:
    """Every record of a results file; RecordsError (``file:line: what``) for
    anything that is not a record of ours. A last line cut short (a run
    killed mid-write) is dropped, as the writer could not finish it."""
    from conformance.engine.judge import KINDS

    if results.is_dir():
        raise RecordsError(f"{results}: a folder, not a results file")
    data = results.read_bytes()
    lines = data.split(b"\n")
    found = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        last = number == len(lines)  # no newline after it: a run killed mid-write
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            if last:
                break
            why = "not UTF-8" if isinstance(error, UnicodeDecodeError) else error.msg
            raise RecordsError(f"{results}:{number}: not a JSON record ({why})") from None
        where = f"{results}:{number}"
        if not isinstance(record, dict):
            raise RecordsError(f"{where}: a JSON {type(record).__name__}, not a record")
        for name in REQUIRED_TEXT:
            value = record.get(name)
            if not isinstance(value, str) or not value:
                raise RecordsError(f"{where}: {name}: {value!r} is not a record's {name}")
        if b"\\ud" in raw.lower():
            try:  # an escaped lone surrogate: JSON holds it, no terminal or page can
                json.dumps(record, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:
                raise RecordsError(f"{where}: a lone surrogate in a string: not text") from None
        if record.get("kind") not in KINDS:
            raise RecordsError(f"{where}: kind: {record.get('kind')!r} is not an outcome kind")
        found.append(record)
    return found


def read_json(path: Path) -> dict | None:
    """A JSON object file's content, or None when it does not exist;
    RecordsError when it is not a JSON object (or not readable text)."""
    try:
        content = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise RecordsError(f"{path}: a folder, not a file") from None
    except UnicodeDecodeError:
        raise RecordsError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise RecordsError(f"{path}: not JSON ({error.msg})") from None
    if not isinstance(content, dict):
        raise RecordsError(f"{path}: a JSON {type(content).__name__}, not an object")
    return content


@dataclass
class RunFolder:
    """A run as its folder holds it: what the gate, the report and diff read.

    ``gate`` (gate.json), ``groups`` (groups.json: the smallest input of each
    discrepancy group) and ``findings`` (findings.json, a fuzz campaign's)
    are None when the run did not write them.
    """

    folder: Path
    header: dict
    records: list[dict]
    summary: dict | None = None
    gate: dict | None = None
    groups: dict | None = None
    findings: dict | None = None

    def unfinished(self) -> str | None:
        """Why this run cannot stand for a whole run, or None: a gate must not
        pass on a run that was killed, interrupted or broken, nor on one whose
        case files disagree with the oracle."""
        summary, folder = self.summary, self.folder
        if summary is None:
            return f"{folder}: no {SUMMARY}: the run did not finish (killed?)"
        if summary.get("interrupted"):
            return f"{folder}: the run was interrupted (Ctrl-C): its results are partial"
        if summary.get("harness_errors"):
            return f"{folder}: {summary['harness_errors']} harness error(s) in the run"
        if summary.get("case_problems"):
            problems = summary["case_problems"]
            first = problems[0]
            return (
                f"{folder}: {len(problems)} case problem(s): a case file's expectation "
                f"disagrees with the oracle (first: {first['source']}: {first['case_id']}: "
                f"{first['problem']}); see case_problems in {SUMMARY}"
            )
        if summary.get("error"):
            return f"{folder}: the run stopped on an error: {summary['error']}"
        if not summary.get("records"):
            return f"{folder}: the run has no results"
        return None


def read_folder(path: Path) -> RunFolder:
    """A run folder, or a results file and the files beside it; RecordsError
    when its files do not belong together (:func:`check_together`)."""
    results, folder = locate(path)
    run = RunFolder(
        folder=folder,
        header=read_json(folder / HEADER) or {},
        records=read_records(results),
        summary=read_json(folder / SUMMARY),
        gate=read_json(folder / GATE),
        groups=read_json(folder / GROUPS),
        findings=read_json(folder / FINDINGS),
    )
    check_together(run, results)
    return run


def check_together(run: RunFolder, results: Path) -> None:
    """A run folder is a unit: its header, summary and every record carry the
    run's id, and the summary counts the records there are. A folder where
    two runs wrote, or whose results were cut or swapped, is refused (a gate
    must never pass on results that are not the run's)."""
    for name, content in ((HEADER, run.header), (SUMMARY, run.summary)):
        if content is not None and not isinstance(content, dict):
            raise RecordsError(f"{run.folder / name}: not a JSON object")
    run_id = run.header.get("run_id")
    if run_id is None:
        return  # written before run ids, or not by a run (the pytest plugin)
    summary = run.summary
    if summary is not None and summary.get("run_id") != run_id:
        raise RecordsError(
            f"{run.folder}: {SUMMARY} is of run {summary.get('run_id')}, {HEADER} of run "
            f"{run_id}: the files are not of one run"
        )
    others = sorted({str(r.get("run_id")) for r in run.records if r.get("run_id") != run_id})
    if others:
        raise RecordsError(
            f"{results}: records of another run ({', '.join(others[:3])}) beside run {run_id}'s"
        )
    if summary is not None and summary.get("records") != len(run.records):
        raise RecordsError(
            f"{results}: {len(run.records)} records, but {SUMMARY} counts "
            f"{summary.get('records')}: the results are not the run's whole results"
        )


def read_folders(paths) -> list[RunFolder]:
    return [read_folder(Path(path)) for path in paths]


def runtime_targets(headers: list[dict]) -> dict[str, dict]:
    """target name -> {adapter, version, profile, cpu_flags} as the runs'
    headers recorded them (profile and cpu_flags None, the adapter read from
    the name, where a header predates targets)."""
    found = {}
    for header in headers:
        flags = header.get("cpu_flags")
        for name, about in (header.get("runtimes") or {}).items():
            about = about or {}
            found[name] = {
                "adapter": about.get("adapter") or targets.adapter_of(name),
                "version": about.get("version"),
                "profile": about.get("profile"),
                "cpu_flags": None if flags is None else frozenset(flags),
            }
    return found


def runtime_versions(headers: list[dict]) -> dict[str, str | None]:
    """runtime name -> version, as the runs' headers recorded them."""
    return {name: about["version"] for name, about in runtime_targets(headers).items()}
