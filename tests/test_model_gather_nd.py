"""`conformance model` finds and judges GatherND nodes as built and in situ
(issue 46, item 6), under issue 49's rules as for Gather: a BERT-style GatherND
(batch_dims 1) picking positions of a graph input, and two GatherND nodes on
constant tables sharing indices fed as a graph input, so that each bounds the
other's index tuples component by component in every valid run."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance import shipped
from conformance.graphs import drawing, reading
from conformance.tables.operators import OPERATORS
from tests.conftest import conformance_here

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "schemas" / "nodes.schema.json"
TARGETS = ["reference", "onnxruntime", "openvino"]
NODES = {"pick", "lookup", "lookup_small"}


def _model(folder: Path) -> Path:
    """pos [batch, 2] -> Unsqueeze -> [batch, 2, 1] -> GatherND(x [batch, 5, 2],
    batch_dims 1) -> picked: each batch row's hidden states at its positions;
    ij [n, 2] -> GatherND(table [4, 6, 3]) and GatherND(small [5, 2, 3])."""
    graph = h.make_graph(
        [
            h.make_node("Unsqueeze", ["pos", "axes"], ["pos3"], name="unsq"),
            h.make_node("GatherND", ["x", "pos3"], ["picked"], batch_dims=1, name="pick"),
            h.make_node("GatherND", ["table", "ij"], ["rows"], name="lookup"),
            h.make_node("GatherND", ["small", "ij"], ["rows2"], name="lookup_small"),
        ],
        "g",
        [
            h.make_tensor_value_info("x", T.FLOAT, ["batch", 5, 2]),
            h.make_tensor_value_info("pos", T.INT64, ["batch", 2]),
            h.make_tensor_value_info("ij", T.INT64, ["n", 2]),
        ],
        [h.make_tensor_value_info(name, T.FLOAT, None) for name in ("picked", "rows", "rows2")],
        initializer=[
            nh.from_array(np.array([-1], np.int64), "axes"),
            nh.from_array(np.arange(72, dtype=np.float32).reshape(4, 6, 3), "table"),
            nh.from_array(np.arange(30, dtype=np.float32).reshape(5, 2, 3), "small"),
        ],
    )
    path = folder / "nd.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], ir_version=8), path)
    return path


def _run(folder: Path, name: str, ij: list | None) -> tuple[int, str, dict, str]:
    model = _model(folder)
    more = []
    if ij is not None:
        x = np.arange(30, dtype=np.float32).reshape(3, 5, 2)
        pos = np.array([[0, 4], [1, -1], [2, 3]], np.int64)
        np.savez(folder / f"{name}.npz", x=x, pos=pos, ij=np.array(ij, np.int64))
        more = ["--inputs", str(folder / f"{name}.npz")]
    out = folder / name
    done = conformance_here("model", str(model), "--runtime", *TARGETS, "--variants", "static",
                            "--out", str(out), "--no-progress", *more)  # fmt: skip
    nodes = json.loads((out / "nodes.json").read_text(encoding="utf-8"))
    jsonschema.validate(nodes, json.loads(SCHEMA.read_text()), registry=shipped.schema_registry())
    page = (out / "report.html").read_text(encoding="utf-8")
    return done.returncode, done.stdout, nodes, page


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("gather-nd")
    return {
        "drawn": _run(folder, "drawn", None),
        "fed": _run(folder, "fed", [[3, 1], [0, -2]]),
        # ij[1, 1] = 2: within table's dim 1 (6), outside small's (2)
        "broken": _run(folder, "broken", [[3, 1], [0, 2]]),
    }


def _by_node(nodes: dict) -> dict[str, dict]:
    return {entry["node"]: entry for entry in nodes["nodes"]}


def test_gather_nd_nodes_are_judged_as_built_in_the_verdict_nodes_json_and_page(runs):
    code, said, nodes, page = runs["drawn"]
    by_node = _by_node(nodes)
    assert set(by_node) == NODES
    for entry in by_node.values():
        assert entry["not_judged"] is None and entry["as_built"]["cases"]
        assert entry["op"] == "GatherND"
    assert by_node["pick"]["axis"] == 1  # nodes.json's axis holds the batch_dims
    assert "3 Gather/GatherElements/GatherND/ScatterElements/ScatterND node(s)" in said
    assert "3 node(s) found, 3 judged as 3 unique node case group(s)" in said
    # openvino too: the dynamic variant keeps indices' last dim fixed, as the model
    # does (decision dynamic-variant-fixed-dims); with it symbolic OpenVINO refused
    for target in ("reference", "onnxruntime", "openvino"):
        assert f"  {target}: safe: every one of 3 node(s) exact as built" in said
    assert "batch_dims 1" in said or "batch_dims 0" in said  # a smallest input's attribute
    assert "3 node(s) found, 3 judged, 0 not judged" in page  # the page's verdict table
    assert code == 0


def test_a_tuple_component_is_bounded_by_the_dim_it_indexes_in_every_valid_run(runs):
    _, _, nodes, _ = runs["drawn"]
    by_node = _by_node(nodes)
    # ij reaches lookup_small's indices too: component 0 within its dim of 5, 1 of 2
    source = by_node["lookup"]["sources"]["indices"]
    assert source["from"] == "input" and source["bounds"] == [-5, 4]
    assert source["component_bounds"] == [[-5, 4], [-2, 1]]
    assert source["bounded_by"] == {
        "node": "lookup_small", "op": "GatherND", "input": "indices", "size": 5, "sizes": [5, 2]
    }  # fmt: skip
    assert "its k-th component along the last dim" in source["bounds_why"]
    other = by_node["lookup_small"]["sources"]["indices"]
    assert other["component_bounds"] == [[-4, 3], [-6, 5]]  # lookup's table: [4, 6]
    # the BERT-style pick: indices computed (Unsqueeze of an input), drawn over dim 1 (5)
    assert by_node["pick"]["sources"]["indices"]["bounds"] is None


def test_as_built_draws_keep_each_component_within_its_own_bound(tmp_path):
    found = reading.load(_model(tmp_path))
    groups = drawing.group_nodes([found], {}, 1 << 30)
    drawing.make_cases(groups, 2)
    lookup = next(g for g in groups if g.sites[0].node == "lookup")
    built = [c for c in lookup.cases if c.id in lookup.as_built]
    assert {c.base_id.split("-", 2)[-1] for c in built} >= {"built", "built-draw1"}
    for case in built:  # component 0 within [-4, 3] (its own dim), 1 within [-2, 1]
        assert case.indices[:, 0].min() >= -4 and case.indices[:, 0].max() <= 3
        assert case.indices[:, 1].min() >= -2 and case.indices[:, 1].max() <= 1
    beyond = [c for c in lookup.cases if c.id not in lookup.as_built and "oob" not in c.id]
    assert beyond and all(np.abs(c.indices[:, 1]).max() > 1 for c in beyond)  # what if
    built_ends = next(c for c in built if c.base_id.endswith("-built"))
    assert set(built_ends.indices[:, 0].tolist()) == {-4, 3}
    assert set(built_ends.indices[:, 1].tolist()) == {-2, 1}


def test_in_situ_every_gather_nd_node_is_judged_on_each_target(runs):
    _, said, nodes, _ = runs["fed"]
    for name, entry in _by_node(nodes).items():
        for target in TARGETS:
            assert entry["in_situ"][target]["verdict"] == "exact", (name, target)
        assert any("-captured" in case for case in entry["as_built"]["cases"])
    for target in ("reference", "onnxruntime"):
        assert f"{target}: safe as built and in situ: every one of 3 node(s) exact as built; " \
            "in situ 3 exact" in said  # fmt: skip


def test_an_out_of_range_tuple_component_is_said_as_the_inputs_property(runs):
    code, said, nodes, page = runs["broken"]
    (whole,) = nodes["whole_model"].values()
    (broken,) = whole["inputs_break_spec"]
    assert broken["node"] == "lookup_small" and broken["input"] == "ij"
    assert broken["clause"] == "index-out-of-range"
    assert (broken["element"], broken["value"], broken["size"]) == ([1, 1], 2, 2)
    assert broken["component"] == 1
    assert broken["targets"]["reference"] == "refused them, as the spec requires (conforming)"
    assert broken["targets"]["onnxruntime"] == "refused them, as the spec requires (conforming)"
    assert (
        "inputs break the spec: input ij, as node lookup_small's indices, element [1, 1] = 2: "
        "GatherND index-out-of-range" in said
    )
    assert "to do: validate component 1 of ij's index tuples" in said
    assert "indices tuple 1, component 1 = 2" in page
    assert "within [-5, 4], [-2, 1], component by component" in page
    assert code == 1


def test_index_sizes_and_the_index_plan_go_component_by_component():
    nd = OPERATORS["GatherND"]
    assert nd.index_sizes((2, 3, 4), (2, 1, 1), 1) == (3,)
    assert nd.index_sizes((4, 6, 3), (7, 2), None) == (4, 6)
    assert nd.index_sizes((4, 6, 3), (7, 4), None) is None  # m beyond r - b
    assert OPERATORS["Gather"].index_sizes((2, 3), (4,), -1) == (3,)
    plan = dict(drawing.index_plan((4, 6), 8, 1))
    bounds = drawing.run_time_indices(plan["bounds"], (4, 2), (4, 6), "int64", 0)
    assert set(bounds[:, 0].tolist()) == {-4, 3, -1, 0}
    assert set(bounds[:, 1].tolist()) == {-6, 5, -1, 0}
    drawn = drawing.run_time_indices(plan["draw1"], (50, 2), (4, 6), "int64", 0)
    assert drawn[:, 0].min() >= -4 and drawn[:, 0].max() <= 3
    assert drawn[:, 1].max() > 3  # component 1 over its own dim of 6
    high = drawing.run_time_indices(plan["oob-high"], (4, 2), (4, 6), "int64", 0)
    assert high[0, 0] == 4 and set(high[1:, 0].tolist()) <= {-4, 3, -1, 0}
