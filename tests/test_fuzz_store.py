"""Campaigns with a regression store, end to end: `conformance fuzz` (real
processes where two run at once; the first campaign is conftest's), real
runtimes, a real folder store and a real Redis server.

- two shards on one Redis server report the union of their bugs, each shrunk once;
- a campaign on a store that holds bugs replays them first and does not shrink them again;
- `conformance fuzz replay` runs a store made with one ONNX Runtime version on another.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conformance.fuzz.replay import REPLAY_JSON, STATUSES
from conformance.fuzz.store import open_store
from tests.conftest import FIRST_ROUND_COMPLEX_SEED, REPO, conformance

# The first campaign must find a bug to store, on a loaded machine too.
SEED = FIRST_ROUND_COMPLEX_SEED
EP_PYTHON = os.environ.get("CONFORMANCE_EP_PYTHON")  # onnxruntime-openvino 1.24.1 (nox -s tests)


def _fuzz(*args: str) -> list[str]:
    return [sys.executable, "-m", "conformance", "fuzz", "--no-progress", *args]


def _findings(folder) -> dict:
    return json.loads((folder / "findings.json").read_text())


def test_two_shards_on_one_redis_report_the_union_and_shrink_each_bug_once(redis_server, tmp_path):
    shards = []
    for shard in ("1/2", "2/2"):
        out = tmp_path / f"shard-{shard[0]}"
        # One round each, bounded by examples: a 12 s budget is no number of
        # rounds on a loaded machine (issue 44, item 17).
        command = _fuzz("--runtime", "onnxruntime", "openvino", "--max-examples", "64",
                        "--time-budget", "3600", "--seed", "5", "--shard", shard,
                        "--store", redis_server.url, "--out", str(out))  # fmt: skip
        process = subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        shards.append((out, process))
    for _, process in shards:
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode in (0, 1), stdout + stderr
    found = [_findings(out) for out, _ in shards]
    owners = {}
    for findings in found:
        for bug in findings["bugs"]:
            if bug["shrunk_by"] is not None:
                owners.setdefault(bug["id"], set()).add(bug["shrunk_by"])
    assert owners, "the shards shrank nothing"
    # Each bug shrunk once: both shards name the same shrinker (the one that claimed it).
    assert all(len(who) == 1 for who in owners.values()), owners
    union = {bug["id"] for findings in found for bug in findings["bugs"]}
    with open_store(redis_server.url) as store:
        stored = {entry.bug_id: entry for entry in store.entries()}
    # Every bug either shard found is in the store (shrunk, or kept unshrunk at the end).
    assert union <= set(stored), union - set(stored)
    for bug_id, who in owners.items():
        assert stored[bug_id].shrunk_by in who
    # Each shard's shrinker is one of the two shards.
    names = {bug["shrunk_by"].split("@")[0] for f in found for bug in f["bugs"] if bug["shrunk_by"]}
    assert names <= {"1/2", "2/2"}


@pytest.fixture
def filled(ort_campaigns):
    """A campaign on ONNX Runtime (64 examples, SEED) into an empty folder store: its
    folder and the store (conftest's, shared: tests copy the store before they
    write to it, :func:`store_of`)."""
    out, done = ort_campaigns["known"]
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return out, out.parent / "store"


def store_of(filled, tmp_path):
    """The filled store, copied for one test: what it adds stays its own."""
    return shutil.copytree(filled[1], tmp_path / "store")


def test_a_campaign_on_a_filled_store_replays_it_first_and_shrinks_nothing_twice(filled, tmp_path):
    first, store = filled[0], store_of(filled, tmp_path)
    second = tmp_path / "second"
    done = conformance("fuzz", "--runtime", "onnxruntime", "--max-examples", "64",
                       "--time-budget", "3600", "--seed", SEED, "--store", str(store),
                       "--out", str(second))  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    # The store is named when the campaign starts.
    assert f"store: {store}" in done.stderr
    before, after = _findings(first), _findings(second)
    assert before["replay"] == [] and before["bugs"]
    replayed = {item["id"]: item for item in after["replay"]}
    assert set(replayed) == {bug["id"] for bug in before["bugs"]}
    assert {item["status"] for item in replayed.values()} <= set(STATUSES)
    # ONNX Runtime did not change between the two campaigns: every bug is still there.
    assert {item["status"] for item in replayed.values()} == {"still there"}
    again = {bug["id"]: bug for bug in after["bugs"]}
    # A campaign's name in the store: its shard and its run's id.
    first_name = "1/1@" + json.loads((first / "header.json").read_text())["run_id"]
    for bug in before["bugs"]:
        # The first shrank it, or stored it unshrunk when its budget ran out.
        assert bug["shrunk_by"] in (first_name, None), bug
        if bug["id"] in again:  # found again: known, the first campaign's only
            assert again[bug["id"]]["store"] == "held"
            # (its holder in the store: the first, also for a bug it had no time to shrink)
            assert again[bug["id"]]["shrunk_by"] == first_name, (again[bug["id"]], bug)


@pytest.mark.skipif(not EP_PYTHON, reason="CONFORMANCE_EP_PYTHON is not set (nox -s tests sets it)")
def test_replay_runs_a_store_made_with_another_onnxruntime_version(filled, tmp_path):
    made, store = filled[0], store_of(filled, tmp_path)
    # The same target name, another environment: onnxruntime-openvino 1.24.1's CPU provider.
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        f"targets:\n  onnxruntime:\n    adapter: onnxruntime\n    python: {json.dumps(EP_PYTHON)}\n"
    )
    out = tmp_path / "replay"
    done = conformance("fuzz", "replay", "--store", str(store), "--targets", str(targets),
                       "--out", str(out))  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    replayed = json.loads((out / REPLAY_JSON).read_text())
    found_with = {item["found"]["versions"]["onnxruntime"] for item in replayed["bugs"]}
    assert replayed["versions"]["onnxruntime"] not in found_with  # another version indeed
    assert len(replayed["bugs"]) == len(_findings(made)["bugs"])
    # ONNX Runtime 1.24 conforms no better than 1.31 here: every bug is still
    # there, or there by another mechanism (its message, say), never fixed;
    # a changed one says what it does now.
    statuses = {item["status"] for item in replayed["bugs"]}
    assert statuses <= {"still there", "changed"} and statuses, replayed["bugs"]
    for item in replayed["bugs"]:
        if item["status"] == "changed":
            assert item["now"]["bug"] != item["id"] and item["now"]["cause"], item
        assert item["status"] in done.stdout
    assert "on onnxruntime 1.24.1" in done.stdout
