"""The gate's front-end: ``conformance run --gate``, ``conformance fuzz`` and
``conformance gate RUN...`` hold results against ``cases/known/<runtime>.yaml``.

Exit codes (``run --gate``, ``fuzz``, ``gate``):
  0    every discrepancy is in the baseline, and every entry in scope still reproduces
  1    a discrepancy not in the baseline, or an entry that no longer reproduces
       ("fixed upstream?") unless --allow-fixed
  2    usage or harness error: a bad baseline file (file:line: field: message),
       an unreadable run, a runtime missing
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from conformance import gate
from conformance.cases.loader import CaseErrors
from conformance.engine import records
from conformance.gate import baseline

GATE_JSON = "gate.json"


def add_arguments(parser) -> None:
    parser.add_argument(
        "--known",
        type=Path,
        metavar="DIR",
        help="baseline folder with <runtime>.yaml files (default cases/known)",
    )
    parser.add_argument(
        "--allow-fixed",
        action="store_true",
        help="do not fail on baseline entries that no longer reproduce (still reported)",
    )


def known_folder(args) -> Path:
    return args.known if args.known is not None else baseline.default_folder()


def load_baselines(args, runtimes: list[str], err: Console) -> dict | None:
    """The baselines of these runtimes, or None after printing every problem."""
    folder = known_folder(args)
    if args.known is not None and not folder.is_dir():
        err.print(f"--known {folder}: no such folder", markup=False)
        return None
    try:
        return baseline.load(folder, runtimes)
    except CaseErrors as errors:
        err.print(f"bad baseline file ({len(errors.errors)} problems):", markup=False)
        for problem in errors.errors:
            err.print(f"  {problem}", markup=False)
        return None


def to_json(result: gate.Gate, allow_fixed: bool, folder: Path) -> dict:
    """gate.json: what the gate decided, for CI scripts and the report."""

    def entry(item: gate.EntryResult) -> dict:
        e = item.entry
        return {
            "where": e.where,
            "runtime": e.runtime,
            "match": e.describe(),
            "reason": e.reason,
            "clause": e.clause,
            "upstream": e.upstream,
            "versions": e.versions,
            "covered": item.covered,
            "in_scope": dict(item.scope),
            "conforming_now": item.conforming_ids,
        }

    return {
        "schema": "onnx-gather-conformance/gate",
        "version": 1,
        "passed": result.passed(allow_fixed),
        "allow_fixed": allow_fixed,
        "baseline": str(folder),
        "results": result.results,
        "discrepancies": result.discrepancies,
        "new": [
            {
                "runtime": runtime,
                "kind": kind,
                "op": op,
                "base_id": base_id,
                "count": len(members),
                "variants": sorted({m["variant"] for m in members}),
                "case_ids": sorted({m["case_id"] for m in members})[:20],
                "source": members[0].get("source"),
                "message": members[0].get("message"),
            }
            for (runtime, kind, op, base_id), members in gate.groups(result.unexpected)
        ],
        "fixed": [entry(item) for item in result.fixed],
        "unmatched": [entry(item) for item in result.unmatched],
        "not_reproduced": [entry(item) for item in result.unproven],
        "not_used": [entry(item) for item in result.inapplicable],
        "entries": [entry(item) for item in result.entries],
    }


def evaluate(
    paths: list[Path],
    baselines: dict,
    args,
    err: Console,
    write_to: Path | None = None,
    finished_only: bool = False,
) -> int:
    """Gate the runs at ``paths``; print what it found; 0, 1 or 2. With
    ``finished_only``, a run that was killed, interrupted, broken or empty is
    a usage error (2): a gate must not pass on part of a run."""
    headers, entries = [], []
    try:
        for path in paths:
            header, mine = records.read_run(path)
            headers.append(header)
            entries += mine
    except records.RecordsError as error:
        err.print(str(error), markup=False)
        return 2
    if finished_only:  # `conformance gate`: runs made elsewhere, maybe killed half-way
        problems = [why for path in paths if (why := records.unfinished(path))]
        if problems:
            for why in problems:
                err.print(f"cannot gate: {why}", markup=False)
            return 2
    missing = sorted({e.get("runtime") for e in entries} - set(baselines))
    if missing:  # `conformance gate` learns the runtimes from the records
        more = load_baselines(args, missing, err)
        if more is None:
            return 2
        baselines = {**baselines, **more}
    result = gate.check(entries, baselines, records.runtime_versions(headers))
    folder = known_folder(args)
    for line in gate.explain(result, args.allow_fixed, str(folder)):
        print(line)
    if write_to is not None:
        write_to.mkdir(parents=True, exist_ok=True)
        records.write_json(write_to / GATE_JSON, to_json(result, args.allow_fixed, folder))
    return 0 if result.passed(args.allow_fixed) else 1


def command(args) -> int:
    """``conformance gate RUN...``: gate finished runs (shards merged)."""
    err = Console(stderr=True, soft_wrap=True)
    return evaluate(args.paths, {}, args, err, write_to=args.out, finished_only=True)
