"""`conformance model` judges a model as built (docs/models.md): each node in
the storage the model gives it, on the values it can receive; the rest is the
what-if part, which never sets the exit code. With --inputs the whole model
runs on every target and each node is judged in situ."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance.cli import main
from conformance.engine import whole_model
from conformance.graphs import drawing, reading, sources
from conformance.report import node_verdicts

LOW32 = "tests.low32_adapter:Low32Adapter"


def _save(tmp_path: Path, nodes, inputs, outputs, initializers=(), name="m.onnx") -> Path:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 15)], ir_version=8)
    path = tmp_path / name
    onnx.save(proto, path)
    return path


def shape_gather(tmp_path: Path) -> Path:
    """Shape -> Gather: the data is a tensor's shape, never beyond int32."""
    return _save(
        tmp_path,
        [
            h.make_node("Shape", ["x"], ["s"]),
            h.make_node("Gather", ["s", "i"], ["y"], name="dim0", axis=0),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
        [h.make_tensor_value_info("y", T.INT64, [])],
        [nh.from_array(np.array(0, np.int64), "i")],
    )


def fed_indices(tmp_path: Path) -> Path:
    """An embedding table indexed by a graph input."""
    table = nh.from_array(np.arange(12, dtype=np.int64).reshape(4, 3) << 33, "table")
    return _save(
        tmp_path,
        [h.make_node("Gather", ["table", "ids"], ["y"], name="embed", axis=0)],
        [h.make_tensor_value_info("ids", T.INT64, [2])],
        [h.make_tensor_value_info("y", T.INT64, [2, 3])],
        [table],
    )


def _nodes(out: Path) -> dict:
    return json.loads((out / "nodes.json").read_text())


def test_sources_bound_a_shape_and_an_argmax(tmp_path):
    path = _save(
        tmp_path,
        [
            h.make_node("Shape", ["x"], ["s"]),
            h.make_node("Gather", ["s", "k"], ["y"], name="dim"),
            h.make_node("ArgMax", ["x"], ["a"], axis=1, keepdims=0),
            h.make_node("Add", ["a", "one"], ["a1"]),
            h.make_node("Gather", ["x", "a1"], ["z"], name="pick", axis=1),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, [2, 5])],
        [h.make_tensor_value_info("y", T.INT64, []), h.make_tensor_value_info("z", T.FLOAT, None)],
        [nh.from_array(np.array(1, np.int64), "k"), nh.from_array(np.array(-1, np.int64), "one")],
    )
    found = reading.load(path)
    drawing.group_nodes([found], {}, 1 << 30)
    dim, pick = found.sites
    assert dim.sources["data"] == sources.Source(
        "producer", "s", "Shape", 0, (0, 5), "Shape output: values in [0, 5]"
    )
    assert dim.variant == "indices_initializer"
    # ArgMax over an axis of 5 gives [0, 4]; minus one: [-1, 3]
    assert pick.sources["indices"].bounds == (-1, 3)
    assert pick.sources["data"].kind == "input" and pick.variant == "static"


def test_a_shape_gather_is_exact_as_built_on_openvino_while_its_what_if_differs(tmp_path):
    out = tmp_path / "run"
    code = main(["model", str(shape_gather(tmp_path)), "--runtime", "openvino", "--out", str(out),
                 "--no-progress"])  # fmt: skip
    document = _nodes(out)
    (entry,) = document["nodes"]
    assert entry["sources"]["data"]["from"] == "producer"
    assert entry["sources"]["data"]["op"] == "Shape"
    assert entry["sources"]["data"]["bounds"] == [0, 2**31 - 1]  # a symbolic dim
    assert entry["as_built"]["variant"] == "indices_initializer"
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    built = [r for r in records if node_verdicts.as_built_record(entry, r)]
    what_if = [r for r in records if not node_verdicts.as_built_record(entry, r)]
    assert built and all(r["kind"] == "pass" for r in built)
    # beyond int32 (values no Shape yields), OpenVINO keeps the low 32 bits
    assert any(r["kind"] == "value_mismatch" and r["case_id"].count("-wide") for r in what_if)
    assert code == 0  # what-if results never set the exit code
    assert document["whole_model"][entry["model"]]["targets"]["openvino"]["status"] == "loads"


