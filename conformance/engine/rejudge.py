"""A recorded run judged again by this version's rules, without running anything.

Some rules came after a run that only a machine with a GPU could make (the
H200 run of 2026-11-28: tests/data/h200-onnxruntime-cuda/, docs/gpu.md), and
what its records keep is enough to apply them:

- a GPU target's refusal (``rejected``, ``both_rejected``) whose message is a
  resource failure (:func:`conformance.adapters.gpu.resource_failure`) is a
  harness error: that run never ran it again, so the failure stands for both
  tries, and the record's note says so;
- an ``accepted_invalid`` output gets ``explained_by``
  (:func:`conformance.oracle.compare.explained_invalid`) where its case is
  among ``cases`` (the same id, op, opset, dtypes, shapes and axis: its
  inputs come from there) and the record holds every element of the output
  (``actual.values``, at most :data:`conformance.engine.judge.SHOWN_VALUES`):
  each explanation's output, formatted as the record formats values, must be
  the record's; a record cut shorter gets none (nothing is assumed of the
  elements it does not hold);
- a target whose requested properties are exactly a profile's (a targets
  file's ``properties``) is recorded as that profile, which baselines scope
  entries by;
- a GPU target that recorded no device gets ``device`` (the ``gpu`` record,
  as the observation describes the machine).

What it writes is a run folder of the same run (its id, its records in their
order, a summary counted again: :func:`conformance.engine.run_folder.counted`),
with ``header.json`` ``rejudged`` saying from what and how, which gate,
report and scoreboard read as any run.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from collections import Counter
from pathlib import Path

from conformance import __version__
from conformance.adapters import gpu
from conformance.adapters.registry import PROFILES, on_gpu
from conformance.cases.case import Case
from conformance.engine import files, records
from conformance.engine.judge import DISCREPANCIES, SHOWN_VALUES
from conformance.engine.run import HARNESS_ERRORS_KEPT
from conformance.oracle import compare, in_range
from conformance.tables import dtypes, outcomes
from conformance.tables.explanations import EXPLANATIONS

REFUSALS = outcomes.kinds(lambda kind: kind.response == outcomes.REFUSED)  # a stage recorded


def _read_records(folder: Path) -> tuple[list[dict], bytes]:
    """The records of ``results.jsonl`` or ``results.jsonl.gz``, and its bytes."""
    plain, packed = folder / records.RESULTS, folder / f"{records.RESULTS}.gz"
    if plain.exists():
        data = plain.read_bytes()
    elif packed.exists():
        data = gzip.decompress(packed.read_bytes())
    else:
        raise records.RecordsError(f"{folder}: no {records.RESULTS} or {records.RESULTS}.gz")
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()], data


def _same_input(record: dict, case: Case) -> bool:
    return (
        record.get("op"), record.get("opset"), record.get("dtype"), record.get("indices_dtype"),
        record.get("axis"), record.get("data_shape"), record.get("indices_shape"),
    ) == (
        case.op, case.opset, case.dtype, case.indices_dtype, case.axis,
        list(case.data.shape), list(case.indices.shape),
    )  # fmt: skip


def explained(record: dict, case: Case) -> list[str] | None:
    """The explanations of invalid inputs that make exactly the output the
    record holds, or None when that cannot be told (another clause, another
    input, an output cut short)."""
    actual = record.get("actual") or {}
    values = actual.get("values") or []
    reads = in_range(case.op, case.opset, case.data, case.indices, case.axis)
    if reads is None or not _same_input(record, case):
        return None
    if actual.get("elements") != len(values) or len(values) > SHOWN_VALUES:
        return None  # the record holds part of the output: nothing said of the rest
    found = []
    for explanation in EXPLANATIONS:
        if explanation.invalid is None:
            continue
        if dtypes.name_of(reads.output) not in explanation.dtypes:
            continue
        made = explanation.invalid(reads.output, reads.outside)
        same = (
            dtypes.name_of(made) == actual.get("dtype")
            and list(made.shape) == actual.get("shape")
            and [compare.format_element(v) for v in made.ravel()] == values
        )
        if same:
            found.append(explanation.name)
    return found


def _resource(record: dict, message: str, resource: str) -> dict:
    kept = {key: value for key, value in record.items() if key != "stage"}
    said = (
        f"recorded as {record['kind']} by a run that did not run it again; re-judged: a GPU "
        f"resource failure ({resource})"
    )
    return {
        **kept,
        "kind": "harness_unsupported",
        "message": "the GPU ran out of resources (or lost its device): not the runtime's "
        f"verdict on this case; {message}",
        "harness_error": True,
        "note": "; ".join(filter(None, [record.get("note"), said])),
    }


def _summary(source: dict, found: list[dict]) -> dict:
    """The source's summary with what it counts counted again from ``found``."""
    counts: dict[str, Counter] = {}
    groups: Counter = Counter()
    examples: list[dict] = []
    for record in found:
        counts.setdefault(record["runtime"], Counter())[record["kind"]] += 1
        if record["kind"] in DISCREPANCIES:
            groups[(record["runtime"], record["kind"], record["op"], record.get("base_id"))] += 1
        if record.get("harness_error") and len(examples) < HARNESS_ERRORS_KEPT:
            lines = [x for x in (record.get("message") or "").strip().splitlines() if x.strip()]
            examples.append(
                {
                    "runtime": record["runtime"],
                    "case_id": record["case_id"],
                    "variant": record["variant"],
                    "error": lines[-1].strip() if lines else "",
                }
            )
    return {
        **source,
        "records": len(found),
        "counts": {runtime: dict(sorted(kinds.items())) for runtime, kinds in counts.items()},
        "discrepancies": sum(groups.values()),
        "harness_errors": sum(bool(r.get("harness_error")) for r in found),
        "harness_error_examples": examples,
        "groups": [
            {"runtime": runtime, "kind": kind, "op": op, "group": group, "records": n}
            for (runtime, kind, op, group), n in sorted(groups.items())
        ],
    }


