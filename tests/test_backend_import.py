"""ONNX backend test folders as cases (conformance.cases.backend): onnx's own
Gather and GatherElements node tests, judged on every installed runtime;
ONNX Runtime's stream form; the variant a test's model is; every bad folder
said by name (exit 2) or listed as not taken, with the reason; and the round
trip with `conformance export`."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from conformance import adapters, shipped
from conformance.cases.loader import CaseErrors, load_all
from conformance.cli import main
from conformance.engine import models, records
from conformance.engine.run import Options, run_cases
from conformance.gate import verdict
from tests.conftest import run_pytest

# The last onnx release that ships its node tests as files: from 1.23 (onnx PR
# #7959) load_model_tests(kind="node") builds them in memory instead.
ONNX_WITH_FILES = "1.22.0"
NODE = "onnx/backend/test/data/node/"
# One wheel whatever the machine (every wheel carries the same test data).
WHEEL = ("--platform", "manylinux_2_28_x86_64", "--python-version", "3.11",
         "--implementation", "cp", "--abi", "cp311")  # fmt: skip
ONNX_TESTS = {  # onnx's Gather, GatherElements and GatherND node tests: the attribute
    # (axis, batch_dims), data shape, indices shape, data dtype
    "test_gather_0": ("Gather", 0, (5, 4, 3, 2), (3,), "float32"),
    "test_gather_1": ("Gather", 1, (5, 4, 3, 2), (3,), "float32"),
    "test_gather_2d_indices": ("Gather", 1, (3, 3), (1, 2), "float32"),
    "test_gather_negative_indices": ("Gather", 0, (10,), (3,), "float32"),
    "test_gather_elements_0": ("GatherElements", 1, (2, 2), (2, 2), "float32"),
    "test_gather_elements_1": ("GatherElements", 0, (3, 3), (2, 3), "float32"),
    "test_gather_elements_negative_indices": ("GatherElements", 0, (3, 3), (2, 3), "float32"),
    "test_gathernd_example_float32": ("GatherND", None, (2, 2, 2), (2, 1, 2), "float32"),
    "test_gathernd_example_int32": ("GatherND", None, (2, 2), (2, 2), "int32"),
    "test_gathernd_example_int32_batch_dim1": ("GatherND", 1, (2, 2, 2), (2, 1), "int32"),
}


def _pip() -> list[str]:
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    found = shutil.which("pip") or shutil.which("pip3")
    if found is None:
        pytest.fail("no pip to download the onnx wheel with (pip is in the test extra)")
    return [found]


@pytest.fixture(scope="session")
def onnx_node_tests(tmp_path_factory) -> Path:
    """onnx's test_gather* node test folders, from the onnx wheel on PyPI
    (downloaded once a session; never committed). No network is a failure,
    not a skip: CI has PyPI."""
    folder = tmp_path_factory.mktemp("onnx-wheel")
    result = subprocess.run(
        [*_pip(), "download", f"onnx=={ONNX_WITH_FILES}", "--no-deps", "--only-binary=:all:",
         *WHEEL, "--disable-pip-version-check", "-q", "-d", str(folder)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if result.returncode != 0:
        pytest.fail(
            f"could not download onnx {ONNX_WITH_FILES} from PyPI (network?): "
            f"{result.stderr.strip()[-2000:]}"
        )
    (wheel,) = folder.glob("onnx-*.whl")
    node = folder / "node"
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith(NODE + "test_gather") and not name.endswith("/"):
                target = node / name[len(NODE) :]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(name))
    return node


# -- test folders written here --------------------------------------------------------
def _model(op="Gather", opset=13, axis=0, data=None, indices=None, baked=(), dims=None,
           nodes=None, names=("data", "indices")) -> onnx.ModelProto:  # fmt: skip
    data = np.arange(6, dtype=np.float32).reshape(2, 3) if data is None else data
    indices = np.array([1, 0], dtype=np.int64) if indices is None else indices
    arrays = dict(zip(names, (data, indices), strict=True))
    inputs = [
        helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(array.dtype),
            list(array.shape) if dims is None else dims[name],
        )
        for name, array in arrays.items() if name not in baked
    ]  # fmt: skip
    initializers = [numpy_helper.from_array(arrays[name], name) for name in baked]
    attributes = {} if axis is None else {"axis": axis}
    node = helper.make_node(op, list(names), ["y"], **attributes)
    graph = helper.make_graph(
        nodes or [node], "t", inputs,
        [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(data.dtype), None)],
        initializer=initializers,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def write_test(root: Path, name: str, model: onnx.ModelProto | None = None,
               feeds: dict | None = None, output=None,
               data_set: str = "test_data_set_0") -> Path:  # fmt: skip
    """A test folder in onnx's layout: the model, input_<j>.pb in graph-input
    order (each named), output_0.pb (the oracle's output unless given)."""
    model = model or _model()
    folder = root / name
    (folder / data_set).mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    if feeds is None:
        feeds = {"data": np.arange(6, dtype=np.float32).reshape(2, 3),
                 "indices": np.array([1, 0], dtype=np.int64)}  # fmt: skip
    fed = [v.name for v in model.graph.input]
    for j, input_name in enumerate(fed):
        tensor = numpy_helper.from_array(feeds[input_name], input_name)
        (folder / data_set / f"input_{j}.pb").write_bytes(tensor.SerializeToString())
    if output is None:
        output = np.arange(6, dtype=np.float32).reshape(2, 3)[[1, 0]]
    tensor = numpy_helper.from_array(output, "y")
    (folder / data_set / "output_0.pb").write_bytes(tensor.SerializeToString())
    return folder


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def tml_stream(*items: tuple[str, np.ndarray]) -> bytes:
    """ONNX Runtime's inputs.pb/outputs.pb: length-delimited TraditionalMLData
    messages (tml.proto: field 15 the name, field 16 the TensorProto)."""
    out = b""
    for name, array in items:
        tensor = numpy_helper.from_array(array).SerializeToString()
        message = b"\x7a" + _varint(len(name)) + name.encode()  # field 15, wire type 2
        message += b"\x82\x01" + _varint(len(tensor)) + tensor  # field 16, wire type 2
        out += _varint(len(message)) + message
    return out


def errors_of(root: Path) -> str:
    with pytest.raises(CaseErrors) as raised:
        load_all([root])
    return raised.value.message


# -- onnx's own node tests ------------------------------------------------------------
def test_onnx_node_tests_of_gather_are_cases_and_the_others_not_taken(onnx_node_tests):
    loaded = load_all([onnx_node_tests])
    assert {c.base_id for c in loaded.cases} == set(ONNX_TESTS)
    for case in loaded.cases:
        op, axis, data_shape, indices_shape, dtype = ONNX_TESTS[case.base_id]
        assert case.id == f"{case.base_id}.op13.{dtype}.int64"
        assert (case.op, case.opset, case.axis) == (op, 13, axis)
        assert (case.data.shape, case.indices.shape) == (data_shape, indices_shape)
        assert case.source.path == onnx_node_tests / case.base_id / "test_data_set_0"
        assert case.expectation.kind == "output"  # output_0.pb, held against the oracle
        assert "variant-static" in case.tags  # onnx's models: both inputs fed, shapes fixed
    # GatherElements with negative indices rests on a disputed decision, said as a case file does
    by_id = {c.base_id: c for c in loaded.cases}
    assert by_id["test_gather_elements_negative_indices"].decisions == ("ge-negative-indices",)
    assert loaded.not_taken == []  # GatherND's tests are cases too (its row, issue 46)
    files = {p.relative_to(onnx_node_tests).as_posix() for p in loaded.files}
    assert "test_gather_0/test_data_set_0/output_0.pb" in files  # the corpus digest covers them


def test_onnx_node_tests_agree_with_the_oracle_on_every_installed_runtime(
    onnx_node_tests, tmp_path
):
    cases = load_all([onnx_node_tests]).cases
    runtimes = adapters.installed_builtins()
    out = tmp_path / "run"
    summary = run_cases(cases, out, Options(runtimes, models.VARIANTS, workers=1))
    assert summary.case_problems == []  # every output_0.pb is the oracle's output, bit for bit
    assert summary.harness_errors == 0
    run = records.read_folder(out)
    assert len(run.records) == len(ONNX_TESTS) * len(models.VARIANTS) * len(runtimes)
    decided = verdict.decide([run], shipped.baselines(), finished_only=True)
    # Every discrepancy these tests show is one the shipped baselines know (today none:
    # onnx's tests are float32 with in-range indices, where every runtime conforms).
    assert decided.gate.unexpected == [], decided.to_json()["new"]
    assert decided.passed


def test_the_cli_lists_validates_and_says_what_it_did_not_take(onnx_node_tests, capsys):
    assert main(["cases", "list", str(onnx_node_tests)]) == 0
    out, err = capsys.readouterr()
    assert f"test_gather_0.op13.float32.int64\tliteral output\t{onnx_node_tests}/test_gather_0/" \
        "test_data_set_0" in out  # fmt: skip
    assert "test_gathernd_example_int32_batch_dim1.op13.int32.int64" in out
    assert "its node is GatherND" not in err  # GatherND's tests are cases now
    assert main(["cases", "validate", str(onnx_node_tests)]) == 0
    out, _ = capsys.readouterr()
    assert "all cases agree with the oracle" in out


def test_export_takes_backend_test_folders_as_its_cases(onnx_node_tests, tmp_path, capsys):
    assert main(["export", str(tmp_path / "out"), str(onnx_node_tests)]) == 0
    capsys.readouterr()
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    exported = {(t["case_id"], t["variant"]) for t in manifest["tests"]}
    assert exported == {
        (f"{name}.op13.{ONNX_TESTS[name][-1]}.int64", variant)
        for name in ONNX_TESTS
        for variant in models.VARIANTS
    }


# -- how a test folder is read --------------------------------------------------------
def test_onnx_runtime_streams_and_any_data_set_name_give_the_same_case(tmp_path):
    files = write_test(tmp_path / "a", "test_g")
    stream = tmp_path / "b" / "test_g" / "set_a"
    stream.mkdir(parents=True)
    shutil.copy(files / "model.onnx", stream.parent / "model.onnx")
    data, indices = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 0])
    # named out of order: a name wins over the position
    (stream / "inputs.pb").write_bytes(tml_stream(("indices", indices), ("data", data)))
    (stream / "outputs.pb").write_bytes(tml_stream(("", data[[1, 0]])))  # unnamed: position
    (from_files,) = load_all([tmp_path / "a"]).cases
    (from_stream,) = load_all([tmp_path / "b"]).cases
    assert from_stream.base_id == "test_g-set_a"
    for field in ("op", "opset", "axis", "dtype", "indices_dtype"):
        assert getattr(from_stream, field) == getattr(from_files, field)
    assert np.array_equal(from_stream.data, from_files.data)
    assert np.array_equal(from_stream.indices, from_files.indices)
    assert np.array_equal(from_stream.expectation.output, from_files.expectation.output)


