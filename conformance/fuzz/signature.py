"""The signature of a fuzz example's discrepancy: what makes two findings the same class.

The signature itself is :class:`conformance.engine.groups.Signature`, the one
every front-end groups generated inputs by; here it is read from a drawn
example. Features are computed from the input itself, never from how a
strategy drew it, so a shrunk example keeps its class only if it keeps them.
"""

from __future__ import annotations

from conformance.engine.groups import Signature
from conformance.tables.features import features

__all__ = ["Signature", "signature_of"]


def signature_of(example, runtime: str, kind: str, violation: str | None) -> Signature:
    """The signature of ``kind`` on ``runtime`` for a drawn example (a case with a variant)."""
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
