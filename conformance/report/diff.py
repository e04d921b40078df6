"""What changed between two runs (``conformance diff RUN_A RUN_B``).

Results of the two runs are paired by (runtime, case id, variant), so a
corpus run before and after a runtime upgrade compares result by result:

* new      A conformed (pass, both_rejected), B has a discrepancy
* fixed    A had a discrepancy, B conforms
* changed  a discrepancy in both, of another kind, or the same kind with a
           different message (another wrong value, another error); or a
           discrepancy on one side and harness_unsupported on the other
           (the harness could not carry the case in one run: not "fixed")
* harness coverage  conforming on one side, harness_unsupported on the other:
           it says nothing of the runtime, but is counted and listed, never
           dropped

Messages the runtime or the worker wrote (rejections, crashes, what the
harness could not carry: :data:`RUNTIME_TEXT`) are compared after
:func:`normalised` takes out what changes from build to build and run to run
without changing the error (:data:`NOISE`: source file lines, memory
addresses, timestamps, thread ids, generated node names, the list of types a
runtime supports). Messages the harness
writes from values (value, dtype and shape mismatches, accepted_invalid)
compare exactly: their numbers, hex bit patterns included, are the values.

Two runs must share a runtime (the ``runtime`` of their records, exactly as
recorded: ``openvino:1thread`` is not ``openvino``); with ``cross_runtime``
one runtime of A is held against one runtime of B, result by result, paired
by (case id, variant).

Results present in one run only (cases added or filtered out, a runtime not
run) are counted, not compared. Fuzz campaigns draw different inputs (their
``fuzz-N`` ids name different inputs in each), so they are compared by discrepancy signature
instead (runtime, op, kind, dtype, variant, opset, violation, features:
what :class:`conformance.engine.groups.Signature` calls a class): a signature in B only
is new, in A only is "not seen again" (a campaign may simply not have drawn
such an input, so it is not called fixed).

Each group of changes shows its inputs: the dtypes and shapes from the
records, and the input values where a run's ``groups.json`` holds one of the
group's cases (the smallest input of each discrepancy group).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from conformance.engine import records
from conformance.engine.groups import Signature, group_of, is_generated
from conformance.engine.judge import CONFORMING, DISCREPANCIES
from conformance.errors import ConformanceError
from conformance.tables import outcomes

UNSUPPORTED = "harness_unsupported"

# Kinds whose message is the runtime's (or the worker's) own text, compared
# after normalising; the other kinds' messages are the harness's, from values.
RUNTIME_TEXT = outcomes.kinds(lambda kind: kind.runtime_text)


@dataclass(frozen=True)
class Noise:
    """One kind of text that differs between builds or runs of a runtime
    without the error being another: ``pattern`` (a regular expression) is
    replaced by ``replacement``. ``example`` is text of that shape (the OpenVINO
    ones are from real runs), which the tests hold the pattern to changing."""

    name: str
    pattern: str
    replacement: str
    example: str


# In order: each pattern sees the text the ones above it left.
NOISE: tuple[Noise, ...] = (
    Noise(
        "source location",  # the file's name stays: another file is another error
        r"(?<![\w.+:/\\-])(?:[A-Za-z]:)?(?:[\w.+-]*[/\\])*([\w+-]+(?:\.[\w+-]+)*"
        r"\.(?:cc|cpp|cxx|c|hpp|hxx|hh|h|inl|cu|py|pyx)):\d+(?::\d+)?\b",
        r"\1:<line>",
        "Exception from src/inference/src/cpp/core.cpp:105:",
    ),
    Noise(
        "Python traceback line",
        r'File "(?:[^"]*[/\\])?([^"/\\]+)", line \d+',
        r'File "\1", line <line>',
        'File "/work/main/conformance/adapters/ov.py", line 151, in execute',
    ),
    Noise(
        "memory address",
        r"\b0x[0-9a-fA-F]{6,16}\b",
        "0x<address>",
        "Current thread 0x00007f3c2a1b4740 (most recent call first):",
    ),
    Noise(
        "timestamp",
        r"\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
        r"|\b\d{2}:\d{2}:\d{2}[.,]\d+\b",
        "<time>",
        "2026-01-12 09:14:03.118234567 [E:onnxruntime:, sequential_executor.cc:572 ...]",
    ),
    Noise(
        "thread or process id",
        r"(?i)\b(thread|tid|pid|process)( id)?([ =:#]+)\d+\b",
        r"\1\2\3<id>",
        "[thread 41237] Segmentation fault",
    ),
    Noise(
        "generated node name",  # OpenVINO numbers the nodes it makes, from run to run
        r"\b([A-Za-z][A-Za-z0-9]*)_\d+\b",
        r"\1_<n>",
        "with friendly_name 'GatherElements_7052769': Shapes [4,3,5] and [2,6,3] are not",
    ),
    Noise(
        "supported type list",  # the runtime's, not the input's: it grows with releases
        r"\bexpected: [A-Z][A-Z0-9_]*(?:,\s*[A-Z][A-Z0-9_]*)+",
        "expected: <types>",
        "Unsupported data type COMPLEX64 expected: BOOL, BFLOAT16, FLOAT4E2M1, FLOAT8E4M3FN",
    ),
    Noise(
        "resident memory",  # the worker's size when the memory limit killed it
        r"resident memory reached [\d,]+ bytes",
        "resident memory reached <n> bytes",
        "the worker's resident memory reached 4,412,137,472 bytes, over the limit",
    ),
    Noise("whitespace", r"\s+", " ", "Accessing out-of-range dimension\n\nSummary:\n"),
)
_NOISE = tuple((re.compile(noise.pattern), noise.replacement) for noise in NOISE)


def normalised(message: str) -> str:
    """A message with :data:`NOISE` taken out: two builds of a runtime that
    refuse an input for the same reason give the same text."""
    for pattern, replacement in _NOISE:
        message = pattern.sub(replacement, message)
    return message.strip()


def comparable(kind: str, message: str) -> str:
    """What of a result's message must be equal for it not to have changed:
    the normalised text for :data:`RUNTIME_TEXT` kinds, else the message itself
    (a value mismatch's ``7.0 (0x40e00000)`` is a value, not an address)."""
    return normalised(message) if kind in RUNTIME_TEXT else message


class DiffError(ConformanceError, ValueError):
    """Two runs that cannot be compared as asked (they share no runtime)."""


@dataclass(frozen=True)
class Change:
    runtime: str  # in a cross-runtime diff, "A's -> B's"
    op: str
    base_id: str
    case_id: str
    variant: str
    before: str  # outcome kind in A ("" when not there)
    after: str
    before_message: str = ""
    after_message: str = ""
    group: str = ""  # the discrepancy group's name (engine.groups.group_of)
    dtype: str = ""
    indices_dtype: str = ""
    data_shape: tuple[int, ...] = ()
    indices_shape: tuple[int, ...] = ()
    axis: int | None = None

    @property
    def inputs(self) -> str:
        """The input's dtypes and shapes: ``float32[2, 3] int64[2] axis 0``."""
        if not self.dtype:
            return ""
        axis = "absent" if self.axis is None else self.axis
        return (
            f"{self.dtype}{list(self.data_shape)} {self.indices_dtype}"
            f"{list(self.indices_shape)} axis {axis}"
        )


@dataclass(frozen=True)
class GroupInput:
    """One input of a group of changes, with its values, as a run's
    groups.json keeps it (the smallest input of a discrepancy group)."""

    run: str  # "A" or "B"
    case_id: str
    axis: int | None
    data: dict  # conformance.engine.tensors.to_json form
    indices: dict

    @staticmethod
    def values(tensor: dict, limit: int | None = None) -> str:
        """A tensor's values as compact JSON, cut at ``limit`` characters."""
        if "values" not in tensor:
            elements = 1
            for size in tensor.get("shape", []):
                elements *= size
            return f"({elements} elements, not kept)"
        text = json.dumps(tensor["values"], ensure_ascii=False, separators=(", ", ": "))
        if limit is not None and len(text) > limit:
            text = text[: limit - 1] + "…"
        return text


GroupOfChanges = tuple[str, str, str, str, str]  # runtime, before, after, op, base_id


@dataclass
class Diff:
    a: str
    b: str
    versions: dict[str, tuple[str | None, str | None]]  # runtime -> (A, B)
    by: str  # "result", "signature" (fuzz) or "signature (no result in common)"
    new: list[Change] = field(default_factory=list)
    fixed: list[Change] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    unsupported: list[Change] = field(default_factory=list)  # conforming <-> harness_unsupported
    same: int = 0  # discrepancies unchanged
    noise: int = 0  # of those, how many differ in their raw message (only in NOISE)
    compared: int = 0
    only_a: int = 0
    only_b: int = 0
    kinds: dict[str, tuple[Counter, Counter]] = field(default_factory=dict)  # runtime -> (A, B)
    cross: tuple[str, str] | None = None  # (A's runtime, B's runtime) when held across
    examples: dict[GroupOfChanges, GroupInput] = field(default_factory=dict)

    @property
    def differs(self) -> bool:
        return bool(self.new or self.fixed or self.changed or self.unsupported)

    def grouped(self, changes: list[Change]) -> list[tuple[GroupOfChanges, list[Change]]]:
        """Changes by (runtime, before -> after, op, case-file id), largest first."""
        out: dict[tuple, list[Change]] = {}
        for change in changes:
            key = (change.runtime, change.before, change.after, change.op, change.base_id)
            out.setdefault(key, []).append(change)
        return sorted(out.items(), key=lambda item: (-len(item[1]), item[0]))

    @staticmethod
    def inputs(members: list[Change]) -> list[tuple[str, int]]:
        """The distinct dtypes and shapes of a group's inputs, most frequent first,
        with how many of its results have each."""
        found = Counter(member.inputs for member in members if member.inputs)
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))


