"""Bugs: the root causes behind a campaign's discrepancy classes.

A class (:class:`conformance.fuzz.signature.Signature`) is fine-grained on
purpose: runtime, operator, kind, dtype, variant, opset, broken clause and
input features. One mechanism shows up as many classes (OpenVINO's int64
narrowing in every variant, opset and feature set), so a campaign of a few
minutes has hundreds of classes and a few dozen bugs. A **bug** is one
mechanism, counted per runtime and operator; what identifies it depends on the
outcome kind:

============================  ==============================================
kind                          the bug is told apart by
============================  ==============================================
``value_mismatch``            the mechanism (its family) of the first
                              explanation that fits the output exactly
                              (``explained_by``, :mod:`conformance.tables.explanations`);
                              none: "unexplained", with the input's features
``crash``                     the signal (or exit status), and the trigger; a
                              Rust panic: the file that panicked
``timeout``                   the trigger
``rejected``                  the data type, when the message names the
                              input's; else the runtime's message, normalised
``accepted_invalid``          the clause the input breaks
``dtype_/shape_mismatch``     the trigger
============================  ==============================================

The **trigger** of a crash, hang or wrong shape is the input's most degenerate
trait, by :data:`TRIGGERS`: an empty tensor (a zero-size axis, empty data or
empty indices) before an index out of range (beyond int32 or not) before
scalar indices before indices of another shape; else "no degenerate feature".
Degenerate inputs are where graph code breaks; the incidental features every
input has (negative indices, block copies) do not make a mechanism of their
own. When one input has two degenerate traits, the first names the bug: a
campaign that meets the other alone files it as a bug of its own.

A rejection's message is normalised (:func:`normalised`): wrapper frames and
boilerplate lines go, and the prefix that says where a check ran (OpenVINO's
frontend or CPU plugin); numbers (negative ones too) become ``N`` (a list of
them ``N,…``: a shape of any rank), what nested brackets hold ``…``: what
remains names the check that refused the input, not the input's shapes or the
node's generated name.

Several explanations may explain one output (a float64 narrowed to float32 fits
the constant-narrowing explanations too when no value is out of range or zero):
which of them do depends on the values drawn, not on the runtime, so the bug is
the first one's family, in the table's order. A rejection whose message names
the input's data type ("Unknown DatumType ComplexN", "MLDataType for:
tensor(complex128) is not ... supported") is one bug per data type (complex:
both widths), whichever
check refused it (tract refuses complex data at two stages, by variant;
:data:`DTYPE_WORDS`). A
crash whose stderr holds a Rust panic ("panicked at core/src/ops/array/
gather.rs:75:52: index out of bounds...") is one bug per file that panicked
(:func:`panic`): that names the mechanism better than any trait of the input.

A bug's id (``b-`` and 12 hex digits) is a hash of its runtime, kind, operator
and cause: the same on every shard, campaign and machine, so that a
regression store (:mod:`conformance.fuzz.store`) can hold one reproducer per bug.
The runtime is the target's name; its version is not part of the id, so a
bug found before a runtime upgrade is found again as the same bug, or fixed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from conformance.engine.judge import Outcome
from conformance.tables import explanations

# The most degenerate first: what names a crash's, hang's or wrong shape's
# trigger, and the features that make it. An empty tensor (whichever) is one
# trigger: where graph code divides by a size or slices an empty buffer, it
# does so for all three; an index out of range is one whether or not it also
# leaves int32 (tract panics on both alike). Features not listed (negative,
# block_copy) are incidental.
TRIGGERS: dict[str, tuple[str, ...]] = {
    "an empty tensor": ("zero_size_axis", "empty_data", "empty_indices"),
    "an index out of range": ("beyond_int32", "out_of_range"),
    "scalar indices": ("scalar_indices",),
    "indices of another shape": ("axis_size_differs", "smaller_off_axis"),
}
NO_TRIGGER = "no degenerate feature"

# Lines of a runtime's message that say where it was raised or that a
# conversion failed, not why: dropped before the message names a bug.
BOILERPLATE: tuple[re.Pattern, ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r"^Exception from \S+:\d+:?$",  # OpenVINO's frames
        r"^Check 'false' failed at \S*unconverted_ops_report",  # its conversion report
        r"^FrontEnd API failed with",
        r"^Model wasn't fully converted",
        r"^-- \S+ with a message:$",
        r"^Summary:$",
        r"^-- Conversion is failed for",
        r"^\[ONNXRuntimeError\] : \d+ : \w+ : ?$",
        r"^Traceback \(most recent call last\)",
        r"^\s*File \".*\", line \d+",
    )
)
# Prefixes that say where a check ran (OpenVINO's frontend or its CPU plugin),
# not which check: dropped, so that one check is one cause.
PREFIXES: tuple[re.Pattern, ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r"^While validating ONNX node '[^']*': ",
        r"^\[CPU\] \S+ node with name '[^']*' ",
    )
)
_SHAPE = re.compile(r"(?<![\w?])([N?])(?:\s*,\s*\1)+(?![\w?])")  # "N,N,N" or "?,?"
MESSAGE_CHARS = 160  # of the normalised message; the rest is detail of one input
# A Rust panic as the standard library reports it: "thread '<name>' (tid)
# panicked at <file>:<line>:<column>:" (its message on the next line).
_PANIC = re.compile(r"panicked at (?P<file>[^\s:]+):\d+:\d+:")
# How runtimes name a data type in their messages: the full name, any case
# ("COMPLEX128", "Complex64", "tensor(bfloat16)"), by the oracle's dtype name,
# with the family one bug stands for (a runtime without complex kernels lacks
# both widths). Not the short forms ("bf16[]", "f16[]"): OpenVINO prints them
# in every node description, whatever the message is about.
DTYPE_WORDS: dict[str, tuple[str, str]] = {
    "complex64": ("complex(?:64)?", "complex"),
    "complex128": ("complex(?:128)?", "complex"),
    "bfloat16": ("bfloat16", "bfloat16"),
    "float16": ("float16", "float16"),
}
_NAMED: dict[str, re.Pattern] = {
    dtype: re.compile(rf"(?<![a-z0-9]){word}(?![a-z0-9])", re.IGNORECASE)
    for dtype, (word, _) in DTYPE_WORDS.items()
}


def normalised(message: str) -> str:
    """A rejection's message as it names its cause: the first line that is not
    boilerplate (:data:`BOILERPLATE`), numbers as ``N``, what nested brackets
    hold as ``…``, quoted node names kept, cut to :data:`MESSAGE_CHARS`."""
    for raw in (message or "").splitlines():
        line = " ".join(raw.split())
        for prefix in PREFIXES:  # first: what follows a prefix may be a frame alone
            line = prefix.sub("", line)
        if not line or any(p.search(line) for p in BOILERPLATE):
            continue
        line = re.sub(r"0x[0-9a-fA-F]+", "N", line)
        line = re.sub(r"-?\d+", "N", line)  # a negative index is the same check
        line = _SHAPE.sub(lambda m: m.group(1) + ",…", line)  # a shape of any rank
        line = _flatten(line)
        return line[:MESSAGE_CHARS].rstrip()
    return "(no message)"


def _flatten(line: str) -> str:
    """What brackets nested in brackets hold becomes ``…``: shapes, dims and
    tensor descriptions vary with the input, the outer words do not."""
    out, depth = [], 0
    for char in line:
        if char in "([{":
            depth += 1
            if depth == 2:
                out.append(char + "…")
            elif depth < 2:
                out.append(char)
        elif char in ")]}":
            if depth <= 2:
                out.append(char)
            depth = max(0, depth - 1)
        elif depth < 2:
            out.append(char)
    return "".join(out)


def panic(message: str) -> str | None:
    """The first Rust panic in a crash's message (its worker's stderr), as
    ``panic in <file>``; None without one. The file names the kernel that
    panicked; not its line (it moves between versions) nor its message (the
    same unchecked index panics as "index out of bounds" or "range start
    index" by its sign). A dependency's file is named without the build
    machine's registry path and the crate's version."""
    found = _PANIC.search(message or "")
    if found is None:
        return None
    path = re.sub(r"^.*/registry/src/[^/]+/", "", found["file"])
    path = re.sub(r"^([A-Za-z0-9_]+)-\d+(?:\.\d+)*(?:-[\w.]+)?/", r"\1/", path)
    return f"panic in {path}"


def names_dtype(message: str, dtype: str) -> bool:
    """Whether a runtime's message names this data type (:data:`DTYPE_WORDS`)."""
    named = _NAMED.get(dtype)
    return bool(named and message and named.search(message))


def trigger(features: tuple[str, ...]) -> str:
    """The input's most degenerate trait (:data:`TRIGGERS`), or :data:`NO_TRIGGER`."""
    return next(
        (name for name, made_by in TRIGGERS.items() if any(f in features for f in made_by)),
        NO_TRIGGER,
    )


@dataclass(frozen=True)
class Cause:
    """What makes discrepancies one bug: runtime, kind, operator and mechanism.

    ``mechanism`` is ``(by, detail...)``: ``("explanations", (family,))``,
    ``("unexplained", features)``, ``("signal", signal, trigger or panic)``,
    ``("trigger", trigger)``, ``("dtype", dtype)``, ``("message", text)``,
    ``("clause", clause)``.
    """

    runtime: str
    kind: str
    op: str
    mechanism: tuple

    @property
    def id(self) -> str:
        by, *detail = self.mechanism
        # Hashed as first spelled ("bug_models"), so that stored bugs keep their ids.
        hashed = ("bug_models" if by == "explanations" else by, *detail)
        text = "\x1f".join([self.runtime, self.kind, self.op, *map(_flat, hashed)])
        return "b-" + hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def text(self) -> str:
        """The cause in a few words, for a person."""
        by, *detail = self.mechanism
        if by == "explanations":
            return " or ".join(detail[0])
        if by == "unexplained":
            return "unexplained values" + (f" ({', '.join(detail[0])})" if detail[0] else "")
        if by == "signal":
            joint = ": " if detail[1].startswith("panic") else " on "
            return f"{detail[0]}{joint}{detail[1]}"
        if by == "dtype":
            return f"rejects {detail[0]} data"  # a family: "complex", "bfloat16"
        if by == "trigger":
            return f"on {detail[0]}"
        if by == "clause":
            return f"accepts {detail[0]}"
        return detail[0]

    def to_json(self) -> dict:
        """findings.json's ``mechanism`` of a bug."""
        by, *detail = self.mechanism
        content: dict = {"by": by}
        if by == "explanations":
            content["explanations"] = list(detail[0])
        elif by == "unexplained":
            content["features"] = list(detail[0])
        elif by == "signal":
            content["signal"], content["trigger"] = detail
        elif by == "trigger":
            content["trigger"] = detail[0]
        elif by == "dtype":
            content["dtype"] = detail[0]
        elif by == "message":
            content["message"] = detail[0]
        elif by == "clause":
            content["clause"] = detail[0]
        return content

    @classmethod
    def from_json(cls, runtime: str, kind: str, op: str, mechanism: dict) -> Cause:
        """The cause :meth:`to_json` described (a store's entry; one written
        before explanations had their name too: ``by: bug_models``, ``models``)."""
        by = mechanism["by"]
        if by == "bug_models":
            by, mechanism = "explanations", {"explanations": mechanism["models"]}
        detail: tuple = {
            "explanations": lambda: (tuple(mechanism["explanations"]),),
            "unexplained": lambda: (tuple(mechanism["features"]),),
            "signal": lambda: (mechanism["signal"], mechanism["trigger"]),
            "trigger": lambda: (mechanism["trigger"],),
            "dtype": lambda: (mechanism["dtype"],),
            "message": lambda: (mechanism["message"],),
            "clause": lambda: (mechanism["clause"],),
        }[by]()
        return cls(runtime, kind, op, (by, *detail))


def _flat(part) -> str:
    return ",".join(part) if isinstance(part, tuple) else str(part)


def cause_of(
    runtime: str,
    op: str,
    outcome: Outcome,
    features: tuple[str, ...],
    violation: str | None,
    dtype: str = "",
) -> Cause:
    """The bug behind one discrepancy: ``outcome`` (a discrepancy kind) on
    ``runtime`` for an input of ``op`` with these ``features`` and data
    ``dtype``, breaking ``violation`` (None: a valid input)."""
    kind = outcome.kind
    details = outcome.details or {}
    mechanism: tuple
    if kind == "value_mismatch":
        fitting = [explanations.BY_NAME[name] for name in details.get("explained_by") or ()
                  if name in explanations.BY_NAME]  # fmt: skip
        first = min(fitting, key=explanations.EXPLANATIONS.index) if fitting else None
        mechanism = (
            ("explanations", (first.mechanism,)) if first else ("unexplained", tuple(features))
        )
    elif kind == "crash":
        signal = details.get("signal") or "unknown signal"
        mechanism = ("signal", signal, panic(outcome.message) or trigger(features))
    elif kind == "rejected" and names_dtype(outcome.message, dtype):
        mechanism = ("dtype", DTYPE_WORDS[dtype][1])
    elif kind == "rejected":
        mechanism = ("message", normalised(outcome.message))
    elif kind == "accepted_invalid":
        mechanism = ("clause", violation or "?")
    else:  # timeout, dtype_mismatch, shape_mismatch
        mechanism = ("trigger", trigger(features))
    return Cause(runtime, kind, op, mechanism)
