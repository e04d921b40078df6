"""The bounds `conformance model` proves for a node's inputs (graphs/sources.py,
docs/models.md): forward, from the producer, each rule held to the values
onnx.reference computes, wraps and overflow included (issue 44, 1); backward,
from the consumers: a tensor that reaches a Gather's indices is within that
axis in every valid run (issue 49, 2)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import jsonschema
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

from conformance import shipped
from conformance.graphs import drawing, reading
from conformance.report import node_verdicts
from tests.conftest import conformance_here

I64 = np.iinfo(np.int64)
SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "schemas" / "nodes.schema.json"


def _save(path: Path, nodes, inputs, outputs, initializers=(), opset: int = 15) -> Path:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=8), path)
    return path


def c(name: str, value, dtype=np.int64):
    return nh.from_array(np.array(value, dtype), name)


def shape_of(x: str = "x", out: str = "s") -> onnx.NodeProto:
    return h.make_node("Shape", [x], [out])


# Per producer rule: the nodes that compute ``t`` (int64, 1-D) from ``x``
# (float [2, 3]), their constants, and the bound now proven for ``t`` (None:
# none, the dtype's range). The first ones broke before: their old proof left
# out a value onnx.reference computes.
RULES = {
    # Pad ignored its constant value: [0, 3] was "proven"
    "pad-value": ([shape_of(), h.make_node("Pad", ["s", "pads", "v"], ["t"])],
                  [c("pads", [0, 1]), c("v", 1 << 40)], (0, 1 << 40)),
    "pad-value-opset2": ([shape_of(), h.make_node("Pad", ["s"], ["t"], pads=[0, 1],
                                                  value=float(1 << 40))], [], (0, 1 << 40)),
    # Sum was taken as Min/Max: it adds
    "sum-adds": ([shape_of(), h.make_node("Sum", ["s", "s", "s"], ["t"])], [], (0, 9)),
    # a ConstantOfShape of a float value was "proven" [0, 0]
    "float-value-1e10": ([h.make_node("ConstantOfShape", ["s"], ["f"],
                                      value=nh.from_array(np.array([1e10], np.float32))),
                          shape_of(),
                          h.make_node("Cast", ["f"], ["t"], to=T.INT64)],
                         [], (10**10, 10**10)),
    "float-value-nan": ([h.make_node("ConstantOfShape", ["s"], ["f"],
                                     value=nh.from_array(np.array([np.nan], np.float32))),
                         shape_of(),
                         h.make_node("Cast", ["f"], ["t"], to=T.INT64)],
                        [], None),  # undefined by the spec: any int64
    "float-value-minus-3e12": ([h.make_node("ConstantOfShape", ["s"], ["f"],
                                            value=nh.from_array(np.array([-3e12], np.float64))),
                                shape_of(),
                                h.make_node("Cast", ["f"], ["t"], to=T.INT64)],
                               [], (-3 * 10**12, -3 * 10**12)),
    # narrowing casts wrap: int64 3 * 2^30 is int32 -2^30
    "cast-int32-wraps": ([shape_of(), h.make_node("Mul", ["s", "k"], ["m"]),
                          h.make_node("Cast", ["m"], ["n32"], to=T.INT32),
                          h.make_node("Cast", ["n32"], ["t"], to=T.INT64)],
                         [c("k", 1 << 30)], (-(1 << 31), (1 << 31) - 1)),
    "cast-uint8-wraps": ([shape_of(), h.make_node("Neg", ["s"], ["m"]),
                          h.make_node("Cast", ["m"], ["n8"], to=T.UINT8),
                          h.make_node("Cast", ["n8"], ["t"], to=T.INT64)], [], (0, 255)),
    # int64 Add and Mul overflow, and wrap
    "add-overflows": ([shape_of(), h.make_node("Add", ["s", "k"], ["t"])],
                      [c("k", I64.max)], None),
    "mul-overflows": ([shape_of(), h.make_node("Mul", ["s", "k"], ["t"])],
                      [c("k", 1 << 62)], None),
    # Clip above its input's values: max(x, 5) is 5, beyond x's [0, 3] (the old
    # ends crossed, so nothing was proven)
    "clip-raises": ([shape_of(), h.make_node("Clip", ["s", "lo", "hi"], ["t"])],
                    [c("lo", 5), c("hi", 10)], (5, 5)),
    # an empty ReduceMax is the lowest int64
    "reduce-max-empty": ([shape_of(), h.make_node("Slice", ["s", "zero", "zero"], ["e"]),
                          h.make_node("ReduceMax", ["e"], ["t"], keepdims=1)],
                         [c("zero", [0])], (I64.min, 3)),
    # Abs of int64's lowest value is itself
    "abs-wraps": ([shape_of(), h.make_node("Mul", ["s", "zero"], ["z"]),
                   h.make_node("Add", ["z", "low"], ["m"]), h.make_node("Abs", ["m"], ["t"])],
                  [c("zero", 0), c("low", I64.min)], None),
    # a float16 beyond its range is infinite, and its cast to int64 undefined
    "cast-through-float16-overflows": ([shape_of(), h.make_node("Mul", ["s", "k"], ["m"]),
                                        h.make_node("Cast", ["m"], ["f"], to=T.FLOAT16),
                                        h.make_node("Cast", ["f"], ["t"], to=T.INT64)],
                                       [c("k", 100_000)], None),
    # rules that held, and still prove
    "cast-through-float16": ([shape_of(), h.make_node("Cast", ["s"], ["f"], to=T.FLOAT16),
                              h.make_node("Cast", ["f"], ["t"], to=T.INT64)], [], (0, 3)),
    "min-max": ([shape_of(), h.make_node("Min", ["s", "two"], ["m"]),
                 h.make_node("Max", ["m", "one"], ["t"])], [c("two", 2), c("one", 1)], (0, 3)),
    "ceil": ([shape_of(), h.make_node("ConstantOfShape", ["s"], ["f"],
                                      value=nh.from_array(np.array([2.5], np.float32))),
              h.make_node("Ceil", ["f"], ["r"]),
              h.make_node("Cast", ["r"], ["t"], to=T.INT64)], [], (3, 3)),
    "round-half-even": ([shape_of(), h.make_node("ConstantOfShape", ["s"], ["f"],
                                                 value=nh.from_array(np.array([2.5], np.float32))),
                         h.make_node("Round", ["f"], ["r"]),
                         h.make_node("Cast", ["r"], ["t"], to=T.INT64)], [], (2, 2)),
    "nonzero": ([h.make_node("NonZero", ["x"], ["t"])], [], (0, 2)),
    "topk-indices": ([h.make_node("TopK", ["x", "two"], ["v", "t"], axis=1)],
                     [c("two", [2])], (0, 2)),
    "size": ([h.make_node("Size", ["x"], ["n"]), h.make_node("Unsqueeze", ["n", "zero"], ["t"])],
             [c("zero", [0])], (0, 6)),
    "where": ([shape_of(), h.make_node("Cast", ["s"], ["b"], to=T.BOOL),
               h.make_node("Where", ["b", "s", "low"], ["t"])], [c("low", -7)], (-7, 3)),
    "shape": ([shape_of(), h.make_node("Identity", ["s"], ["t"])], [], (0, 3)),
    "argmax-minus-one": ([h.make_node("ArgMax", ["x"], ["a"], axis=1, keepdims=0),
                          h.make_node("Sub", ["a", "one"], ["t"])], [c("one", 1)], (-1, 1)),
    "concat-range": ([shape_of(), h.make_node("Range", ["lo", "hi", "one"], ["r"]),
                      h.make_node("Concat", ["s", "r"], ["t"], axis=0)],
                     [c("lo", -4), c("hi", 2), c("one", 1)], (-4, 3)),
    "cast-float-in-range": ([h.make_node("ConstantOfShape", ["s"], ["f"],
                                         value=nh.from_array(np.array([-2.75], np.float32))),
                             shape_of(),
                             h.make_node("Cast", ["f"], ["t"], to=T.INT64)],
                            [], (-2, -2)),
    "widening-cast": ([shape_of(), h.make_node("Cast", ["s"], ["n32"], to=T.INT32),
                       h.make_node("Cast", ["n32"], ["t"], to=T.INT64)], [], (0, 3)),
}  # fmt: skip


OPSETS = {"pad-value-opset2": 10}  # Pad's value an attribute; the others at 15


def _rule_model(tmp_path: Path, name: str) -> Path:
    """``t`` from the rule's nodes, and a Gather whose data it is."""
    nodes, constants, _ = RULES[name]
    return _save(
        tmp_path / f"{name}.onnx",
        [  # Shape of x first: it needs nothing else
            *sorted(nodes, key=lambda n: n.op_type != "Shape"),
            h.make_node("Gather", ["t", "first"], ["y"], name="g", axis=0),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
        # t's type declared: Sum of int64 is beyond Sum's type constraint, which
        # leaves shape inference without it (onnx.reference runs it all the same)
        [h.make_tensor_value_info("t", T.INT64, None),
         h.make_tensor_value_info("y", T.INT64, None)],
        [*constants, c("first", [0])],
        opset=OPSETS.get(name, 15),
    )  # fmt: skip


def _proven(path: Path):
    found = reading.load(path)
    drawing.group_nodes([found], {}, 1 << 30)
    (site,) = found.sites
    return site.sources["data"]


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_producer_rule_holds_every_value_onnx_reference_computes(tmp_path, name):
    path = _rule_model(tmp_path, name)
    feeds = {"x": np.ones((2, 3), np.float32)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NaN cast to int64: numpy warns, as the spec is silent
        values = ReferenceEvaluator(str(path)).run(["t"], feeds)[0]
    source = _proven(path)
    expected = RULES[name][2]
    assert source.bounds == expected, source.why
    if source.bounds is not None:
        lo, hi = source.bounds
        assert lo <= int(values.min()) and int(values.max()) <= hi, (values, source.why)


def tokens(tmp_path: Path, vocabulary: int = 160) -> Path:
    """Token ids (int64, a graph input), the last one taken by a Gather with
    constant index -1, looked up in an embedding of ``vocabulary`` rows."""
    table = np.arange(vocabulary * 4, dtype=np.float32).reshape(vocabulary, 4)
    return _save(
        tmp_path / "tokens.onnx",
        [
            h.make_node("Gather", ["ids", "minus1"], ["last"], name="last", axis=1),
            h.make_node("Gather", ["table", "last"], ["y"], name="embed", axis=0),
        ],
        [h.make_tensor_value_info("ids", T.INT64, [1, "seq"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        [c("minus1", [-1]), nh.from_array(table, "table")],
    )


def test_ids_that_reach_an_embedding_are_within_its_rows_in_every_valid_run(tmp_path):
    found = reading.load(tokens(tmp_path))
    drawing.group_nodes([found], {}, 1 << 30)
    last, embed = found.sites
    data = last.sources["data"]
    assert data.kind == "input" and data.bounds == (-160, 159)
    assert data.bounded_by == {"node": "embed", "op": "Gather", "input": "indices", "size": 160}
    assert "in every valid run within [-160, 159]" in data.why and "embed" in data.why
    assert embed.sources["indices"].bounds is None  # its own axis is the drawing's


def _chain(tmp_path: Path, middle, last_index: str = "mid") -> Path:
    """ids -> ``middle`` nodes -> ``mid`` -> a Gather with constant index (node ``g``),
    and ``mid`` (through ``last_index``) the indices of a table of 10 rows."""
    return _save(
        tmp_path / "chain.onnx",
        [
            *middle,
            h.make_node("Gather", ["ids", "zero"], ["picked"], name="g", axis=0),
            h.make_node("Gather", ["table", last_index], ["y"], name="table10", axis=0),
        ],
        [h.make_tensor_value_info("ids", T.INT64, [4]),
         h.make_tensor_value_info("flag", T.BOOL, [])],
        [h.make_tensor_value_info("y", T.FLOAT, None),
         h.make_tensor_value_info("picked", T.INT64, None)],
        [c("zero", [0]), nh.from_array(np.zeros((10, 2), np.float32), "table"),
         c("shape", [2, 2])],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("middle", "bounded"),
    [
        # every element of ids is moved on: bounded
        ([h.make_node("Reshape", ["ids", "shape"], ["mid"])], True),
        ([h.make_node("Concat", ["ids", "ids"], ["mid"], axis=0)], True),
        (
            [
                h.make_node("Unsqueeze", ["ids", "zero"], ["u"]),
                h.make_node("Squeeze", ["u", "zero"], ["mid"]),
            ],
            True,
        ),
        # only some of them: the others may be anything in a valid run
        ([h.make_node("Slice", ["ids", "zero", "two"], ["mid"])], False),
        # a value computed from them, not moved
        ([h.make_node("Add", ["ids", "zero"], ["mid"])], False),
    ],
    ids=["reshape", "concat", "unsqueeze-squeeze", "slice", "add"],
)
def test_a_bound_flows_back_only_through_ops_that_move_every_element(tmp_path, middle, bounded):
    path = _chain(tmp_path, middle)
    proto = onnx.load(path)
    proto.graph.initializer.append(c("two", [2]))
    onnx.save(proto, path)
    found = reading.load(path)
    drawing.group_nodes([found], {}, 1 << 30)
    g = next(s for s in found.sites if s.node == "g")
    assert g.sources["data"].bounds == ((-10, 9) if bounded else None), g.sources["data"].why


def test_a_consumer_in_a_branch_that_may_not_run_bounds_nothing(tmp_path):
    branch = h.make_graph(
        [h.make_node("Gather", ["table", "ids"], ["b"], name="inner", axis=0)],
        "then",
        [],
        [h.make_tensor_value_info("b", T.FLOAT, None)],
    )
    other = h.make_graph(
        [h.make_node("Identity", ["table"], ["b2"])],
        "else",
        [],
        [h.make_tensor_value_info("b2", T.FLOAT, None)],
    )
    path = _save(
        tmp_path / "branch.onnx",
        [
            h.make_node("Gather", ["ids", "zero"], ["picked"], name="g", axis=0),
            h.make_node("If", ["flag"], ["y"], then_branch=branch, else_branch=other),
        ],
        [h.make_tensor_value_info("ids", T.INT64, [4]),
         h.make_tensor_value_info("flag", T.BOOL, [])],
        [h.make_tensor_value_info("y", T.FLOAT, None),
         h.make_tensor_value_info("picked", T.INT64, None)],
        [c("zero", [0]), nh.from_array(np.zeros((10, 2), np.float32), "table")],
    )  # fmt: skip
    found = reading.load(path)
    drawing.group_nodes([found], {}, 1 << 30)
    g = next(s for s in found.sites if s.node == "g")
    assert g.sources["data"].bounds is None


def test_the_tightest_consumer_bounds_a_tensor_two_gathers_index(tmp_path):
    """ids index a table of 10 rows and one of 1000: the 1000-row lookup's
    as-built indices are within [-10, 9], the rest what-if."""
    path = _save(
        tmp_path / "two.onnx",
        [
            h.make_node("Gather", ["small", "ids"], ["a"], name="small", axis=0),
            h.make_node("Gather", ["large", "ids"], ["b"], name="large", axis=0),
        ],
        [h.make_tensor_value_info("ids", T.INT64, [3])],
        [h.make_tensor_value_info("a", T.FLOAT, None),
         h.make_tensor_value_info("b", T.FLOAT, None)],
        [nh.from_array(np.zeros((10, 2), np.float32), "small"),
         nh.from_array(np.zeros((1000, 2), np.float32), "large")],
    )  # fmt: skip
    found = reading.load(path)
    groups = drawing.group_nodes([found], {}, 1 << 30)
    drawing.make_cases(groups, draws=2)
    large = next(s for s in found.sites if s.node == "large")
    assert large.sources["indices"].bounds == (-10, 9)
    assert large.sources["indices"].bounded_by["node"] == "small"
    group = next(g for g in groups if large in g.sites)
    built = [c for c in group.cases if c.id in group.as_built]
    assert built and all(-10 <= v <= 9 for c in built for v in c.indices.ravel().tolist())
    assert any(c.id not in group.as_built and c.indices.max() > 9 for c in group.cases)


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_openvino_is_not_called_safe_on_a_pad_value_beyond_its_shape(tmp_path):
    """Issue 44's model: Shape -> Pad with value 2^40 -> Gather. The bound is
    [0, 2^40], not [0, 2]: OpenVINO's low 32 bits are as built, exit 1."""
    x = h.make_tensor_value_info("x", T.FLOAT, [2, 2])
    path = _save(
        tmp_path / "pad.onnx",
        [shape_of(), h.make_node("Pad", ["s", "pads", "v"], ["t"]),
         h.make_node("Gather", ["t", "k"], ["y"], name="pick", axis=0)],
        [x],
        [h.make_tensor_value_info("y", T.INT64, None)],
        [c("pads", [0, 1]), c("v", 1 << 40), c("k", [0, 2])],
    )  # fmt: skip
    out = tmp_path / "run"
    result = conformance_here(
        "model", str(path), "--runtime", "openvino", "--out", str(out), "--no-progress"
    )
    assert "openvino: safe" not in result.stdout
    assert result.returncode == 1, result.stdout
    (entry,) = json.loads((out / "nodes.json").read_text())["nodes"]
    assert entry["sources"]["data"]["bounds"] == [0, 1 << 40]
    built = [r for r in _records(out) if node_verdicts.as_built_record(entry, r)]
    assert any(r["kind"] == "value_mismatch" for r in built)


def test_openvino_gets_no_as_built_low32_on_ids_that_feed_an_embedding(tmp_path):
    """Issue 49's model: the last token id (Gather with constant index -1 on
    int64 ids) looked up in 160 rows. Ids of 2^31 and above, whose low 32 bits
    OpenVINO keeps, are out of the embedding's range: what-if, not as built."""
    out = tmp_path / "run"
    result = conformance_here(
        "model", str(tokens(tmp_path)), "--runtime", "openvino", "--out", str(out), "--no-progress"
    )
    assert "as built: openvino value_mismatch: int64-low32" not in result.stdout
    assert result.returncode == 0, result.stdout
    document = json.loads((out / "nodes.json").read_text())
    jsonschema.validate(
        document, json.loads(SCHEMA.read_text()), registry=shipped.schema_registry()
    )
    last = {e["node"]: e for e in document["nodes"]}["last"]
    records = [r for r in _records(out) if r["runtime"] == "openvino"]
    built = [r for r in records if node_verdicts.as_built_record(last, r)]
    what_if = [r for r in records if not node_verdicts.as_built_record(last, r)]
    assert built and all(r["kind"] == "pass" for r in built)
    assert last["sources"]["data"]["bounds"] == [-160, 159]
    assert last["sources"]["data"]["bounded_by"]["node"] == "embed"
    # the ids beyond the embedding are still run, as what-if
    assert any(
        "int64-low32" in (r.get("explained_by") or []) and "-wide" in r["case_id"] for r in what_if
    ), [(r["case_id"], r["kind"], r.get("explained_by")) for r in what_if]
