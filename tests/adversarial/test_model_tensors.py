"""Hostile input, fourth round (issue 36): models whose tensors lie.

Every tensor ``conformance model`` reads, wherever it stands, goes through
one check and one reader (``conformance.graphs.tensors``): external data
that leaves the model's folder from any depth (1), a constant whose bytes
do not fit its dims (3), external-data fields past the spec (4), a FIFO or
any file that is not a regular one (10). Each is ``error: FILE: tensor NAME:
WHAT``, exit 2, never a traceback, never a verdict on drawn values.

In-process (``conformance.cli.main``, ``reading.load``); models of a node or
two built with onnx.helper in the test's folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance.cli import main
from conformance.graphs import capture, drawing, reading, tensors
from conformance.graphs.tensors import BrokenTensor

OUTSIDE = "../outside/secret.bin"
SECRET = np.array([1, 0], np.int64)


def vi(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def external(name: str, location: str, dims, dtype: int = T.INT64, **fields) -> onnx.TensorProto:
    """A tensor whose bytes are external data at ``location`` (fields in the order given)."""
    tensor = onnx.TensorProto(name=name, data_type=dtype, dims=list(dims))
    tensor.data_location = T.EXTERNAL
    for key, value in {"location": location, **fields}.items():
        tensor.external_data.add(key=key, value=str(value))
    return tensor


def model(nodes, inputs, initializers=(), **extra) -> onnx.ModelProto:
    outputs = [vi(o, T.FLOAT, None) for n in nodes[-1:] for o in n.output]
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    imports = [h.make_opsetid("", 15), *extra.pop("imports", [])]
    return h.make_model(graph, opset_imports=imports, ir_version=8, **extra)


def saved(folder: Path, proto: onnx.ModelProto, name: str = "m.onnx") -> Path:
    """The model in ``folder/model/``, and the secret one folder up, beside it."""
    (folder / "outside").mkdir(exist_ok=True)
    SECRET.tofile(folder / "outside" / "secret.bin")
    (folder / "model").mkdir(exist_ok=True)
    path = folder / "model" / name
    onnx.save(proto, path)
    return path


X = vi("x", T.FLOAT, [3, 2])
GATHER = h.make_node("Gather", ["x", "i"], ["y"], name="g", axis=0)


def constant(tensor: onnx.TensorProto, out: str = "i") -> onnx.NodeProto:
    return h.make_node("Constant", [], [out], value=tensor)


def branch(nodes, out: str = "y") -> onnx.GraphProto:
    return h.make_graph(nodes, f"b_{out}", [], [vi(out, T.FLOAT, None)])


def if_node(then: onnx.GraphProto, out: str = "y") -> onnx.NodeProto:
    other = branch([h.make_node("Identity", ["x"], [out])], out)
    return h.make_node("If", ["c"], [out], then_branch=then, else_branch=other)


# -- 1: one check, wherever the tensor stands ----------------------------------------
def _in_function_if() -> onnx.ModelProto:
    """The issue's: a Constant in an If branch inside a model-local function."""
    then = branch([constant(external("i", OUTSIDE, [2])), GATHER])
    body = [if_node(then)]
    function = h.make_function("local", "F", ["x", "c"], ["y"], body, [h.make_opsetid("", 15)])
    call = h.make_node("F", ["x", "c"], ["y"], domain="local")
    return model(
        [call],
        [X, vi("c", T.BOOL, [])],
        imports=[h.make_opsetid("local", 1)],
        functions=[function],
    )


def _two_ifs_deep() -> onnx.ModelProto:
    inner = branch([constant(external("i", OUTSIDE, [2])), GATHER])
    return model([if_node(branch([if_node(inner)]))], [X, vi("c", T.BOOL, [])])


