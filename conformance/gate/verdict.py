"""Gating runs, and ``gate.json``: what the gate decided, for CI scripts and the report.

:func:`load_baselines` reads the baselines of some runtimes, :func:`decide`
holds runs against them and :func:`write` leaves ``gate.json`` in a run
folder. Problems (a bad baseline file, an unreadable or unfinished run) are
raised as :class:`GateError`, each line ``file:line: field: message`` or
``folder: why``; the front-ends print them and exit 2.

``gate.json`` (schema ``onnx-gather-conformance/gate``, version 2): passed,
decides, allow_fixed, baseline, results, discrepancies, ``new`` (one item per new
group), ``fixed``, ``unmatched`` (not judged: no result of the run could
have reproduced the entry), ``not_reproduced``, ``not_used`` and
``entries`` (every baseline entry with its counts), and ``groups``: every
discrepancy group with how many of its results are new and the entries
that cover the rest, which the report shows without running the gate again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from conformance.cases.loader import CaseErrors
from conformance.engine import files, records
from conformance.engine.targets import adapter_of
from conformance.errors import ConformanceError
from conformance.gate import baseline
from conformance.gate.check import EntryResult, Gate, check

SCHEMA = "onnx-gather-conformance/gate"
VERSION = 2  # 2: unmatched is "not judged", in_scope counts results that could show it


class GateError(ConformanceError):
    """The gate cannot decide; ``problems`` says each reason on a line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def load_baselines(folder: Path | baseline.BaselineFolders, runtimes) -> dict:
    """The baselines of these runtimes in ``folder`` (a missing file, or
    folder, is an empty baseline); ``runtimes`` are names, or a mapping of
    target names to their adapters. The one reading of baselines for a verdict:
    ``conformance run/fuzz/model`` (``gate.settings.build``), ``gate`` and the
    pytest plugin go through it; a bad file is a GateError listing every problem."""
    try:
        return baseline.load(folder, runtimes)
    except CaseErrors as errors:
        raise GateError(
            [f"bad baseline file ({len(errors.errors)} problems):"]
            + [f"  {problem}" for problem in errors.errors]
        ) from None


@dataclass
class GateVerdict:
    """A gate decision over some runs, and where its baseline came from."""

    gate: Gate
    folder: baseline.BaselineFolders  # the baseline folders
    allow_fixed: bool
    # targets no baseline file says it was observed on, each with the difference
    unobserved: list[str] = field(default_factory=list)
    judged: list[dict] = field(default_factory=list)  # each run's RunFolder.judged()
    decides: bool = True  # False: a run without --gate (the verdict decides no exit code)

    @property
    def passed(self) -> bool:
        return self.gate.passed(self.allow_fixed)

    def to_json(self) -> dict:
        result = self.gate
        return {
            "schema": SCHEMA,
            "version": VERSION,
            "passed": self.passed,
            "decides": self.decides,
            "allow_fixed": self.allow_fixed,
            "baseline": str(self.folder),
            "unobserved": self.unobserved,
            "judged": self.judged,
            "results": result.results,
            "discrepancies": result.discrepancies,
            "new": [
                {
                    **key._asdict(),
                    "count": len(members),
                    "variants": sorted({m["variant"] for m in members}),
                    "case_ids": sorted({m["case_id"] for m in members})[:20],
                    "source": members[0].get("source"),
                    "message": members[0].get("message"),
                }
                for key, members in result.new_groups
            ],
            "fixed": [_entry(item) for item in result.fixed],
            "unmatched": [_entry(item) for item in result.not_judged],
            "not_reproduced": [_entry(item) for item in result.unproven],
            "not_used": [_entry(item) for item in result.inapplicable],
            "entries": [_entry(item) for item in result.entries],
            "groups": self.groups(),
        }

    def groups(self) -> list[dict]:
        """Every discrepancy group: how many results are new, which entries cover the rest."""
        out = []
        for key, members in self.gate.groups:
            covering, new = {}, []
            for record in members:
                entry = self.gate.covered_by.get(id(record))
                if entry is None:
                    new.append([record["case_id"], record["variant"]])
                else:
                    covering[entry.where] = entry
            out.append(
                {
                    **key._asdict(),
                    "count": len(members),
                    "new": len(new),
                    # which results are new, when the group is part known
                    "new_results": new if len(new) < len(members) else [],
                    "known": [
                        {
                            "where": e.where,
                            "reason": e.reason,
                            "clause": e.clause,
                            "upstream": e.upstream,
                        }
                        for e in covering.values()
                    ],
                }
            )
        return out