def test_unnamed_tensors_go_by_position_and_names_by_name(tmp_path):
    folder = write_test(tmp_path, "test_g")
    data_set = folder / "test_data_set_0"
    for j, array in enumerate((np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 0]))):
        (data_set / f"input_{j}.pb").write_bytes(numpy_helper.from_array(array).SerializeToString())
    (case,) = load_all([tmp_path]).cases
    assert case.data.shape == (2, 3) and case.indices.tolist() == [1, 0]


@pytest.mark.parametrize(
    ("baked", "dims", "variant"),
    [
        ((), None, "static"),
        ((), {"data": ["n", 3], "indices": [2]}, "dynamic"),
        (("indices",), None, "indices-initializer"),
        (("data",), None, "data-initializer"),
        (("data", "indices"), None, "both-initializers"),
    ],
)
def test_the_variant_a_tests_model_is_is_said_and_its_initializers_read(
    tmp_path, baked, dims, variant
):
    write_test(tmp_path, "test_g", _model(baked=baked, dims=dims))
    (case,) = load_all([tmp_path]).cases
    assert f"variant-{variant}" in case.tags
    assert case.data.tolist() == [[0, 1, 2], [3, 4, 5]] and case.indices.tolist() == [1, 0]


def test_a_scalar_stays_a_scalar(tmp_path):
    data, index = np.arange(6, dtype=np.float32).reshape(2, 3), np.array(1, np.int64)
    write_test(tmp_path, "test_g", _model(indices=index),
               feeds={"data": data, "indices": index}, output=data[1])  # fmt: skip
    (case,) = load_all([tmp_path]).cases
    assert case.indices.shape == () and case.expectation.output.shape == (3,)


