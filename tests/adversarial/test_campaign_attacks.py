"""A fuzz campaign's verdict under attack (issue 32): what it counts as fuzzed.

Each test is a defect once seen: a campaign whose time budget the store's
replay used up said "0 examples in 5 s ... gate PASSED: 0 discrepancies in 24
results" and exited 0; a campaign in which a target judged nothing (each of
its results "not run: the time budget ran out", a pack hanging) passed its
gate; a number JSON cannot hold (NaN, an infinity) reached findings.json.

The hang is the only thing a fake adapter provokes here
(tests.faulty_adapter:HangingAdapter, beside the real onnx.reference); the
campaigns run in this process (cli.main), with real workers and files.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conformance.cli import main
from conformance.engine import records
from conformance.fuzz import campaign as campaign_module
from conformance.fuzz.campaign import BadCampaign, CampaignOptions
from conformance.fuzz.store import FORMAT as STORE_FORMAT
from conformance.fuzz.store import DirectoryStore
from conformance.fuzz.strategies import Example

HANGING = "tests.faulty_adapter:HangingAdapter"

# A reproducer as a store entry holds it: a case file (what the replay runs).
REPRODUCER = """\
cases:
  - id: stored-{n}
    op: Gather
    opset: 13
    dtype: int32
    attributes: {{axis: 0}}
    data: [{n}, 1, 2, 3]
    indices: [3, 0]
    expected: oracle
    description: a stored bug's reproducer
    spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension of data"