def _sparse(where: str) -> onnx.ModelProto:
    sparse = h.make_sparse_tensor(
        external("v", OUTSIDE, [1]), nh.from_array(np.array([1], np.int64), "k"), [2]
    )
    if where == "initializer":
        proto = model([GATHER], [X, vi("i", T.INT64, [2])])
        proto.graph.sparse_initializer.append(sparse)
        return proto
    return model([h.make_node("Constant", [], ["i"], sparse_value=sparse), GATHER], [X])


def _in_a_loop_body_attribute() -> onnx.ModelProto:
    """ConstantOfShape's ``value`` (an attribute of another op) in a Loop body."""
    shape = nh.from_array(np.array([2], np.int64), "s")
    body = h.make_graph(
        [
            h.make_node("Constant", [], ["s"], value=shape),
            h.make_node("ConstantOfShape", ["s"], ["i"], value=external("v", OUTSIDE, [1])),
            h.make_node("Identity", ["cond"], ["cond_out"]),
            h.make_node("Gather", ["x", "i"], ["row"], axis=0),
        ],
        "body",
        [vi("n", T.INT64, []), vi("cond", T.BOOL, [])],
        [vi("cond_out", T.BOOL, []), vi("row", T.FLOAT, None)],
    )
    trip = nh.from_array(np.array(1, np.int64), "trip")
    yes = nh.from_array(np.array(True), "yes")
    return model([h.make_node("Loop", ["trip", "yes"], ["y"], body=body)], [X], [trip, yes])


def _custom_tensors_attribute() -> onnx.ModelProto:
    theirs = h.make_node("Thing", [], ["i"], domain="theirs")
    theirs.attribute.append(h.make_attribute("tables", [external("v", OUTSIDE, [2])]))
    return model([theirs, GATHER], [X], imports=[h.make_opsetid("theirs", 1)])


def _training_graph() -> onnx.ModelProto:
    proto = model([GATHER], [X, vi("i", T.INT64, [2])])
    training = proto.training_info.add()
    training.initialization.CopyFrom(
        h.make_graph([], "init", [], [], initializer=[external("v", OUTSIDE, [2])])
    )
    return proto


PLACES = {
    "main-initializer": lambda: model([GATHER], [X], [external("i", OUTSIDE, [2])]),
    "main-constant": lambda: model([constant(external("i", OUTSIDE, [2])), GATHER], [X]),
    "if-branch-two-deep": _two_ifs_deep,
    "function-if-branch": _in_function_if,
    "sparse-initializer": lambda: _sparse("initializer"),
    "constant-sparse-value": lambda: _sparse("constant"),
    "loop-body-attribute": _in_a_loop_body_attribute,
    "custom-tensors-attribute": _custom_tensors_attribute,
    "training-graph": _training_graph,
}


@pytest.mark.parametrize("place", PLACES)
def test_external_data_out_of_the_folder_is_refused_wherever_the_tensor_stands(tmp_path, place):
    path = saved(tmp_path, PLACES[place]())
    with pytest.raises(BrokenTensor) as raised:
        reading.load(path)
    folder = path.parent.resolve()
    assert str(raised.value) == (
        f"error: {path}: tensor {raised.value.name}: external data location "
        f"'{OUTSIDE}': the location must be a file in {folder}"
    )


