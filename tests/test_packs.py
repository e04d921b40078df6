"""Packed execution (conformance/engine/packs.py): many cases per model, the
same verdicts as one case per model.

A pack-aware fake adapter provokes what real runtimes do not do on demand (a
wrong value, a refusal or a crash only when packed); the real ONNX Runtime and
OpenVINO run a sample of the corpus packed and with --pack 1 and must give the
same outcome kind for every (case, variant, runtime)."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from conformance.cases import load
from conformance.engine import packs
from conformance.engine.pool import Raw
from conformance.engine.run import Options, Run, run_cases
from tests import faulty_adapter as faulty
from tests.conftest import REPO, conformance_here

PACK_AWARE = "tests.faulty_adapter:PackAwareAdapter"
# Models that carry their values: no two cases share one, so nothing is cached
# and every valid, non-empty case may be packed (a fed model met before is not).
BAKED = ("both_initializers",)


def _records(folder: Path) -> dict[str, dict]:
    lines = (folder / "results.jsonl").read_text().splitlines()
    return {record["case_id"]: record for record in map(json.loads, lines)}


# -- the rules, as functions ------------------------------------------------------------
def test_a_failed_pack_splits_in_halves_then_into_single_cases():
    members = [(index, "static") for index in range(7)]
    first = packs.Pack(members, "static", ("openvino",))
    halves = packs.split(first)
    assert halves == [members[:3], members[3:]]
    again = packs.split(packs.Pack(halves[1], "static", ("openvino",), halved=True))
    assert again == [[member] for member in members[3:]]
    assert packs.split(packs.Pack(members[:2], "static", ("openvino",))) == [
        [members[0]],
        [members[1]],
    ]


def test_a_pack_result_is_shared_only_when_it_has_one_output_per_case():
    outputs = [np.arange(2), np.arange(3)]
    each = packs.shares(Raw("ok", outputs, load_s=0.2, run_s=0.02), 2)
    assert [raw.outputs[0].tolist() for raw in each] == [[0, 1], [0, 1, 2]]
    assert all(raw.packed and raw.load_s == pytest.approx(0.1) for raw in each)
    assert packs.shares(Raw("ok", outputs), 3) is None  # an output short: failed as a whole
    assert packs.shares(Raw("load_error", message="no"), 2) is None
    assert packs.shares(Raw("crash", signal="SIGSEGV"), 2) is None


def test_pack_sizes_are_per_runtime_unless_chosen():
    adapters = {"onnxruntime": "onnxruntime", "ov-f32": "openvino", "reference": "reference",
                "mine": "my.module:Adapter"}  # fmt: skip
    assert packs.sizes(adapters, None) == {
        "onnxruntime": packs.PACK_SIZES["onnxruntime"],
        "ov-f32": packs.PACK_SIZES["openvino"],
        "reference": 1,
        "mine": packs.UNMEASURED,
    }
    assert packs.sizes(adapters, 5) == dict.fromkeys(adapters, 5)
    grouped = packs.groups(["onnxruntime", "ov-f32", "reference"], packs.sizes(adapters, None))
    assert sorted(grouped) == sorted([(32, ("onnxruntime", "ov-f32")), (1, ("reference",))])


CASES = """
defaults:
  op: Gather
  opset: 13
  dtype: int32
  indices_dtype: int64
  spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension of data"
  description: packing
