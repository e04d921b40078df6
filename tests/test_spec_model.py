"""The spec model reads type lists from onnx.defs."""

from __future__ import annotations

import pytest

from conformance.tables import dtypes, operators, spec


def test_bfloat16_only_from_opset_13():
    for s in spec.all_specs():
        assert ("bfloat16" in s.data_dtypes) == (s.opset >= 13), (s.op, s.opset)


@pytest.mark.parametrize("s", spec.all_specs(), ids=lambda s: f"{s.op}-{s.opset}")
def test_every_spec(s):
    # GatherND's indices are tensor(int64), no Tind (decision gnd-indices-dtype)
    tuples = operators.OPERATORS[s.op].indexing == "tuple"
    assert s.index_dtypes == (("int64",) if tuples else ("int32", "int64"))
    assert len(s.data_dtypes) == (16 if s.opset >= 13 else 15)
    assert set(s.data_dtypes) <= set(dtypes.NAMES)
    assert s.axis_default == 0 and not s.axis_required
    assert s.since_version == s.opset


def test_unknown_opset_names_the_known_ones():
    with pytest.raises(spec.UnknownOpset, match="known: 11, 13"):
        spec.op_spec("GatherElements", 1)


def test_dtype_table_round_trips():
    import numpy as np

    for d in dtypes.DTYPES:
        assert dtypes.of_array(np.zeros(1, d.numpy)).name == d.name


@pytest.mark.parametrize("op", operators.OPERATORS.values(), ids=lambda op: op.name)
def test_operator_rows_agree_with_onnx_defs(op):
    """What a row declares by hand (inputs, the axis default) is what ONNX's
    schema says at every opset the row lists, and spec.OPSETS is the rows'."""
    import onnx.defs

    assert spec.OPSETS[op.name] == op.opsets
    for opset in op.opsets:
        schema = onnx.defs.get_schema(op.name, opset)
        assert tuple(i.name for i in schema.inputs) == op.inputs
        assert spec.op_spec(op.name, opset).axis_default == op.attribute_default


def test_no_module_branches_on_an_operator_name():
    """An operator's facts are its row's (conformance/tables/operators.py):
    code asks the row (``paired``, ``dims``) rather than comparing an op with
    an operator's name, so a new operator is a row, not a tour of the package."""
    import ast
    from pathlib import Path

    names = set(operators.OPERATORS)
    found = []
    for path in sorted(Path(operators.__file__).parents[1].rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not any(repr(name)[1:-1] in text for name in names):
            continue  # parsing only the modules that spell a name keeps this cheap
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Compare):
                literals = {
                    c.value
                    for side in (node.left, *node.comparators)
                    for c in ast.walk(side)
                    if isinstance(c, ast.Constant)
                }
                if literals & names:
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


# The modules that may spell an operator's name besides its row, and why.
_SPELLERS = {
    "operators.py": "the rows",
    "sources.py": "ONNX's ops whose outputs are their inputs' elements, ours among them",
    "as_fed.py": "ONNX's ops that move a fed value unchanged, ours among them",
    "contract.py": "the probe model: one fixed Gather, whatever the operators",
    "strategies.py": "INVALID_CLAUSES, in the order a seeded campaign draws them",
}


def test_no_module_restates_an_operator_name():
    """Every other table of operators (the scoreboard's rows, the decisions'
    ops, a fuzz regression case's core clause) derives from the rows: an
    operator's name as a string literal is the rows' alone."""
    import ast
    from pathlib import Path

    names = set(operators.OPERATORS)
    found = []
    for path in sorted(Path(operators.__file__).parents[1].rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name in _SPELLERS or not any(repr(name)[1:-1] in text for name in names):
            continue
        found += [
            f"{path.name}:{node.lineno}"
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Constant) and node.value in names
        ]
    assert found == []
