"""The decisions table: ids, quotes that really are in the documents, and
every enforced clause exercised by a case file."""

from __future__ import annotations

import filecmp
import re
from pathlib import Path

import onnx.defs
import pytest

from conformance.cases import load
from conformance.tables import decisions
from conformance.tables.operators import OPERATORS
from tests.conftest import CASES, REPO, SPECS

SHARED_SPECS = REPO.parent / "shared" / "specs"


def _normalized(text: str) -> str:
    text = re.sub(r"[`*•]", "", text)
    return re.sub(r"\s+", " ", text)


def _document_text(document: str) -> str:
    if document == decisions.ONNX_DEFS_GATHER_1:
        schema = onnx.defs.get_schema("Gather", 1)
        return " ".join([schema.doc] + [i.description for i in schema.inputs])
    return (SPECS / document).read_text(encoding="utf-8")


@pytest.mark.parametrize("decision", decisions.DECISIONS, ids=lambda d: d.id)
def test_every_quote_is_in_its_document(decision):
    for clause in decision.clauses:
        text = _normalized(_document_text(clause.document))
        position = 0
        for fragment in clause.quote.split(" ... "):
            found = text.find(_normalized(fragment).strip(), position)
            assert found >= 0, (
                f"{decision.id}: {fragment!r} not found (in order) in {clause.document}"
            )
            position = found


def test_every_operator_s_core_clause_is_in_its_document():
    """The clause a valid fuzz regression case cites (conformance/fuzz/artifacts.py)."""
    assert list(decisions.CORE) == list(OPERATORS)
    for op, clause in decisions.CORE.items():
        assert _normalized(clause.quote) in _normalized(_document_text(clause.document)), op


@pytest.mark.parametrize("decision", decisions.DECISIONS, ids=lambda d: d.id)
def test_entries_are_complete(decision):
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", decision.id)
    assert decision.kind in {"rule", "silent", "disagreement", "erratum"}
    assert decision.title and decision.oracle and decision.why and decision.clauses
    assert decision.ops and set(decision.ops) <= set(OPERATORS)


def test_ids_are_unique():
    assert len(decisions.IDS) == len(decisions.DECISIONS)


def test_the_known_disagreements_are_all_named():
    """The points the specs README and the foundation issue list, each with an entry."""
    required = {
        "ge-negative-indices",
        "gather1-negative-indices",
        "ge-indices-smaller-off-axis",
        "ge-indices-larger-off-axis",
        "axis-absent",
        "example-extra-brackets",
        "data-dtype",
        "empty-tensors",
        "zero-size-axis",
        "data-rank-zero",
        "indices-dtype",
    }
    assert required <= set(decisions.IDS)


# Raised only by the functions of OpenVINO's own texts (scatter_elements.openvino_12,
# scatter_nd.openvino_15), which no ONNX node reaches: tests/test_oracle_scatter.py
# holds it to a forbidden input.
NO_NODE_RAISES = {"sc-openvino-reductions"}


def test_every_clause_the_oracle_raises_has_a_case_expecting_it():
    oracle = (REPO / "conformance" / "oracle").glob("*.py")
    sources = "".join(p.read_text() for p in oracle)
    raised = set(re.findall(r'SpecViolation\(\s*"([a-z0-9-]+)"', sources)) - NO_NODE_RAISES
    assert raised, "no SpecViolation found in the oracle sources"
    assert raised <= set(decisions.IDS)
    expected = {c.expectation.clause for c in load([CASES]) if c.expectation.kind == "error"}
    assert raised <= expected, f"clauses no case expects: {sorted(raised - expected)}"


def test_every_case_names_a_spec_document():
    names = [p.name for p in SPECS.glob("*.txt")]
    for case in load([CASES]):
        assert any(name in case.spec for name in names), f"{case.id}: spec {case.spec!r}"


def _shared_copy(copy: Path) -> Path:
    """The shared file a document of specs/ copies: ``NNN_<name>.txt`` copies
    ``indexing/<name>.md`` (GatherND's texts), any other file its namesake."""
    numbered = re.fullmatch(r"\d{3}_(.+)\.txt", copy.name)
    indexing = SHARED_SPECS / "indexing" / f"{numbered.group(1)}.md" if numbered else None
    return indexing if indexing is not None and indexing.is_file() else SHARED_SPECS / copy.name


@pytest.mark.skipif(not SHARED_SPECS.is_dir(), reason="no shared/specs beside this checkout")
def test_the_copied_specs_match_shared():
    copies = sorted(SPECS.glob("*.txt"))
    for path in SHARED_SPECS.glob("*.txt"):
        assert SPECS / path.name in copies, f"{path.name} is not copied into specs/"
    for copy in copies:
        source = _shared_copy(copy)
        assert source.is_file(), f"{copy.name}: no shared copy ({source})"
        assert filecmp.cmp(source, copy, shallow=False), f"{copy.name} differs from {source}"
