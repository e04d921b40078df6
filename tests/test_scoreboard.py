"""`conformance scoreboard`: every target side by side, from real runs.

The numbers are checked against the records themselves; a crash comes from
a fake adapter (the real runtimes do not crash on demand), the rest from
onnx.reference and its shipped baseline. The committed docs/scoreboard.json
is held to the baselines it was judged against, so a baseline change without
a new scoreboard fails here.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from conformance import shipped
from tests.conftest import REPO, conformance_here
from tests.faulty_adapter import SEGV

SCHEMA = json.loads((REPO / "docs/schemas/scoreboard.schema.json").read_text())
VALIDATOR = Draft202012Validator(SCHEMA, registry=shipped.schema_registry())
FAULTY = "tests.faulty_adapter:FaultyAdapter"

CASES = f"""
defaults:
  op: Gather
  dtype: int32
  indices_dtype: int64
  spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension of data"
  description: scoreboard
cases:
  - {{id: sb-ok, opset: 13, data: [1, 2, 3], indices: [2, 0], expected: oracle}}
  - {{id: sb-ok-old, opset: 1, data: [1, 2, 3], indices: [1], expected: oracle}}
  - {{id: sb-crash, opset: 13, data: [{SEGV}, 2, 3], indices: [0], expected: oracle}}
  - {{id: sb-out-of-range, opset: 11, data: [1, 2, 3], indices: [3], expect_error: index-out-of-range}}
  - {{id: sb-ge-out-of-range, opset: 13, op: GatherElements, data: [1, 2, 3], indices: [5], expect_error: index-out-of-range}}
"""  # noqa: E501


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> tuple[dict, Path, list[dict]]:
    folder = tmp_path_factory.mktemp("scoreboard")
    cases = folder / "cases.yaml"
    cases.write_text(textwrap.dedent(CASES))
    run = folder / "run"
    done = conformance_here(
        "run", "--runtime", "reference", FAULTY, "--cases", str(cases), "--out", str(run),
        "--no-progress", "--gate",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # the crash is outside every baseline
    page, data = folder / "board.html", folder / "board.json"
    done = conformance_here(
        "scoreboard", str(run), "-o", str(page), "--json", str(data), "--known", "cases/known"
    )
    assert done.returncode == 0, done.stderr
    assert "2 targets" in done.stdout
    lines = (run / "results.jsonl").read_text().splitlines()
    return json.loads(data.read_text()), page, [json.loads(line) for line in lines]


def test_the_json_holds_to_its_schema(board):
    content, _, _ = board
    errors = [e.message for e in VALIDATOR.iter_errors(content)]
    assert not errors


def test_each_cell_counts_the_records_of_its_op_version(board):
    content, _, results = board
    for target in content["targets"]:
        mine = [r for r in results if r["runtime"] == target["name"]]
        for row in content["rows"]:
            counts = Counter(
                r["kind"] for r in mine if (r["op"], r["opset"]) == (row["op"], row["opset"])
            )
            score = target["scores"][row["name"]]
            judged = sum(n for kind, n in counts.items() if kind != "harness_unsupported")
            assert score["judged"] == judged and score["crash"] == counts["crash"]
            assert score["conforming"] == counts["pass"] + counts["both_rejected"]
            if judged:
                assert score["percent"] == round(100 * score["conforming"] / judged, 1)
            else:
                assert score["percent"] is None  # nothing judged: no share, not 0 %
        assert target["scores"]["total"]["results"] == len(mine) == 25


def test_a_crash_is_counted_and_shown_not_triaged_with_its_smallest_input(board):
    content, page, _ = board
    faulty = next(t for t in content["targets"] if t["adapter"] == FAULTY)
    assert faulty["scores"]["Gather-13"]["crash"] == 5  # sb-crash, in every variant
    assert faulty["scores"]["Gather-1"]["percent"] == 100.0
    crash = next(f for f in content["families"] if f["runtime"] == faulty["name"])
    assert crash["kind"] == "crash" and crash["status"] == "new"
    assert crash["mechanism"] == "not triaged"
    assert crash["smallest"]["case_id"].startswith("sb-crash.")
    assert crash["smallest"]["signal"] == "SIGSEGV"
    assert "not triaged" in page.read_text()


def test_a_known_family_carries_its_baseline_entry_as_the_mechanism(board):
    content, page, _ = board
    known = [f for f in content["families"] if f["runtime"] == "reference"]
    assert known and all(f["status"] == "known" for f in known)
    family = next(f for f in known if f["op"] == "GatherElements")
    assert family["where"].startswith("cases/known/reference.yaml:")
    assert family["clause"] == "index-out-of-range" and family["mechanism"]
    smallest = family["smallest"]
    assert smallest["data"]["text"] and smallest["indices"]["text"]  # the input itself
    assert smallest["source"].endswith("cases.yaml:13")  # its line in the case file
    assert family["mechanism"][:40] in page.read_text()
    reference = Path("cases/known/reference.yaml")
    digest = hashlib.sha256((REPO / reference).read_bytes()).hexdigest()
    assert {"path": "cases/known/reference.yaml", "sha256": digest} in content["baselines"]


SCOPED = """\
entries:
  - signature: {op: GatherElements, violation: index-out-of-range}
    versions: ">=1"
    profile: [default]
    depends_on_values: true
    outcome: accepted_invalid
    reason: out-of-range GatherElements indices read another element (scoped)
    clause: index-out-of-range