cases:
"""


def _case(name: str, data: str, indices: str = "[0, 2]", **more: str) -> str:
    more = more or {"expected": "oracle"}
    extra = "".join(f", {key}: {value}" for key, value in more.items())
    return f"  - {{id: {name}, data: {data}, indices: {indices}{extra}}}\n"


def _pack_cases(tmp_path: Path) -> Path:
    text = CASES + _case("wrong-in-a-pack", f"[{faulty.WRONG}, 2, 3]")  # packed with ok-1..3
    for number in range(1, 10):
        text += _case(f"ok-{number}", f"[{number}, 2, 3]")
    text += _case("fails-everywhere", f"[{faulty.FAIL}, 2, 3]")
    text += _case("out-of-bounds", "[1, 2, 3]", "[7]", expect_error="index-out-of-range")
    text += _case("empty-indices", "[1, 2, 3]", "[]")
    path = tmp_path / "packs.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_only_valid_non_empty_cases_are_packed(tmp_path):
    path = _pack_cases(tmp_path)
    folder = tmp_path / "run"
    summary = run_cases(load([path]), folder, Options([PACK_AWARE], BAKED, pack=4))
    found = _records(folder)
    assert summary.records == len(found) == 13
    assert not found["out-of-bounds.op13.int32.int64"]["packed"]
    assert not found["empty-indices.op13.int32.int64"]["packed"]
    passing = [found[f"ok-{number}.op13.int32.int64"] for number in range(1, 10)]
    assert all(record["kind"] == "pass" and record["packed"] for record in passing)
    # the pack holding fails-everywhere failed as a whole: its mates were run alone
    assert sum(record["confirmed"] is None for record in passing) >= 4
    header = json.loads((folder / "header.json").read_text())
    assert header["pack"] == {"packaware": 4}


def test_the_alone_run_is_the_authority_and_a_difference_is_a_finding(tmp_path):
    """A wrong value only when packed: recorded as the alone run's pass,
    with the pack's kind and a note; a failure everywhere: confirmed as is."""
    folder = tmp_path / "run"
    run_cases(load([_pack_cases(tmp_path)]), folder, Options([PACK_AWARE], BAKED, pack=4))
    found = _records(folder)
    wrong = found["wrong-in-a-pack.op13.int32.int64"]
    assert wrong["kind"] == "pass" and wrong["packed"] and wrong["confirmed"] is True
    assert wrong["packed_kind"] == "value_mismatch"
    assert "behaves differently when packed" in wrong["note"]
    fails = found["fails-everywhere.op13.int32.int64"]
    assert fails["kind"] == "rejected" and fails["confirmed"] is True
    assert "packed_kind" not in fails  # alone it failed the same way


def test_a_discrepancy_that_cannot_be_judged_alone_keeps_the_packs_verdict(tmp_path):
    """Alone, the runtime cannot be judged (harness_unsupported); the pack is its
    only verdict: kept, unconfirmed, saying why. A pass in a pack is kept as well."""
    text = CASES + _case("lone", f"[{faulty.LONE}, 2, 3]")
    text += "".join(_case(f"ok-{n}", f"[{n}, 2, 3]") for n in range(1, 4))
    path = tmp_path / "c.yaml"
    path.write_text(text)
    folder = tmp_path / "run"
    run_cases(load([path]), folder, Options([PACK_AWARE], BAKED, pack=4))
    lone = _records(folder)["lone.op13.int32.int64"]
    assert lone["kind"] == "value_mismatch" and lone["packed"] and lone["confirmed"] is False
    assert "packed_kind" not in lone
    assert "not confirmed alone" in lone["note"]
    assert "a lone node is not this runtime's verdict" in lone["note"]
    alone = tmp_path / "alone"
    run_cases(load([path]), alone, Options([PACK_AWARE], BAKED, pack=1))
    assert _records(alone)["lone.op13.int32.int64"]["kind"] == "harness_unsupported"


@pytest.mark.parametrize("code", [faulty.REFUSE, faulty.SEGV])
def test_a_pack_failing_as_a_whole_is_split_until_each_case_runs_alone(tmp_path, code):
    """A refusal or a crash only when packed: every case still gets its own
    verdict (all pass alone); the failing case and its pack mates are confirmed."""
    text = CASES + "".join(_case(f"ok-{n}", f"[{n}, 2, 3]") for n in range(1, 8))
    text += _case("spoils-its-pack", f"[{code}, 2, 3]")
    path = tmp_path / "c.yaml"
    path.write_text(text)
    folder = tmp_path / "run"
    summary = run_cases(load([path]), folder, Options([PACK_AWARE], BAKED, pack=8))
    found = _records(folder)
    assert summary.records == 8
    assert {record["kind"] for record in found.values()} == {"pass"}
    spoiled = found["spoils-its-pack.op13.int32.int64"]
    assert spoiled["packed"] and spoiled["confirmed"] is True and "packed_kind" not in spoiled
    # halves of 4, then the failing half in single cases: its mates were confirmed too
    assert sum(record["confirmed"] is True for record in found.values()) == 4
    assert sum(record["confirmed"] is None for record in found.values()) == 4


def test_pack_1_runs_every_case_alone(tmp_path):
    folder = tmp_path / "run"
    run_cases(load([_pack_cases(tmp_path)]), folder, Options([PACK_AWARE], BAKED, pack=1))
    found = _records(folder)
    assert not any(record["packed"] for record in found.values())
    assert found["wrong-in-a-pack.op13.int32.int64"]["kind"] == "pass"


