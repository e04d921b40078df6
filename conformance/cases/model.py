"""A concrete case: one (op, opset, dtype, indices dtype) with its tensors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from conformance.tables import dtypes


@dataclass(frozen=True)
class Source:
    path: Path
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Expectation:
    """``kind`` is 'output' (a literal), 'error' (a clause id) or 'oracle'."""

    kind: str
    output: np.ndarray | None = None
    clause: str | None = None
    shape: tuple[int, ...] | None = None  # expected_shape, for shape-only examples


@dataclass(frozen=True, eq=False)
class Case:
    id: str  # concrete id: <base_id>.op<opset>.<dtype>.<indices dtype>
    base_id: str  # the id written in the case file
    op: str
    opset: int
    axis: int | None  # None: the attribute is absent
    data: np.ndarray
    indices: np.ndarray
    expectation: Expectation
    description: str
    spec: str
    decisions: tuple[str, ...]
    tags: tuple[str, ...]
    source: Source

    @property
    def dtype(self) -> str:
        return dtypes.name_of(self.data)

    @property
    def indices_dtype(self) -> str:
        return dtypes.name_of(self.indices)

    @property
    def attributes(self) -> dict[str, int]:
        return {} if self.axis is None else {"axis": self.axis}


def concrete_id(base_id: str, opset: int, dtype: str, indices_dtype: str) -> str:
    return f"{base_id}.op{opset}.{dtype}.{indices_dtype}"