"""


@pytest.mark.parametrize("gated_by", ["--known", "gate.json"])
def test_a_family_of_a_scoped_entry_shows_its_scope_versions_and_match(board, tmp_path, gated_by):
    """The family carries its entry's scope (where it holds), version range and
    match, whether held against --known now or by the run's own gate.json
    (both were always null: they were read from a group's entry, which has none)."""
    _, page, _ = board
    run = tmp_path / "run"
    shutil.copytree(page.parent / "run", run)
    known = tmp_path / "known"
    known.mkdir()
    (known / "reference.yaml").write_text(SCOPED)
    out, data = tmp_path / "board.html", tmp_path / "board.json"
    if gated_by == "--known":
        extra = ["--known", str(known)]
    else:
        gated = conformance_here("gate", str(run), "--known", str(known), "--out", str(run))
        assert gated.returncode == 1, gated.stderr  # the fake adapter's crash is new
        extra = []
    done = conformance_here("scoreboard", str(run), "-o", str(out), "--json", str(data), *extra)
    assert done.returncode == 0, done.stderr
    content = json.loads(data.read_text())
    assert not list(VALIDATOR.iter_errors(content))
    (family,) = [f for f in content["families"] if f["runtime"] == "reference"]
    assert family["where"] == f"{known / 'reference.yaml'}:2" and family["status"] == "known"
    assert family["scope"] == "versions >=1, profile default"
    assert family["versions"] == ">=1"
    assert family["match"] == "op GatherElements, violation index-out-of-range -> accepted_invalid"
    assert "holds for versions &gt;=1, profile default" in out.read_text()
    crash = next(f for f in content["families"] if f["kind"] == "crash")
    assert (crash["scope"], crash["versions"], crash["match"]) == (None, None, None)  # new


TWO_ENTRIES = """\
entries:
  - case: sb-ge-out-of-range
    signature: {variant: [static, dynamic]}
    outcome: accepted_invalid
    reason: the case entry
    clause: index-out-of-range
  - signature: {op: GatherElements, violation: index-out-of-range}
    depends_on_values: true
    outcome: accepted_invalid
    reason: the family entry
    clause: index-out-of-range
"""


def test_a_group_two_entries_cover_is_in_each_family_with_the_results_each_covers(board, tmp_path):
    """sb-ge-out-of-range's five results: two covered by a case entry (case
    entries first), three by a family. Each entry's family counts its own
    results and shows one of them (all five once went to the first entry met)."""
    _, page, results = board
    known = tmp_path / "known"
    known.mkdir()
    (known / "reference.yaml").write_text(TWO_ENTRIES)
    data = tmp_path / "board.json"
    done = conformance_here("scoreboard", str(page.parent / "run"),
                            "-o", str(tmp_path / "board.html"),
                            "--json", str(data), "--known", str(known))  # fmt: skip
    assert done.returncode == 0, done.stderr
    # Index 5 of [1, 2, 3] read as the adapter read it is past the data's end: an
    # explanation fits (out-of-range-reads-unchecked-offset), named after the reason.
    families = {
        f["mechanism"].split(" (")[0]: f for f in json.loads(data.read_text())["families"]
        if f["runtime"] == "reference"
    }  # fmt: skip
    assert set(families) == {"the case entry", "the family entry"}
    by_case, by_family = families["the case entry"], families["the family entry"]
    assert (by_case["results"], by_case["groups"]) == (2, 1)
    assert (by_family["results"], by_family["groups"]) == (3, 1)
    assert by_case["where"].endswith("reference.yaml:2")
    assert by_family["where"].endswith("reference.yaml:7")
    assert by_case["smallest"]["variant"] in {"static", "dynamic"}
    assert by_family["smallest"]["variant"] in {"indices_initializer", "data_initializer",
                                                "both_initializers"}  # fmt: skip
    for family in (by_case, by_family):
        assert family["smallest"]["case_id"].startswith("sb-ge-out-of-range.")
    # groups.json keeps the group's one smallest input: one family shows its tensors
    assert sum(f["smallest"]["data"] is not None for f in (by_case, by_family)) == 1
    reference = [r for r in results if r["runtime"] == "reference" and r["kind"] != "pass"]
    assert sum(r["case_id"].startswith("sb-ge-out-of-range.") for r in reference) == 5


def _totals(content: dict) -> dict:
    return {t["name"]: t["scores"]["total"] for t in content["targets"]}


def test_a_run_given_twice_is_read_once(board, tmp_path):
    """The same folder twice, as its results file, through a link or as a
    copy (the same run id and results): read once, never counted twice."""
    content, page, _ = board
    run = page.parent / "run"
    copy, link = tmp_path / "copy", tmp_path / "link"
    shutil.copytree(run, copy)
    link.symlink_to(run, target_is_directory=True)
    for twice in ([run, run], [run, run / "results.jsonl"], [run, copy], [link, run]):
        data = tmp_path / "twice.json"
        done = conformance_here(
            "scoreboard", *map(str, twice), "-o", str(tmp_path / "twice.html"),
            "--json", str(data), "--known", "cases/known",
        )  # fmt: skip
        assert done.returncode == 0, (twice, done.stderr)
        again = json.loads(data.read_text())
        assert _totals(again) == _totals(content), twice
        assert [(f["runtime"], f["results"]) for f in again["families"]] == [
            (f["runtime"], f["results"]) for f in content["families"]
        ]
        assert again["discrepancies"] == content["discrepancies"]


def test_two_runs_of_one_target_are_refused_naming_both(board, tmp_path):
    _, page, _ = board
    run = page.parent / "run"
    other = tmp_path / "other"
    done = conformance_here("run", "--runtime", "reference", "--cases",
                            str(page.parent / "cases.yaml"), "--out", str(other),
                            "--no-progress")  # fmt: skip
    assert done.returncode == 1, done.stderr  # a discrepancy: the GatherElements out of range
    out = tmp_path / "board.html"
    for pair in ([run, other], [other, run / "results.jsonl"]):
        done = conformance_here(
            "scoreboard", *map(str, pair), "-o", str(out), "--known", "cases/known"
        )
        assert done.returncode == 2, (pair, done.stdout, done.stderr)
        assert "target reference is in two runs" in done.stderr, done.stderr
        assert str(run) in done.stderr and str(other) in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        assert not out.exists()


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    done = conformance_here("scoreboard", str(tmp_path / "nothing"), "-o", str(tmp_path / "x.html"))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "x.html").exists()


