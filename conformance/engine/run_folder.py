"""Reading a run folder back: what the gate, the report, diff and the scoreboard read.

:func:`read_folder` reads results.jsonl, header.json, summary.json,
gate.json, groups.json and findings.json, holds each to its schema
(:mod:`conformance.engine.run_schemas`: refused naming the file, the line and
the field) and checks that they belong together (:func:`check_together`: one
run's files, records that add up to what the summary counts) before any
reader sees them.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from conformance.engine import targets
from conformance.engine.groups import group_key
from conformance.engine.judge import DISCREPANCIES, KINDS
from conformance.engine.run_schemas import NotText, RecordsError, check, parse, parse_noting
from conformance.engine.run_writer import FINDINGS, GATE, GROUPS, HEADER, RESULTS, SUMMARY
from conformance.messages import shown

# Fields a record names first: another tool's records are told by them.
REQUIRED_TEXT = ("case_id", "runtime", "variant", "op")
# file of a run folder -> the name of its schema (docs/schemas/NAME.schema.json)
SCHEMA_OF = {RESULTS: "result", HEADER: "header", SUMMARY: "summary", GATE: "gate",
             GROUPS: "groups", FINDINGS: "findings"}  # fmt: skip


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


def _results_bytes(results: Path) -> bytes:
    if results.is_dir():
        raise RecordsError(f"{results}: a folder, not a results file")
    return results.read_bytes()


def read_records(results: Path, data: bytes | None = None) -> list[dict]:
    """Every record of a results file (``data``: its bytes, when already
    read); RecordsError (``file:line: what``) for anything that is not a
    record of ours (each held to docs/schemas/result.schema.json as a reader
    reads it: :func:`conformance.engine.run_schemas.reading`). A last line cut
    short (a run killed mid-write, or one
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
            record, whole_floats = parse_noting(raw)
        except NotText as error:
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
                raise RecordsError(f"{where}: {name}: {shown(value)} is not a record's {name}")
        if record.get("kind") not in KINDS:
            raise RecordsError(f"{where}: kind: {shown(record.get('kind'))} is not an outcome kind")
        check(record, "result", where, whole_floats)
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
            parse(lines[-1])
            what = "a record without its newline"
        except ValueError as error:
            what = f"a line cut short (not a JSON record: {error})"
        raise RecordsError(
            f"{results}:{number}: {what}, but {SUMMARY} says the run ended (its writer "
            "leaves whole lines only): the results were cut or appended to after the run"
        )


def read_json(path: Path, schema: str | None = None) -> dict | None:
    """A JSON object file's content, or None when it does not exist;
    RecordsError when it is not a JSON object (or not readable text), or
    when it is not what the schema ``schema`` (``header``, ``summary``...)
    says, as a reader reads it (:func:`conformance.engine.run_schemas.reading`)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise RecordsError(f"{path}: a folder, not a file") from None
    try:
        content, whole_floats = parse_noting(raw)
    except ValueError as error:
        why = str(error)
        if why == "not UTF-8":
            raise RecordsError(f"{path}: not UTF-8 text") from None
        raise RecordsError(f"{path}: not JSON ({why})") from None
    if not isinstance(content, dict):
        raise RecordsError(f"{path}: a JSON {type(content).__name__}, not an object")
    if schema is not None:
        check(content, schema, str(path), whole_floats)
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
        header=read_json(folder / HEADER, SCHEMA_OF[HEADER]) or {},
        records=read_records(results, data),
        summary=read_json(folder / SUMMARY, SCHEMA_OF[SUMMARY]),
        gate=read_json(folder / GATE, SCHEMA_OF[GATE]),
        groups=read_json(folder / GROUPS, SCHEMA_OF[GROUPS]),
        findings=read_json(folder / FINDINGS, SCHEMA_OF[FINDINGS]),
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
                f"{path}: groups: {shown(name)}: {group['new']} new of {group['count']} "
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
                f"{shown(actual[name])} in the records, {shown(said[name])} in {SUMMARY} "
                "(edited or mixed results are not the run's)"
            )


def read_folders(paths) -> list[RunFolder]:
    return [read_folder(Path(path)) for path in paths]


def runtime_targets(headers: list[dict]) -> dict[str, dict]:
    """target name -> {adapter, version, profile, cpu_flags, gpu, webgpu} as the runs'
    headers recorded them (profile and cpu_flags None, the adapter read from
    the name, where a header predates targets; gpu None for a CPU target)."""
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
                "gpu": about.get("gpu"),
                "webgpu": about.get("webgpu_adapter"),  # onnxruntime-web:webgpu's adapter
            }
    return found


def runtime_versions(headers: list[dict]) -> dict[str, str | None]:
    """runtime name -> version, as the runs' headers recorded them."""
    return {name: about["version"] for name, about in runtime_targets(headers).items()}
