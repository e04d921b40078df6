"""Discrepancy signatures: what makes two fuzz findings the same class.

A signature is the runtime, the operator, the outcome kind, and the features
of the input that decide which code path a runtime takes: data dtype, model
variant, opset, the clause an invalid input breaks, and index and shape
features. Features are computed from the input itself, never from how a
strategy drew it, so a shrunk example keeps its class only if it keeps them.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from conformance.fuzz.strategies import Example
from conformance.tables.features import FEATURES, features

__all__ = ["FEATURES", "Signature", "features", "signature_of"]


@dataclass(frozen=True)
class Signature:
    runtime: str
    op: str
    kind: str  # an outcome kind of the run engine
    dtype: str
    variant: str
    opset: int
    violation: str | None  # the clause an invalid input breaks, None when valid
    features: tuple[str, ...]

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


def signature_of(example: Example, runtime: str, kind: str, violation: str | None) -> Signature:
    return Signature(
        runtime=runtime,
        op=example.op,
        kind=kind,
        dtype=example.dtype,
        variant=example.variant,
        opset=example.opset,
        violation=violation,
        features=features(example),
    )
