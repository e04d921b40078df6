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

from conformance.strategies import Example

# name -> what it means; the order is the order in slugs and reports.
FEATURES: dict[str, str] = {
    "negative": "some index value is negative",
    "out_of_range": "some index value is outside [-s, s-1]",
    "beyond_int32": "some index value does not fit in int32",
    "empty_indices": "indices have no elements",
    "empty_data": "data has no elements",
    "zero_size_axis": "the gathered axis of data has size 0",
    "scalar_indices": "indices are a scalar (rank 0)",
    "smaller_off_axis": "GatherElements indices smaller than data off the axis",
}
_INT32 = (-(2**31), 2**31 - 1)


def features(example: Example) -> tuple[str, ...]:
    """The features of an input, in :data:`FEATURES` order."""
    data, indices = example.data, example.indices
    found = set()
    rank = data.ndim
    axis = 0 if example.axis is None else example.axis
    axis_ok = rank > 0 and -rank <= axis < rank
    if indices.size and indices.dtype.kind in "iu":
        low, high = int(indices.min()), int(indices.max())
        found.update(
            name
            for name, present in (
                ("negative", low < 0),
                ("beyond_int32", low < _INT32[0] or high > _INT32[1]),
            )
            if present
        )
        if axis_ok:
            size = data.shape[axis]
            if low < -size or high > size - 1:
                found.add("out_of_range")
    if indices.size == 0:
        found.add("empty_indices")
    if data.size == 0:
        found.add("empty_data")
    if axis_ok and data.shape[axis] == 0:
        found.add("zero_size_axis")
    if indices.ndim == 0:
        found.add("scalar_indices")
    if example.op == "GatherElements" and axis_ok and indices.ndim == rank:
        axis %= rank
        if any(indices.shape[d] < data.shape[d] for d in range(rank) if d != axis):
            found.add("smaller_off_axis")
    return tuple(name for name in FEATURES if name in found)


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
