"""A concrete case: one (op, opset, dtype, indices dtype) with its tensors."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from conformance.tables import dtypes
from conformance.tables.operators import OPERATORS


@dataclass(frozen=True)
class Source:
    """Where a case was read: a case file and the line of its entry, or a
    folder (an ONNX backend test's data set: line 0, shown as the folder)."""

    path: Path
    line: int

    def __str__(self) -> str:
        if self.line == 0 and str(self.path) != GENERATED:
            return str(self.path)
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Expectation:
    """``kind`` is 'output' (a literal), 'error' (a clause id) or 'oracle'."""

    kind: str
    output: np.ndarray | None = None
    clause: str | None = None
    shape: tuple[int, ...] | None = None  # expected_shape, for shape-only examples


GENERATED = "<generated>"  # the source of an input built in code, not read from a file


@dataclass(frozen=True, eq=False)
class Case:
    """One input: the operator, its opset and attributes, and its tensors:
    data and indices, and ``updates`` for an operator that writes (its row's
    ``inputs`` name three), None otherwise.

    A case read from a case file says where it came from and what to expect;
    a case built in code (a fuzz example, a test's input) takes the defaults:
    the oracle decides, and its source is ``<generated>``.
    """

    op: str
    opset: int
    axis: int | None  # None: the attribute is absent
    data: np.ndarray
    indices: np.ndarray
    # the third input of an operator that writes (ScatterElements, ScatterND)
    updates: np.ndarray | None = field(default=None, kw_only=True)
    # the string attribute of an operator that has one (None: absent)
    reduction: str | None = field(default=None, kw_only=True)
    id: str = field(default="example", kw_only=True)  # <base_id>.op<opset>.<dtype>.<indices dtype>
    base_id: str = field(default="example", kw_only=True)  # the id written in the case file
    expectation: Expectation = field(default=Expectation("oracle"), kw_only=True)
    description: str = field(default="", kw_only=True)
    spec: str = field(default="", kw_only=True)
    decisions: tuple[str, ...] = field(default=(), kw_only=True)
    tags: tuple[str, ...] = field(default=("generated",), kw_only=True)
    source: Source = field(default=Source(Path(GENERATED), 0), kw_only=True)
    # the nodes of users' models the case stands for: (model, graph, node) each
    # (conformance.graphs); empty for every other case
    nodes: tuple[tuple[str, str, str], ...] = field(default=(), kw_only=True)

    @property
    def dtype(self) -> str:
        return dtypes.name_of(self.data)

    @property
    def indices_dtype(self) -> str:
        return dtypes.name_of(self.indices)

    @property
    def attributes(self) -> dict[str, int | str]:
        """The node's attributes: ``axis`` holds the operator's int attribute
        (GatherND's ``batch_dims``), under the attribute's own name here, and
        ``reduction`` its string one."""
        found: dict[str, int | str] = {}
        name = OPERATORS[self.op].attribute
        if self.axis is not None and name is not None:
            found[name] = self.axis
        if self.reduction is not None:
            found["reduction"] = self.reduction
        return found

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """The inputs by their names, in the node's order (its row's ``inputs``)."""
        given = {"data": self.data, "indices": self.indices, "updates": self.updates}
        return {
            name: array for name in OPERATORS[self.op].inputs if (array := given[name]) is not None
        }

    @property
    def size(self) -> int:
        """Elements of every input together (what picks a group's smallest input)."""
        return sum(array.size for array in self.arrays.values())


def concrete_id(base_id: str, opset: int, dtype: str, indices_dtype: str) -> str:
    return f"{base_id}.op{opset}.{dtype}.{indices_dtype}"


@dataclass(frozen=True)
class CaseFileError:
    """One problem of a case file (or a backend test folder), where and what:
    ``file:line: field: message``."""

    path: Path
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )
