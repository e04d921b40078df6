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

import hashlib
import json
import math
import os
import platform
import reprlib
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from conformance import __version__
from conformance.cases.model import Case
from conformance.engine import credentials, files, targets
from conformance.engine.groups import group_key
from conformance.engine.judge import DISCREPANCIES, KINDS, Outcome
from conformance.engine.pool import Raw
from conformance.errors import ConformanceError
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
        "source": str(case.source),
        "expected": expected,
        "disputed": list(verdict.disputed) if verdict is not None else [],
        "features": list(features(case)),
    }
    if case.nodes:  # a node case of `conformance model`: the model nodes it stands for
        described["nodes"] = [{"model": m, "graph": g, "node": n} for m, g, n in case.nodes]
    return described


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
            for name in ("numpy", "onnx", "ml_dtypes", "onnxruntime", "openvino")
        },
        "dtypes": list(dtypes.NAMES),
        "runtimes": runtimes,
        "corpus": None,
        **options,
    }


# -- reading runs back (the report, the gate and diff do) ------------------------------
class RecordsError(ConformanceError, ValueError):
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


# -- what a reader may rely on -----------------------------------------------------------
# A run folder's files are input like any other: copied between machines,
# cut by a full disk, edited by hand. Every field the gate, the report and diff
# read is checked here, once, against what docs/formats.md says it is, so that
# a file of the wrong shape is refused naming the file, the line and the field
# (exit 2) instead of ending in an exception far from it, or in a wrong verdict.


class _Spec:
    """What a JSON value must be; :meth:`problem` says where and what it is not."""

    def problem(self, value, path: str) -> tuple[str, object, str] | None:
        """(path, the value there, what it must be) of the first misfit, or None."""
        raise NotImplementedError


class _Leaf(_Spec):
    def __init__(self, what: str, test) -> None:
        self.what, self.test = what, test

    def problem(self, value, path):
        return None if self.test(value) else (path, value, self.what)


class _Nullable(_Spec):
    def __init__(self, inner: _Spec) -> None:
        self.inner = inner

    def problem(self, value, path):
        return None if value is None else self.inner.problem(value, path)


class _List(_Spec):
    def __init__(self, item: _Spec) -> None:
        self.item = item

    def problem(self, value, path):
        if not isinstance(value, list):
            return path, value, "a list"
        for index, item in enumerate(value):
            found = self.item.problem(item, f"{path}[{index}]")
            if found:
                return found
        return None


class _Map(_Spec):
    """An object of any keys, each value a ``value``."""

    def __init__(self, value: _Spec) -> None:
        self.value = value

    def problem(self, value, path):
        if not isinstance(value, dict):
            return path, value, "an object"
        for key, item in value.items():
            key = key if key.isprintable() else repr(key)  # a name from the file: shown safely
            found = self.value.problem(item, f"{path}.{key}" if path else key)
            if found:
                return found
        return None


class _Object(_Spec):
    """An object with these fields (``required`` ones present); others are
    free unless ``closed``."""

    def __init__(
        self, required: dict | None = None, optional: dict | None = None, closed: bool = False
    ) -> None:
        self.required, self.optional, self.closed = required or {}, optional or {}, closed

    def problem(self, value, path):
        if not isinstance(value, dict):
            return path, value, "an object"
        if self.closed:
            extra = sorted(map(repr, set(value) - set(self.required) - set(self.optional)))
            if extra:
                return path, value, f"an object of only {', '.join(self.required)} ({extra[0]}?)"
        for name, spec in (*self.required.items(), *self.optional.items()):
            where = f"{path}.{name}" if path else name
            if name not in value:
                if name in self.required:
                    return where, None, "there (a field every one has)"
                continue
            found = spec.problem(value[name], where)
            if found:
                return found
        return None


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


ANY = _Leaf("anything", lambda value: True)
TEXT = _Leaf("text", lambda value: isinstance(value, str))
NAME = _Leaf("a name (non-empty text)", lambda value: isinstance(value, str) and value != "")
WHOLE = _Leaf("a whole number", _whole)
COUNT = _Leaf("a whole number >= 0", lambda value: _whole(value) and value >= 0)
FLAG = _Leaf("true or false", lambda value: isinstance(value, bool))
NUMBER = _Leaf(
    "a finite number",
    lambda value: _whole(value) or (isinstance(value, float) and math.isfinite(value)),
)
SHAPE = _List(COUNT)
TENSOR = _Object({"dtype": TEXT, "shape": SHAPE}, {"values": ANY, "npz": TEXT})
DIFFERING = {"positions": _List(_List(COUNT)), "expected_values": _List(TEXT),
             "actual_values": _List(TEXT)}  # fmt: skip

