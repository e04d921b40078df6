"""Tensors as the report shows them: a run's kept tensors (groups.json) as
text for a person, whole when small, summarised when large; a value
mismatch's smallest reproducer; the first differing elements of a record."""

from __future__ import annotations

import math
from dataclasses import dataclass

SHOWN_ELEMENTS = 64  # tensors above this are summarised, not dumped
SHOWN_STRING = 200  # characters of one string element shown


@dataclass
class Tensor:
    """A tensor as text for a person: whole when small, summarised when large."""

    dtype: str
    shape: list[int]
    text: str
    summarised: bool


@dataclass
class ReproducerView:
    """The smallest input that still shows a group's value mismatch, as the run confirmed it."""

    data: Tensor
    indices: Tensor
    axis: int | None
    runs: int  # runs it took to confirm the cuts
    differing: list[dict]  # position, expected, actual


def _element(value) -> str:
    if isinstance(value, list) and len(value) == 2:  # a complex element: [real, imaginary]
        return f"({value[0]}, {value[1]}j)"
    text = repr(value) if isinstance(value, str) else str(value)
    if len(text) > SHOWN_STRING:
        text = text[:SHOWN_STRING] + f"… ({len(text)} characters)"
    return text


def _leaves(values, rank: int, most: int) -> list:
    """The first ``most`` elements of a tensor's nested ``values`` in row-major
    order, each what lies ``rank`` lists deep (a complex element, a [real,
    imaginary] pair, is one), without trusting the nesting to fit the shape."""
    found: list = []
    todo = [(values, 0)]
    while todo and len(found) < most:
        value, depth = todo.pop()
        if isinstance(value, list) and depth < rank:
            todo.extend((item, depth + 1) for item in reversed(value[:most]))
        else:
            found.append(value)
    return found


def tensor(content: dict) -> Tensor:
    """A tensor as the run kept it (conformance.engine.tensors) as text for a person."""
    shape = list(content.get("shape", []))
    size = math.prod(shape)
    if "values" not in content:
        return Tensor(content.get("dtype", "?"), shape, f"({size} elements, not kept)", True)
    values = _leaves(content["values"], len(shape), SHOWN_ELEMENTS) if size else []
    shown = [_element(v) for v in values]
    summarised = size > SHOWN_ELEMENTS
    if len(shape) <= 1 or summarised:
        body = "[" + ", ".join(shown) + (", …" if summarised else "") + "]"
        if len(shape) > 1:
            body = f"(flattened) {body}"
    else:
        row = math.prod(shape[1:]) or 1
        rows = [shown[i : i + row] for i in range(0, len(shown), row)]
        body = "\n".join("[" + ", ".join(r) + "]" for r in rows) or "[]"
    return Tensor(content.get("dtype", "?"), shape, body, summarised)


def reproducer(held: dict) -> ReproducerView:
    return ReproducerView(
        data=tensor(held["data"]),
        indices=tensor(held["indices"]),
        axis=held.get("axis"),
        runs=held.get("runs", 0),
        differing=[
            {"position": p, "expected": e, "actual": a}
            for p, e, a in zip(
                held.get("positions", []),
                held.get("expected_values", []),
                held.get("actual_values", []),
                strict=False,
            )
        ],
    )


def elements(record: dict) -> int:
    """Elements of a result's input (data and indices): the smaller, the simpler."""
    return math.prod(record["data_shape"]) + math.prod(record["indices_shape"])


def differing(record: dict) -> list[dict]:
    """The first differing elements a value_mismatch record lists: position, expected, actual."""
    return [
        {"position": p, "expected": e, "actual": a}
        for p, e, a in zip(
            record.get("positions") or [],
            record.get("expected_values", []),
            record.get("actual_values", []),
            strict=False,
        )
    ]
