"""Replaying a regression store: is each stored bug still there, fixed, or changed?

Each entry of the store (:mod:`conformance.fuzz.store`) holds one bug's
smallest reproducer as a case file and the variant it reproduces in. The store
checked every field on reading it (the reproducer read by the case loader as
one case; an entry that is not usable is skipped there, with a line naming it
in ``Store.skipped``). A replay writes each reproducer into
``DIR/replay/<bug id>.yaml`` and runs it
through the one engine path, in that variant, on every current target; the
records go to ``results.jsonl`` as generated inputs (case id
``replay-<bug id>``), so the gate judges them as it judges a campaign's.
A reproducer is a case file all the same: what it writes down to expect
(``expect_error``, an ``expected`` output, ``expected_shape``; a campaign
writes ``expected: oracle`` or the oracle's clause) is held to the oracle as
``conformance run`` holds a case file's, each disagreement one of the run's
``case_problems`` (naming ``replay/<bug id>.yaml``), which ends the command
with exit 2 (issue 44, item 7: one was replayed as "fixed", exit 0).

Each bug is judged on its own runtime (the target named in the entry):

- ``still there``: a discrepancy with the same cause (:mod:`conformance.fuzz.bugs`);
- ``changed``: a discrepancy with another cause (another signal, message, model...);
- ``fixed``: the runtime now conforms (``pass``, or ``both_rejected`` for an invalid input);
- ``not run``: that runtime is not among the current targets, or could not be
  judged (``harness_unsupported``, the time budget).

The versions the bug was found with (the entry's ``found``) are shown next to
the current ones: a replay after a runtime upgrade is the point.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.cases import loader
from conformance.cases.case import Case, Source
from conformance.cases.check import literal, over_memory, verdict_of
from conformance.engine import files
from conformance.engine.judge import DISCREPANCIES, Outcome
from conformance.fuzz.bugs import Cause, cause_of
from conformance.fuzz.store import StoreEntry
from conformance.fuzz.strategies import Example
from conformance.oracle import Verdict
from conformance.tables.features import features

if TYPE_CHECKING:
    from conformance.engine.run import Recorded

STILL, CHANGED, FIXED, NOT_RUN = "still there", "changed", "fixed", "not run"
STATUSES = (STILL, CHANGED, FIXED, NOT_RUN)
REPLAY_DIR = "replay"
REPLAY_JSON = "replay.json"  # what `conformance fuzz replay` writes: store, versions, bugs


@dataclass
class Replayed:
    entry: StoreEntry
    status: str  # one of STATUSES
    outcome: Outcome | None = None  # on the bug's runtime
    cause: Cause | None = None  # the cause of that outcome, when a discrepancy
    case_file: str = ""  # where the reproducer was written, relative to the run folder

    def to_json(self) -> dict:
        bug = self.entry.bug
        content = {
            "id": self.entry.bug_id,
            "runtime": bug.get("runtime"),
            "kind": bug.get("kind"),
            "op": bug.get("op"),
            "cause": bug.get("cause"),
            "status": self.status,
            "shrunk_by": self.entry.shrunk_by,
            "found": self.entry.found,
            "case": self.case_file,
        }
        if self.outcome is not None:
            content["now"] = {
                "kind": self.outcome.kind,
                "message": self.outcome.message,
                "bug": self.cause.id if self.cause else None,
                "cause": self.cause.text if self.cause else None,
            }
        return content


def example_of(entry: StoreEntry, out_dir: Path) -> tuple[Example, str, Case]:
    """The entry's reproducer as an example (its case file written into
    ``out_dir/replay/`` and read back by the case loader), that file's path
    relative to ``out_dir``, and the reproducer as that file's case (what it
    writes down to expect, its source the file)."""
    path = out_dir / REPLAY_DIR / f"{entry.bug_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    files.write_text(path, entry.case_yaml)
    # The store read the reproducer as one case already (StoreEntry.case); an entry
    # made here (not read from a store) is read back from its file.
    case = entry.case if entry.case is not None else loader.load_file(path)[0]
    example = Example(case.op, case.opset, case.axis, case.data, case.indices, entry.variant)
    written = replace(case, source=Source(path, case.source.line))
    return example.as_case(f"replay-{entry.bug_id}"), str(path.relative_to(out_dir)), written


def _hold_to_oracle(run, written: Case) -> None:
    """The reproducer's written expectation against the oracle, as a run
    holds a case file's: a disagreement goes to the run's ``case_problems``
    (exit 2). A reproducer over the memory guard is not computed here: the
    drive records it as the memory guard's, unchecked, as it records any case."""
    memory = run.options.case_memory
    if literal(written) and over_memory(written, memory) is None:
        run.case_problems(written, verdict_of(written, memory))


def replay(
    run, entries: list[StoreEntry], out_dir: Path, deadline: float | None = None
) -> list[Replayed]:
    """Run every entry's reproducer on every target of ``run`` (a started
    :class:`conformance.engine.run.Run`); each bug judged on its own runtime."""
    examples = [example_of(entry, out_dir) for entry in entries]
    for _, _, written in examples:
        _hold_to_oracle(run, written)
    seen: dict[tuple[str, str], tuple[Outcome, Verdict | None]] = {}

    def recorded(result: Recorded) -> None:
        if result.ran:
            seen[(result.case.id, result.runtime)] = (result.outcome, result.verdict)

    items = [(example, [example.variant]) for example, _, _ in examples]
    run.drive(items, recorded=recorded, deadline=deadline)
    results = []
    for entry, (example, case_file, _) in zip(entries, examples, strict=True):
        runtime: str = entry.bug["runtime"]  # a str: checked on reading, set by the campaign
        got = seen.get((example.id, runtime))
        if got is None:
            results.append(Replayed(entry, NOT_RUN, case_file=case_file))
            continue
        outcome, verdict = got
        if outcome.kind in DISCREPANCIES:
            assert verdict is not None  # it ran
            clause = None if verdict.valid else verdict.violation.clause
            cause = cause_of(runtime, example.op, outcome, features(example), clause, example.dtype)
            status = STILL if cause.id == entry.bug_id else CHANGED
            results.append(Replayed(entry, status, outcome, cause, case_file))
        elif outcome.kind == "harness_unsupported":
            results.append(Replayed(entry, NOT_RUN, outcome, case_file=case_file))
        else:
            results.append(Replayed(entry, FIXED, outcome, case_file=case_file))
    return results