def test_strings_keep_every_character(tmp_path):
    data = np.array(["a\0", "\0", "é\0\0"], dtype=object)  # numpy_helper.to_array drops NULs
    write_test(tmp_path, "test_s", _model(data=data),
               feeds={"data": data, "indices": np.array([1, 0])}, output=data[[1, 0]])  # fmt: skip
    (case,) = load_all([tmp_path]).cases
    assert case.data.tolist() == ["a\0", "\0", "é\0\0"]
    assert case.expectation.output.tolist() == ["\0", "a\0"]


def test_a_string_that_is_not_utf8_is_not_taken(tmp_path):
    folder = write_test(tmp_path, "test_s", _model(data=np.array(["a", "b"], dtype=object)),
                        feeds={"data": np.array(["a", "b"], dtype=object),
                               "indices": np.array([1, 0])},
                        output=np.array(["b", "a"], dtype=object))  # fmt: skip
    tensor = helper.make_tensor("data", onnx.TensorProto.STRING, [2], [b"\xff", b"b"])
    (folder / "test_data_set_0" / "input_0.pb").write_bytes(tensor.SerializeToString())
    write_test(tmp_path, "test_ok")
    (not_taken,) = load_all([tmp_path / "test_s", tmp_path]).not_taken  # read once
    assert not_taken.reason == "input_0.pb holds a string that is not UTF-8 (strings here are text)"


