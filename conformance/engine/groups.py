"""How results are grouped: one rule for the run's summary, the gate, the
report, ``diff`` and the fuzz campaign.

A discrepancy group is (runtime, kind, op, group): ``group`` is the
case-file id for a case of the corpus, and for a generated input (a fuzz
example, whose ``fuzz-N`` id names a different input in every campaign) the
text of its :class:`Signature` without runtime, kind and op. A fuzz class is
one :class:`Signature`: two generated inputs that share it take the same code
path in a runtime as far as the input can tell.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import NamedTuple

from conformance.cases.case import GENERATED  # the source of every generated input


def is_generated(record: dict) -> bool:
    """Whether a result's input was generated (fuzzing) rather than read from a case file."""
    return str(record.get("source", "")).startswith(GENERATED)


@dataclass(frozen=True)
class Signature:
    """What makes two discrepancies on generated inputs the same class: the
    runtime, operator, outcome kind, and the input's data dtype, model
    variant, opset, broken clause and features (:mod:`conformance.tables.features`)."""

    runtime: str
    op: str
    kind: str  # an outcome kind (conformance.engine.judge.KINDS)
    dtype: str
    variant: str
    opset: int
    violation: str | None  # the clause an invalid input breaks, None when valid
    features: tuple[str, ...]

    @classmethod
    def of(cls, record: dict) -> Signature:
        """The signature of a result record."""
        return cls(
            runtime=record.get("runtime", ""),
            op=record.get("op", ""),
            kind=record.get("kind", ""),
            dtype=record.get("dtype", ""),
            variant=record.get("variant", ""),
            opset=record.get("opset", 0),
            violation=(record.get("expected") or {}).get("violation"),
            features=tuple(record.get("features") or ()),
        )

    @property
    def input_text(self) -> str:
        """The input's part, for a person: ``opset 13 float32 static valid negative``."""
        parts = [f"opset {self.opset}", self.dtype, self.variant, self.violation or "valid"]
        return " ".join([*parts, *self.features])

    @property
    def slug(self) -> str:
        """A file-name-safe id, e.g. ``openvino-gather13-crash-float32-static-empty_indices``."""
        parts = [
            self.runtime,
            f"{self.op.lower()}{self.opset}",
            self.kind,
            self.dtype,
            self.variant,
            *([self.violation] if self.violation else []),
            *self.features,
        ]
        return re.sub(r"[^a-z0-9_]+", "-", "-".join(parts).lower()).strip("-")

    def to_json(self) -> dict:
        content = asdict(self)
        content["features"] = list(self.features)
        return content

    @classmethod
    def from_json(cls, content: dict) -> Signature:
        """A signature as :meth:`to_json` wrote it (findings.json)."""
        return cls(**{**content, "features": tuple(content.get("features") or ())})

    @property
    def key(self) -> GroupKey:
        """The discrepancy group of the results with this signature: a fuzz class is one."""
        return GroupKey(self.runtime, self.kind, self.op, "generated: " + self.input_text)


class GroupKey(NamedTuple):
    runtime: str
    kind: str
    op: str
    group: str  # the case-file id, or "generated: <signature's input text>"


def group_of(record: dict) -> str:
    """The case-file id; for a generated input, its signature's input text."""
    if is_generated(record):
        return Signature.of(record).key.group
    return record.get("base_id", "")


def group_key(record: dict) -> GroupKey:
    return GroupKey(record["runtime"], record["kind"], record["op"], group_of(record))


class Grouping:
    """Records grouped once by :func:`group_key`, each key computed once, for
    everyone who shows the same records grouped (the gate's verdict and
    gate.json, its terminal lines and Markdown, the report's groups); a part
    of them (the gate's new ones) is grouped from the keys already computed."""

    def __init__(self, records) -> None:
        self.records = list(records)
        self._keys = {id(record): group_key(record) for record in self.records}

    def key(self, record: dict) -> GroupKey:
        """A record's group: computed once for the records grouped (one
        that is not, read from another run, is computed now)."""
        return self._keys.get(id(record)) or group_key(record)

    def grouped(self, part=None) -> list[tuple[GroupKey, list[dict]]]:
        """The records (or ``part`` of them) by group, largest group first."""
        found: dict[GroupKey, list[dict]] = {}
        for record in self.records if part is None else part:
            found.setdefault(self.key(record), []).append(record)
        return sorted(found.items(), key=lambda item: (-len(item[1]), item[0]))
