"""`conformance model` on a model with a GatherND node (issue 46): the node is
found and listed as not judged, with the reason, in nodes.json and in the
verdict's found lines; the model's other nodes are judged as before, and the
whole model still loads and runs in situ (nothing crashes on the node)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance.cli import main
from conformance.graphs import reading

REASON = "GatherND nodes are not judged as built or in situ by this version"


def _gather_nd_model(tmp_path: Path) -> Path:
    """x [2, 3, 4] -> GatherND (batch_dims 1, constant indices) -> y [2, 1, 4],
    and x -> Gather (axis 0) -> g [1, 3, 4]: one node of each operator."""
    graph = h.make_graph(
        [
            h.make_node("GatherND", ["x", "nd_idx"], ["y"], batch_dims=1, name="nd"),
            h.make_node("Gather", ["x", "g_idx"], ["g"], axis=0, name="g"),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])],
        [
            h.make_tensor_value_info("y", T.FLOAT, [2, 1, 4]),
            h.make_tensor_value_info("g", T.FLOAT, [1, 3, 4]),
        ],
        initializer=[
            nh.from_array(np.array([[[1]], [[2]]], np.int64), "nd_idx"),
            nh.from_array(np.array([1], np.int64), "g_idx"),
        ],
    )
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(proto, full_check=True)
    path = tmp_path / "nd.onnx"
    onnx.save(proto, path)
    return path


def _run(tmp_path: Path, capsys, *more: str) -> tuple[int, str, dict]:
    model = _gather_nd_model(tmp_path)
    out = tmp_path / "run"
    targets = ["reference", "onnxruntime", "openvino"]
    code = main(["model", str(model), "--runtime", *targets, "--variants", "static",
                 "--out", str(out), "--no-progress", *more])  # fmt: skip
    nodes = json.loads((out / "nodes.json").read_text(encoding="utf-8"))
    return code, capsys.readouterr().out, nodes


def test_a_gather_nd_node_is_found_and_listed_not_judged_with_the_reason(tmp_path, capsys):
    code, said, nodes = _run(tmp_path, capsys)
    by_name = {entry["node"]: entry for entry in nodes["nodes"]}
    assert set(by_name) == {"nd", "g"}
    assert by_name["nd"]["op"] == "GatherND"
    assert by_name["nd"]["axis"] == 1  # nodes.json's axis holds the batch_dims
    assert by_name["nd"]["not_judged"] == REASON
    assert by_name["nd"]["cases"] == [] and by_name["nd"]["as_built"] is None
    assert by_name["g"]["not_judged"] is None and by_name["g"]["as_built"]
    assert "2 node(s) found, 1 judged" in said and "1 not judged" in said
    assert f"not judged: nd: {REASON}" in said
    assert "whole model: loaded on each target" in said
    assert code == 0


def test_a_gather_nd_node_does_not_stop_the_in_situ_run(tmp_path, capsys):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.savez(tmp_path / "x.npz", x=x)
    code, said, nodes = _run(tmp_path, capsys, "--inputs", str(tmp_path / "x.npz"))
    by_name = {entry["node"]: entry for entry in nodes["nodes"]}
    assert by_name["nd"]["not_judged"] == REASON and by_name["nd"]["in_situ"] == {}
    for target in ("reference", "onnxruntime", "openvino"):  # the model loads and runs on each
        assert by_name["g"]["in_situ"][target]["verdict"] == "exact"
    assert f"not judged: nd: {REASON}" in said
    assert code == 0


def test_the_reason_names_the_operator_from_its_row():
    assert reading.NOT_JUDGED_TUPLES.format(op="GatherND") == REASON
