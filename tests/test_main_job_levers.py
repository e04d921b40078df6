"""What makes the main job cheap without changing a verdict (docs/development.md,
"The main job's time"): onnx.reference's wrap loop counted instead of waited
for, and OpenVINO's compiled-model cache in its own folder. In-process, real
runtimes: a few seconds in all."""

from __future__ import annotations

import os
import pickle
import time
from types import SimpleNamespace

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference.ops.op_gather_elements import GatherElements as EvaluatorGatherElements

from conformance import oracle
from conformance.adapters import LoadError, WouldNotFinish, probe_model, reference
from conformance.engine import judge, pool, worker


def ge_model(n: int, k: int, axis: int = 0) -> bytes:
    """GatherElements on int32 data of shape [n, 2], int64 indices of shape [k, 2], fed."""
    graph = helper.make_graph(
        [helper.make_node("GatherElements", ["data", "indices"], ["output"], axis=axis)],
        "ge",
        [
            helper.make_tensor_value_info("data", TensorProto.INT32, [n, 2]),
            helper.make_tensor_value_info("indices", TensorProto.INT64, [k, 2]),
        ],
        [helper.make_tensor_value_info("output", TensorProto.INT32, [k, 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def untouched(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """The evaluator's own operator, as onnx ships it (its wrap loop included)."""
    return object.__new__(EvaluatorGatherElements)._run(data, indices, axis=axis)[0]


def counted(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """The adapter's operator (made without a node: _run reads none)."""
    return object.__new__(reference.gather_elements())._run(data, indices, axis=axis)[0]


def test_wrap_steps_counts_numpy_s_loop_exactly():
    # i >= n: i // n steps down; i < 0: ceil(-i / n) steps up; in range: none
    indices = np.array([0, 2, 3, 7, -1, -3, -4], np.int64)
    assert reference.wrap_steps(indices, 3) == 0 + 0 + 1 + 2 + 1 + 1 + 2
    extremes = np.array([2**63 - 1, -(2**63)], np.int64)
    assert reference.wrap_steps(extremes, 3) == (2**63 - 1) // 3 + (2**63 + 2) // 3


def test_the_evaluator_s_source_holds_the_call_counted():
    # onnx as pinned gathers with the wrap call; another would run untouched
    assert reference.counts_wrap_loop()


def test_numpy_still_wraps_by_a_loop():
    # What the counted timeout rests on: wrap mode costs a step per axis size.
    # 2**29 steps take ~0.2 s of CPU here; a modulo would take a microsecond.
    index, choices = np.array([2**29], np.intp), np.zeros((1, 1))
    start = time.process_time()
    np.choose(index, choices, mode="wrap")
    assert time.process_time() - start > 0.005


def test_choose_limit_is_where_numpy_refuses():
    limit = reference.choose_limit()
    index = np.zeros(1, np.intp)
    np.choose(index, np.zeros((limit, 1)), mode="wrap")
    with pytest.raises(ValueError):
        np.choose(index, np.zeros((limit + 1, 1)), mode="wrap")


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_reduced_indices_give_the_evaluator_s_own_answer(axis):
    # Far enough out of range to be reduced (over WRAP_STEPS_RUN steps), near
    # enough for the untouched loop to finish in milliseconds.
    rng = np.random.default_rng(7)
    data = rng.integers(-99, 99, size=(3, 3)).astype(np.int32)
    far = 2**24
    # the shapes equal: axis -1 makes the evaluator compare whole shapes
    indices = np.array([[far, -far - 1, 5], [far + 2, 1, -(far // 2)], [2, -3, far]], np.int64)
    assert reference.wrap_steps(indices, 3) > reference.WRAP_STEPS_RUN
    got, expected = counted(data, indices, axis), untouched(data, indices, axis)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


def test_paths_that_read_no_index_are_left_to_the_evaluator():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    # off-axis shapes differ: the evaluator refuses before reading an index
    assert reference._wrapped_axis(data, np.full((1, 2), 2**40, np.int64), 0) == 0
    # uint64: the evaluator converts first (its TypeError path)
    assert reference._wrapped_axis(data, np.zeros((1, 3), np.uint64), 0) == 0
    # more elements on the axis than choose takes: its 2-D path
    wide = np.zeros((reference.choose_limit() + 1, 1), np.float32)
    assert reference._wrapped_axis(wide, np.zeros((1, 1), np.int64), 0) == 0
    assert reference._wrapped_axis(data, np.zeros((0, 3), np.int64), 0) == 0
    assert reference._wrapped_axis(data, np.zeros((1, 3), np.int64), 0) == 2


def test_an_index_that_would_never_wrap_is_a_timeout_counted_not_waited_for():
    adapter = reference.ReferenceAdapter()
    feeds = {
        "data": np.arange(6, dtype=np.int32).reshape(3, 2),
        "indices": np.array([[2**63 - 1, 0]], np.int64),
    }
    with pytest.raises(WouldNotFinish, match="no result in any timeout"):
        adapter.run(ge_model(3, 1), feeds)
    # in the worker's wire format, through the pool and the judge: a timeout
    result = worker.run_job(adapter, (None, ge_model(3, 1), feeds))
    assert result[0] == "timeout"
    raw = pool._raw_from_wire(pickle.dumps(result))
    assert raw.status == "timeout" and "counted before running" in raw.message
    said = oracle.verdict("GatherElements", 13, feeds["data"], feeds["indices"], 0)
    assert not said.valid  # index-out-of-range: the spec's error, and the runtime hangs
    outcome = judge.judge(said, raw)
    assert outcome.kind == "timeout"


def test_the_adapter_still_answers_in_range_and_far_out_of_range_inputs():
    adapter = reference.ReferenceAdapter()
    data = np.arange(6, dtype=np.int32).reshape(3, 2)
    near = np.array([[2, 0]], np.int64)
    far = np.array([[2**32, 2**32 + 1]], np.int64)  # 1.4e9 steps each: reduced, at once
    assert adapter.run(ge_model(3, 1), {"data": data, "indices": near}).outputs[0].tolist() == [
        [4, 1]
    ]
    out = adapter.run(ge_model(3, 1), {"data": data, "indices": far}).outputs[0]
    assert out.tolist() == [[data[2**32 % 3, 0], data[(2**32 + 1) % 3, 1]]]


# -- OpenVINO's compiled-model cache ----------------------------------------------------

ov_adapter = pytest.importorskip("conformance.adapters.ov")


def test_cache_folder_default_override_and_off(monkeypatch, tmp_path):
    monkeypatch.delenv(ov_adapter.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert ov_adapter.cache_root() == str(tmp_path / "onnx-gather-conformance" / "openvino")
    monkeypatch.setenv(ov_adapter.CACHE_ENV, str(tmp_path / "mine"))
    assert ov_adapter.cache_root() == str(tmp_path / "mine")
    monkeypatch.setenv(ov_adapter.CACHE_ENV, "off")
    assert ov_adapter.cache_root() is None


def test_cache_key_holds_the_properties_and_the_device():
    key = ov_adapter.cache_key("CPU one", {})
    assert key == ov_adapter.cache_key("CPU one", {})
    assert key != ov_adapter.cache_key("CPU two", {})
    assert key != ov_adapter.cache_key("CPU one", {"INFERENCE_PRECISION_HINT": "f32"})


def probe_feeds():
    return {"data": np.arange(4, dtype=np.float32), "indices": np.array([3, 0], np.int64)}


def test_compiles_land_in_the_keyed_folder_and_read_back_the_same(monkeypatch, tmp_path):
    monkeypatch.setenv(ov_adapter.CACHE_ENV, str(tmp_path))
    first = ov_adapter.OpenVinoAdapter()
    assert os.path.dirname(first.cache_dir) == str(tmp_path)
    cold = first.run(probe_model(), probe_feeds()).outputs[0]
    blobs = os.listdir(first.cache_dir)
    assert blobs  # OpenVINO wrote the compiled model
    warm = ov_adapter.OpenVinoAdapter().run(probe_model(), probe_feeds()).outputs[0]
    assert os.listdir(first.cache_dir) == blobs  # read back, not compiled again
    assert cold.tobytes() == warm.tobytes() == np.array([3, 0], np.float32).tobytes()


def test_off_sets_no_cache_folder(monkeypatch):
    monkeypatch.setenv(ov_adapter.CACHE_ENV, "off")
    adapter = ov_adapter.OpenVinoAdapter()
    assert adapter.cache_dir is None
    assert adapter._core.get_property("CACHE_DIR") == ""


def test_a_folder_it_cannot_make_means_no_cache(monkeypatch, tmp_path):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(ov_adapter.CACHE_ENV, str(tmp_path / "a-file"))
    adapter = ov_adapter.OpenVinoAdapter()
    assert adapter.cache_dir is None
    assert adapter.run(probe_model(), probe_feeds()).outputs[0].tolist() == [3.0, 0.0]


class RacingCore:
    """OpenVINO's Core whose next compile fails as its cache manager does when two
    workers write one blob (seen about once in six corpus runs; not on demand)."""

    def __init__(self, core, message: str) -> None:
        self._core, self._message = core, message

    def read_model(self, *args):
        return self._core.read_model(*args)

    def compile_model(self, *args):
        raise RuntimeError(self._message)


def test_a_cache_failure_is_compiled_again_without_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(ov_adapter.CACHE_ENV, str(tmp_path))
    adapter = ov_adapter.OpenVinoAdapter()
    race = (
        "Exception from src/inference/src/cpp/core.cpp:117:\nfilesystem error: cannot set "
        f"permissions: No such file or directory [{adapter.cache_dir}/136910359947.blob]"
    )
    adapter._core = RacingCore(adapter._core, race)
    assert adapter.run(probe_model(), probe_feeds()).outputs[0].tolist() == [3.0, 0.0]
    # the model's own failure is the runtime's word, not retried
    adapter._core = RacingCore(adapter._core._core, "Model wasn't fully converted")
    with pytest.raises(LoadError, match="fully converted"):
        adapter.run(probe_model(), probe_feeds())


def test_a_fuzz_campaign_runs_without_the_cache_unless_asked(monkeypatch):
    from conformance.cli import fuzz

    monkeypatch.delenv(ov_adapter.CACHE_ENV, raising=False)
    assert fuzz.OPENVINO_CACHE_ENV == ov_adapter.CACHE_ENV

    class Stop(Exception):
        pass

    def stop(summary_md):
        raise Stop

    monkeypatch.setattr(fuzz.finish, "check_outputs", stop)
    args = SimpleNamespace(summary_md=None)  # the first option the command reads, after the cache
    with pytest.raises(Stop):
        fuzz.command(args)
    assert os.environ[ov_adapter.CACHE_ENV] == "off"
    monkeypatch.setenv(ov_adapter.CACHE_ENV, "/somewhere")
    with pytest.raises(Stop):
        fuzz.command(args)
    assert os.environ[ov_adapter.CACHE_ENV] == "/somewhere"
