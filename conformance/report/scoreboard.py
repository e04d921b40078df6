"""The scoreboard: every target of one or more runs side by side, as data.

The ONNX Backend Scoreboard gives a runtime x operator table of pass rates;
this one also says *why* a target fails: for each (op, opset) the share of
judged results that conform, with crashes counted apart; for each target the
families of its discrepancies (a baseline entry's reason is its mechanism,
or "not triaged"), each with its smallest input; and what the target could
not be judged on (``harness_unsupported``), by reason. Built on the report's
view (:func:`conformance.report.views.report.from_runs`: groups, their smallest
inputs, families, the gate's marks), so the two pages never disagree.

:func:`build` returns the JSON document (``docs/scoreboard.md`` describes
every field); the HTML page is rendered from that same document. It takes
one run per target (:func:`distinct`): a run named twice is read once, a
target in two runs refused, so that no result counts twice.

A target of a run recorded on another machine (a GPU's: docs/gpu.md) joins
as one more column (``elsewhere``: :func:`only`, that target's records and
header alone), labelled with its device: its GPU, else its CPU. A target on
a GPU is labelled with its GPU wherever it ran.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from conformance import __version__
from conformance.engine import records
from conformance.engine.judge import CONFORMING, DISCREPANCIES
from conformance.engine.targets import adapter_of
from conformance.gate import baseline
from conformance.messages import relative
from conformance.report.views.families import Family
from conformance.report.views.report import Report, from_runs
from conformance.report.views.tensors import Tensor, differing
from conformance.tables import outcomes
from conformance.tables.operators import OPERATORS

FORMAT = 1
# (op, opset) rows: every version of each operator the project covers, in the
# operators' order (docs/schemas/scoreboard.schema.json requires their names:
# tests/test_formats.py holds the two equal).
ROWS = tuple((op.name, opset) for op in OPERATORS.values() for opset in op.opsets)
TOTAL = "total"
REASONS_SHOWN = 6  # harness_unsupported reasons listed per target
# The kinds a score counts (harness_unsupported says nothing of the runtime),
# and those each score counts apart too, in the table's order.
JUDGED = outcomes.kinds(lambda kind: kind.judged)
COUNTED_APART = tuple(kind.name for kind in outcomes.OUTCOME_KINDS if kind.counted_apart)


def row_name(op: str, opset: int) -> str:
    return f"{op}-{opset}"


def _score(counts: Counter) -> dict:
    judged = sum(n for kind, n in counts.items() if kind in JUDGED)
    conforming = sum(counts[kind] for kind in CONFORMING)
    return {
        "results": sum(counts.values()),
        "judged": judged,
        "conforming": conforming,
        "percent": round(100.0 * conforming / judged, 1) if judged else None,
        **{kind: counts[kind] for kind in COUNTED_APART},
        "outcomes": dict(sorted(counts.items())),
    }


def _tensor(tensor: Tensor | None) -> dict | None:
    if tensor is None:
        return None
    return {"dtype": tensor.dtype, "shape": tensor.shape, "text": tensor.text}


def _smallest(family: Family) -> dict:
    """The smallest input of a family, as the run recorded it and groups.json kept it."""
    record = family.example
    assert record is not None  # asked of a family with an example only
    found = {
        name: record.get(name)
        for name in (
            "case_id", "source", "op", "opset", "dtype", "indices_dtype", "variant", "axis",
            "data_shape", "indices_shape", "kind", "message",
        )
    }  # fmt: skip
    found["source"] = _relative_source(found["source"] or "")
    found["data"], found["indices"] = _tensor(family.data), _tensor(family.indices)
    found["expected"] = record.get("expected")
    found["actual"] = record.get("actual")
    found["signal"] = record.get("signal")
    found["differing"] = differing(record)
    return found


def _relative_source(source: str) -> str:
    """``file:line`` with the file relative to the working folder when inside it,
    so that a page committed to a repository names its case files portably."""
    path, colon, line = source.rpartition(":")
    if not colon or not path.startswith("/"):
        return source
    return f"{relative(path).as_posix()}:{line}"


def _reason(message: str) -> str:
    """A harness_unsupported message without its case-specific tail."""
    line = (message.strip().splitlines() or [""])[0]
    for cut in (" (", ": input ", "; its graph"):
        line = line.split(cut)[0]
    return line[:160]


def _digests(folder: Path | baseline.BaselineFolders | None, adapters: set[str]) -> list[dict]:
    if folder is None:
        return []
    found = []
    for adapter in sorted(adapters):
        for path in baseline.files_of(folder, adapter):  # each --known folder's file
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found.append({"path": path.as_posix(), "sha256": digest})
    return found


class ScoreboardError(records.RecordsError):
    """Run folders that do not make one scoreboard (a target in two of them)."""


def only(run: records.RunFolder, target: str) -> records.RunFolder:
    """The run as one target of it: its records and its header's entry
    alone (ScoreboardError naming the targets there are when it has none)."""
    runtimes = run.header.get("runtimes") or {}
    if target not in runtimes:
        raise ScoreboardError(
            f"{run.folder}: no target {target!r} in this run (its targets: "
            f"{', '.join(sorted(runtimes)) or 'none'})"
        )
    header = {**run.header, "runtimes": {target: runtimes[target]}}
    mine = [record for record in run.records if record["runtime"] == target]
    return replace(run, header=header, records=mine, gate=None)


def label(name: str, info: dict, elsewhere: bool) -> str:
    """A column's name: the target's, with its GPU, or with the CPU it was
    measured on when that was another machine than the page's."""
    gpu = info.get("gpu") or {}
    if gpu.get("name"):
        return f"{name} on {gpu['name']}"
    if elsewhere and info.get("cpu"):
        return f"{name} on {info['cpu']}"
    return name