def _change(before: dict, after: dict, runtime: str) -> Change:
    return Change(
        runtime=runtime,
        op=after.get("op", ""),
        base_id=after.get("base_id", ""),
        case_id=after["case_id"],
        variant=after["variant"],
        before=before["kind"],
        after=after["kind"],
        before_message=before.get("message", ""),
        after_message=after.get("message", ""),
        group=group_of(after),
        **_described(after),
    )


def _described(record: dict) -> dict:
    return {
        "dtype": record.get("dtype") or "",
        "indices_dtype": record.get("indices_dtype") or "",
        "data_shape": tuple(record.get("data_shape") or ()),
        "indices_shape": tuple(record.get("indices_shape") or ()),
        "axis": record.get("axis"),
    }


def _runtimes(entries: list[dict]) -> list[str]:
    return sorted({str(e.get("runtime")) for e in entries})


def _targets(runtimes_a: list[str], runtimes_b: list[str], cross_runtime: bool):
    """(A's runtime, B's runtime) to hold against each other, or None to pair
    by runtime name; raises DiffError when the runs cannot be compared so."""
    listed = f"A has {', '.join(runtimes_a)}; B has {', '.join(runtimes_b)}"
    if cross_runtime:
        if len(runtimes_a) != 1 or len(runtimes_b) != 1:
            raise DiffError(f"--cross-runtime holds one runtime against one other: {listed}")
        return None if runtimes_a == runtimes_b else (runtimes_a[0], runtimes_b[0])
    if not set(runtimes_a) & set(runtimes_b):
        raise DiffError(
            f"the runs share no runtime ({listed}; names compare exactly, a profile "
            "included): nothing to pair. --cross-runtime holds one runtime against "
            "another, paired by (case id, variant)"
        )
    return None