def test_ids_come_from_the_folder_and_the_data_set(tmp_path):
    folder = write_test(tmp_path, "Test.Gather v2")
    write_test(tmp_path, "Test.Gather v2", data_set="second")
    ids = sorted(c.id for c in load_all([tmp_path]).cases)
    assert ids == ["test-gather-v2-second.op13.float32.int64", "test-gather-v2.op13.float32.int64"]
    assert folder.is_dir()


def test_the_model_opset_gives_the_operator_version(tmp_path):
    write_test(tmp_path, "test_g", _model(opset=21, axis=None))
    write_test(tmp_path, "test_old", _model(opset=9))
    cases = sorted(load_all([tmp_path]).cases, key=lambda c: c.id)
    assert [(c.id, c.axis) for c in cases] == [
        ("test_g.op13.float32.int64", None),  # Gather-13 is the newest at opset 21; no axis
        ("test_old.op1.float32.int64", 0),
    ]


def test_a_command_given_a_model_reads_its_folder(tmp_path):
    folder = write_test(tmp_path, "test_g")
    (case,) = load_all([folder / "model.onnx"]).cases
    assert case.base_id == "test_g"


# -- what is not a case ---------------------------------------------------------------
def _two_nodes() -> onnx.ModelProto:
    return _model(nodes=[helper.make_node("Identity", ["data"], ["d2"]),
                         helper.make_node("Gather", ["d2", "indices"], ["y"])])  # fmt: skip


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda f: write_test(f, "t", _two_nodes()),
         "2 nodes (Gather, Identity): a case is one Gather, GatherElements or GatherND node"),
        (lambda f: write_test(f, "t", _model(op="Add", axis=None)),
         "its node is Add, not Gather, GatherElements or GatherND"),
        (lambda f: write_test(f, "t", _model(op="GatherElements", opset=10)),
         "GatherElements does not exist at opset 10"),
        (lambda f: shutil.rmtree(write_test(f, "t") / "test_data_set_0"),
         "no data set (a subfolder such as test_data_set_0 with input_<j>.pb and output_0.pb)"),
        (lambda f: shutil.copy(write_test(f, "t") / "model.onnx", f / "t" / "other.onnx"),
         "2 models (model.onnx, other.onnx): the data sets belong to which?"),
        (lambda f: write_test(f, "t", _model(nodes=[helper.make_node(
            "Gather", ["data", "indices"], ["y"], axis=0, extra=1)])),
         "its Gather node has an attribute 'extra' (only axis)"),
    ],
    ids=["several-nodes", "another-op", "op-not-in-opset", "no-data-set", "two-models",
         "unknown-attribute"],
)  # fmt: skip
def test_a_folder_that_is_not_a_gather_test_is_not_taken_with_the_reason(
    tmp_path, capsys, make, reason
):
    make(tmp_path)
    write_test(tmp_path, "test_ok")
    loaded = load_all([tmp_path])
    assert [c.base_id for c in loaded.cases] == ["test_ok"]
    assert [(n.folder, n.reason) for n in loaded.not_taken] == [(tmp_path / "t", reason)]
    assert main(["cases", "list", str(tmp_path)]) == 0
    assert f"not taken: {tmp_path / 't'}: {reason}" in capsys.readouterr().err


