"""`conformance model`'s verdict words stand on results (issues 44 and 49): a
model no target loads is *cannot load*; a node that cannot be exposed does not
stop the others; every target that ran is compared; no *safe* without an
as-built result, nor *in situ* without a node judged there; inputs that break
the spec are said as the inputs' property, first."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance import shipped
from conformance.cli import main
from conformance.graphs import exposing, reading
from conformance.graphs.capture import with_its_data


def _save(tmp_path: Path, nodes, inputs, outputs, initializers=(), domains=()) -> Path:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    opsets = [h.make_opsetid("", 15), *(h.make_opsetid(d, 1) for d in domains)]
    proto = h.make_model(graph, opset_imports=opsets, ir_version=8)
    path = tmp_path / "m.onnx"
    onnx.save(proto, path)
    return path


SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "schemas" / "nodes.schema.json"


def _nodes(out: Path) -> dict:
    document = json.loads((out / "nodes.json").read_text())
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(document, schema, registry=shipped.schema_registry())
    return document


def _model(tmp_path: Path, args: list[str], capsys) -> tuple[int, str, dict]:
    out = tmp_path / "run"
    code = main(["model", *args, "--variants", "static", "--out", str(out), "--no-progress"])
    return code, capsys.readouterr().out, _nodes(out)


def custom_upstream(tmp_path: Path, plain: bool = True) -> Path:
    """A Gather downstream of a custom-domain op (its data type unknown to shape
    inference), and beside it one whose data is the graph input."""
    nodes = [
        h.make_node("Foo", ["x"], ["x2"], domain="my.domain"),
        h.make_node("Gather", ["x2", "i"], ["y"], name="after_custom"),
    ]
    outputs = [h.make_tensor_value_info("y", T.FLOAT, None)]
    if plain:
        nodes.append(h.make_node("Gather", ["x", "i"], ["z"], name="plain"))
        outputs.append(h.make_tensor_value_info("z", T.FLOAT, None))
    return _save(
        tmp_path,
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [3])],
        outputs,
        [nh.from_array(np.array(1, np.int64), "i")],
        domains=["my.domain"],
    )


# -- issue 44.2: a model no target loads is never called safe ---------------------------
def test_a_node_of_unknown_type_is_not_exposed_and_the_others_are(tmp_path):
    found = reading.load(custom_upstream(tmp_path))
    exposed = exposing.expose(found, with_its_data(found))
    model = str(found.path)
    assert "element type is unknown" in exposed.not_exposed[model, "", "after_custom"]
    assert set(exposed.nodes[model, "", "plain"]) == set(exposing.ROLES)


def test_a_model_no_target_loads_is_cannot_load_and_exits_1(tmp_path, capsys):
    code, said, document = _model(
        tmp_path, [str(custom_upstream(tmp_path)), "--runtime", "reference", "onnxruntime"], capsys
    )
    assert "safe" not in said
    assert "reference: cannot load this model: NotImplementedError: Node type 'Foo'" in said
    assert "onnxruntime: cannot load this model:" in said
    assert "whole model: no target loaded it" in said
    (whole,) = document["whole_model"].values()
    assert {t["status"] for t in whole["targets"].values()} == {"cannot load"}
    assert code == 1


def test_a_model_with_no_node_to_judge_still_loads_on_every_target(tmp_path, capsys):
    path = custom_upstream(tmp_path, plain=False)
    code, said, _ = _model(tmp_path, [str(path), "--runtime", "onnxruntime"], capsys)
    assert "no node can be judged" in said
    assert "onnxruntime: cannot load this model:" in said
    assert code == 1


# -- issue 44.3: outputs called bit for bit that differ ----------------------------------
NO_IDENTITY = "tests.identity_refusing_adapter:IdentityRefusingAdapter"


def embedding(tmp_path: Path, output: str = "y", dtype=np.int64, shift: int = 33) -> Path:
    """An embedding table indexed by a graph input, then an op of its own."""
    table = (np.arange(12, dtype=np.int64).reshape(4, 3) << shift).astype(dtype)
    return _save(
        tmp_path,
        [
            h.make_node("Gather", ["table", "ids"], ["g"], name="embed", axis=0),
            h.make_node("Neg", ["g"], [output]),
        ],
        [h.make_tensor_value_info("ids", T.INT64, [2])],
        [h.make_tensor_value_info(output, nh.helper.np_dtype_to_tensor_dtype(table.dtype), [2, 3])],
        [nh.from_array(table, "table")],
    )


def test_exposed_names_are_unique_against_every_name_in_the_model(tmp_path):
    taken = f"{exposing.PREFIX}1_data"  # the first name exposing gives
    found = reading.load(embedding(tmp_path, output=taken))
    proto = with_its_data(found)
    before = exposing.names_in(proto)
    exposed = exposing.expose(found, proto)
    new = [o.name for o in proto.graph.output][1:]
    assert len(new) == 3 and not set(new) & before
    assert proto.graph.output[0].name == taken  # the model's own, kept first
    made = [name for node in proto.graph.node for name in node.output]
    assert len(made) == len(set(made))  # no value defined twice
    assert exposed.nodes[str(found.path), "", "embed"] == {"data": 1, "indices": 2, "output": 3}


def test_a_model_output_named_as_an_exposed_copy_is_compared_as_it_is(tmp_path, capsys):
    path = embedding(tmp_path, output=f"{exposing.PREFIX}1_data", dtype=np.float32, shift=0)
    np.savez(tmp_path / "x.npz", ids=np.array([3, 1], np.int64))
    code, said, document = _model(
        tmp_path,
        [str(path), "--inputs", str(tmp_path / "x.npz"), "--runtime", "reference", "onnxruntime"],
        capsys,
    )
    (entry,) = document["nodes"]
    assert {t: v["verdict"] for t, v in entry["in_situ"].items()} == {
        "reference": "exact",
        "onnxruntime": "exact",
    }
    assert "outputs: onnxruntime gives reference's outputs bit for bit" in said
    assert code == 0


def test_a_target_that_runs_the_model_only_as_it_is_is_compared(tmp_path, capsys):
    np.savez(tmp_path / "x.npz", ids=np.array([3, 1], np.int64))
    args = [str(embedding(tmp_path)), "--inputs", str(tmp_path / "x.npz")]
    code, said, document = _model(tmp_path, [*args, "--runtime", "reference", NO_IDENTITY], capsys)
    (whole,) = document["whole_model"].values()
    assert whole["targets"]["no-identity"]["status"] == "ran"
    assert "not with its Gather values exposed" in whole["targets"]["no-identity"]["message"]
    assert "outputs: no-identity differs from reference" in said
    (difference,) = whole["differences"]
    assert difference["target"] == "no-identity" and difference["outputs"][0]["differs"]
    assert whole["compared"] == ["reference", "no-identity"]
    assert "bit for bit" not in said
    (entry,) = document["nodes"]
    assert entry["in_situ"]["no-identity"]["verdict"] == "not exposed"
    assert code == 1


# -- issue 44.4: no verdict word without a result that supports it -----------------------
def two_picks(tmp_path: Path) -> Path:
    """Two Gathers of graph inputs: one of float32 data, one of bfloat16 (which
    OpenCV's binding cannot carry: harness_unsupported, a result that judges nothing)."""
    return _save(
        tmp_path,
        [
            h.make_node("Gather", ["a", "i"], ["y"], name="pick_f32", axis=0),
            h.make_node("Gather", ["b", "i"], ["z"], name="pick_bf16", axis=0),
        ],
        [
            h.make_tensor_value_info("a", T.FLOAT, [4, 3]),
            h.make_tensor_value_info("b", T.BFLOAT16, [4, 3]),
        ],
        [
            h.make_tensor_value_info("y", T.FLOAT, [3]),
            h.make_tensor_value_info("z", T.BFLOAT16, [3]),
        ],
        [nh.from_array(np.array(1, np.int64), "i")],
    )


def test_a_target_with_no_as_built_result_is_not_called_safe(tmp_path, capsys):
    code, said, _ = _model(tmp_path, [str(two_picks(tmp_path)), "--runtime", "opencv"], capsys)
    line = next(x for x in said.splitlines() if x.startswith("  opencv: "))
    assert "safe" not in line
    assert line.startswith("  opencv: partly judged: 1 of 2 node(s) exact as built, 1 with no ")
    assert "(harness_unsupported: " in line and "bfloat16" in line
    # the whole model did not run there either (its bfloat16 input), and the line says so
    assert "; whole model not run: input 'b' is bfloat16" in line
    assert code == 1  # no pass without a result


def test_no_node_with_a_result_is_not_judged(tmp_path, capsys):
    path = _save(
        tmp_path,
        [h.make_node("Gather", ["b", "i"], ["z"], name="pick_bf16", axis=0)],
        [h.make_tensor_value_info("b", T.BFLOAT16, [4, 3])],
        [h.make_tensor_value_info("z", T.BFLOAT16, [3])],
        [nh.from_array(np.array(1, np.int64), "i")],
    )
    code, said, _ = _model(tmp_path, [str(path), "--runtime", "reference", "opencv"], capsys)
    assert "  opencv: not judged: no node has an as-built result on it (harness_unsupported" in said
    assert "  reference: safe: every one of 1 node(s) exact as built" in said
    assert "whole model: loaded on reference only" in said
    assert code == 1


# -- issue 49.1: no verdict word without its evidence; expose per node -------------------
def token_model(tmp_path: Path, embed: bool = True) -> Path:
    """A Shape -> Gather (the sequence length: a symbolic dim, which tract cannot
    give out as a tensor) and an embedding Gather of the token ids."""
    nodes = [
        h.make_node("Shape", ["ids"], ["s"]),
        h.make_node("Gather", ["s", "one"], ["n"], name="seqlen", axis=0),
        h.make_node("Cast", ["n"], ["nf"], to=T.FLOAT),
    ]
    if embed:  # and the batch size, a second value tract cannot give out
        nodes += [
            h.make_node("Gather", ["s", "zero"], ["b"], name="batch", axis=0),
            h.make_node("Cast", ["b"], ["bf"], to=T.FLOAT),
            h.make_node("Gather", ["table", "ids"], ["e"], name="embed", axis=0),
            h.make_node("Mul", ["e", "nf"], ["en"]),
            h.make_node("Mul", ["en", "bf"], ["y"]),
        ]
    else:
        nodes.append(h.make_node("Neg", ["nf"], ["y"]))
    return _save(
        tmp_path,
        nodes,
        [h.make_tensor_value_info("ids", T.INT64, ["batch", "seq"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        [
            nh.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) - 5, "table"),
            nh.from_array(np.array(1, np.int64), "one"),
            nh.from_array(np.array(0, np.int64), "zero"),
        ],
    )


def _fed(tmp_path: Path, path: Path, ids, *runtimes: str) -> list[str]:
    np.savez(tmp_path / "x.npz", ids=np.array(ids, np.int64))
    return [str(path), "--inputs", str(tmp_path / "x.npz"), "--runtime", *runtimes]


def test_a_node_a_target_cannot_expose_does_not_stop_the_others(tmp_path, capsys):
    args = _fed(tmp_path, token_model(tmp_path), [[3, 1, 0]], "reference", "tract")
    code, said, document = _model(tmp_path, args, capsys)
    situ = {e["node"]: e["in_situ"]["tract"] for e in document["nodes"]}
    assert situ["embed"]["verdict"] == "exact"
    # found by halves: {seqlen} refused, {batch, embed} refused, then {batch} and {embed}
    for name in ("seqlen", "batch"):
        assert situ[name]["verdict"] == "not exposed"
        assert "(2,tdim) cannot come out" in situ[name]["why"]
    assert (
        "  tract: safe as built and in situ: every one of 3 node(s) exact as built; "
        "in situ 1 exact, not exposed 2"
    ) in said
    (whole,) = document["whole_model"].values()
    assert whole["targets"]["tract"]["status"] == "ran"
    assert "outputs: tract gives reference's outputs bit for bit" in said
    assert code == 0


def test_safe_as_built_not_judged_in_situ_when_no_node_could_be_exposed(tmp_path, capsys):
    path = token_model(tmp_path, embed=False)
    code, said, _ = _model(tmp_path, _fed(tmp_path, path, [[3, 1]], "reference", "tract"), capsys)
    line = next(x for x in said.splitlines() if x.startswith("  tract: "))
    assert line.startswith(
        "  tract: safe as built; not judged in situ: seqlen: not exposed, tract ran the model, "
        "but its output (2,tdim) cannot come out"
    )
    assert line.endswith("every one of 1 node(s) exact as built; in situ 0 exact, not exposed 1")
    assert "  reference: safe as built and in situ: " in said
    assert "outputs: tract gives reference's outputs bit for bit" in said
    assert code == 0


# -- issue 49.3: inputs that break the spec, said as the inputs' property, first ---------
def test_an_out_of_vocabulary_id_is_said_first_as_the_inputs_property(tmp_path, capsys):
    path = embedding(tmp_path, dtype=np.float32, shift=0)  # 4 rows: id 4 is the vocabulary size
    args = _fed(tmp_path, path, [3, 4], "reference", "onnxruntime", "openvino", "tract")
    code, said, document = _model(tmp_path, args, capsys)
    lines = said.splitlines()
    first = lines[lines.index(f"model {path}:") + 1]
    assert first == (
        "  inputs break the spec: input ids, as node embed's indices, element [1] = 4: Gather "
        "index-out-of-range: index 4 at indices[1] is outside [-4, 3] for axis 0 of size 4"
    )
    assert lines[lines.index(first) + 1] == (
        "    what each target did: reference: refused them, as the spec requires (conforming); "
        "onnxruntime: refused them, as the spec requires (conforming); openvino: accepted them "
        "and read zeros; tract: aborted (crashed)"
    )
    assert "  tract: crashed on these inputs, which break the spec (above): " in said
    assert (
        "to do: validate ids against the axis's size (4: for an embedding, the vocabulary)" in said
    )
    # a target that refuses them conforms: never "cannot run", never "report it upstream"
    assert "cannot run" not in said and "upstream" not in said.split("not gated")[0]
    assert (
        "  onnxruntime: safe as built; not judged in situ: it refused the inputs, as the spec "
        in said
    )
    assert "exit 1: the --inputs break the spec at a node (said first)" in said
    assert code == 1
    (whole,) = document["whole_model"].values()
    (broken,) = whole["inputs_break_spec"]
    assert broken["input"] == "ids" and broken["element"] == [1] and broken["value"] == 4
    assert broken["clause"] == "index-out-of-range" and broken["size"] == 4
    assert whole["targets"]["onnxruntime"]["status"] == "refused the inputs"
    (entry,) = document["nodes"]
    assert entry["in_situ"]["openvino"]["verdict"] == "inputs break the spec"
    assert entry["in_situ"]["openvino"]["did"] == "accepted them and read zeros"


def test_a_target_that_ran_inputs_that_break_the_spec_is_not_said_to_expose_nothing(
    tmp_path, capsys
):
    """OpenVINO runs an out-of-vocabulary id and its node is counted "inputs
    break the spec": its line said "not judged in situ: no node was exposed"."""
    path = embedding(tmp_path, dtype=np.float32, shift=0)
    _, said, _ = _model(tmp_path, _fed(tmp_path, path, [3, 4], "reference", "openvino"), capsys)
    line = next(x for x in said.splitlines() if x.startswith("  openvino: "))
    assert "no node was exposed" not in line
    assert line.startswith(
        "  openvino: safe as built; not judged in situ: the inputs break the spec at 1 node(s) "
        "it ran (said first)"
    )


def test_a_target_that_ran_the_model_without_giving_outputs_back_is_not_said_not_run(
    tmp_path, capsys
):
    """tract runs a model whose own output is a Shape's (tdim) and cannot give
    it back: the page's in-situ cell said "the whole model did not run"."""
    model = _save(
        tmp_path,
        [
            h.make_node("Shape", ["ids"], ["s"]),
            h.make_node("Gather", ["s", "one"], ["n"], name="seqlen", axis=0),
        ],
        [h.make_tensor_value_info("ids", T.INT64, ["batch", "seq"])],
        [h.make_tensor_value_info("n", T.INT64, [])],
        [nh.from_array(np.array(1, np.int64), "one")],
    )
    _, said, document = _model(tmp_path, _fed(tmp_path, model, [[3, 1]], "tract"), capsys)
    (entry,) = document["nodes"]
    why = entry["in_situ"]["tract"]["why"]
    assert "did not run" not in why
    assert why == "no output of the whole model came back from this target"
    assert "tract ran the model, but its output" in said
