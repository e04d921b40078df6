"""The fuzz campaign: signatures, what it saves, and `conformance fuzz` end to end
against the real OpenVINO (and a conforming fake runtime for the quiet case)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from conformance import oracle
from conformance.cases import loader
from conformance.engine.judge import DISCREPANCIES, KINDS
from conformance.engine.pool import WorkerPool
from conformance.engine.run import Options
from conformance.fuzz import artifacts, campaign
from conformance.fuzz import options as fuzz_options
from conformance.fuzz.campaign import Campaign, CampaignOptions, FoundClass
from conformance.fuzz.signature import signature_of
from conformance.strategies import Example
from conformance.tables.features import FEATURES, features
from tests.conftest import FIRST_ROUND_COMPLEX_SEED, REPO, conformance_here

CONFORMING = "tests.faulty_adapter:FaultyAdapter"  # the oracle's answers unless provoked


def example(op="Gather", data=None, indices=None, axis=0, opset=13, variant="static"):
    data = np.arange(6, dtype=np.float32).reshape(2, 3) if data is None else data
    indices = np.array([0], dtype=np.int64) if indices is None else indices
    return Example(op, opset, axis, data, indices, variant)


# -- signatures --------------------------------------------------------------------
@pytest.mark.parametrize(
    "made,expected",
    [
        (example(), ("block_copy",)),  # axis 0 of [2, 3]: each index selects a row
        (example(axis=1, indices=np.array([2])), ()),  # the last axis: one element each
        (example(indices=np.array([-1, 1])), ("negative", "block_copy")),
        (example(indices=np.array([2])), ("out_of_range", "block_copy")),
        (example(indices=np.array([-3])), ("negative", "out_of_range", "block_copy")),
        (example(indices=np.array([2**31])), ("out_of_range", "beyond_int32", "block_copy")),
        (example(axis=1, indices=np.array(1)), ("scalar_indices",)),
        (example(indices=np.zeros((0, 2), np.int64)), ("empty_indices", "block_copy")),
        (
            example(data=np.zeros((0, 3), np.float32), indices=np.zeros(0, np.int64)),
            ("empty_indices", "empty_data", "zero_size_axis", "block_copy"),
        ),
        (example(data=np.zeros((2, 0), np.float32)), ("empty_data",)),
        (
            example(op="GatherElements", indices=np.zeros((2, 2), np.int64), axis=0),
            ("smaller_off_axis",),
        ),
        (
            example(op="GatherElements", indices=np.zeros((1, 2), np.int64), axis=0),
            ("smaller_off_axis", "axis_size_differs"),
        ),
        (
            example(op="GatherElements", indices=np.zeros((5, 3), np.int64), axis=0),
            ("axis_size_differs",),
        ),
        (
            example(op="GatherElements", indices=np.zeros((1, 3), np.int64), axis=-2),
            ("axis_size_differs",),
        ),
        (example(op="GatherElements", indices=np.zeros((2, 3), np.int64), axis=1), ()),
        (example(axis=7, indices=np.array([5])), ()),  # no axis: no range to be out of
    ],
)
def test_features_are_read_from_the_input(made, expected):
    assert features(made) == expected
    assert set(expected) <= set(FEATURES)


def test_signature_slug_is_a_safe_file_name():
    sig = signature_of(
        example(indices=np.array([-7])), "openvino", "accepted_invalid", "index-out-of-range"
    )
    assert sig.slug == (
        "openvino-gather13-accepted_invalid-float32-static-index-out-of-range-negative-out_of_range"
        "-block_copy"
    )
    assert sig.to_json()["features"] == ["negative", "out_of_range", "block_copy"]


# -- what a class leaves on disk ------------------------------------------------------
def _found(made: Example, runtime="openvino", kind="value_mismatch") -> FoundClass:
    verdict = oracle.verdict(made.op, made.opset, made.data, made.indices, made.axis)
    clause = None if verdict.valid else verdict.violation.clause
    signature = signature_of(made, runtime, kind, clause)
    return FoundClass(1, signature, "b-000000000000", 0.5, made, verdict)


def _bits(array: np.ndarray) -> bytes:
    return array.tobytes() if array.dtype != object else repr(array.tolist()).encode()


TRICKY = {
    "float32 payloads": example(
        data=np.array([0x7FC00001, 0xFFC12345, 0x7F800001, 0x80000000, 0x00000001], np.uint32)
        .view(np.float32)
        .reshape(5, 1),
        indices=np.array([4, -5, 2]),
    ),
    "complex64 signalling NaN": example(
        data=np.array([[0x7F800001, 0x80000000], [0, 0x7FC00000]], np.uint32)
        .view(np.complex64)
        .reshape(2),
        indices=np.array([1, 0]),
        opset=11,
    ),
    "bfloat16": example(
        data=np.array([0x7FC1, 0x8000, 0x0001], np.uint16).view(ml_dtypes.bfloat16),
        indices=np.array([2, 0], np.int32),
    ),
    "hostile strings": example(
        data=np.array(["<script>alert(1)</script>", "", "nul\x00inside", "é中😀", "a\nb"], object),
        indices=np.array([[4, 3], [2, 0]]),
    ),
    "uint64 extremes, GatherElements": example(
        op="GatherElements",
        data=np.array([[2**64 - 1, 0], [2**63, 1]], np.uint64),
        indices=np.array([[1], [0]]),
        axis=1,
    ),
    "empty complex": example(
        data=np.zeros((3, 0), np.complex128), indices=np.zeros((2, 0), np.int64), axis=1, opset=11
    ),
    "empty strings tensor": example(
        data=np.empty((0, 2), object), indices=np.zeros((0,), np.int64), opset=11
    ),
    "scalar complex data (invalid)": example(
        data=np.array(1 - 2j, np.complex128), indices=np.array(0), opset=11
    ),
    "scalar data (invalid)": example(data=np.array(3.5, np.float64), indices=np.array(0)),
    "out of range (invalid)": example(indices=np.array([-(2**40)]), variant="both_initializers"),
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_case_yaml_reproduces_the_example_bit_for_bit(tmp_path, name):
    made = TRICKY[name]
    found = _found(made)
    artifacts.write_class(found, tmp_path)
    folder = artifacts.class_dir(found, tmp_path)
    (case,) = loader.load_file(folder / "case.yaml")
    assert (case.op, case.opset, case.axis) == (made.op, made.opset, made.axis)
    assert case.data.dtype == made.data.dtype and case.data.shape == made.data.shape
    assert _bits(case.data) == _bits(made.data)
    assert _bits(case.indices) == _bits(made.indices) and case.indices.dtype == made.indices.dtype
    verdict = found.verdict
    if verdict.valid:
        assert case.expectation.kind == "oracle"
    else:
        assert case.expectation.clause == verdict.violation.clause
    # The oracle agrees with the written expectation, as `cases validate` checks.
    done = conformance_here("cases", "validate", str(folder / "case.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr
    with np.load(folder / "inputs.npz", allow_pickle=True) as saved:
        key = "data.bfloat16" if made.dtype == "bfloat16" else "data"
        assert saved[key].tobytes() == made.data.tobytes() or made.data.dtype == object


def test_findings_values_keep_what_json_cannot_hold(tmp_path):
    found = _found(TRICKY["float32 payloads"])
    artifacts.write_class(found, tmp_path)
    entry = artifacts.class_json(found)
    assert entry["case"]["data"]["values"] == [
        ["nan (0x7fc00001)"],
        ["nan (0xffc12345)"],
        ["nan (0x7f800001)"],
        [-0.0],
        [1.401298464324817e-45],
    ]
    assert entry["case"]["indices"] == {"dtype": "int64", "shape": [3], "values": [4, -5, 2]}
    complex_entry = artifacts.class_json(_found(TRICKY["complex64 signalling NaN"]))
    assert complex_entry["case"]["data"]["values"][0] == ["nan (0x7f800001)", -0.0]


def test_big_tensors_point_to_the_npz(tmp_path):
    made = example(data=np.zeros((10_001,), np.float32), indices=np.array([0]))
    found = _found(made)
    artifacts.write_class(found, tmp_path)
    data = artifacts.class_json(found)["case"]["data"]
    assert "values" not in data and data["npz"].endswith("inputs.npz:data")


# -- determinism ---------------------------------------------------------------------
def _stream(seed: int, count: int) -> list[tuple]:
    campaign = Campaign(CampaignOptions(["onnxruntime"], 1, seed, Path("unused"), round_size=16))
    drawn, batch = [], 0
    while len(drawn) < count:  # batches as the campaign draws them, counted as it counts
        draw, *arguments = campaign._next_batch(batch)
        examples = draw(*arguments)
        for made in examples:
            campaign.coverage.add(made)
        drawn += examples
        batch += 1
    drawn = drawn[:count]
    return [
        (
            e.op,
            e.opset,
            e.axis,
            e.variant,
            e.data.dtype.str,
            e.data.shape,
            _bits(e.data),
            _bits(e.indices),
        )
        for e in drawn
    ]


def test_the_example_stream_is_fixed_by_the_seed():
    assert _stream(5, 40) == _stream(5, 40)  # across rounds of 16
    assert _stream(5, 40) != _stream(6, 40)


# -- the command ---------------------------------------------------------------------
def _findings(out: Path) -> dict:
    return json.loads((out / "findings.json").read_text())


def test_fuzz_finds_classifies_and_shrinks_openvino_discrepancies(ov_campaign, tmp_path):
    # 192 examples, seed 1, the shipped baselines: the classes do not depend on the baseline
    out, done = ov_campaign
    assert done.returncode == 0, done.stdout + done.stderr  # every class a known one
    empty = tmp_path / "no-baseline"
    empty.mkdir()
    gated = conformance_here("gate", str(out), "--known", str(empty))
    assert gated.returncode == 1, gated.stdout + gated.stderr  # without a baseline, all is new
    assert "gate FAILED" in gated.stdout
    findings = _findings(out)
    assert findings["seed"] == 1 and findings["runtimes"] == ["openvino"]
    assert findings["examples"] > 50 and findings["examples_per_s"] > 0
    classes = findings["classes"]
    assert classes, "OpenVINO has known discrepancies; 192 examples must find some"
    # A class is a signature and a bug: never two classes of both the same.
    keys = {(json.dumps(c["signature"], sort_keys=True), c["bug"]) for c in classes}
    assert len(keys) == len(classes)
    for entry in classes:
        assert set(entry) >= {"signature", "first_found_s", "hits", "case", "outcomes"}
        assert set(entry["signature"]) == {
            "runtime",
            "op",
            "kind",
            "dtype",
            "variant",
            "opset",
            "violation",
            "features",
        }
        assert entry["signature"]["kind"] in DISCREPANCIES
        assert entry["hits"] >= 1 and 0 <= entry["first_found_s"] <= findings["elapsed_s"]
        case = entry["case"]
        assert set(case) == {"op", "opset", "axis", "variant", "data", "indices"}
        assert set(case["data"]) == {"dtype", "shape", "values"}
        # The values are the example's, as read back from the file.
        with np.load(out / entry["files"]["inputs"], allow_pickle=True) as saved:
            indices = saved["indices"]
        assert case["indices"]["values"] == indices.tolist()
        for outcome in entry["outcomes"].values():
            assert outcome["kind"] in KINDS and isinstance(outcome["message"], str)
        for path in entry["files"].values():
            assert (out / path).is_file()
    shrunk = [c for c in classes if c["shrunk"]]
    assert shrunk, "at least the first classes are shrunk within the budget"
    for entry in shrunk:
        # The shrunk case still shows the discrepancy it was shrunk for.
        assert entry["outcomes"]["openvino"]["kind"] == entry["signature"]["kind"]
    # Every result is recorded; the summary agrees.
    lines = (out / "results.jsonl").read_text().splitlines()
    summary = json.loads((out / "summary.json").read_text())
    assert len(lines) == summary["records"] == findings["examples"] - findings["skipped"]
    # The classes' case files form a valid regression folder.
    regressions = tmp_path / "regressions"
    regressions.mkdir()
    for entry in classes:
        src = out / entry["files"]["case"]
        (regressions / f"{entry['id']}.yaml").write_text(src.read_text())
    done = conformance_here("cases", "validate", str(regressions))
    assert done.returncode == 0, done.stdout + done.stderr
    # A value mismatch's stand-alone script shows it without this package.
    mismatch = next((c for c in shrunk if c["signature"]["kind"] == "value_mismatch"), None)
    if mismatch is not None:
        script = out / mismatch["files"]["repro"]
        ran = subprocess.run(
            [sys.executable, "-I", str(script)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert ran.returncode == 1, ran.stdout + ran.stderr
        assert "DISCREPANCY" in ran.stdout and "expected" in ran.stdout


def test_fuzz_against_a_conforming_runtime_finds_nothing_and_exits_0(tmp_path):
    out = tmp_path / "quiet"
    # Bounded by examples: a 6 s budget is no number of examples on a loaded machine.
    done = conformance_here(
        "fuzz", "--runtime", CONFORMING, "--max-examples", "40", "--time-budget", "3600",
        "--seed", "2", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    findings = _findings(out)
    assert findings["classes"] == [] and findings["examples"] == 40
    assert "0 discrepancy classes" in done.stdout


def test_ctrl_c_keeps_what_was_found(tmp_path):
    out = tmp_path / "stopped"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "conformance",
            "fuzz",
            "--runtime",
            "openvino",
            "--time-budget",
            "120",
            "--seed",
            "3",
            "--out",
            str(out),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        findings = out / "findings.json"
        if findings.exists() and json.loads(findings.read_text())["examples"] > 0:
            break
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stdout + stderr
    findings = _findings(out)
    assert findings["examples"] > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert len((out / "results.jsonl").read_text().splitlines()) == summary["records"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--runtime", "nosuch", "--time-budget", "5", "--seed", "1"], "unknown runtime"),
        (["--time-budget", "0", "--seed", "1"], "--time-budget: '0': give a finite number"),
        (["--time-budget", "5"], "--seed"),
    ],
)
def test_fuzz_usage_errors_exit_2(tmp_path, args, message):
    done = conformance_here("fuzz", *args, "--out", str(tmp_path / "x"))
    assert done.returncode == 2
    assert message in done.stderr


def test_max_elements_from_the_environment_must_be_a_number(tmp_path):
    done = conformance_here(
        "fuzz", "--time-budget", "5", "--seed", "1", "--out", str(tmp_path / "x"),
        env={"CONFORMANCE_MAX_ELEMENTS": "many"},
    )  # fmt: skip
    assert done.returncode == 2 and "CONFORMANCE_MAX_ELEMENTS='many'" in done.stderr


def test_the_campaign_keeps_the_findings_it_wrote(tmp_path):
    """`conformance fuzz` shows the findings the campaign holds (Campaign.written)
    instead of reading findings.json back: what it holds is what the file says."""
    # One round, bounded by examples: a 3 s budget ran none on a loaded machine.
    bounded = CampaignOptions(["reference"], 3600, 1, tmp_path / "fz", max_examples=64)
    ran = Campaign(bounded, command=["conformance"])
    ran.execute()
    written = json.loads((tmp_path / "fz" / "findings.json").read_text(encoding="utf-8"))
    assert written["classes"] and ran.written == written


def test_shards_draw_different_examples_from_one_seed():
    def stream(shard):
        campaign = Campaign(
            CampaignOptions(["onnxruntime"], 1, 5, Path("unused"), round_size=16, shard=shard)
        )
        draw, *arguments = campaign._next_batch(0)
        return [_bits(made.data) for made in draw(*arguments)]

    assert stream((1, 2)) != stream((2, 2))
    assert stream((1, 1)) == [row[-2] for row in _stream(5, 16)]  # 1/1 is the plain stream


@pytest.mark.parametrize("cap", [8, 256])
def test_the_seed_tests_rely_on_draws_its_first_round_at_a_complex_dtype(cap):
    """FIRST_ROUND_COMPLEX_SEED (tests/conftest.py): campaigns that must find a
    discrepancy within a short budget on any machine start with a round whose key
    is a complex dtype, which ONNX Runtime and OpenVINO refuse."""
    options = CampaignOptions(
        ["onnxruntime"], 1, int(FIRST_ROUND_COMPLEX_SEED), Path("unused"), max_elements=cap
    )
    draw, *arguments = Campaign(options)._next_batch(0)
    dtypes = [made.data.dtype for made in draw(*arguments)]
    assert sum(np.issubdtype(d, np.complexfloating) for d in dtypes) > len(dtypes) / 2, dtypes


# -- the engine's options, derived in one place ---------------------------------------
def test_every_engine_option_is_derived_from_the_campaigns():
    """Before: copied by hand, field by field; an engine option added later
    kept its default in every campaign (and shrinking used its own guard)."""
    given = CampaignOptions(
        ["onnxruntime"], 5, 1, Path("unused"), workers=3, workers_chosen="auto", timeout=0.5,
        pack=7, batch_size=5, worker_memory=1 << 30, case_memory=1 << 20,
    )  # fmt: skip
    engine = given.engine()
    assert isinstance(engine, Options)
    for option in fields(Options):
        expected = campaign.CAMPAIGN_SETS.get(option.name, getattr(given, option.name, None))
        assert getattr(engine, option.name) == expected, option.name
    assert engine.case_memory == 1 << 20 and engine.worker_memory == 1 << 30


def test_a_campaign_times_out_fast_but_gives_the_compilers_their_compile_time():
    """2 s a job where a runtime takes milliseconds; a compiler's job compiles a
    pack (a full one takes seconds), and a false timeout would be a false bug."""
    engine = CampaignOptions(["onnxruntime", "tvm"], 5, 1, Path("unused")).engine()
    assert engine.timeout is None
    assert engine.default_timeouts.of("onnxruntime") == engine.default_timeouts.of("x") == 2.0
    assert engine.default_timeouts.of("tvm") == engine.default_timeouts.of("iree") == 30.0
    given = {None: {"onnxruntime": 2.0, "tvm": 30.0}, 0.5: {"onnxruntime": 0.5, "tvm": 0.5}}
    for timeout, expected in given.items():  # --timeout wins over every default
        pool = WorkerPool(
            ["onnxruntime", "tvm"], timeout=timeout, default_timeouts=engine.default_timeouts
        )
        assert {t.name: pool.timeout_of(t) for t in pool.targets} == expected  # not started


def test_an_engine_option_the_campaign_does_not_derive_is_an_error(monkeypatch):
    @dataclass
    class Grown(Options):
        new_option: int = 0

    monkeypatch.setattr(fuzz_options, "Options", Grown)  # where CampaignOptions is defined
    with pytest.raises(TypeError, match="new_option not derived"):
        CampaignOptions(["onnxruntime"], 5, 1, Path("unused")).engine()


# -- files written whole are written atomically -------------------------------------------
def test_a_class_rewritten_after_shrinking_replaces_each_file_whole(tmp_path):
    """Before: model.onnx and the .npz files were rewritten in place, so a
    reader (or a campaign killed mid-write) could see half of one."""
    first = _found(example(data=np.arange(600, dtype=np.float32).reshape(200, 3)))
    artifacts.write_class(first, tmp_path)
    folder = artifacts.class_dir(first, tmp_path)
    names = ("model.onnx", "inputs.npz", "expected.npz", "case.yaml")
    held = {name: (folder / name).open("rb") for name in names}  # a reader, mid-way
    try:
        old = {name: (folder / name).read_bytes() for name in names}
        shrunk = _found(example(indices=np.array([1])))  # the shrunk example: smaller files
        first.example, first.verdict = shrunk.example, shrunk.verdict
        artifacts.write_class(first, tmp_path)
        for name in names:
            assert held[name].read() == old[name], f"{name} was rewritten in place"
            assert (folder / name).read_bytes() != old[name]
    finally:
        for handle in held.values():
            handle.close()
    assert not list(folder.glob("*.partial"))
    with np.load(folder / "inputs.npz") as saved:
        assert saved["data"].shape == (2, 3)


def test_max_examples_ends_a_campaign_after_the_seeds_first_examples(tmp_path):
    """Issue 44, item 17: a campaign bounded by examples ends the same on a
    loaded machine as on a quiet one (a test's 8 s budget ran no example
    under load). 20 examples: the first round of 64 drawn is cut to them."""
    out = tmp_path / "out"
    done = conformance_here(
        "fuzz", "--runtime", CONFORMING, "--max-examples", "20", "--time-budget", "3600",
        "--seed", "2", "--store", "off", "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "for 20 examples or 3600 s, seed 2" in done.stderr
    findings = json.loads((out / "findings.json").read_text())
    assert findings["examples"] == 20
    records = (out / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["case_id"] for line in records) == sorted(
        f"fuzz-{n}" for n in range(1, 21)
    )
    assert json.loads((out / "header.json").read_text())["campaign"]["max_examples"] == 20


@pytest.mark.parametrize("given", ["0", "-3", "2.5", "many"])
def test_max_examples_is_a_whole_number_from_1(tmp_path, given):
    done = conformance_here(
        "fuzz", "--max-examples", given, "--time-budget", "5", "--seed", "1",
        "--out", str(tmp_path / "x"),
    )  # fmt: skip
    assert done.returncode == 2
    assert f"--max-examples: {given!r}: give a whole number >= 1" in done.stderr
    assert not (tmp_path / "x").exists()


# -- GatherND: drawn, found, shrunk, reproduced -----------------------------------------
UNWRAPPED_TUPLES = "tests.faulty_adapter:UnwrappedTuplesAdapter"  # GatherND's negatives read as 0
FIRST_ROUND_GATHER_ND_SEED = 2  # its first round is GatherND's (a key depends on the seed alone)


def test_the_gather_nd_seed_draws_its_first_round_at_gather_nd():
    options = CampaignOptions(["onnxruntime"], 1, FIRST_ROUND_GATHER_ND_SEED, Path("unused"))
    draw, *arguments = Campaign(options)._next_batch(0)
    assert {made.op for made in draw(*arguments)} == {"GatherND"}


@pytest.fixture(scope="module")
def gather_nd_campaign(tmp_path_factory):
    """One round (64 examples) of GatherND on a runtime that reads a tuple's
    negative components as 0, every bug shrunk within 60 runtime calls:
    bounded by examples and calls, never by seconds (a shrink share of the
    whole elapsed time, and seconds it never reaches)."""
    out = tmp_path_factory.mktemp("gnd-campaign") / "fz"
    options = CampaignOptions(
        [UNWRAPPED_TUPLES], 3600, FIRST_ROUND_GATHER_ND_SEED, out, max_examples=64,
        shrink_share=1.0, shrink_seconds=3600, shrink_calls=60,
    )  # fmt: skip
    Campaign(options, command=["conformance"]).execute()
    return out, _findings(out)


def test_fuzz_finds_and_shrinks_a_gather_nd_wrong_value(gather_nd_campaign, tmp_path):
    out, findings = gather_nd_campaign
    assert findings["examples"] == 64
    bugs = findings["bugs"]
    assert bugs and {(b["op"], b["kind"]) for b in bugs} == {("GatherND", "value_mismatch")}
    classes = {c["number"]: c for c in findings["classes"]}
    cases = []
    for bug in bugs:  # one bug per mechanism: an unexplained one per feature set
        first = classes[bug["classes"][0]]
        assert first["shrunk"] and first["shrink"]["steps"] >= 1, first["shrink"]
        assert first["shrink"]["calls"] <= 60
        case = loader.load_file(out / first["files"]["case"])[0]
        assert (case.op, case.dtype) == ("GatherND", first["signature"]["dtype"])
        assert tuple(first["signature"]["features"]) == features(case)  # the class's
        assert "negative" in first["signature"]["features"]
        cases.append(first)
    # The case file is the reproducer: `conformance run` shows the wrong value again.
    first = cases[0]
    again = conformance_here(
        "run", "--cases", str(out / first["files"]["case"]), "--runtime", UNWRAPPED_TUPLES,
        "--gate", "--known", str(tmp_path), "--out", str(tmp_path / "again"),
    )  # fmt: skip
    assert again.returncode == 1 and "value_mismatch" in again.stdout, again.stdout
    # The stand-alone script runs GatherND's model on a real runtime, which wraps them.
    ran = subprocess.run(
        [sys.executable, "-I", str(out / first["files"]["repro"]), "onnxruntime"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "indices: dtype int64" in ran.stdout and "same as expected, bit for bit" in ran.stdout


def test_fuzz_model_draws_around_a_gather_nd_node():
    """`fuzz --model`: a GatherND node's signature (batch_dims 1, tuples of 2)
    is drawn around, its batch dimensions shared and its tuple's length kept;
    nodes whose shapes or attribute the spec refuses are left out."""
    from hypothesis import HealthCheck, given, settings

    from conformance.fuzz import model_nodes

    node = model_nodes.NodeSignature("GatherND", 13, 1, "float32", "int64", (2, 3, 4), (2, 5, 2))
    assert model_nodes.fuzzable(node)
    for refused in (
        dict(opset=11),  # batch_dims given at 11
        dict(indices_dtype="int32"),
        dict(indices_shape=(2, 5, 3)),  # 3 > r - b = 2
        dict(indices_shape=(3, 5, 2)),  # batch dims differ
        dict(axis=-1),  # batch_dims does not count from the back
    ):
        assert not model_nodes.fuzzable(replace(node, **refused)), refused

    @settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(model_nodes.examples([node], 64))
    def check(example):
        assert (example.op, example.opset, example.axis) == ("GatherND", 13, 1)
        assert example.data.ndim == 3 and example.indices.shape[-1] == 2
        assert example.indices.shape[:1] == example.data.shape[:1]
        verdict = oracle.verdict(
            example.op, example.opset, example.data, example.indices, example.axis
        )
        assert verdict.valid or verdict.violation.clause == "index-out-of-range"

    check()