def test_indices_fed_as_an_input_are_not_judged_as_an_initializer(tmp_path):
    out = tmp_path / "run"
    main(["model", str(fed_indices(tmp_path)), "--runtime", "reference", "--out", str(out),
          "--no-progress"])  # fmt: skip
    (entry,) = _nodes(out)["nodes"]
    assert entry["sources"]["indices"] == {
        "from": "input",
        "name": "ids",
        "bounds": None,
        "bounds_why": "a graph input: any value of its dtype",
    }
    assert entry["as_built"]["variant"] == "data_initializer"
    record = {"case_id": entry["as_built"]["cases"][0], "variant": "indices_initializer"}
    assert not node_verdicts.as_built_record(entry, record)
    # out-of-range indices are what-if: the spec forbids them
    assert not [i for i in entry["as_built"]["cases"] if "-oob-" in i]
    assert [i for i in entry["cases"] if "-oob-" in i]


def test_in_situ_judges_each_target_on_its_own_node_inputs_and_can_fail(tmp_path, capsys):
    model = fed_indices(tmp_path)
    np.savez(tmp_path / "x.npz", ids=np.array([3, 1], np.int64))
    out = tmp_path / "run"
    code = main(["model", str(model), "--inputs", str(tmp_path / "x.npz"), "--runtime",
                 "reference", LOW32, "--variants", "static", "--out", str(out),
                 "--no-progress"])  # fmt: skip
    said = capsys.readouterr().out
    (entry,) = _nodes(out)["nodes"]
    assert entry["in_situ"]["reference"] == {
        "verdict": "exact",
        "data": {"dtype": "int64", "shape": [4, 3]},
        "indices": {"dtype": "int64", "shape": [2]},
        "as_fed": {"indices": {"input": "ids", "through": [], "verdict": "as fed"}},
    }
    assert entry["in_situ"]["low32"]["verdict"] == "differs"
    assert entry["in_situ"]["low32"]["mechanism"] == "int64-low32"
    assert "low32: differs" in said and "reference: safe" in said
    assert said.index("reference: safe") < said.index("not gated")  # the verdict first
    whole = _nodes(out)["whole_model"][str(model)]
    (difference,) = whole["differences"]
    assert difference["target"] == "low32" and difference["outputs"][0]["differs"]
    assert code == 1


def test_a_target_that_cannot_load_the_model_says_so_first(tmp_path, capsys):
    model = _save(
        tmp_path,
        [
            h.make_node("Identity", ["x"], ["x2"], name="refuse-me"),
            h.make_node("Gather", ["x2", "i"], ["y"], name="g"),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, [3])],
        [h.make_tensor_value_info("y", T.FLOAT, [])],
        [nh.from_array(np.array(1, np.int64), "i")],
    )
    code = main(["model", str(model), "--runtime", "reference", LOW32, "--variants", "static",
                 "--out", str(tmp_path / "run"), "--no-progress"])  # fmt: skip
    said = capsys.readouterr().out
    assert "low32: cannot load this model: this runtime refuses node refuse-me" in said
    assert said.index("cannot load") < said.index("not gated")
    assert code == 1


def test_ulp_distance_and_largest_gap():
    a = np.array([1.0, 0.0, np.nan], np.float32)
    b = np.nextafter(a, np.float32(2))
    found = whole_model.difference(a, b)
    assert found["differs"] and found["max_ulp"] == 1
    assert found["max_abs"] == pytest.approx(float(b[0]) - 1.0)  # the largest of the gaps
    assert whole_model.difference(a, a.copy())["differs"] is False


