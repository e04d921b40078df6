"""The shipped case files: schema-valid, loadable, and in agreement with the oracle."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from conformance import shipped
from conformance.cases import check, discover, load
from conformance.cases.loader import schema
from tests.conftest import CASES

ALL = load([CASES])


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(schema())


@pytest.mark.parametrize("path", discover([CASES]), ids=lambda p: p.name)
def test_every_case_file_validates_against_the_schema(path):
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    jsonschema.validate(document, schema(), registry=shipped.schema_registry())


@pytest.mark.parametrize("case", ALL, ids=lambda c: c.id)
def test_case_agrees_with_the_oracle(case):
    assert check.problems(case) == []


def test_at_least_150_cases_and_ids_unique():
    assert len(ALL) >= 150
    assert len({c.id for c in ALL}) == len(ALL)


# Every example of the five documents, by the id of the case that holds it.
SPEC_EXAMPLES = {
    "ge-onnx-example-1",
    "ge-onnx-example-2",
    "ge-onnx-negative-indices",
    "ge-onnx11-rendering-example-1",
    "ge-onnx11-rendering-example-2",
    "ge-openvino-example-1",
    "ge-openvino-example-2",
    "ge-openvino-example-3",
    "ge-openvino-ir-example-2x2",
    "ge-openvino-ir-example-3x7x5",
    "gather-example-axis0",
    "gather-example-axis1",
    "gather-table-pq-scalar-axis0",
    "gather-table-pqr-scalar-axis1",
    "gather-table-pq-rs-axis0",
    "gather-table-pq-rs-axis1",
}


def test_every_spec_example_is_a_case_with_a_checked_expectation():
    by_base = {}
    for case in ALL:
        by_base.setdefault(case.base_id, []).append(case)
    assert set(by_base) >= SPEC_EXAMPLES
    for name in SPEC_EXAMPLES:
        for case in by_base[name]:
            assert "spec-example" in case.tags
            # a literal output, or at least the output shape the document states
            assert case.expectation.kind == "output" or case.expectation.shape is not None


def test_coverage_of_the_edges_the_issue_lists():
    dtypes = {(c.op, c.dtype) for c in ALL}
    for op in ("Gather", "GatherElements"):
        assert len({d for o, d in dtypes if o == op}) == 16, op
    ranks = {c.data.ndim for c in ALL}
    assert {0, 1, 5, 8} <= ranks
    assert any(c.indices.ndim == 0 and c.op == "Gather" for c in ALL)
    assert any(c.indices.size == 0 for c in ALL)
    assert any(0 in c.data.shape and c.indices.size for c in ALL)
    assert {"int32", "int64"} <= {c.indices_dtype for c in ALL}
    beyond = [c for c in ALL if c.indices.size and abs(int(c.indices.astype(object).max())) > 2**32]
    assert beyond
    assert {-3, -2, -1} <= {c.axis for c in ALL if c.axis is not None}
    assert any(c.axis is None for c in ALL)


def test_expanded_ids_name_opset_and_dtypes():
    case = next(c for c in ALL if c.base_id == "ge-onnx-example-1" and c.opset == 13)
    assert case.id == f"ge-onnx-example-1.op13.{case.dtype}.{case.indices_dtype}"
    json.dumps([c.id for c in ALL])  # plain strings, usable in any report