def rejudge(source: Path, out: Path, cases: list[Case], device: dict | None = None) -> dict:
    """Judge the run in ``source`` again into ``out`` (see the module's
    docstring); returns what ``header.json`` says of it (``rejudged``)."""
    source, out = Path(source), Path(out)
    found, data = _read_records(source)
    header = json.loads((source / records.HEADER).read_text(encoding="utf-8"))
    summary = json.loads((source / records.SUMMARY).read_text(encoding="utf-8"))
    runtimes = header.get("runtimes") or {}
    on_a_gpu = {
        name
        for name, about in runtimes.items()
        if about.get("gpu") or on_gpu(about.get("adapter", ""), about.get("requested") or {})
    }
    profiles = {}
    for name, about in runtimes.items():
        known = PROFILES.get(about.get("adapter", ""), {})
        if about.get("profile") is None:
            same = [p for p, props in known.items() if props == (about.get("requested") or {})]
            if same:
                about["profile"] = profiles[name] = same[0]
        if name in on_a_gpu and not about.get("gpu") and device is not None:
            about["gpu"], about["device"] = dict(device), "GPU"
    by_id = {case.id: case for case in cases}
    rewritten, resources, explains = [], 0, 0
    for record in found:
        kind = record.get("kind")
        message = record.get("message") or ""
        resource = gpu.resource_failure(message) if kind in REFUSALS else None
        if resource and record.get("runtime") in on_a_gpu:
            record, resources = _resource(record, message, resource), resources + 1
        elif kind == "accepted_invalid" and "explained_by" not in record:
            case = by_id.get(record.get("case_id", ""))
            fitting = explained(record, case) if case is not None else None
            if fitting is not None:
                record, explains = {**record, "explained_by": fitting}, explains + 1
        rewritten.append(record)
    said = {
        "from": str(source),
        "results_sha256": hashlib.sha256(data).hexdigest(),
        "by": __version__,
        "at": records.now(),
        "resource_failures": resources,
        "explained": explains,
        "profiles": profiles,
        "device_given": sorted(on_a_gpu) if device is not None else [],
    }
    header["rejudged"] = said
    out.mkdir(parents=True, exist_ok=True)
    for stale in (records.GATE, records.GROUPS):  # of other results than these
        (out / stale).unlink(missing_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rewritten)
    files.write_text(out / records.RESULTS, text)
    files.write_json(out / records.HEADER, header)
    files.write_json(out / records.SUMMARY, _summary(summary, rewritten))
    return said


def main(argv: list[str] | None = None) -> int:
    """``SOURCE OUT [--device FILE.json]``: the shipped corpus is the cases."""
    from conformance.cases import loader

    parser = argparse.ArgumentParser(prog="rejudge", description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--device", type=Path, help="the gpu record of its GPU targets (JSON)")
    args = parser.parse_args(argv)
    device = json.loads(args.device.read_text(encoding="utf-8")) if args.device else None
    said = rejudge(args.source, args.out, loader.load(loader.default_case_paths()), device)
    print(json.dumps(said, indent=2))
    return 0