def test_nothing_taken_is_an_error_that_lists_the_reasons(tmp_path, capsys):
    write_test(tmp_path, "t", _two_nodes())
    assert main(["cases", "list", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 't'}: not taken: 2 nodes (Gather, Identity)" in err
    assert "no case: no case file, and no test folder is a Gather or GatherElements test" in err
    assert "Traceback" not in err


# -- bad test folders: an error naming the file, exit 2 --------------------------------
def _rename(folder: Path, old: str, new: str) -> None:
    (folder / "test_data_set_0" / old).rename(folder / "test_data_set_0" / new)


def _write(folder: Path, name: str, data: bytes) -> None:
    (folder / name).write_bytes(data)


def _short_of_values() -> bytes:
    tensor = numpy_helper.from_array(np.zeros((2, 3), np.float32), "data")
    tensor.raw_data = tensor.raw_data[:-4]  # dims say 6 elements, the bytes hold 5
    return tensor.SerializeToString()


def _cut_before_opset(path: Path) -> bytes:
    """The model's bytes up to its opset_import (field 8, written last): a
    truncation protobuf itself cannot see."""
    whole = path.read_bytes()
    model = onnx.load_from_string(whole)
    model.ClearField("opset_import")
    cut = model.SerializeToString()
    assert whole.startswith(cut) and len(cut) < len(whole)
    return cut


BAD = {
    "missing-input": (
        lambda t: (t / "test_data_set_0" / "input_1.pb").unlink(),
        "test_data_set_0/input_1.pb: missing: the model has 2 input(s) (data, indices), "
        "test_data_set_0 gives 1",
    ),
    "extra-input": (
        lambda t: shutil.copy(t / "test_data_set_0" / "input_1.pb",
                              t / "test_data_set_0" / "input_2.pb"),
        "test_data_set_0/input_2.pb: extra: the model has 2 input(s) (data, indices), "
        "test_data_set_0 gives 3",
    ),
    "gap-in-numbers": (
        lambda t: _rename(t, "input_1.pb", "input_2.pb"),
        "test_data_set_0/input_2.pb: mis-numbered: input_1.pb is missing "
        "(input_<j>.pb count from 0 without a gap)",
    ),
    "leading-zero": (
        lambda t: _rename(t, "input_1.pb", "input_01.pb"),
        "test_data_set_0/input_01.pb: mis-numbered: input_<j>.pb with j = 0, 1, 2, ...",
    ),
    "stray-pb": (
        lambda t: _write(t / "test_data_set_0", "expected.pb", b""),
        "test_data_set_0/expected.pb: extra file: a data set holds input_<j>.pb and "
        "output_<j>.pb (or ONNX Runtime's inputs.pb and outputs.pb)",
    ),
    "missing-output": (
        lambda t: (t / "test_data_set_0" / "output_0.pb").unlink(),
        "test_data_set_0/output_0.pb: missing: the model has 1 output(s) (y), "
        "test_data_set_0 gives 0",
    ),
    "not-a-tensor": (
        lambda t: _write(t / "test_data_set_0", "input_0.pb", b"\xff\xff\xff"),
        "test_data_set_0/input_0.pb: input_0.pb is not a TensorProto (Error parsing message",
    ),
    "empty-pb": (
        lambda t: _write(t / "test_data_set_0", "input_1.pb", b""),
        "test_data_set_0/input_1.pb: input_1.pb is not a TensorProto: it has no element type",
    ),
    "values-cut-short": (
        lambda t: _write(t / "test_data_set_0", "input_0.pb", _short_of_values()),
        "test_data_set_0/input_0.pb: input_0.pb is not a readable TensorProto",
    ),
    "truncated-model": (
        lambda t: _write(t, "model.onnx", (t / "model.onnx").read_bytes()[:40]),
        "model.onnx: not an ONNX model (Error parsing message",
    ),
    "model-cut-before-its-opset": (
        lambda t: _write(t, "model.onnx", _cut_before_opset(t / "model.onnx")),
        "model.onnx: imports no opset of the default domain (ai.onnx)",
    ),
    "empty-model": (
        lambda t: _write(t, "model.onnx", b""),
        "model.onnx: not an ONNX model: no graph node (a truncated or damaged file?)",
    ),
    "unknown-name": (
        lambda t: _write(t / "test_data_set_0", "input_1.pb",
                         numpy_helper.from_array(np.array([0]), "idx").SerializeToString()),
        "test_data_set_0/input_1.pb: input_1.pb names 'idx', which is not one of the model's "
        "inputs (data, indices)",
    ),
    "same-name-twice": (
        lambda t: _write(t / "test_data_set_0", "input_1.pb",
                         numpy_helper.from_array(np.array([0]), "data").SerializeToString()),
        "test_data_set_0/input_1.pb: input_1.pb gives 'data' again (as does input_0.pb)",
    ),
    "dtype-not-declared": (
        lambda t: _write(t / "test_data_set_0", "input_1.pb",
                         numpy_helper.from_array(np.array([0], np.int32), "indices")
                         .SerializeToString()),
        "test_data_set_0/input_1.pb: holds int32 but the model declares 'indices' as int64",
    ),
    "shape-not-declared": (
        lambda t: _write(t / "test_data_set_0", "input_1.pb",
                         numpy_helper.from_array(np.array([0, 1, 0]), "indices")
                         .SerializeToString()),
        "test_data_set_0/input_1.pb: has shape [3] but the model declares 'indices' as [2]",
    ),
    "both-stream-and-files": (
        lambda t: _write(t / "test_data_set_0", "inputs.pb", b""),
        "test_data_set_0/input_0.pb: both inputs.pb and input_0.pb: which one is the inputs?",
    ),
    "stream-cut-short": (
        lambda t: (_write(t / "test_data_set_0", "outputs.pb",
                          tml_stream(("y", np.zeros((2, 3), np.float32)))[:-3]),
                   (t / "test_data_set_0" / "output_0.pb").unlink()),
        "test_data_set_0/outputs.pb: item 1 is truncated",
    ),
    "stream-of-a-map": (
        lambda t: (_write(t / "test_data_set_0", "outputs.pb", b"\x02\x0a\x00"),
                   (t / "test_data_set_0" / "output_0.pb").unlink()),
        "test_data_set_0/outputs.pb: item 1 holds a map or a vector, not a tensor",
    ),
}  # fmt: skip


@pytest.mark.parametrize("kind", BAD)
def test_a_bad_test_folder_is_an_error_naming_the_file(tmp_path, kind):
    break_it, said = BAD[kind]
    folder = write_test(tmp_path, "test_g")
    break_it(folder)
    assert f"{folder}/{said}" in errors_of(tmp_path)


def test_bad_folders_exit_2_and_every_one_is_said(tmp_path, capsys):
    for kind in ("missing-input", "truncated-model"):
        BAD[kind][0](write_test(tmp_path, f"test_{kind}"))
    write_test(tmp_path, "test_ok")
    for command in (["cases", "list"], ["cases", "validate"], ["run", "--cases"]):
        assert main([*command, str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert "test_missing-input/test_data_set_0/input_1.pb: missing" in err
        assert "test_truncated-model/model.onnx: not an ONNX model" in err
        assert "2 problem(s) in case files; nothing was run" in err
        assert "Traceback" not in err


def test_the_same_id_twice_is_an_error(tmp_path):
    write_test(tmp_path / "a", "test_g")
    write_test(tmp_path / "b", "test_g")
    message = errors_of(tmp_path)
    assert f"{tmp_path}/b/test_g/test_data_set_0: id: duplicate id 'test_g' (first at " \
        f"{tmp_path}/a/test_g/test_data_set_0)" in message  # fmt: skip


# -- an output that is not the oracle's: a defect of the test data ---------------------
def test_an_output_that_disagrees_with_the_oracle_is_a_case_problem(tmp_path, capsys):
    wrong = np.arange(6, dtype=np.float32).reshape(2, 3)  # the data, not the gather
    write_test(tmp_path, "test_wrong", output=wrong)
    assert main(["cases", "validate", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert (
        f"{tmp_path}/test_wrong/test_data_set_0: test_wrong.op13.float32.int64: expected output "
        "differs from the oracle's"
    ) in out.err
    code = main(["run", "--cases", str(tmp_path), "--runtime", "reference", "--variants",
                 "static", "--out", str(tmp_path / "run"), "--no-progress"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "1 case problem(s): a case file's expectation disagrees with the oracle" in err
    corpus = records.read_folder(tmp_path / "run").header["corpus"]
    assert corpus["files"] == 4  # the model, input_0.pb, input_1.pb, output_0.pb: in the digest


def test_the_pytest_plugin_collects_a_backend_test_below_cases(tmp_path):
    write_test(tmp_path / "cases", "test_g")
    write_test(tmp_path / "cases", "test_two", _two_nodes())
    result = run_pytest(tmp_path, "-p", "conformance", "cases", "--collect-only", "-q", "-rs",
                        "--conformance-runtime", "reference", "--conformance-variants",
                        "static")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cases/test_g/model.onnx::test_g.op13.float32.int64[reference-static]" in result.stdout
    assert "not taken: cases/test_two: 2 nodes (Gather, Identity)" in result.stdout


# -- the round trip: export, then the export's folders as cases -------------------------
ROUND_TRIP = (  # outcomes of several kinds (a crash costs a worker restart: none here)
    "gather-every-dtype.op13.string.int64",  # ONNX Runtime: strings emptied
    "gather-every-dtype.op13.complex64.int64",  # refused by ONNX Runtime and OpenVINO
    "gather-every-dtype.op13.bfloat16.int64",
    "gather-float32-special-bits.op13.float32.int64",  # OpenVINO: NaN payloads, baked data
    "ge-float16-special-bits.op13.float16.int64",  # OpenVINO: float16 NaNs
    "gather-string-trailing-nul.op13.string.int64",  # OpenVINO cannot bind it: not checked
)
# the case files that hold them (the whole corpus takes seconds to load)
ROUND_TRIP_FILES = ("gather/dtypes.yaml", "gather/values.yaml", "gather_elements/values.yaml",
                    "regressions/fuzz_findings.yaml")  # fmt: skip
# What differs between a case and its exported-then-imported self by design: its
# id and where it was read; timings and packing, which depend on its neighbours.
NOT_COMPARED = ("case_id", "base_id", "source", "load_ms", "run_ms", "cached", "packed",
                "packed_kind", "confirmed", "run_id", "note", "message")  # fmt: skip


def test_export_then_import_gives_the_same_outcomes_per_case_variant_and_runtime(tmp_path):
    """`conformance export`, then its test folders read back as `run --cases
    OUT_DIR/node` reads them: every imported test, in every variant, on every
    runtime, has the outcome its case has there (each case is exported once per
    variant, and each of those five tests is judged in all five). One run holds
    the case files' cases and the imported ones (one start of the workers, not
    two); every outcome is decided on its own one-node model either way."""
    from conformance.cases import load
    from conformance.cli import inputs
    from conformance.export import export

    by_id = {c.id: c for c in load([shipped.corpus() / name for name in ROUND_TRIP_FILES])}
    cases = [by_id[case_id] for case_id in ROUND_TRIP]
    exported = tmp_path / "export"
    export(exported, cases, inputs.corpus(None))
    manifest = json.loads((exported / "manifest.json").read_text())
    tests = {t["name"]: t for t in manifest["tests"]}
    assert len(tests) == len(ROUND_TRIP) * len(models.VARIANTS)
    loaded = load_all([exported / "node"])
    assert loaded.not_taken == [] and len(loaded.cases) == len(tests)
    summary = run_cases(
        [*cases, *loaded.cases],
        tmp_path / "run",
        Options(adapters.installed_builtins(), models.VARIANTS, workers=1),
    )
    assert summary.case_problems == []  # every exported output_0.pb is the oracle's
    want, got = {}, []
    for record in records.read_folder(tmp_path / "run").records:
        if record["case_id"] in by_id:
            want[(record["case_id"], record["variant"], record["runtime"])] = record
        else:
            got.append(record)
    assert len(got) == len(want) * len(models.VARIANTS)
    for record in got:
        test = tests[record["base_id"]]  # the folder's name is the imported case's id
        assert record["base_id"].endswith(f"_{test['variant']}")
        original = want[(test["case_id"], record["variant"], record["runtime"])]
        assert _compared(record) == _compared(original), (test["name"], record["variant"])
    kinds = {r["kind"] for r in got}
    assert {"pass", "value_mismatch", "rejected"} <= kinds  # not a selection of passes only


# GatherND's tests read back (no runtime: cheap): batch_dims at 0, 1 and 2, absent,
# at opset 11 and 12, zero batches, strings (every character) and special float bits.
ND_ROUND_TRIP = ("gnd-batch-dims-1.op12.int32.int64", "gnd-batch-dims-at-bound.op13.int32.int64",
                 "gnd-zero-batches.op13.int32.int64", "gnd-negative-indices.op11.int32.int64",
                 "gnd-every-dtype.op13.string.int64", "gnd-every-dtype.op13.float16.int64",
                 "gnd-every-dtype.op13.bfloat16.int64")  # fmt: skip


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and bytes (strings: every character)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return a.tolist() == b.tolist() if a.dtype == object else a.tobytes() == b.tobytes()


def test_gathernd_tests_exported_then_imported_are_the_same_cases_byte_for_byte(tmp_path):
    """`conformance export` of GatherND cases, then the test folders read back
    (`--cases OUT_DIR/node`): each test is its case again, in its variant: op,
    opset, batch_dims (the model's attribute, the manifest's `axis`), data and
    indices (fed or baked), and the expected output, bit for bit."""
    from conformance.cases import load
    from conformance.cli import inputs
    from conformance.export import export
    from conformance.oracle import evaluate

    by_id = {c.id: c for c in load([shipped.corpus() / "gather_nd"])}
    cases = [by_id[case_id] for case_id in ND_ROUND_TRIP]
    exported = tmp_path / "export"
    export(exported, cases, inputs.corpus(None))
    tests = {t["name"]: t for t in json.loads((exported / "manifest.json").read_text())["tests"]}
    loaded = load_all([exported / "node"])
    assert loaded.not_taken == [] and len(loaded.cases) == len(tests) == 5 * len(cases)
    for imported in loaded.cases:
        test = tests[imported.base_id]
        case = by_id[test["case_id"]]
        model = onnx.load(exported / "node" / test["name"] / "model.onnx")
        attributes = {a.name: a.i for a in model.graph.node[0].attribute}
        assert attributes == ({} if case.axis is None else {"batch_dims": case.axis})
        assert test["axis"] == case.axis == imported.axis, test["name"]
        assert (imported.op, imported.opset) == (case.op, case.opset) == ("GatherND", test["opset"])
        assert f"variant-{test['variant'].replace('_', '-')}" in imported.tags
        assert _same(imported.data, case.data) and _same(imported.indices, case.indices)
        expected = evaluate(case.op, case.opset, case.data, case.indices, case.axis)
        assert _same(imported.expectation.output, expected), test["name"]
        assert imported.id == f"{imported.base_id}.op{case.opset}.{case.dtype}.int64"


def _compared(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in NOT_COMPARED}