# One record of results.jsonl: the fields every record has that readers index,
# then those a record may have (by kind), each of the type formats.md gives.
RECORD = _Object(
    {"case_id": NAME, "runtime": NAME, "variant": NAME, "op": NAME, "kind": TEXT,
     "message": TEXT, "opset": WHOLE, "dtype": TEXT, "data_shape": SHAPE,
     "indices_shape": SHAPE},
    {"run_id": TEXT, "base_id": TEXT, "indices_dtype": _Nullable(TEXT), "axis": _Nullable(WHOLE),
     "source": TEXT,
     "expected": _Nullable(_Object(optional={"dtype": TEXT, "shape": SHAPE, "violation": TEXT})),
     "disputed": _List(TEXT), "features": _List(TEXT), "load_ms": _Nullable(NUMBER),
     "run_ms": _Nullable(NUMBER), "cached": _Nullable(FLAG), "stage": TEXT, "differing": COUNT,
     "elements": COUNT, **DIFFERING, "explained_by": _List(TEXT),
     "actual": _Object(optional={"dtype": TEXT, "shape": SHAPE, "values": _List(ANY),
                                 "elements": COUNT}),
     "signal": _Nullable(TEXT), "harness_error": FLAG, "note": TEXT, "packed": FLAG,
     "confirmed": _Nullable(FLAG), "packed_kind": TEXT},
)  # fmt: skip
# Fields REQUIRED_TEXT names first: another tool's records are told by them.
REQUIRED_TEXT = ("case_id", "runtime", "variant", "op")
HEADER_SPEC = _Object(
    optional={
        "run_id": _Nullable(TEXT),
        "runtimes": _Nullable(_Map(_Nullable(_Object(optional={
            name: _Nullable(TEXT)
            for name in ("name", "adapter", "version", "profile", "device", "python")
        } | {"requested": _Nullable(_Map(ANY)), "effective": _Nullable(_Map(ANY))})))),
        "cpu_flags": _Nullable(_List(TEXT)),
        "command": _Nullable(_List(ANY)),
    }
)  # fmt: skip
SUMMARY_SPEC = _Object(
    {"records": COUNT, "counts": _Map(_Map(COUNT)), "discrepancies": COUNT,
     "harness_errors": COUNT,
     "groups": _List(_Object({"runtime": TEXT, "kind": TEXT, "op": TEXT, "group": TEXT,
                              "records": COUNT}))},
    {"run_id": _Nullable(TEXT), "interrupted": FLAG, "error": _Nullable(TEXT),
     "case_problems": _List(_Object({"case_id": TEXT, "source": TEXT, "problem": TEXT})),
     "harness_error_examples": _List(_Map(ANY)), "events": _List(ANY),
     "unjudged": _Map(COUNT)},
)  # fmt: skip
GROUPS_SPEC = _Object(
    {"groups": _List(_Object(
        {"runtime": TEXT, "kind": TEXT, "op": TEXT, "group": TEXT, "case_id": TEXT,
         "data": TENSOR, "indices": TENSOR},
        {"variant": TEXT, "source": TEXT, "axis": _Nullable(WHOLE),
         "reproducer": _Object({"data": TENSOR, "indices": TENSOR},
                               {"axis": _Nullable(WHOLE), "runs": COUNT, "message": TEXT,
                                **DIFFERING})}))},
    {"run_id": _Nullable(TEXT)},
)  # fmt: skip
_GROUP_KEY = {"runtime": TEXT, "kind": TEXT, "op": TEXT, "group": TEXT}
_ENTRY = _Object(  # a baseline entry as gate.json lists it (conformance.gate.verdict)
    {"where": TEXT},
    {"runtime": TEXT, "reason": _Nullable(TEXT), "clause": _Nullable(TEXT),
     "upstream": _Nullable(TEXT), "conforming_now": _List(TEXT), "match": _Nullable(TEXT),
     "versions": _Nullable(TEXT), "holds": _Nullable(TEXT)},
)  # fmt: skip
GATE_SPEC = _Object(  # what the report shows of a run's gate.json (every gate.json has these)
    {"passed": FLAG,
     "new": _List(_Object({**_GROUP_KEY, "count": COUNT},
                          {"source": _Nullable(TEXT), "message": _Nullable(TEXT)})),
     "fixed": _List(_ENTRY), "not_used": _List(_ENTRY)},
    {"allow_fixed": FLAG, "baseline": _Nullable(TEXT), "unobserved": _List(TEXT),
     "judged": _List(_Object({"run_id": _Nullable(TEXT), "results_sha256": _Nullable(TEXT)})),
     "unmatched": _List(_ENTRY), "not_reproduced": _List(_ENTRY), "entries": _List(_ENTRY),
     "groups": _List(_Object({**_GROUP_KEY, "count": COUNT, "new": COUNT},
                             {"new_results": _List(_List(TEXT)), "known": _List(_ENTRY)}))},
)  # fmt: skip
FINDINGS_SPEC = _Object(
    optional={"bugs": _List(_Object(
        {"id": TEXT, "runtime": TEXT, "kind": TEXT, "op": TEXT, "cause": TEXT,
         "classes": _List(COUNT)},
        {"mechanism": _Map(ANY), "hits": COUNT, "reproducer": _Nullable(COUNT),
         "dtypes": _List(TEXT), "variants": _List(TEXT), "shrunk_by": _Nullable(TEXT),
         "store": _Nullable(TEXT), "first_found_s": NUMBER})),
        "coverage": _Nullable(_Object(optional={"reached": COUNT, "meaningful": COUNT,
                                                "tables": _Map(_Map(ANY))})),
        "classes": _List(_Object(
        {"signature": _Object({"runtime": TEXT, "op": TEXT, "kind": TEXT, "dtype": TEXT,
                               "variant": TEXT, "opset": WHOLE, "violation": _Nullable(TEXT),
                               "features": _List(TEXT)}, closed=True)},  # a Signature's fields
        {"id": TEXT, "files": _Map(TEXT),
         "case": _Object({"data": TENSOR, "indices": TENSOR}, {"axis": _Nullable(WHOLE)}),
         "outcomes": _Map(_Object(optional={"kind": TEXT, "message": TEXT}))}))}
)  # fmt: skip
MAX_DEPTH = 100  # JSON nested deeper is not of ours (a tensor has at most 64 dimensions)