def test_the_issues_model_is_refused_and_no_byte_of_the_secret_is_saved(tmp_path, capsys):
    """Before: read through the function's If branch, judged, exit 0, and the
    outside file's bytes written into the case file."""
    path = saved(tmp_path, _in_function_if())
    cases = tmp_path / "cases.yaml"
    code = main(["model", str(path), "--runtime", "reference", "--out", str(tmp_path / "out"),
                 "--save-cases", str(cases)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"error: {path}: tensor i: external data location '{OUTSIDE}'" in err
    assert not cases.exists() and not (tmp_path / "out").exists()


def test_a_folded_attribute_is_read_by_the_one_reader(tmp_path):
    """ConstantOfShape's external ``value`` inside the folder is folded with the
    bytes our reader checked (before: onnx.reference looked for the file in the
    working folder, failed, and the node's indices were drawn instead)."""
    folder = tmp_path / "model"
    folder.mkdir()
    np.array([1], np.int64).tofile(folder / "one.bin")
    shape = h.make_node("Constant", [], ["s"], value=nh.from_array(np.array([2], np.int64)))
    fill = h.make_node("ConstantOfShape", ["s"], ["i"], value=external("v", "one.bin", [1]))
    onnx.save(model([shape, fill, GATHER], [X]), folder / "m.onnx")
    found = reading.load(folder / "m.onnx")
    (group,) = drawing.group_nodes([found], {}, 1 << 20)
    assert group.indices is not None and group.indices.tolist() == [1, 1]


def test_capture_runs_a_copy_with_the_checked_bytes_inlined(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    np.array([2, 0], np.int64).tofile(folder / "i.bin")
    onnx.save(model([GATHER], [X], [external("i", "i.bin", [2])]), folder / "m.onnx")
    found = reading.load(folder / "m.onnx")
    proto = capture.with_its_data(found)
    every = list(tensors.every_tensor(proto))
    assert every and all(t.data_location == T.DEFAULT and not t.external_data for t in every)
    assert nh.to_array(proto.graph.initializer[0]).tolist() == [2, 0]
    (table,) = found.proto.graph.initializer  # the model read stays as it was
    assert table.data_location == T.EXTERNAL


# -- 10: only regular files, opened without blocking ----------------------------------
def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _folder(path: Path) -> None:
    path.mkdir()


def _socket(path: Path) -> None:
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(path))
    listening.close()  # the socket file stays


@pytest.mark.parametrize(
    ("make", "kind"), [(_fifo, "a FIFO"), (_folder, "a folder"), (_socket, "a socket")]
)
@pytest.mark.parametrize("dims, fields", [([0], {}), ([2], {"length": 16})])
def test_a_location_that_is_not_a_regular_file_is_refused_without_blocking(
    tmp_path, capsys, make, kind, dims, fields
):
    """Before: a FIFO holding an empty tensor (or length 0) passed the check and
    the read blocked forever; here an alarm turns a block into a failure."""
    folder = tmp_path / "model"
    folder.mkdir()
    make(folder / "data")
    gather = h.make_node("Gather", ["x", "i"], ["y"], axis=0)
    proto = model([gather], [X], [external("i", "data", dims, **fields)])
    onnx.save(proto, folder / "m.onnx")

    def blocked(*_):
        raise AssertionError("the reader blocked on a file that is not a regular one")

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(20)
    try:
        code = main(["model", str(folder / "m.onnx"), "--runtime", "reference",
                     "--out", str(tmp_path / "out")])  # fmt: skip
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert (
        f"error: {folder / 'm.onnx'}: tensor i: external data location 'data' is {kind}: "
        "only regular files are read"
    ) in err


# -- 4: the external-data fields, as the spec defines them ------------------------------
NOT_DECIMAL = "is not a decimal number of bytes (0 to 2^63-1, digits only)"
FIELDS = {  # fields (after location "data.bin") -> what the error says; int64[2] needs 16 bytes
    "length-0": ({"length": 0}, "external data length 0, its dims need 16"),
    "length-short": ({"length": 8}, "external data length 8, its dims need 16"),
    "length-long": ({"length": 24}, "external data length 24, its dims need 16"),
    "offset-hex": ({"offset": "0x10"}, f"external data offset '0x10' {NOT_DECIMAL}"),
    "offset-negative": ({"offset": -8}, f"external data offset '-8' {NOT_DECIMAL}"),
    "offset-plus": ({"offset": "+8"}, f"external data offset '+8' {NOT_DECIMAL}"),
    "offset-space": ({"offset": " 8"}, f"external data offset ' 8' {NOT_DECIMAL}"),
    "offset-underscore": ({"offset": "0_8"}, f"external data offset '0_8' {NOT_DECIMAL}"),
    "offset-fullwidth": ({"offset": "８"}, f"external data offset '８' {NOT_DECIMAL}"),
    "length-empty": ({"length": ""}, f"external data length '' {NOT_DECIMAL}"),
    "offset-5000-digits": (
        {"offset": "9" * 5000},
        f"external data offset '99999999999...99999' (5002 characters) {NOT_DECIMAL}",
    ),
    "offset-past-int64": ({"offset": "9" * 19}, f"external data offset {'9' * 19} is past 2^63-1"),
    "offset-past-the-end": (
        {"offset": 56},
        "external data location 'data.bin': the file is short: 64 bytes, 72 needed "
        "(offset 56 + length 16)",
    ),
    "unknown-key": (
        {"compression": "zstd"},
        "external data key 'compression' is not one of the spec's "
        "(location, offset, length, checksum): what its bytes mean is unknown",
    ),
    "checksum-not-sha1": (
        {"checksum": "abc"},
        "external data checksum 'abc' is not a SHA-1 digest (40 hexadecimal digits)",
    ),
}


def _data_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    np.arange(8, dtype=np.int64).tofile(folder / "data.bin")  # 64 bytes
    return folder


def _load(folder: Path, tensor: onnx.TensorProto) -> Path:
    path = folder / "m.onnx"
    onnx.save(model([GATHER], [X], [tensor]), path)
    return path


@pytest.mark.parametrize("case", FIELDS)
def test_each_external_data_field_is_read_and_checked(tmp_path, case):
    """Before: length 0 or short and a negative offset read past the check
    (ValueError), a hex offset was int()'s ValueError, a long length passed."""
    fields, what = FIELDS[case]
    path = _load(_data_folder(tmp_path), external("i", "data.bin", [2], **fields))
    with pytest.raises(BrokenTensor) as raised:
        reading.load(path)
    assert str(raised.value) == f"error: {path}: tensor i: {what}"


@pytest.mark.parametrize(
    ("location", "what"),
    [
        ("data.bin\x00.txt", r"external data location 'data.bin\x00.txt' holds a NUL byte"),
        ("", "external data has no location"),
        ("ABSOLUTE", "the location must be a path relative to"),
    ],
)
def test_a_location_with_a_nul_empty_or_absolute_names_the_tensor(tmp_path, capsys, location, what):
    """Before: a NUL ended in `Invalid argument` naming no file."""
    folder = _data_folder(tmp_path)
    location = str(folder / "data.bin") if location == "ABSOLUTE" else location
    path = _load(folder, external("i", location, [2]))
    code = main(["model", str(path), "--runtime", "reference", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert err.startswith(f"error: {path}: tensor i: ") and what in err, err


def test_a_key_given_twice_and_a_string_tensor_are_refused(tmp_path):
    folder = _data_folder(tmp_path)
    twice = external("i", "data.bin", [2], offset=0)
    twice.external_data.add(key="offset", value="16")
    path = _load(folder, twice)
    with pytest.raises(BrokenTensor, match="tensor i: external data key 'offset' is given twice"):
        reading.load(path)
    path = _load(folder, external("i", "data.bin", [2], dtype=T.STRING))
    with pytest.raises(BrokenTensor, match="a string tensor cannot be external data"):
        reading.load(path)


def test_offset_length_basepath_and_checksum_as_written_are_read(tmp_path):
    """The fields onnx writes, every one of them right: the bytes at the offset,
    ``basepath`` ignored, the checksum the file's own SHA-1."""
    folder = _data_folder(tmp_path)
    digest = hashlib.sha1((folder / "data.bin").read_bytes()).hexdigest().upper()
    tensor = external("i", "data.bin", [2], offset=16, length=16, checksum=digest, basepath="/etc")
    (group,) = drawing.group_nodes([reading.load(_load(folder, tensor))], {}, 1 << 20)
    assert group.indices is not None and group.indices.tolist() == [2, 3]


def test_a_checksum_that_is_not_the_files_is_refused_when_the_bytes_are_read(tmp_path, capsys):
    folder = _data_folder(tmp_path)
    path = _load(folder, external("i", "data.bin", [2], checksum="0" * 40))
    code = main(["model", str(path), "--runtime", "reference", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    digest = hashlib.sha1((folder / "data.bin").read_bytes()).hexdigest()
    assert code == 2 and "Traceback" not in err, err
    assert (
        f"error: {path}: tensor i: external data checksum {'0' * 40} is not the SHA-1 of "
        f"'data.bin' ({digest})"
    ) in err


# -- 3: a constant that does not fit its dims is a broken model ---------------------------
def _raw(name: str, array: np.ndarray, cut: int) -> onnx.TensorProto:
    """``array`` as a tensor whose raw_data is ``cut`` bytes shorter (negative: longer)."""
    tensor = nh.from_array(array, name)
    raw = tensor.raw_data
    tensor.raw_data = raw[: len(raw) - cut] if cut > 0 else raw + bytes(-cut)
    return tensor


def _typed(name: str, dtype: int, dims, field: str, values) -> onnx.TensorProto:
    tensor = onnx.TensorProto(name=name, data_type=dtype, dims=dims)
    getattr(tensor, field).extend(values)
    return tensor


INDICES = np.array([0, 2, 1], np.int64)
TABLE = np.arange(6, dtype=np.float32).reshape(3, 2)
TABLE_GATHER = h.make_node("Gather", ["t", "i"], ["y"], axis=0)
I3 = vi("i", T.INT64, [3])
BROKEN = {  # (nodes, inputs, initializers) -> what the error says of which tensor
    "indices-short": ([GATHER], [X], [_raw("i", INDICES, 4)], "i", "raw_data holds 20 bytes"),
    "indices-long": ([GATHER], [X], [_raw("i", INDICES, -8)], "i", "raw_data holds 32 bytes"),
    "data-short": ([TABLE_GATHER], [I3], [_raw("t", TABLE, 4)], "t", "raw_data holds 20 bytes"),
    "constant-short": (
        [constant(_raw("i", INDICES, 1)), GATHER],
        [X],
        [],
        "i",
        "raw_data holds 23 bytes",
    ),
}


@pytest.mark.parametrize("case", BROKEN)
def test_a_constant_whose_raw_data_does_not_fit_its_dims_is_a_broken_model(tmp_path, capsys, case):
    """Before: the constant read as None, the node's input drawn, the node judged, exit 0."""
    nodes, inputs, initializers, name, held = BROKEN[case]
    path = tmp_path / "m.onnx"
    onnx.save(model(nodes, inputs, initializers), path)
    code = main(["model", str(path), "--runtime", "reference", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert f"error: {path}: tensor {name}: {held}, its dims need 24\n" in err
    assert not (tmp_path / "o").exists()


TYPED = {  # a tensor of a Gather's -> what the error says
    "float_data": (
        _typed("t", T.FLOAT, [3, 2], "float_data", [1.0] * 5),
        "float_data holds 5 values, its dims need 6",
    ),
    "int64_data": (
        _typed("i", T.INT64, [3], "int64_data", [0, 1]),
        "int64_data holds 2 values, its dims need 3",
    ),
    "complex-pairs": (
        _typed("t", T.COMPLEX64, [3, 2], "float_data", [1.0] * 6),
        "float_data holds 6 values, its dims need 12",
    ),
    "no-data-at-all": (
        _typed("i", T.INT64, [3], "int64_data", []),
        "int64_data holds 0 values, its dims need 3",
    ),
    "string-count": (
        _typed("t", T.STRING, [3, 2], "string_data", [b"a"] * 4),
        "string_data holds 4 strings, its dims need 6",
    ),
    "string-raw": (
        _raw("t", np.zeros(6, np.uint8), 0),
        "a string tensor holds raw_data, which the spec forbids for strings",
    ),
    "negative-dim": (
        _typed("i", T.INT64, [-3], "int64_data", []),
        "dims [-3]: a dim is never negative",
    ),
}
TYPED["string-raw"][0].data_type = T.STRING
TYPED["string-raw"][0].dims[:] = [3, 2]


@pytest.mark.parametrize("case", TYPED)
def test_typed_fields_and_strings_hold_what_their_dims_need(tmp_path, case):
    tensor, what = TYPED[case]
    nodes = [GATHER] if tensor.name == "i" else [TABLE_GATHER]
    path = tmp_path / "m.onnx"
    onnx.save(model(nodes, [X] if tensor.name == "i" else [I3], [tensor]), path)
    with pytest.raises(BrokenTensor) as raised:
        reading.load(path)
    assert str(raised.value) == f"error: {path}: tensor {tensor.name}: {what}"


def test_a_string_constant_is_kept_and_one_not_utf8_is_refused_when_read(tmp_path):
    kept = [b"a\x00", "\u00e9".encode(), b""]  # a trailing NUL too (NumPy's strings drop it)
    words = _typed("t", T.STRING, [3, 1], "string_data", kept)
    path = tmp_path / "m.onnx"
    onnx.save(model([TABLE_GATHER], [I3], [words]), path)
    (group,) = drawing.group_nodes([reading.load(path)], {}, 1 << 20)
    assert group.data is not None and group.data.ravel().tolist() == ["a\x00", "\u00e9", ""]
    words.string_data[1] = b"\xff"
    onnx.save(model([TABLE_GATHER], [I3], [words]), path)
    with pytest.raises(BrokenTensor, match=r"tensor t: string_data\[1\] is not UTF-8"):
        drawing.group_nodes([reading.load(path)], {}, 1 << 20)


# -- 9: invalid contents: a negative dim, names that are not UTF-8 ----------------------------
@pytest.mark.parametrize("which", ["indices", "data"])
def test_a_negative_dim_on_a_gathers_input_is_a_broken_model(tmp_path, capsys, which):
    """Before: ValueError in drawing.run_time_indices (negative dimensions)."""
    shapes = {"indices": [-2], "data": [3, 2]} | ({"data": [3, -1]} if which == "data" else {})
    inputs = [vi("x", T.FLOAT, shapes["data"]), vi("i", T.INT64, shapes["indices"])]
    path = tmp_path / "m.onnx"
    onnx.save(model([GATHER], inputs), path)
    code = main(["model", str(path), "--runtime", "reference", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    name, dim, size = ("i", 0, -2) if which == "indices" else ("x", 1, -1)
    assert code == 2 and "Traceback" not in err, err
    assert f"error: {path}: tensor {name}: dim {dim} of its shape is {size}: a dim is never" in err


# Same-length stand-ins in the serialised model, swapped for bytes that are not UTF-8
# (and an ESC that would drive the terminal): the node's, its graph's, an If's, the
# inputs', a symbolic dim's and a function's names.
NAMES = {
    b"NODE_A": b"n\xff\x1b[1m",
    b"GRAPH_B": b"g\xfe\xff_bbb",
    b"IF_C": b"if\xc3!",
    b"IDX_D": b"i\xff\xfedd",
    b"BATCH_E": b"b\xe2\x82_e\xff\x80",
    b"FUNC_F": b"f\xff_fun",
}


def test_names_that_are_not_utf8_are_shown_escaped_and_the_node_judged(tmp_path, capsys):
    """Before: TypeError in drawing._slug (protobuf gives such a name as bytes)."""
    inner = h.make_graph(
        [h.make_node("Gather", ["x", "IDX_D"], ["y"], name="NODE_A", axis=0)],
        "then",
        [],
        [vi("y", T.FLOAT, None)],
    )
    if_node = h.make_node(
        "If",
        ["c"],
        ["y"],
        name="IF_C",
        then_branch=inner,
        else_branch=branch([h.make_node("Identity", ["x"], ["y"])]),
    )
    body = [h.make_node("Gather", ["t", "k"], ["o"], name="in_FUNC_F", axis=0)]
    function = h.make_function("local", "FUNC_F", ["t", "k"], ["o"], body, [h.make_opsetid("", 15)])
    call = h.make_node("FUNC_F", ["x", "IDX_D"], ["z"], domain="local")
    proto = model(
        [if_node, call],
        [vi("x", T.FLOAT, ["BATCH_E", 2]), vi("IDX_D", T.INT64, [2]), vi("c", T.BOOL, [])],
        imports=[h.make_opsetid("local", 1)],
        functions=[function],
    )
    proto.graph.name = "GRAPH_B"
    raw = proto.SerializeToString()
    for stand_in, bad in NAMES.items():
        assert len(stand_in) == len(bad) and stand_in in raw
        raw = raw.replace(stand_in, bad)
    path = tmp_path / "names.onnx"
    path.write_bytes(raw)
    out = tmp_path / "out"
    dim = "b\\xe2\\x82_e\\xff\\x80"  # the symbolic dim, named as shown
    code = main(["model", str(path), "--runtime", "reference", "--out", str(out),
                 "--dims", f"{dim}=4"])  # fmt: skip
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "\x1b" not in printed.out + printed.err and "Traceback" not in printed.err
    nodes = json.loads((out / "nodes.json").read_text(encoding="utf-8"))["nodes"]
    by_node = {n["node"]: n for n in nodes}
    assert set(by_node) == {"n\\xff\x1b[1m", "in_f\\xff_fun"}
    judged = by_node["n\\xff\x1b[1m"]
    assert judged["graph"] == "if\\xc3!/then_branch" and judged["not_judged"] is None
    assert judged["cases"] and all(c.startswith("names-n-xff-1m-") for c in judged["cases"])
    assert judged["data"]["shape"] == [4, 2]
    assert by_node["in_f\\xff_fun"]["graph"] == "function:local:f\\xff_fun"
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert any({"node": "n\\xff\x1b[1m"}.items() <= n.items() for r in records for n in r["nodes"])


def test_a_name_given_as_bytes_or_with_lone_surrogates_becomes_text_that_shows_them():
    """The pure-Python protobuf or a caller may hand text with lone surrogates:
    the same escape, so JSON and the terminal take it."""
    node = onnx.NodeProto(name="ok", input=["a", "b"])
    reading.escape_text(node)
    assert node.name == "ok" and list(node.input) == ["a", "b"]  # UTF-8 text as it was
    assert reading.escaped(b"n\xff\xc3") == "n\\xff\\xc3"
    assert reading.escaped("n\udcff\ud800") == "n\\udcff\\ud800"
    assert json.loads(json.dumps(reading.escaped("n\udcff"), ensure_ascii=False)) == "n\\udcff"


def test_a_symbolic_link_is_followed_before_the_folder_is_checked(tmp_path):
    """A link inside the folder to the secret outside, or to a FIFO inside."""
    path = saved(tmp_path, model([GATHER], [X], [external("i", "link.bin", [2])]))
    (path.parent / "link.bin").symlink_to(tmp_path / "outside" / "secret.bin")
    with pytest.raises(BrokenTensor, match=r"'link\.bin': the location must be a file in"):
        reading.load(path)
    (path.parent / "link.bin").unlink()
    os.mkfifo(path.parent / "fifo")
    (path.parent / "link.bin").symlink_to(path.parent / "fifo")
    with pytest.raises(BrokenTensor, match=r"'link\.bin' is a FIFO: only regular files are read"):
        reading.load(path)