def _entry(item: EntryResult) -> dict:
    e = item.entry
    return {
        "where": e.where,
        "runtime": e.runtime,
        "match": e.describe(),
        "reason": e.reason,
        "clause": e.clause,
        "upstream": e.upstream,
        "versions": e.versions,
        "holds": e.conditions(),
        "covered": item.covered,
        "in_scope": dict(item.scope),
        "conforming_now": item.conforming_ids,
    }


def decide(
    runs: list[records.RunFolder],
    folder: Path | baseline.BaselineFolders,
    allow_fixed: bool = False,
    baselines: dict | None = None,
    finished_only: bool = False,
) -> GateVerdict:
    """Hold the runs' results against the baselines in ``folder`` (those
    given in ``baselines`` are used as they are). With ``finished_only``, a
    run that was killed, interrupted, broken or empty, or one whose case files
    disagree with the oracle, is refused: a gate must not pass on part of a run."""
    if finished_only:
        problems = [f"cannot gate: {why}" for run in runs if (why := run.unfinished())]
        if problems:
            raise GateError(problems)
    results = [record for run in runs for record in run.records]
    recorded = records.runtime_targets([run.header for run in runs])
    adapters = {name: about["adapter"] for name, about in recorded.items()}
    baselines = dict(baselines or {})
    missing = sorted({r["runtime"] for r in results} - set(baselines))  # (READ_REQUIRES)
    if missing:  # `conformance gate` learns the runtimes from the records
        baselines.update(
            load_baselines(folder, {name: adapters.get(name) or name for name in missing})
        )
    where = {
        name: baseline.Where(
            about["version"],
            about["profile"],
            about["cpu_flags"],
            baseline.gpu_of(about["gpu"]),
            baseline.webgpu_of(about.get("webgpu")),
        )
        for name, about in recorded.items()
    }
    folders = baseline.known(folder)  # one folder or several (--known a b)
    unobserved = _unobserved(folders, where, adapters, {r.get("runtime") for r in results})
    return GateVerdict(
        check(results, baselines, where),
        folders,
        allow_fixed,
        unobserved,
        [run.judged() for run in runs],
    )


def _unobserved(folder, targets: dict, adapters: dict, runtimes: set) -> list[str]:
    """A line for each target its baseline was not observed on: what differs
    from the closest configuration the file names (each of its files)."""
    lines = []
    for name in sorted(filter(None, runtimes)):
        where = targets.get(name)
        if where is None:
            continue
        for path in baseline.files_of(folder, adapters.get(name) or adapter_of(name), name):
            line = _unobserved_line(name, where, path)
            if line:
                lines.append(line)
    return lines


def _unobserved_line(name: str, where, path: Path) -> str | None:
    try:
        observed = baseline.observed(path)
    except CaseErrors:
        return None  # reported by loading the entries
    if not observed:
        return None
    differences = min((o.differences(where) for o in observed), key=len)
    if differences:
        return (
            f"{name} ({where.describe()}) was never observed by {path}: "
            f"{'; '.join(differences)}. Its verdict may differ for reasons the baseline "
            "does not know: scope the entries that depend on it (versions, profile, cpu), "
            "do not remove them"
        )
    return None


def write(verdict: GateVerdict, folder: Path) -> dict:
    """gate.json in ``folder``; returns what was written."""
    content = verdict.to_json()
    files.write_json(Path(folder) / records.GATE, content)
    return content