def _shown(value) -> str:
    text = reprlib.repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _misfit(value, spec: _Spec, where: str, what: str = "") -> None:
    """RecordsError ``where: field: value is not what it must be`` for a misfit."""
    found = spec.problem(value, "")
    if found:
        path, bad, must = found
        field = f"{path}: " if path else ""
        raise RecordsError(f"{where}: {field}{_shown(bad)} is not {must}{what}")


def _depth(value) -> int:
    """How deep lists and objects nest in a JSON value (iteratively: no recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if depth > MAX_DEPTH:
                break
            todo.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict)
                                                          else item))  # fmt: skip
    return deepest


class _NotText(ValueError):
    """JSON that parses but holds what no terminal or page can show."""


def _parse(raw: bytes):
    """The JSON value of ``raw``; ValueError saying why not (for a person)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(error.msg) from None
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:  # an integer of more digits than Python converts
        raise ValueError(str(error).split(";")[0]) from None
    if _depth(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    if b"\\ud" in raw.lower():
        try:  # an escaped lone surrogate: JSON holds it, no terminal or page can
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise _NotText("a lone surrogate in a string: not text") from None
    return value


def _results_bytes(results: Path) -> bytes:
    if results.is_dir():
        raise RecordsError(f"{results}: a folder, not a results file")
    return results.read_bytes()


def read_records(results: Path, data: bytes | None = None) -> list[dict]:
    """Every record of a results file (``data``: its bytes, when already
    read); RecordsError (``file:line: what``) for anything that is not a
    record of ours. A last line cut short (a run killed mid-write, or one
    still writing) is dropped, as the writer could not finish it; in a run
    folder whose summary says the run ended, :func:`read_folder` refuses it
    (:func:`check_whole_lines`)."""
    if data is None:
        data = _results_bytes(results)
    lines = data.split(b"\n")
    found = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        last = number == len(lines)  # no newline after it: a run killed mid-write
        where = f"{results}:{number}"
        try:
            record = _parse(raw)
        except _NotText as error:
            raise RecordsError(f"{where}: {error}") from None
        except ValueError as error:
            if last:
                break
            raise RecordsError(f"{where}: not a JSON record ({error})") from None
        if not isinstance(record, dict):
            raise RecordsError(f"{where}: a JSON {type(record).__name__}, not a record")
        for name in REQUIRED_TEXT:
            value = record.get(name)
            if not isinstance(value, str) or not value:
                raise RecordsError(f"{where}: {name}: {_shown(value)} is not a record's {name}")
        if record.get("kind") not in KINDS:
            raise RecordsError(
                f"{where}: kind: {_shown(record.get('kind'))} is not an outcome kind"
            )
        _misfit(record, RECORD, where, " (docs/formats.md: results.jsonl)")
        found.append(record)
    return found


def check_whole_lines(results: Path, data: bytes) -> None:
    """RecordsError unless ``data`` is whole lines, each a record: what the
    writer leaves once it is closed (``conformance.engine.files.LineAppender``
    cuts a failed append back to the last whole line, and the run writes
    summary.json only after closing the file). A line without its newline, or
    an empty one, in a folder whose run ended means the file was cut, torn or
    edited after the run: its records are not the run's whole results."""
    lines = data.split(b"\n")
    for number, raw in enumerate(lines[:-1], 1):  # lines[-1]: what follows the last newline
        if not raw.strip():
            raise RecordsError(
                f"{results}:{number}: an empty line, but {SUMMARY} says the run ended: the "
                "results are not as the run wrote them (edited?)"
            )
    if lines[-1]:
        number = len(lines)
        try:
            _parse(lines[-1])
            what = "a record without its newline"
        except ValueError as error:
            what = f"a line cut short (not a JSON record: {error})"
        raise RecordsError(
            f"{results}:{number}: {what}, but {SUMMARY} says the run ended (its writer "
            "leaves whole lines only): the results were cut or appended to after the run"
        )


def read_json(path: Path, spec: _Spec | None = None) -> dict | None:
    """A JSON object file's content, or None when it does not exist;
    RecordsError when it is not a JSON object (or not readable text), or
    when a field the readers use is not what ``spec`` says."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise RecordsError(f"{path}: a folder, not a file") from None
    try:
        content = _parse(raw)
    except ValueError as error:
        why = str(error)
        if why == "not UTF-8":
            raise RecordsError(f"{path}: not UTF-8 text") from None
        raise RecordsError(f"{path}: not JSON ({why})") from None
    if not isinstance(content, dict):
        raise RecordsError(f"{path}: a JSON {type(content).__name__}, not an object")
    if spec is not None:
        _misfit(content, spec, str(path), " (docs/formats.md)")
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
    results_sha256: str | None = None  # of results.jsonl as read: what a gate.json judged
    stale_gate: str | None = None  # why gate.json was set aside (it judged other results)

    def judged(self) -> dict:
        """What a gate.json names this run by: its id and its results' digest."""
        return {"run_id": self.header.get("run_id"), "results_sha256": self.results_sha256}

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
        if summary.get("unjudged"):
            names = ", ".join(sorted(summary["unjudged"]))
            return (
                f"{folder}: the campaign judged none of its examples on {names} (each not run "
                "or harness_unsupported): it says nothing of them"
            )
        if not summary.get("records"):
            return f"{folder}: the run has no results"
        return None


def read_folder(path: Path) -> RunFolder:
    """A run folder, or a results file and the files beside it; RecordsError
    when a file is not what formats.md says, or the files do not belong
    together (:func:`check_together`)."""
    results, folder = locate(path)
    data = _results_bytes(results)  # read once: the records and the digest a gate.json names
    run = RunFolder(
        folder=folder,
        header=read_json(folder / HEADER, HEADER_SPEC) or {},
        records=read_records(results, data),
        summary=read_json(folder / SUMMARY, SUMMARY_SPEC),
        gate=read_json(folder / GATE, GATE_SPEC),
        groups=read_json(folder / GROUPS, GROUPS_SPEC),
        findings=read_json(folder / FINDINGS, FINDINGS_SPEC),
        results_sha256=hashlib.sha256(data).hexdigest(),
    )
    if run.summary is not None:  # the run ended (finished or interrupted): its file is closed
        check_whole_lines(results, data)
    check_together(run, results)
    if run.gate is not None:
        _check_verdict(run.gate, folder / GATE)
        judged = run.gate.get("judged")
        if judged is not None and run.judged() not in judged:
            # results edited (and recounted) after the gate judged them: its
            # verdict is not of these results. Set aside, not refused, so that
            # `conformance gate RUN --out RUN` can judge them again.
            run.stale_gate = (
                f"{folder / GATE} judged other results than {results} holds now (edited "
                "after the gate?): its verdict is not shown; run `conformance gate` again"
            )
            run.gate = None
    return run


def _check_verdict(gate: dict, path: Path) -> None:
    """A gate.json whose verdict is not what it lists (a pass with new groups,
    a failure with none, a group with new results the list of new groups
    leaves out, known results no entry covers) was not written by the gate:
    refused, never shown."""
    fails = bool(gate["new"]) or (bool(gate["fixed"]) and not gate.get("allow_fixed"))
    if gate["passed"] == fails:
        raise RecordsError(
            f"{path}: passed is {str(gate['passed']).lower()}, but it lists "
            f"{len(gate['new'])} new group(s) and {len(gate['fixed'])} entries fixed upstream? "
            f"(allow_fixed {str(bool(gate.get('allow_fixed'))).lower()}): not the gate's verdict"
        )
    for group in gate.get("groups", []):
        name = f"{group['runtime']} {group['kind']} {group['op']} {group['group']}"
        known = group["count"] - group["new"]
        if known < 0 or (known and not group.get("known")) or (group["new"] and not gate["new"]):
            raise RecordsError(
                f"{path}: groups: {_shown(name)}: {group['new']} new of {group['count']} "
                f"result(s), {len(group.get('known', []))} entries covering the rest, "
                f"{len(gate['new'])} new group(s) in all: not the gate's verdict"
            )


def counted(found: list[dict]) -> dict:
    """What a run's summary counts of these records (conformance.engine.run
    counts each record as it writes it): records, runtime -> kind -> records,
    discrepancies, harness errors, and each discrepancy group's records."""
    counts: dict[str, Counter] = {}
    groups: Counter = Counter()
    for record in found:
        counts.setdefault(record["runtime"], Counter())[record["kind"]] += 1
        if record["kind"] in DISCREPANCIES:
            groups[tuple(group_key(record))] += 1
    return {
        "records": len(found),
        "counts": {runtime: dict(kinds) for runtime, kinds in counts.items()},
        "discrepancies": sum(groups.values()),
        "harness_errors": sum(bool(record.get("harness_error")) for record in found),
        "groups": dict(groups),
    }


def _summarised(summary: dict) -> dict:
    """What a summary says it counts, in the form of :func:`counted` (zero counts left out)."""
    groups: Counter = Counter()
    for group in summary["groups"]:
        key = (group["runtime"], group["kind"], group["op"], group["group"])
        groups[key] += group["records"]
    counts = {
        runtime: {kind: n for kind, n in kinds.items() if n}
        for runtime, kinds in summary["counts"].items()
    }
    return {
        "records": summary["records"],
        "counts": {runtime: kinds for runtime, kinds in counts.items() if kinds},
        "discrepancies": summary["discrepancies"],
        "harness_errors": summary["harness_errors"],
        "groups": {key: n for key, n in groups.items() if n},
    }


def check_together(run: RunFolder, results: Path) -> None:
    """A run folder is a unit: its header, summary, groups.json and every
    record carry the run's id, and the summary counts the records there are,
    outcome by outcome and group by group. A folder where two runs wrote, or
    whose results were cut, swapped or edited, is refused (a gate must never
    pass on results that are not the run's)."""
    for name, content in ((HEADER, run.header), (SUMMARY, run.summary)):
        if content is not None and not isinstance(content, dict):
            raise RecordsError(f"{run.folder / name}: not a JSON object")
    run_id = run.header.get("run_id")
    summary = run.summary
    if summary is not None and summary.get("run_id") != run_id:
        raise RecordsError(
            f"{run.folder}: {SUMMARY} is of run {summary.get('run_id')}, {HEADER} of run "
            f"{run_id}: the files are not of one run"
        )
    if run.groups is not None and run.groups.get("run_id") != run_id:
        raise RecordsError(
            f"{run.folder}: {GROUPS} is of run {run.groups.get('run_id')}, {HEADER} of run "
            f"{run_id}: the files are not of one run"
        )
    if run_id is None and summary is None:
        return  # a results file alone, or a run from before run ids: nothing to hold it to
    others = sorted({str(r.get("run_id")) for r in run.records if r.get("run_id") != run_id})
    if others:
        raise RecordsError(
            f"{results}: records of another run ({', '.join(others[:3])}) beside run {run_id}'s"
        )
    if summary is None:
        return
    if summary["records"] != len(run.records):
        raise RecordsError(
            f"{results}: {len(run.records)} records, but {SUMMARY} counts "
            f"{summary['records']}: the results are not the run's whole results"
        )
    actual, said = counted(run.records), _summarised(summary)
    for name in ("counts", "discrepancies", "harness_errors", "groups"):
        if actual[name] != said[name]:
            raise RecordsError(
                f"{results}: the records are not what {SUMMARY} counts: {name} "
                f"{_shown(actual[name])} in the records, {_shown(said[name])} in {SUMMARY} "
                "(edited or mixed results are not the run's)"
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
