"""``conformance model --inputs``: the capture run bounded in a worker (what ran
out said), and every input the graph takes fed (strings, overridable inputs).
Issue 44, items 8 and 15."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance.cli import main
from conformance.engine import capturing
from conformance.engine.pool import DEFAULT_WORKER_MEMORY
from conformance.graphs import capture, reading
from conformance.graphs.reading import GraphFileError
from tests.conftest import REPO

LOOP_FOREVER = 2**62


def vi(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def saved(path: Path, nodes, inputs, outputs, initializers=()) -> Path:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8), path)
    return path


def endless_loop(path: Path, body_nodes, state, extra_inits=()) -> Path:
    """A Gather before a Loop of 2^62 iterations whose body is ``body_nodes``
    over one loop-carried value ``state`` (a graph input)."""
    name, elem, shape = state
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c_out"]), *body_nodes],
        "body",
        [vi("it", T.INT64, []), vi("c", T.BOOL, []), vi(f"{name}_in", elem, shape)],
        [vi("c_out", T.BOOL, []), vi(f"{name}_out", elem, None)],
    )
    return saved(
        path,
        [
            h.make_node("Gather", ["d", "i"], ["y"], name="before"),
            h.make_node("Loop", ["trip", "yes", name], ["last"], name="L", body=body),
        ],
        [vi("d", T.FLOAT, [3]), vi("i", T.INT64, []), vi(name, elem, shape)],
        [vi("y", T.FLOAT, []), vi("last", elem, None)],
        [
            nh.from_array(np.array(LOOP_FOREVER, np.int64), "trip"),
            nh.from_array(np.array(True), "yes"),
            *extra_inits,
        ],
    )


def captured(path: Path, feeds: dict, limit: float, memory: int = DEFAULT_WORKER_MEMORY):
    found = reading.load(path)
    np.savez(path.with_suffix(".npz"), **feeds)
    fed = capture.read_inputs(path.with_suffix(".npz"), [found])
    return found, capturing.run([found], fed, limit, memory)


# -- 44.8: bounded, what ran out said ------------------------------------------------
def test_a_capture_run_that_never_ends_is_stopped_and_said(tmp_path):
    model = endless_loop(
        tmp_path / "loop.onnx",
        [h.make_node("Identity", ["n_in"], ["n_out"])],
        ("n", T.FLOAT, [1]),
    )
    feeds = {"d": np.ones(3, np.float32), "i": np.array(1), "n": np.zeros(1, np.float32)}
    _, result = captured(model, feeds, limit=1.0)
    why = result.failed[str(model)]
    assert "ran out of time: over 1 s" in why and "--timeout" in why
    # the worker was stopped from outside: what ran before the Loop is lost with it
    assert result.missed[(str(model), "", "before")].startswith("nothing was captured: ")
    assert not result.tensors


def test_a_capture_run_that_grows_without_bound_is_stopped_and_said(tmp_path):
    chunk = nh.from_array(np.zeros(4 << 20, np.float32), "chunk")  # 16 MiB an iteration
    model = endless_loop(
        tmp_path / "grow.onnx",
        [h.make_node("Concat", ["n_in", "chunk"], ["n_out"], axis=0)],
        ("n", T.FLOAT, ["length"]),
        [chunk],
    )
    feeds = {"d": np.ones(3, np.float32), "i": np.array(1), "n": np.zeros(1, np.float32)}
    memory = 600 << 20
    _, result = captured(model, feeds, limit=600.0, memory=memory)
    why = result.failed[str(model)]
    # the pool's watch stops it past the limit, or NumPy's allocation fails first
    assert "ran out of memory: over the worker memory limit of 0.585938 GiB" in why or (
        "MemoryError" in why
    ), why


def test_an_index_that_never_finishes_wrapping_is_counted_not_waited_for(tmp_path):
    """GatherElements fed 2^63 - 1: onnx.reference's wrap loop would take
    decades; the capture counts it (as the reference target does), keeps what
    the node was fed, and says why the run stopped. A real process, so that
    the code before the fix, which never ended, fails by its timeout."""
    model = saved(
        tmp_path / "ge.onnx",
        [h.make_node("GatherElements", ["d", "i"], ["y"], name="ge", axis=0)],
        [vi("d", T.FLOAT, [3]), vi("i", T.INT64, [1])],
        [vi("y", T.FLOAT, [1])],
    )
    np.savez(tmp_path / "in.npz", d=np.ones(3, np.float32), i=np.array([2**63 - 1]))
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "model", str(model), "--inputs",
         str(tmp_path / "in.npz"), "--runtime", "reference", "--variants", "static",
         "--draws", "0", "--no-progress", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert f"{model}: --inputs not captured whole: " in done.stdout
    assert "WouldNotFinish: no result in any timeout" in done.stdout
    document = json.loads((out / "nodes.json").read_text())
    assert document["captured"]["failed"][0]["reason"].startswith("WouldNotFinish")
    # what the node was fed is kept all the same: a case of it
    (node,) = document["nodes"]
    assert any("-captured1" in case for case in node["cases"])


# -- 44.15: every input the graph takes ----------------------------------------------
def strings_model(path: Path) -> Path:
    return saved(
        path,
        [h.make_node("Gather", ["words", "pick"], ["y"], name="pick_words")],
        [vi("words", T.STRING, [3]), vi("pick", T.INT64, [2])],
        [vi("y", T.STRING, [2])],
    )


@pytest.mark.parametrize(
    "words",
    [np.array(["zéro", "un", "deux"]), np.array(["zéro".encode(), b"un", b"deux"])],
    ids=["unicode", "utf8-bytes"],
)
def test_string_inputs_are_fed_from_numpy_text_arrays(tmp_path, words):
    model = strings_model(tmp_path / "words.onnx")
    _, result = captured(model, {"words": words, "pick": np.array([2, 0])}, limit=60.0)
    assert not result.failed
    ((data, indices),) = result.tensors[(str(model), "", "pick_words")]
    assert data.dtype == object and data.tolist() == ["zéro", "un", "deux"]
    assert indices.tolist() == [2, 0]


def test_string_inputs_judged_by_the_command(tmp_path, capsys):
    model = strings_model(tmp_path / "words.onnx")
    np.savez(tmp_path / "in.npz", words=np.array(["a", "bb", "ccc"]), pick=np.array([2, -3]))
    out = tmp_path / "run"
    code = main(
        ["model", str(model), "--inputs", str(tmp_path / "in.npz"), "--runtime", "reference",
         "onnxruntime", "--variants", "static", "--draws", "0", "--no-progress", "--out", str(out)]
    )  # fmt: skip
    printed = capsys.readouterr()
    assert code in (0, 1), printed.err
    document = json.loads((out / "nodes.json").read_text())
    (node,) = document["nodes"]
    assert any("-captured1" in case for case in node["cases"])
    assert {t: v["status"] for t, v in document["whole_model"][str(model)]["targets"].items()} == {
        "reference": "ran",
        "onnxruntime": "ran",
    }


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (np.array([b"ok", b"\xff\xfe"]), "member 'words.npy': element [1] is not UTF-8 text"),
        (
            np.frombuffer(np.array([97, 0x110000], np.uint32).tobytes(), "<U1"),
            "member 'words.npy': element [1] holds a code point beyond U+10FFFF",
        ),
    ],
    ids=["not-utf8", "beyond-unicode"],
)
def test_text_that_is_no_onnx_string_is_refused_naming_the_element(tmp_path, words, said):
    model = strings_model(tmp_path / "words.onnx")
    np.savez(tmp_path / "in.npz", words=words, pick=np.array([0]))
    with pytest.raises(GraphFileError, match=r"in\.npz") as raised:
        capture.read_inputs(tmp_path / "in.npz", [reading.load(model)])
    assert said in str(raised.value)


def test_an_object_array_is_never_unpickled(tmp_path):
    model = strings_model(tmp_path / "words.onnx")
    np.savez(tmp_path / "in.npz", words=np.array(["a", "b", "c"], object), pick=np.array([0]))
    with pytest.raises(GraphFileError, match="Python objects"):
        capture.read_inputs(tmp_path / "in.npz", [reading.load(model)])


def overridable_model(path: Path) -> Path:
    """A Gather whose indices are a graph input with a default initializer."""
    return saved(
        path,
        [h.make_node("Gather", ["d", "rows"], ["y"], name="by_default")],
        [vi("d", T.FLOAT, [4, 2]), vi("rows", T.INT64, [2])],
        [vi("y", T.FLOAT, [2, 2])],
        [nh.from_array(np.array([0, 1], np.int64), "rows")],
    )


def test_an_overridable_input_is_fed_when_given(tmp_path):
    model = overridable_model(tmp_path / "over.onnx")
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    _, given = captured(model, {"d": data, "rows": np.array([3, -1])}, limit=60.0)
    ((_, indices),) = given.tensors[(str(model), "", "by_default")]
    assert indices.tolist() == [3, -1]
    # left out, its default is what the run takes
    _, default = captured(model, {"d": data}, limit=60.0)
    ((_, indices),) = default.tensors[(str(model), "", "by_default")]
    assert indices.tolist() == [0, 1]


def test_an_overridable_input_is_held_to_its_declared_type(tmp_path):
    model = overridable_model(tmp_path / "over.onnx")
    np.savez(tmp_path / "in.npz", d=np.zeros((4, 2), np.float32), rows=np.array([1, 2, 3]))
    with pytest.raises(GraphFileError, match=r"input 'rows': dim 0 is 3, the graph fixes it at 2"):
        capture.read_inputs(tmp_path / "in.npz", [reading.load(model)])
    np.savez(tmp_path / "in.npz", d=np.zeros((4, 2), np.float32), other=np.array([1]))
    with pytest.raises(GraphFileError, match="with a default it overrides: rows"):
        capture.read_inputs(tmp_path / "in.npz", [reading.load(model)])
