"""`conformance model` on large models: what makes it slow is not done where
it says nothing (issue 44 item 16, issue 49 item 7). The figures are
benchmarks/model_scale.py's (docs/development.md, Benchmarks); these tests
hold the behaviour that gives them, not a time."""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance.cli import main
from conformance.engine import capturing, models, targets, whole_model
from conformance.engine.pool import Raw, WorkerPool
from conformance.engine.run import _Models
from conformance.graphs import exposing, reading

REFUSES_EXPOSED = "tests.exposure_refusing_adapter:ExposureRefusingAdapter"


def rows_model(path):
    graph = h.make_graph(
        [h.make_node("Gather", ["table", "ids"], ["y"], name="rows")],
        "g",
        [h.make_tensor_value_info("ids", T.INT64, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 4])],
        initializer=[nh.from_array(np.arange(40, dtype=np.float32).reshape(10, 4), "table")],
    )
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8), path)
    return path


def test_without_inputs_the_whole_model_loads_as_it_is(tmp_path, capsys):
    """Fed zeros only to see it load, the model is not exposed: exposing three
    values a node made thousands of Gathers load minutes where the model
    loads in seconds, for values nothing reads."""
    model = rows_model(tmp_path / "rows.onnx")
    out = tmp_path / "run"
    code = main(
        ["model", str(model), "--runtime", REFUSES_EXPOSED, "--variants", "static",
         "--draws", "0", "--no-progress", "--out", str(out)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr()
    record = json.loads((out / "nodes.json").read_text())["whole_model"][str(model)]
    # loaded as it is at once, not refused exposed and then run again plain
    assert record["targets"]["refuses-exposed"] == {"status": "loads", "message": ""}


def test_with_inputs_the_nodes_are_exposed_all_the_same(tmp_path, capsys):
    model = rows_model(tmp_path / "rows.onnx")
    np.savez(tmp_path / "in.npz", ids=np.array([3, -1]))
    out = tmp_path / "run"
    main(
        ["model", str(model), "--inputs", str(tmp_path / "in.npz"), "--runtime",
         REFUSES_EXPOSED, "--variants", "static", "--draws", "0", "--no-progress",
         "--out", str(out)]
    )  # fmt: skip
    capsys.readouterr()
    document = json.loads((out / "nodes.json").read_text())
    target = document["whole_model"][str(model)]["targets"]["refuses-exposed"]
    assert target["status"] == "ran"
    assert "not with its Gather values exposed" in target["message"]
    assert exposing.PREFIX == "__conformance_exposed_"  # as the test adapter spells it


def test_with_inputs_the_capture_and_the_reruns_share_the_whole_model_s_pool(
    tmp_path, capsys, monkeypatch
):
    """With --inputs the capture (onnx.reference) and the targets' precise
    profiles start with the whole model's targets, in one pool: two pool
    starts in all, that one and the case runs' (issue 49 item 7)."""
    started = []
    real = WorkerPool.start

    def start(self):
        started.append([t.name or t.adapter for t in self.targets])
        real(self)

    monkeypatch.setattr(WorkerPool, "start", start)
    model = rows_model(tmp_path / "rows.onnx")
    np.savez(tmp_path / "in.npz", ids=np.array([3, -1]))
    out = tmp_path / "run"
    code = main(
        ["model", str(model), "--inputs", str(tmp_path / "in.npz"), "--runtime",
         "onnxruntime", "reference", "--variants", "static", "--draws", "0",
         "--no-progress", "--out", str(out)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr()
    assert started == [
        ["onnxruntime", "reference", "onnxruntime:no-opt", capturing.TARGET.adapter],
        ["onnxruntime", "reference"],
    ]
    assert json.loads((out / "nodes.json").read_text())["captured"]["failed"] == []
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert any("-captured" in record["case_id"] for record in records)  # what it captured


def test_the_first_pool_reruns_the_targets_that_differ_as_the_verdict_will(tmp_path):
    """The precision reruns queued in the first pool are those _judge_model and
    _precision_reruns decide after: a target whose outputs differ from the
    one compared with; none where a target refused the exposed model (its
    model as it is runs next) or a precise profile's worker did not start."""
    path = rows_model(tmp_path / "rows.onnx")
    found = reading.load(path)
    made = whole_model._prepare(found, {"ids": np.array([3, -1])}, {}, 1, {})
    assert made is not None
    ort, ref = targets.parse("onnxruntime"), targets.parse("reference")
    y = np.arange(8, dtype=np.float32).reshape(2, 4)
    same, off = Raw("ok", outputs=[y]), Raw("ok", outputs=[np.nextafter(y, np.float32(99))])
    started = set(whole_model._precise_targets(ort))  # onnxruntime:no-opt
    early = whole_model._early_reruns
    assert early(made, {"onnxruntime": off, "reference": same}, [ort, ref], started) == [
        ((str(path), "onnxruntime"), ["onnxruntime:no-opt"])
    ]
    assert early(made, {"onnxruntime": same, "reference": same}, [ort, ref], started) == []
    assert early(made, {"onnxruntime": off, "reference": same}, [ort, ref], set()) == []
    refused = Raw("load_error", message="an output too many")
    assert early(made, {"onnxruntime": off, "reference": refused}, [ort, ref], started) == []


def test_cases_sharing_a_large_constant_share_its_one_node_model():
    """A model node's cases share its constant data: in an initializer
    variant their one-node model is the same, so it is built once (and a
    worker loads it once: its session key); small constants are not worth
    the digest, and other values give another model."""
    table = np.random.default_rng(0).standard_normal((1024, 256)).astype(np.float32)  # 1 MiB
    first, second = np.array([0, 5]), np.array([-1, 7])
    key = models.model_key("Gather", 13, table, first, 0, "data_initializer")
    assert key is not None
    assert models.model_key("Gather", 13, table, second, 0, "data_initializer") == key
    other = table.copy()
    other[3, 3] += 1
    assert models.model_key("Gather", 13, other, first, 0, "data_initializer") != key
    assert models.model_key("Gather", 13, table, first, 1, "data_initializer") != key
    assert models.model_key("Gather", 13, table[:8], first, 0, "data_initializer") is None
    # both baked: the indices are in the key too
    both = models.model_key("Gather", 13, table, first, 0, "both_initializers")
    assert both != models.model_key("Gather", 13, table, second, 0, "both_initializers")

    class Case:
        op, opset, axis, data = "Gather", 13, 0, table
        updates, reduction = None, None  # a Scatter's: none for Gather

        def __init__(self, indices):
            self.indices = indices

    built = _Models()
    one, two = (
        built.get(Case(first), "data_initializer"),
        built.get(Case(second), "data_initializer"),
    )
    assert one is two  # built and serialized once
    # the same model, its table appended (models.serialized)
    built_alone = models.build_for_case(Case(second), "data_initializer")
    assert one[2] is not None and onnx.load_from_string(one[1] + one[2][1]) == built_alone