def test_the_gist_of_an_error_leaves_out_where_it_was_raised():
    """OpenVINO's refusal of silero_vad, as its frontend words it: the
    boilerplate lines go, a line ending in a colon introduces the next."""
    message = (
        "Exception from src/inference/src/cpp/core.cpp:97:\n"
        "Check 'false' failed at src/frontends/common/src/frontend.cpp:54:\n"
        "FrontEnd API failed with GeneralFailure:\n"
        "Conv-16 with a message:\n"
        "While validating ONNX node '<Node(Conv): /Conv_5>':\n"
        "The input data tensor's rank has to be known (static)\n"
    )
    assert whole_model.gist(message) == (
        "Conv-16 with a message: While validating ONNX node '<Node(Conv): /Conv_5>': "
        "The input data tensor's rank has to be known (static)"
    )
    assert whole_model.gist("one\ntwo\nthree\nfour") == "one; two; three; four"


def test_every_explanation_says_what_to_do():
    from conformance.tables import explanations

    assert all(e.workaround for e in explanations.EXPLANATIONS)


def test_a_model_is_judged_on_the_targets_of_a_targets_file(tmp_path):
    """A deployer judges the model on the target they deploy to: a targets file's,
    a profile (--runtime NAME:PROFILE), as `run` takes them."""
    targets = tmp_path / "targets.yaml"
    targets.write_text("targets:\n  edge:\n    adapter: onnxruntime\n    profile: no-opt\n")
    out = tmp_path / "run"
    code = main(["model", str(shape_gather(tmp_path)), "--targets", str(targets), "--runtime",
                 "edge", "onnxruntime:1thread", "--variants", "static", "--out", str(out),
                 "--no-progress"])  # fmt: skip
    assert code == 0
    whole = _nodes(out)["whole_model"]
    (record,) = whole.values()
    assert set(record["targets"]) == {"edge", "onnxruntime:1thread"}
    assert all(t["status"] == "loads" for t in record["targets"].values())


def test_run_of_saved_node_cases_gives_the_per_node_section(tmp_path, capsys):
    saved = tmp_path / "saved" / "nodes.yaml"
    saved.parent.mkdir()
    model = str(shape_gather(tmp_path))
    main(["model", model, "--runtime", "reference", "--variants", "static", "--out",
          str(tmp_path / "model-run"), "--save-cases", str(saved), "--no-progress"])  # fmt: skip
    capsys.readouterr()
    out = tmp_path / "again"
    main(["run", "--cases", str(saved), "--runtime", "reference", "--out", str(out),
          "--no-progress"])  # fmt: skip
    said = capsys.readouterr().out
    (entry,) = _nodes(out)["nodes"]
    assert entry["node"] == "dim0" and entry["as_built"]["variant"] == "indices_initializer"
    assert set(entry["as_built"]["cases"]) < set(entry["cases"])  # the -wide case is what if
    assert "reference: safe: every one of 1 node(s) exact as built" in said
    assert "node(s) found, 1 judged" in said


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here "
                    "(.ci/run installs it: apt-get install chromium)")  # fmt: skip
def test_in_a_browser_the_model_verdict_comes_before_the_bookkeeping(tmp_path):
    model = fed_indices(tmp_path)
    np.savez(tmp_path / "x.npz", ids=np.array([3, 1], np.int64))
    out = tmp_path / "run"
    main(["model", str(model), "--inputs", str(tmp_path / "x.npz"), "--runtime", "reference",
          LOW32, "--variants", "static", "--out", str(out), "--no-progress"])  # fmt: skip
    assert CHROMIUM is not None
    shown = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
         (out / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr[-2000:]
    dom = shown.stdout
    first = dom.index("Your model, as built and as run")
    assert first < dom.index('id="verdict"') < dom.index("Model nodes")
    # the verdict as a table: the target's row, its word a badge (tests/test_model_page.py)
    assert re.search(r'<tr class="target" data-runtime="low32">\s*<td>low32</td>\s*'
                     r'<td><span class="badge badge-bad">differs</span></td>\s*'
                     r'<td>0 of 1 exact</td>', dom)  # fmt: skip
    # beside the node's mechanism: what to do, and the explanation in plain words
    assert "keep int64 data within int32" in dom
    assert "int64-low32: 64-bit integers keep their low 32 bits" in dom