"""


def _strict(path) -> dict:
    """A file as a strict JSON reader takes it: NaN and Infinity refused."""

    def refuse(token: str):
        raise ValueError(f"{path} holds {token}, which is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


FOUND = {"seed": 7, "versions": {"hanging": "0"}, "shard": "1/1@0000000000000000"}
# What a careless or hostile machine of the fleet may write into an entry's
# `found` (json.dumps writes them as bare words; Python's reader takes them).
NOT_JSON = {"seed": math.nan, "elapsed_s": math.inf, "versions": {"hanging": -math.inf}}


def _store(folder, found: list[dict]) -> list[str]:
    """A folder store holding a bug for each of ``found``, as a campaign of the
    fleet left them: the store made by the store's code, the entries written as
    its files are (entries/<bug id>.json), by hand, so that they may hold what a
    careless or hostile writer leaves. Returns their bug ids."""
    DirectoryStore(folder)
    entries, ids = folder / "entries", []
    for n, found_with in enumerate(found):
        bug_id = f"b-{n:012x}"
        ids.append(bug_id)
        entry = {
            "format": STORE_FORMAT,
            "bug_id": bug_id,
            "bug": {"runtime": "hanging", "kind": "timeout", "op": "Gather",
                    "cause": "on no degenerate feature"},
            "case_yaml": REPRODUCER.format(n=n),
            "variant": "indices_initializer",
            "shrunk_by": "1/1@0000000000000000",
            "found": found_with,
        }  # fmt: skip
        (entries / f"{bug_id}.json").write_text(json.dumps(entry), encoding="utf-8")
    return ids


def test_a_campaign_whose_budget_the_replay_uses_up_is_no_pass(tmp_path, capsys):
    """Before: the replay's results counted as the campaign's ("0 examples in
    1 s ... gate PASSED", exit 0, or FAILED on the replay's timeouts, exit 1).
    The replay hangs on one target past the budget; the campaign then ran none
    of its own examples: exit 2, the reason named, nothing gated."""
    store, out = tmp_path / "store", tmp_path / "fz"
    *_, hostile = _store(store, [FOUND] * 6 + [NOT_JSON])
    code = main([
        "fuzz", "--seed", "1", "--time-budget", "0.5", "--timeout", "2", "--pack", "8", "-j", "1",
        "--no-progress", "--runtime", "reference", "--runtime", HANGING,
        "--store", str(store), "--out", str(out),
    ])  # fmt: skip
    said = capsys.readouterr()
    assert code == 2, said.out + said.err
    assert "ran out before any example ran" in said.err, said.err
    assert "the store's replay of" in said.err and "nothing was fuzzed" in said.err
    assert "gate PASSED" not in said.out + said.err and "Traceback" not in said.err
    findings = _strict(out / "findings.json")  # JSON, whatever the store held
    assert findings["examples"] == 0 and findings["examples_per_s"] == 0
    for item in findings["replay"]:  # the hostile entry: skipped by the store, or shown so
        if item["id"] == hostile:
            assert item["found"]["seed"] == "NaN" and item["found"]["elapsed_s"] == "Infinity"
            assert item["found"]["versions"] == {"hanging": "-Infinity"}
    assert findings["judged"] == {"reference": 0, "hanging": 0}
    replayed = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert replayed and all(r["case_id"].startswith("replay-") for r in replayed)
    # What the campaign refused to pass, `conformance gate` refuses too.
    (tmp_path / "known").mkdir()
    assert main(["gate", str(out), "--known", str(tmp_path / "known")]) == 2
    assert "cannot gate" in capsys.readouterr().err


def _packed_round(count: int = 8) -> list[Example]:
    """``count`` valid Gather inputs of one opset, variant and dtype, none empty:
    they share one pack on every runtime (conformance.engine.packs)."""
    return [
        Example(
            "Gather", 13, 0,
            np.arange(n, n + 6, dtype=np.float32).reshape(3, 2),
            np.array([2, n % 3], dtype=np.int64),
            variant="indices_initializer",
        )
        for n in range(count)
    ]  # fmt: skip


def test_a_campaign_in_which_a_target_judged_nothing_does_not_pass(tmp_path, capsys, monkeypatch):
    """Before: "gate PASSED" and exit 0, every result of the hanging target
    being "not run: the time budget ran out" (its pack hung past the budget;
    its halves were never re-run). The draw is pinned to one pack's worth of
    valid inputs (the strategies' first input of a round runs alone, and a
    hang alone is a judged timeout): what is under test is the verdict."""
    draws = iter([_packed_round()])
    monkeypatch.setattr(
        campaign_module.Campaign, "_draw", lambda self, strategy, seed: next(draws, [])
    )
    out = tmp_path / "fz"
    code = main([
        "fuzz", "--seed", "1", "--time-budget", "1.5", "--timeout", "2.5", "--pack", "8",
        "-j", "1", "--no-progress", "--runtime", "reference", "--runtime", HANGING,
        "--store", "off", "--out", str(out),
    ])  # fmt: skip
    said = capsys.readouterr()
    assert code == 2, said.out + said.err
    findings = _strict(out / "findings.json")
    examples = findings["examples"]  # the probes of the round (two); the rest never started
    assert examples >= 2 and findings["judged"] == {"reference": examples, "hanging": 0}
    verdict = next(line for line in said.out.splitlines() if line.startswith("gate "))
    assert verdict.startswith(
        f"gate FAILED: hanging judged nothing ({examples} results, each not run or "
        "harness_unsupported) (exit 2); 0 discrepancies"
    ), verdict
    assert "reference judged nothing" not in verdict and "(exit 2)" in verdict
    assert "the campaign judged none of its examples on hanging" in said.err
    records_written = [
        json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()
    ]
    by_runtime = {
        runtime: {r["kind"] for r in records_written if r["runtime"] == runtime}
        for runtime in ("reference", "hanging")
    }
    assert by_runtime == {"reference": {"pass"}, "hanging": {"harness_unsupported"}}
    assert all(r["message"].startswith("not run:") for r in records_written
               if r["runtime"] == "hanging")  # fmt: skip
    assert len(records_written) == 2 * examples
    assert _strict(out / "summary.json")["unjudged"] == {"hanging": examples}
    report = (out / "report.html").read_text(encoding="utf-8")  # what CI uploads says it too
    assert "Gate FAILED" in report and "judged none of its examples on hanging" in report
    why = records.read_folder(out).unfinished()  # and `conformance gate` refuses the folder
    assert why.endswith(
        "the campaign judged none of its examples on hanging (each not run or "
        "harness_unsupported): it says nothing of them"
    ), why


@pytest.mark.parametrize(
    "option, value",
    [("time_budget", math.nan), ("time_budget", math.inf), ("time_budget", 0.0),
     ("timeout", math.nan), ("shrink_seconds", -math.inf), ("shrink_share", math.nan),
     ("round_size", 0), ("time_budget", True), ("max_examples", 0),
     ("max_examples", math.inf), ("max_examples", True)],
)  # fmt: skip
def test_a_campaign_refuses_a_budget_json_cannot_hold(tmp_path, option, value):
    """Every duration the campaign writes derives from its options: a NaN or
    infinite one is refused before anything is written (the API; the CLI
    refuses them as usage errors)."""
    given = {"time_budget": 5.0, option: value}
    with pytest.raises(BadCampaign, match=option):
        CampaignOptions(["reference"], seed=1, out_dir=tmp_path / "fz", **given)
    assert not (tmp_path / "fz").exists()