def test_the_committed_scoreboard_is_of_the_shipped_baselines_and_pins():
    """docs/scoreboard.* are regenerated (`nox -s scoreboard`) with every baseline
    change and version pin: a stale one would show verdicts nobody gets any more."""
    content = json.loads((REPO / "docs/scoreboard.json").read_text())
    assert not list(VALIDATOR.iter_errors(content))
    for held in content["baselines"]:
        now = hashlib.sha256((REPO / held["path"]).read_bytes()).hexdigest()
        assert held["sha256"] == now, f"{held['path']} changed: run `nox -s scoreboard`"
    pins = dict(
        line.split("==") for line in (REPO / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )  # fmt: skip
    versions = {t["name"]: t["version"] for t in content["targets"]}
    assert versions["onnxruntime"] == pins["onnxruntime"]
    assert versions["onnxruntime:openvino-ep"] == pins["onnxruntime-openvino"]
    assert versions["tract"] == pins["tract"]
    assert versions["openvino"].startswith(pins["openvino"])
    assert versions["tvm"] == pins["apache-tvm"]
    assert versions["iree"] == pins["iree-base-compiler"] == pins["iree-base-runtime"]
    # cv2.__version__ is OpenCV's (5.0.0), the wheel's pin adds its build number (5.0.0.93)
    assert pins["opencv-python-headless"].startswith(versions["opencv"] + ".")
    # onnxruntime-web: the version its npm lockfile pins (docs/browser.md)
    lock = json.loads((REPO / "conformance/adapters/ortweb_js/package-lock.json").read_text())
    web = lock["packages"]["node_modules/onnxruntime-web"]["version"]
    assert versions["onnxruntime-web:wasm"] == versions["onnxruntime-web:webgpu"] == web
    # The ten targets of `nox -s scoreboard`: the four runtimes, the EP, the compilers, OpenCV,
    # and onnxruntime-web's two backends (where Node and Chromium are installed).
    assert sorted(versions) == sorted(
        ["onnxruntime", "openvino", "reference", "tract", "onnxruntime:openvino-ep", "tvm", "iree",
         "opencv", "onnxruntime-web:wasm", "onnxruntime-web:webgpu"]
    )  # fmt: skip
    assert (REPO / "docs/scoreboard.html").read_text().count('<h2 id="target-') == len(versions)
