"""The spec model: what each (operator, opset) accepts, read from ONNX's schemas.

Type lists come from ``onnx.defs.get_schema`` rather than being copied by hand,
so a new onnx release that changes them shows up as a changed model, not as a
silently stale table. The decisions the oracle makes on top of these facts live
in :mod:`conformance.tables.decisions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import onnx.defs

from conformance.errors import ConformanceError
from conformance.tables import dtypes
from conformance.tables.operators import OPERATORS

# The operators and opsets this project covers (their rows: .operators).
OPSETS: dict[str, tuple[int, ...]] = {name: op.opsets for name, op in OPERATORS.items()}
OPS: tuple[str, ...] = tuple(OPSETS)
# The default domain's two spellings: a node of another domain named Gather is not ours.
DEFAULT_DOMAINS = ("", "ai.onnx")


class UnknownOpset(ConformanceError, ValueError):
    pass


@dataclass(frozen=True)
class OpSpec:
    op: str
    opset: int
    since_version: int
    data_dtypes: tuple[str, ...]  # project dtype names allowed for `data` (T)
    index_dtypes: tuple[str, ...]  # allowed for `indices` (Tind, or its fixed type)
    axis_default: int  # the default of the row's attribute (axis, batch_dims)
    axis_required: bool


def _allowed(schema: onnx.defs.OpSchema, param: str) -> tuple[str, ...]:
    for constraint in schema.type_constraints:
        if constraint.type_param_str == param:
            allowed = {dtypes.BY_ONNX_TYPE_STR[t].name for t in constraint.allowed_type_strs}
            # Keep the dtype table's order so listings are stable across onnx releases.
            return tuple(n for n in dtypes.NAMES if n in allowed)
    raise LookupError(f"{schema.name}-{schema.since_version} has no type parameter {param!r}")


@cache
def op_spec(op: str, opset: int) -> OpSpec:
    if op not in OPSETS:
        raise UnknownOpset(f"unknown operator {op!r}; known: {', '.join(OPS)}")
    if opset not in OPSETS[op]:
        raise UnknownOpset(
            f"{op} has no opset {opset} in this project; known: {', '.join(map(str, OPSETS[op]))}"
        )
    schema = onnx.defs.get_schema(op, opset)
    row = OPERATORS[op]
    # GatherND-11 has no batch_dims, ScatterND no int attribute at all
    attribute = None if row.attribute is None else schema.attributes.get(row.attribute)
    return OpSpec(
        op=op,
        opset=opset,
        since_version=schema.since_version,
        data_dtypes=_allowed(schema, "T"),
        index_dtypes=_index_dtypes(schema),
        axis_default=(
            row.attribute_default
            if attribute is None
            else onnx.helper.get_attribute_value(attribute.default_value)
        ),
        axis_required=attribute is not None and attribute.required,
    )


def _index_dtypes(schema: onnx.defs.OpSchema) -> tuple[str, ...]:
    """Tind's types, or the indices input's one fixed type where it has no
    parameter (GatherND's indices are tensor(int64): decision gnd-indices-dtype)."""
    index_type = schema.inputs[1].type_str
    if index_type in dtypes.BY_ONNX_TYPE_STR:
        return (dtypes.BY_ONNX_TYPE_STR[index_type].name,)
    return _allowed(schema, index_type)


def all_specs() -> tuple[OpSpec, ...]:
    return tuple(op_spec(op, v) for op, versions in OPSETS.items() for v in versions)