def compare(
    a_paths: list[Path], b_paths: list[Path], cross_runtime: bool | tuple[str, str] = False
) -> Diff:
    """Raises records.RecordsError for an unreadable run, DiffError for two
    runs that share no runtime (unless ``cross_runtime``). ``cross_runtime``
    may name the runtime of A and the runtime of B to hold against each other
    (two targets of one run: an old version against the pinned one)."""
    runs_a, runs_b = records.read_folders(a_paths), records.read_folders(b_paths)
    entries_a = [r for run in runs_a for r in run.records]
    entries_b = [r for run in runs_b for r in run.records]
    if isinstance(cross_runtime, tuple):
        name_a, name_b = cross_runtime
        for name, entries, side in ((name_a, entries_a, "A"), (name_b, entries_b, "B")):
            if not any(e.get("runtime") == name for e in entries):
                present = ", ".join(_runtimes(entries)) or "none"
                raise DiffError(f"run {side} has no results of {name!r} (it has: {present})")
        entries_a = [e for e in entries_a if e.get("runtime") == name_a]
        entries_b = [e for e in entries_b if e.get("runtime") == name_b]
    versions_a = records.runtime_versions([run.header for run in runs_a])
    versions_b = records.runtime_versions([run.header for run in runs_b])
    diff = Diff(
        a=", ".join(map(str, a_paths)),
        b=", ".join(map(str, b_paths)),
        versions={
            name: (versions_a.get(name), versions_b.get(name))
            for name in sorted(set(versions_a) | set(versions_b))
        },
        by="result",
    )
    if entries_a and entries_b:
        diff.cross = _targets(_runtimes(entries_a), _runtimes(entries_b), bool(cross_runtime))
    for name in sorted({e["runtime"] for e in entries_a + entries_b}):  # (READ_REQUIRES)
        diff.kinds[name] = (
            Counter(e["kind"] for e in entries_a if e.get("runtime") == name),
            Counter(e["kind"] for e in entries_b if e.get("runtime") == name),
        )
    label = " -> ".join(diff.cross) if diff.cross else None

    def key(record: dict) -> tuple:
        pair = (record.get("case_id"), record.get("variant"))
        return pair if diff.cross else (record.get("runtime"), *pair)

    by_key_a = {key(e): e for e in entries_a}
    by_key_b = {key(e): e for e in entries_b}
    shared = by_key_a.keys() & by_key_b.keys()
    fuzz = any(map(is_generated, entries_a)) or any(map(is_generated, entries_b))
    if fuzz or (not shared and entries_a and entries_b):
        diff.by = "signature" if fuzz else "signature (no result in common)"
        _by_signature(diff, entries_a, entries_b, label)
        _examples(diff, runs_a, runs_b)
        return diff
    diff.compared = len(shared)
    diff.only_a = len(by_key_a) - len(shared)
    diff.only_b = len(by_key_b) - len(shared)
    for pair in sorted(shared, key=str):
        before, after = by_key_a[pair], by_key_b[pair]
        was, now = before["kind"], after["kind"]
        change = _change(before, after, label or after["runtime"])
        if was in DISCREPANCIES and now in CONFORMING:
            diff.fixed.append(change)
        elif was in CONFORMING and now in DISCREPANCIES:
            diff.new.append(change)
        elif was in DISCREPANCIES or now in DISCREPANCIES:  # both, or one harness_unsupported
            if was != now or comparable(was, change.before_message) != comparable(
                now, change.after_message
            ):
                diff.changed.append(change)
            else:
                diff.same += 1
                diff.noise += change.before_message != change.after_message
        elif was != now and UNSUPPORTED in (was, now):  # conforming <-> harness_unsupported
            diff.unsupported.append(change)
    _examples(diff, runs_a, runs_b)
    return diff


