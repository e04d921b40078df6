"""`conformance model --inputs`: the figures a deployer reads of the model's
outputs (NaN on one side only said where it is, never "differs by 0"; the gap
relative to the output's scale, ULP only where values are not tiny: issue 44
item 13, issue 49 item 6) and the input as the runtime saw it (a node's input
that is a fed graph input, or moved from one, compared with the value fed:
issue 49 item 5), on the real OpenVINO (docs/models.md, "The whole model")."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance import shipped
from conformance.cli import main
from conformance.engine import whole_model
from conformance.graphs import as_fed, reading
from conformance.report import node_verdicts

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "schemas" / "nodes.schema.json"


def _save(tmp_path: Path, nodes, inputs, outputs, initializers=(), name="m.onnx") -> Path:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 15)], ir_version=8)
    path = tmp_path / name
    onnx.save(proto, path)
    return path


def _model(tmp_path: Path, model: Path, inputs: dict, *runtimes: str) -> tuple[int, dict]:
    """``conformance model`` on ``inputs``: its exit code, what it printed, nodes.json
    (held to its schema)."""
    np.savez(tmp_path / "x.npz", **inputs)
    out = tmp_path / "run"
    fed = ["--inputs", str(tmp_path / "x.npz")]
    code = main(["model", str(model), *fed, "--runtime", *runtimes, "--variants", "static",
                 "--out", str(out), "--no-progress"])  # fmt: skip
    document = json.loads((out / "nodes.json").read_text())
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(document, schema, registry=shipped.schema_registry())
    return code, document


def _verdict(differences: list[dict]) -> node_verdicts.ModelVerdict:
    whole = {"fed": True, "targets": {}, "outputs": ["y"], "compared_with": "reference"}
    whole["differences"] = [{"target": "openvino", "outputs": differences}]
    return node_verdicts.ModelVerdict("m.onnx", 1, 1, 1, 1, [], [], [], whole, True)


# -- NaN or an infinity on one side only (issue 44 item 13) ------------------------------------
def test_nan_on_one_side_only_is_counted_and_placed_not_a_difference_of_zero():
    """OpenVINO's [0 nan nan] against the reference's zeros: the finite gaps are
    all 0, so the largest difference alone read "differs by 0"."""
    found = whole_model.difference(np.zeros(3, np.float32), np.array([0, np.nan, np.nan], "f4"))
    (line,) = node_verdicts.output_lines(_verdict([{"output": "y", **found}]))
    assert "by 0" not in line and "ULP" not in line
    assert line.startswith(
        "outputs: openvino differs from reference: NaN on one side only at 2 element(s) of y "
        "(2 from openvino); first y[1]: openvino nan, reference 0.0"
    )
    assert found["differs"] and found["max_abs"] == 0.0
    assert found["nan_one_side"] == {
        "count": 2, "target": 2, "compared": 0, "first": [1],
        "target_value": "nan", "compared_value": "0.0",
    }  # fmt: skip
    assert found["inf_one_side"] is None
    # the same NaN on both sides is no difference; NaN against NaN is not "one side"
    same = whole_model.difference(np.array([np.nan, 1], "f4"), np.array([np.nan, 1], "f4"))
    assert not same["differs"] and same["nan_one_side"] is None


def test_an_infinity_on_one_side_only_is_said_too():
    a = np.array([1.0, np.inf, -np.inf, np.inf])
    b = np.array([1.0, np.inf, np.inf, 3.0])
    found = whole_model.difference(a, b)
    assert found["max_abs"] == 0.0  # no finite gap: only the infinities tell
    assert found["inf_one_side"] == {
        "count": 2, "target": 1, "compared": 2, "first": [2],
        "target_value": "inf", "compared_value": "-inf",
    }  # fmt: skip
    (line,) = node_verdicts.output_lines(_verdict([{"output": "y", **found}]))
    assert ": an infinity on one side only at 2 element(s) of y" in line


def test_openvino_clipping_nan_is_said_as_nan_on_one_side(tmp_path):
    """End to end on the real OpenVINO: a Clip without bounds turns the fed NaNs
    into -FLT_MAX where the reference keeps NaN; the node before it (a Gather)
    is exact in situ on both."""
    model = _save(
        tmp_path,
        [
            h.make_node("Gather", ["x", "i"], ["xg"], name="pick", axis=0),
            h.make_node("Clip", ["xg"], ["y"]),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, [3])],
        [h.make_tensor_value_info("y", T.FLOAT, [3])],
        [nh.from_array(np.arange(3, dtype=np.int64), "i")],
    )
    x = np.array([0, np.nan, np.nan], np.float32)
    _, document = _model(tmp_path, model, {"x": x}, "reference", "openvino")
    lines = node_verdicts.output_lines(node_verdicts.verdicts(document, [])[0])
    assert "by 0" not in lines[0]
    assert lines[0].startswith(
        "outputs: openvino differs from reference: NaN on one side only at 2 element(s) of y "
        "(2 from reference); first y[1]: openvino -3.4028234663852886e+38, reference nan"
    )
    (difference,) = document["whole_model"][str(model)]["differences"]
    (output,) = difference["outputs"]
    assert output["nan_one_side"]["count"] == 2 and output["nan_one_side"]["compared"] == 2


# -- figures near zero (issue 49 item 6) ------------------------------------------------------
def test_near_zero_the_gap_is_said_relative_to_the_output_and_ulp_only_where_not_tiny():
    """A 6e-08 gap at an element the reference computes as 0 is 864 million ULP:
    the line gives the gap as a fraction of the output's scale, and ULP over
    the values that are not tiny (here one ULP of 0.5)."""
    a = np.array([0.5, 1e-8, 0.0, -2e-8], np.float32)
    b = a.copy()
    b[0] = np.nextafter(a[0], np.float32(1))
    b[2] = np.float32(5.96e-8)
    found = whole_model.difference(a, b)
    (line,) = node_verdicts.output_lines(_verdict([{"output": "y", **found}]))
    assert line == (
        "outputs: openvino differs from reference by 5.96e-08 (1.19e-07 of the output's scale; "
        "1 ULP at most where values are not tiny)"
    )
    assert found["max_ulp"] > 800_000_000  # raw, kept in nodes.json
    assert found["scale"] == 0.5
    assert found["max_rel"] == found["max_abs"] / 0.5
    assert found["ulp_not_tiny"] == 1
    # an output whose every value is near 1e-8 is not tiny for itself: ULP count there
    small = np.array([1e-8, 2e-8], np.float32)
    found = whole_model.difference(small, np.nextafter(small, np.float32(1)))
    assert found["ulp_not_tiny"] == 1 and found["max_rel"] < 1e-6


def test_a_difference_in_bits_only_is_said_so():
    found = whole_model.difference(np.array([0.0], "f4"), np.array([-0.0], "f4"))
    assert found["differs"] and found["max_abs"] == 0.0
    (line,) = node_verdicts.output_lines(_verdict([{"output": "y", **found}]))
    assert line.startswith("outputs: openvino differs from reference in bits only")


def test_a_bfloat16_output_gets_its_figures_not_bits_only():
    """NumPy's kind for bfloat16 (ml_dtypes) is 'V', not 'f': an output of it
    had no figures at all, and a real gap (1 against 2, NaN against 0) was
    said to differ "in bits only (every finite value equal)"."""
    bf16 = np.dtype(ml_dtypes.bfloat16)
    found = whole_model.difference(np.array([1, 0, 0], bf16), np.array([2, np.nan, 0], bf16))
    assert found["max_abs"] == 1.0 and found["scale"] == 1.0 and found["max_ulp"] is not None
    assert found["nan_one_side"]["count"] == 1 and found["nan_one_side"]["first"] == [1]
    (line,) = node_verdicts.output_lines(_verdict([{"output": "y", **found}]))
    assert "bits only" not in line
    assert line.startswith("outputs: openvino differs from reference by 1 (1 of the output's scale")
    assert "; NaN on one side only at 1 element(s) of y (1 from openvino)" in line


# -- the input as the runtime saw it (issue 49 item 5) ------------------------------------------
def test_openvino_narrowing_an_int64_input_on_entry_is_a_finding(tmp_path, capsys):
    """Fed 2^32+73 straight into a Gather's indices, OpenVINO gives the node 73:
    compared with its own inputs the node is exact, compared with what was fed
    it is not (int64-low32). The reference and ONNX Runtime refuse the index."""
    model = _save(
        tmp_path,
        [h.make_node("Gather", ["table", "ids"], ["y"], name="embed", axis=0)],
        [h.make_tensor_value_info("ids", T.INT64, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3])],
        [nh.from_array(np.arange(600, dtype=np.float32).reshape(200, 3), "table")],
    )
    ids = np.array([2**32 + 73, 1], np.int64)
    code, document = _model(tmp_path, model, {"ids": ids}, "openvino")
    said = capsys.readouterr().out
    situ = document["nodes"][0]["in_situ"]["openvino"]
    assert situ["verdict"] == "differs"
    assert situ["as_fed"] == {
        "indices": {
            "input": "ids", "through": [], "verdict": "changed", "mechanism": "int64-low32",
            "first": [0], "fed": "4294967369", "seen": "73",
        }
    }  # fmt: skip
    assert (
        "in situ: embed: its indices are not the values fed to input ids: int64-low32 "
        "(fed 4294967369 at [0], it saw 73)"
    ) in said
    assert "in situ 1 exact" not in said and "in situ 0 exact, differs 1" in said
    assert code == 1


def test_an_input_moved_losslessly_is_compared_as_fed(tmp_path, capsys):
    """int64 data fed as a graph input, through a Reshape, into a Gather with
    constant indices (a valid run): the reference gives the node the fed
    values, moved; OpenVINO their low 32 bits."""
    model = _save(
        tmp_path,
        [
            h.make_node("Reshape", ["x", "shape"], ["flat"]),
            h.make_node("Gather", ["flat", "i"], ["y"], name="pick", axis=0),
        ],
        [h.make_tensor_value_info("x", T.INT64, [2, 2])],
        [h.make_tensor_value_info("y", T.INT64, [2])],
        [nh.from_array(np.array([4], np.int64), "shape"), nh.from_array(np.array([0, 3]), "i")],
    )
    x = np.array([[2**32 + 73, 5], [6, 7]], np.int64)
    code, document = _model(tmp_path, model, {"x": x}, "reference", "openvino")
    said = capsys.readouterr().out
    situ = document["nodes"][0]["in_situ"]
    assert situ["reference"]["verdict"] == "exact"
    assert situ["reference"]["as_fed"] == {
        "data": {"input": "x", "through": ["Reshape"], "verdict": "as fed"}
    }
    assert situ["openvino"]["verdict"] == "differs"
    assert situ["openvino"]["as_fed"]["data"]["mechanism"] == "int64-low32"
    assert "its data are not the values fed to input x through Reshape: int64-low32" in said
    assert "reference: safe" in said
    assert code == 1


def test_only_value_keeping_moves_lead_back_to_a_fed_input(tmp_path):
    """A Cast, or a Gather whose indices are computed, is no lossless path: the
    node's input is then not compared with anything fed."""
    model = _save(
        tmp_path,
        [
            h.make_node("Unsqueeze", ["x", "axes"], ["u"]),
            h.make_node("Gather", ["u", "zero"], ["moved"], axis=0),
            h.make_node("Cast", ["x"], ["cast"], to=T.INT32),
            h.make_node("Gather", ["x", "x"], ["computed"], axis=0),
            h.make_node("Gather", ["table", "moved"], ["a"], name="a", axis=0),
            h.make_node("Gather", ["table", "cast"], ["b"], name="b", axis=0),
            h.make_node("Gather", ["table", "computed"], ["c"], name="c", axis=0),
        ],
        [h.make_tensor_value_info("x", T.INT64, [2])],
        [h.make_tensor_value_info(n, T.FLOAT, None) for n in "abc"],
        [
            nh.from_array(np.array([0], np.int64), "axes"),
            nh.from_array(np.array(0, np.int64), "zero"),
            nh.from_array(np.zeros((4, 2), np.float32), "table"),
        ],
    )
    found = reading.load(model)
    sites = {s.node: s for s in found.sites}
    path = as_fed.path_to_input(sites["a"].scope, sites["a"].indices_name, {"x"})
    assert path is not None
    name, nodes = path
    assert name == "x" and [n.op_type for n in nodes] == ["Unsqueeze", "Gather"]
    fed = np.array([3, 1], np.int64)
    moved = as_fed.replay(sites["a"].scope, nodes, name, fed)
    assert moved is not None and moved.tolist() == [3, 1]
    assert as_fed.path_to_input(sites["b"].scope, sites["b"].indices_name, {"x"}) is None
    assert as_fed.path_to_input(sites["c"].scope, sites["c"].indices_name, {"x"}) is None
    assert as_fed.path_to_input(sites["a"].scope, sites["a"].indices_name, {"y"}) is None


def test_a_narrower_dtype_given_to_the_node_is_said_against_the_fed_value():
    """A target that gives the node int32 where int64 was fed: the dtype, and
    which values the narrowing changed; a move the reference refuses is said
    as not compared, never as the same."""
    record = {"input": "ids", "through": ["Reshape"]}
    fed = np.array([2**32 + 73, 1], np.int64)
    said = whole_model._seen_as_fed(record, fed, np.array([73, 1], np.int32))
    assert said["verdict"] == "changed"
    assert said["mechanism"] == "dtype int32, fed int64: int64-low32"
    assert said["first"] == [0] and said["fed"] == "4294967369" and said["seen"] == "73"
    assert said["said"].startswith("are not the values fed to input ids through Reshape: ")
    same = whole_model._seen_as_fed(record, fed, fed.copy())
    assert same == {**record, "verdict": "as fed"}
    refused = whole_model._seen_as_fed(record, None, fed)
    assert refused["verdict"] == "not compared" and refused["why"]