# -- the real runtimes: packed and --pack 1 agree ---------------------------------------
def test_packed_and_unpacked_runs_of_a_corpus_sample_agree(tmp_path):
    """Every 6th corpus case (about 110), two variants, ONNX Runtime and
    OpenVINO at their measured pack sizes and at --pack 1: the same outcome kind
    for every (case, variant, runtime). The whole corpus agrees too (README)."""
    kinds = {}
    for pack in ("default", "1"):
        folder = tmp_path / pack
        args = ["--pack", pack] if pack != "default" else []
        done = conformance_here(
            "run", "--runtime", "onnxruntime", "--runtime", "openvino", "--shard", "1/6",
            "--variants", "static", "both_initializers", "--out", str(folder), "--no-progress",
            *args, cwd=REPO,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        lines = (folder / "results.jsonl").read_text().splitlines()
        found = [json.loads(line) for line in lines]
        kinds[pack] = {(r["case_id"], r["variant"], r["runtime"]): (r["kind"], r["packed"])
                       for r in found}  # fmt: skip
        # The alone run is the authority, so a packing bug (outputs given to the
        # wrong case, say) would still end in the same kinds, as packed_kind:
        # none here, on these runtimes' pinned versions.
        assert [r["case_id"] for r in found if "packed_kind" in r] == []
    packed, alone = kinds["default"], kinds["1"]
    assert packed.keys() == alone.keys() and len(packed) > 400
    assert {key: kind for key, (kind, _) in packed.items()} == {
        key: kind for key, (kind, _) in alone.items()
    }
    assert sum(was_packed for _, was_packed in packed.values()) > len(packed) / 3
    assert not any(was_packed for _, was_packed in alone.values())


def test_the_report_lists_what_behaves_differently_when_packed(tmp_path):
    path = _pack_cases(tmp_path)
    folder = tmp_path / "run"
    done = conformance_here("run", "--cases", str(path), "--runtime", PACK_AWARE, "--pack",
                            "4", "--variants", *BAKED, "--out", str(folder),
                            "--no-progress")  # fmt: skip
    assert done.returncode == 1, done.stderr  # fails-everywhere is a discrepancy
    html = (folder / "report.html").read_text()
    section = html[html.index('id="packed-differently"') :]
    assert "wrong-in-a-pack.op13.int32.int64" in section[: section.index("</table>")]
    assert "results ran first in a pack" in html


def test_a_fed_model_met_before_runs_alone_from_the_workers_cache(tmp_path):
    """static and dynamic models depend on shapes (or ranks) only: a case whose
    one-node model the run already met runs alone, compiled once per worker
    and cached; only the first of each model key may join a pack."""
    text = CASES + "".join(_case(f"same-{n}", f"[{n}, 2, 3]") for n in range(6))
    text += "".join(_case(f"own-{n}", str(list(range(n + 3))), "[0]") for n in range(6))
    path = tmp_path / "c.yaml"
    path.write_text(text)
    folder = tmp_path / "run"
    run_cases(load([path]), folder, Options([PACK_AWARE], ("static",), pack=8))
    found = _records(folder)
    assert [found[f"same-{n}.op13.int32.int64"]["packed"] for n in range(6)] == [True] + [False] * 5
    assert all(found[f"own-{n}.op13.int32.int64"]["packed"] for n in range(6))


@pytest.mark.xdist_group("timing")  # its time is asserted: tests/tiers.py
def test_a_pack_hanging_as_the_deadline_passes_leaves_each_case_a_record_per_runtime(tmp_path):
    """A pack times out on one runtime as the deadline (a fuzz campaign's
    budget) passes: its halves are never re-run. Before, its cases had no
    record for that runtime though they counted as cases (they ran on the
    other); now each gets one, saying it was not run and why."""
    text = CASES + "".join(_case(f"ok-{n}", f"[{n}, 2, 3]") for n in range(8))
    path = tmp_path / "c.yaml"
    path.write_text(text)
    cases = load([path])
    options = Options([PACK_AWARE, "tests.faulty_adapter:HangingAdapter"], BAKED, pack=8,
                      timeout=1.0)  # fmt: skip
    folder = tmp_path / "run"
    with Run(folder, options) as run:
        unrun = run.drive([(case, BAKED) for case in cases], deadline=time.monotonic() + 1.5)
    assert unrun == [] and run.summary.cases == 8 and run.summary.records == 16
    lines = (folder / "results.jsonl").read_text().splitlines()
    found = [json.loads(line) for line in lines]
    assert {r["kind"] for r in found if r["runtime"] == "packaware"} == {"pass"}
    hung = [r for r in found if r["runtime"] == "hanging"]
    assert len(hung) == 8 and {r["kind"] for r in hung} == {"harness_unsupported"}
    for record in hung:
        assert record["message"].startswith("not run: in a model of ")
        assert "failed as a whole on this runtime (timeout: no result" in record["message"]
        assert record["packed"] and record["expected"] == {"dtype": "int32", "shape": [2]}
    assert run.summary.counts["hanging"] == {"harness_unsupported": 8}


def test_a_discrepancy_the_caller_does_not_confirm_keeps_the_packs_word(tmp_path):
    """``confirm`` is asked once per discrepancy a pack showed, with that result
    as the pack showed it (a Settled); declined, the pack's verdict is recorded,
    unconfirmed, saying it rests on the pack. ``recorded`` is handed every
    result as one Recorded, its ``record`` the line results.jsonl got."""
    text = CASES + _case("wrong-in-a-pack", f"[{faulty.WRONG}, 2, 3]")
    text += "".join(_case(f"ok-{n}", f"[{n}, 2, 3]") for n in range(1, 4))
    path = tmp_path / "c.yaml"
    path.write_text(text)
    asked, handed = [], []

    def confirm(shown) -> bool:
        asked.append(shown)
        return False

    folder = tmp_path / "run"
    with Run(folder, Options([PACK_AWARE], BAKED, pack=4)) as run:
        run.drive([(case, BAKED) for case in load([path])], recorded=handed.append,
                  confirm=confirm)  # fmt: skip
    (shown,) = asked
    assert (shown.case.id, shown.variant, shown.runtime) == (
        "wrong-in-a-pack.op13.int32.int64",
        BAKED[0],
        "packaware",
    )
    assert shown.outcome.kind == "value_mismatch" and shown.verdict is not None
    assert isinstance(shown.raw, Raw) and shown.raw.status == "ok"
    found = _records(folder)
    assert [result.record for result in handed] == [
        json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()
    ]
    assert all(result.ran and result.verdict is not None for result in handed)
    assert {result.case.id: result.outcome.kind for result in handed} == {
        case_id: record["kind"] for case_id, record in found.items()
    }
    wrong = found["wrong-in-a-pack.op13.int32.int64"]
    assert wrong["kind"] == "value_mismatch" and wrong["packed"] and wrong["confirmed"] is False
    assert "rests on the pack" in wrong["note"]


def test_cases_sharing_large_data_pack_together_the_table_carried_once(tmp_path):
    """A model node's embedding table is in each of its cases: they pack with
    one another only, the pack holding the table once (one data tensor its
    nodes share), in each variant but data_initializer (one model for them
    all, cached); a large case with other data packs with none of them."""
    from conformance.cases.case import Case
    from conformance.engine import models

    rows = models.SHARED_BAKED_BYTES // (4 * 64)
    table = np.arange(rows * 64, dtype=np.float32).reshape(rows, 64)
    other = table + 1  # large too, other values
    cases = [
        Case("Gather", 13, 0, data, np.array([index], np.int64), id=f"{name}-{index}")
        for name, data in (("large", table), ("small", table[:8]))
        for index in range(3)
    ] + [Case("Gather", 13, 0, other, np.array([1], np.int64), id="other-1")]
    variants = ("both_initializers", "static", "data_initializer")
    folder = tmp_path / "run"
    run_cases(cases, folder, Options([PACK_AWARE], variants, pack=4))
    lines = (folder / "results.jsonl").read_text().splitlines()
    found = {(r["case_id"], r["variant"]): r for r in map(json.loads, lines)}
    assert {r["kind"] for r in found.values()} == {"pass"}
    for variant in variants:
        shared = variant != "data_initializer"
        assert [found[f"large-{i}", variant]["packed"] for i in range(3)] == [shared] * 3
        # small: packed but where a fed model met before is cached (static)
        small = variant != "static"
        assert [found[f"small-{i}", variant]["packed"] for i in range(3)] == [small] * 3
        assert found["other-1", variant]["packed"] is False  # no case shares its table
    large = [case for case in cases if case.id.startswith("large")]
    for variant in ("both_initializers", "static"):
        pack = models.build_pack(large, variant)
        tables = [
            *(t.name for t in pack.graph.initializer if t.dims == list(table.shape)),
            *(i.name for i in pack.graph.input if len(i.type.tensor_type.shape.dim) == 2),
        ]
        assert tables == [models.SHARED_DATA]
        assert [node.input[0] for node in pack.graph.node] == [models.SHARED_DATA] * 3
    assert models.shared_data([*large, cases[-1]]) is None  # another table: not shared