def _by_signature(
    diff: Diff, entries_a: list[dict], entries_b: list[dict], label: str | None
) -> None:
    def signature(record: dict) -> Signature:
        found = Signature.of(record)
        return replace(found, runtime=label) if label else found

    count_a = Counter(signature(e) for e in entries_a if e.get("kind") in DISCREPANCIES)
    count_b = Counter(signature(e) for e in entries_b if e.get("kind") in DISCREPANCIES)
    first_a: dict[Signature, dict] = {}
    first_b: dict[Signature, dict] = {}
    for record in entries_a:
        first_a.setdefault(signature(record), record)
    for record in entries_b:
        first_b.setdefault(signature(record), record)
    diff.compared = len(count_a.keys() | count_b.keys())
    for sig in sorted(count_b.keys() - count_a.keys(), key=str):
        record = first_b[sig]
        change = Change(sig.runtime, sig.op, sig.input_text, record["case_id"], sig.variant, "",
                        sig.kind, after_message=record.get("message", ""),
                        group=group_of(record), **_described(record))  # fmt: skip
        diff.new.append(change)
    for sig in sorted(count_a.keys() - count_b.keys(), key=str):
        record = first_a[sig]
        change = Change(sig.runtime, sig.op, sig.input_text, "", sig.variant, sig.kind, "",
                        before_message=record.get("message", ""),
                        group=group_of(record), **_described(record))  # fmt: skip
        diff.fixed.append(change)
    diff.same = len(count_a.keys() & count_b.keys())


def _held(runs: list[records.RunFolder]) -> dict[tuple, dict]:
    """(runtime, kind, op, group) -> the smallest input groups.json keeps."""
    return {
        (g.get("runtime"), g.get("kind"), g.get("op"), g.get("group")): g
        for run in runs
        for g in (run.groups or {}).get("groups", [])
    }


def _examples(diff: Diff, runs_a: list[records.RunFolder], runs_b: list[records.RunFolder]):
    """Each group of changes' input with its values, where groups.json has
    one of the group's own cases (corpus) or the group's class (fuzz): B's
    group for what B has, else A's."""
    held_a, held_b = _held(runs_a), _held(runs_b)
    name_a, name_b = diff.cross or (None, None)
    for changes in (diff.new, diff.fixed, diff.changed, diff.unsupported):
        for group, members in diff.grouped(changes):
            runtime, before, after, op, _ = group
            first = members[0]
            ids = {m.case_id for m in members}
            tried = (
                ("B", held_b.get((name_b or runtime, after, op, first.group))),
                ("A", held_a.get((name_a or runtime, before, op, first.group))),
            )
            for run, held in tried:
                if held and (diff.by != "result" or held.get("case_id") in ids):
                    diff.examples[group] = GroupInput(
                        run, held["case_id"], held.get("axis"), held["data"], held["indices"]
                    )
                    break