def _targets_of(run: records.RunFolder) -> set[str]:
    """The target names of a run: its header's and its records'."""
    return set(run.header.get("runtimes") or {}) | {record["runtime"] for record in run.records}


def distinct(runs: list[records.RunFolder]) -> list[records.RunFolder]:
    """One run per target. A run given twice (the same folder, its results
    file, a copy: the same run id and results digest) is read once, the first
    named; a target in two different runs (two runs of one target, shards
    included) is refused naming both folders, since its results would be
    counted twice or its scores mixed from runs of different versions."""
    kept: list[records.RunFolder] = []
    seen: set[tuple] = set()
    owner: dict[str, records.RunFolder] = {}
    for run in runs:
        same = (run.header.get("run_id"), run.results_sha256)
        if same in seen:
            continue
        seen.add(same)
        for name in sorted(_targets_of(run)):
            if name in owner:
                raise ScoreboardError(
                    f"target {name} is in two runs, {owner[name].folder} and {run.folder}: "
                    "a scoreboard takes one run per target (its results would count twice); "
                    "give one of them"
                )
            owner[name] = run
        kept.append(run)
    return kept


def build(
    runs: list[records.RunFolder],
    out: Path,
    known: Path | baseline.BaselineFolders | None = None,
    elsewhere: Sequence[tuple[records.RunFolder, str]] = (),
) -> dict:
    """The scoreboard of these runs (:func:`distinct`: ScoreboardError for a
    target in two runs) and of the targets of runs recorded ``elsewhere``
    (a run and a target of it, each one more column); ``known`` gates them
    against that baseline folder now (else each run's gate.json, as the
    report does)."""
    apart = [only(run, target) for run, target in elsewhere]
    away = {target for _, target in elsewhere}
    report: Report = from_runs(distinct([*runs, *apart]), out, known)
    cells: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    unsupported: dict[str, Counter] = defaultdict(Counter)
    unconfirmed: Counter = Counter()
    differently: Counter = Counter()
    for record in report.records:
        runtime, kind = record["runtime"], record["kind"]
        cells[runtime][row_name(record["op"], record["opset"])][kind] += 1
        cells[runtime][TOTAL][kind] += 1
        if kind == "harness_unsupported":
            unsupported[runtime][_reason(record.get("message", ""))] += 1
        unconfirmed[runtime] += record.get("confirmed") is False
        differently[runtime] += bool(record.get("packed_kind"))
    about = report.targets
    started = {
        name: (header.get("run_id"), header.get("started"))
        for header in report.headers
        for name in header.get("runtimes") or {}
    }
    targets: list[dict[str, Any]] = []
    for name in report.runtimes:
        info = about.get(name, {})
        targets.append(
            {
                "name": name,
                "label": label(name, info, name in away),
                "elsewhere": name in away,
                "gpu": info.get("gpu"),
                "adapter": info.get("adapter") or adapter_of(name),
                "profile": info.get("profile"),
                "version": info.get("version"),
                "device": info.get("device"),
                "provider": info.get("provider"),
                "openvino_bundled": info.get("openvino_bundled"),
                "requested": info.get("requested") or {},
                "effective": info.get("effective") or {},
                "python_version": info.get("python_version"),
                "cpu": info.get("cpu"),
                "cpu_flags": info.get("cpu_flags") or [],
                "run_id": started.get(name, (None, None))[0],
                "started": started.get(name, (None, None))[1],
                "scores": {
                    key: _score(cells[name][key])
                    for key in [row_name(*row) for row in ROWS] + [TOTAL]
                },
                "not_judged": [
                    {"reason": reason, "results": count}
                    for reason, count in unsupported[name].most_common(REASONS_SHOWN)
                ],
                "unconfirmed": unconfirmed[name],
                "packed_differently": differently[name],
            }
        )
    members = defaultdict(list)
    for group in report.groups:
        for family_id in group.families:
            members[family_id].append(group)
    families = []
    for family in report.families:
        groups = members[family.id]
        # the entry as the verdict lists it (gate.json ``entries``: its match, versions
        # and where it holds); a group's ``known`` names only where, reason, clause, upstream
        entry = report.entries.get(family.where) or next(
            (g.known[family.where] for g in groups if family.where in g.known), {}
        ) if family.where else {}  # fmt: skip
        families.append(
            {
                "runtime": family.runtime,
                "kind": family.kind,
                "op": family.op,
                "status": "new" if family.new else "known",
                "mechanism": family.mechanism if not family.new else "not triaged",
                "message": family.mechanism if family.new else None,
                "where": family.where,
                "clause": entry.get("clause"),
                "upstream": entry.get("upstream"),
                "scope": entry.get("holds"),
                "versions": entry.get("versions"),
                "match": entry.get("match"),
                "results": family.count,
                "groups": family.groups,
                "smallest": _smallest(family) if family.example else None,
            }
        )
    first = report.headers[0] if report.headers else {}
    return {
        "format": FORMAT,
        "generated": records.now(),
        "conformance": __version__,
        "regenerate": "nox -s scoreboard",
        "machine": {
            name: first.get(name) for name in ("cpu", "cpu_flags", "cores", "os", "python")
        },
        "packages": first.get("packages") or {},
        "baseline": report.baseline,
        "baseline_error": report.baseline_error,
        "baselines": _digests(known, {t["adapter"] for t in targets}),
        "gated": bool(report.verdicts),
        "rows": [{"op": op, "opset": opset, "name": row_name(op, opset)} for op, opset in ROWS],
        "targets": targets,
        "families": families,
        "discrepancies": sum(
            n
            for t in targets
            for kind, n in t["scores"][TOTAL]["outcomes"].items()
            if kind in DISCREPANCIES
        ),
        "unfinished": report.unfinished,
    }
