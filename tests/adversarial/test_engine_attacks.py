"""Attacks on the engine: what an adapter returns, and many targets on a small machine.

Whatever an adapter's ``execute`` returns is untrusted: each return below is
judged (when it is a faithful plain array after a conversion that keeps
every element's bits: ``conformance.engine.worker.plain_outputs``) or
recorded as a harness error, never lost, and never an internal error. They
run through a real run (worker processes, results.jsonl), once for all.

Many targets start a bounded number at a time, and a target whose worker
does not start (or stops restarting) costs its own results only.
"""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

from conformance.cases.case import Case
from conformance.engine import pool, targets
from conformance.engine.pool import WorkerPool
from conformance.engine.run import Options, Run, Summary, run_cases
from tests import faulty_adapter as faulty
from tests import untrusted_adapter as untrusted
from tests.conftest import conformance_here
from tests.test_engine import FAULTY, run_all
from tests.test_formats import problems, say

UNTRUSTED = "tests.untrusted_adapter:UntrustedAdapter"
PACKING = "tests.faulty_adapter:PackAwareAdapter"
HANGING = "tests.hanging_import_adapter:Anything"
ONCE = "tests.untrusted_adapter:StartsOnceAdapter"
NAN_BITS = 0x7FC01234  # a quiet NaN with a payload: kept bit for bit or not


def _case(form: str, layout: str) -> Case:
    """A Gather case whose data's first element is the code of ``form``."""
    code = untrusted.CODES[form]
    if layout == "int":  # a 2x3 int32 output
        data = np.array([[code, 1, 2], [3, 4, 5]], dtype=np.int32)
        indices = np.array([1, 0], dtype=np.int64)
    elif layout == "scalar":  # a 0-d int32 output
        data = np.array([code, 7, 8], dtype=np.int32)
        indices = np.array(1, dtype=np.int64)
    elif layout == "float":  # a NaN with a payload, and -0.0
        data = np.array([code, 0, -0.0], dtype=np.float32)
        data.view(np.uint32)[1] = NAN_BITS
        indices = np.array([1, 2], dtype=np.int64)
    else:  # strings
        data = np.empty(3, dtype=object)
        data[:] = [str(code), "b", ""]
        indices = np.array([1, 2], dtype=np.int64)
    name = form.replace(" ", "-").replace(",", "").replace(".", "")
    return Case("Gather", 13, 0, data, indices, id=f"returns-{name}", base_id=f"returns-{name}")


# form -> (case layout, kind, a part of the message; harness errors: kind None)
EXPECTED = {
    "tuple": ("int", "pass", ""),
    "numpy scalar": ("scalar", "pass", ""),
    "0-d array": ("int", "shape_mismatch", "shape []"),
    "memmap": ("int", "pass", ""),
    "matrix": ("int", "pass", ""),
    "own subclass": ("int", "pass", ""),
    "masked, none masked": ("int", "pass", ""),
    "masked, one masked": ("int", None, "masked array with 1 of 6 elements masked"),
    "big-endian": ("float", "pass", ""),
    "non-contiguous": ("int", "pass", ""),
    "read-only": ("int", "pass", ""),
    "np.str_ elements": ("string", "pass", ""),
    "numpy text": ("string", "dtype_mismatch", "dtype <U1"),
    "object of ints": ("int", None, "element [0, 0] is a int, not a str"),
    "object of arrays": ("int", None, "element [0, 0] is a ndarray, not a str"),
    "record dtype": ("int", None, "no tensor type the harness knows"),
    "longdouble": ("float", None, "dtype float128, no tensor type the harness knows"),
    "datetime": ("int", None, "dtype datetime64[s], no tensor type"),
    "python list": ("int", None, "element 0 is a list, not a NumPy array"),
    "python number": ("int", None, "element 0 is a int, not a NumPy array"),
    "bare array": ("int", None, "returned ndarray, not a list of NumPy arrays"),
    "dict": ("int", None, "returned dict, not a list of NumPy arrays"),
    "two outputs": ("int", None, "returned 2 outputs for a one-output model"),
    "no output": ("int", None, "returned 0 outputs for a one-output model"),
    "huge view": ("int", None, "4,398,046,511,104 bytes (shape [1099511627776]), over the"),
    "unreadable list": ("int", None, "this list cannot be iterated"),
}
assert set(EXPECTED) == set(untrusted.RETURNS)


@pytest.fixture(scope="module")
def returned(tmp_path_factory) -> tuple[dict[str, dict], Summary]:
    """One run of every form: each form's record, and the run's summary."""
    out = tmp_path_factory.mktemp("returns") / "run"
    cases = [_case(form, layout) for form, (layout, _, _) in EXPECTED.items()]
    summary = run_cases(cases, out, Options([UNTRUSTED], variants=["static"], pack=1))
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by_id = {record["case_id"]: record for record in records}
    assert len(by_id) == len(records) == len(cases), "a record was lost or doubled"
    forms = {case.id: form for case, form in zip(cases, EXPECTED, strict=True)}
    return {forms[case_id]: record for case_id, record in by_id.items()}, summary


def test_the_run_of_every_form_ends_cleanly(returned):
    _, summary = returned
    assert summary.error is None and not summary.interrupted
    assert summary.records == len(EXPECTED)
    assert not summary.events, "no worker died"


@pytest.mark.parametrize("form", list(EXPECTED))
def test_whatever_an_adapter_returns_is_judged_or_a_harness_error(returned, form):
    records, _ = returned
    record = records[form]
    _, kind, says = EXPECTED[form]
    if kind is None:
        assert (record["kind"], record.get("harness_error")) == ("harness_unsupported", True)
    else:
        assert record["kind"] == kind and "harness_error" not in record
    assert says in record["message"], record["message"]


def test_a_memory_map_a_subclass_or_a_byte_order_is_judged_on_its_bits(returned):
    """The conversions are faithful: a wrong bit is still seen. The NaN's
    payload and -0.0's sign came through byte-swapped and were compared."""
    records, _ = returned
    assert records["big-endian"]["kind"] == "pass"
    assert records["big-endian"]["expected"] == {"dtype": "float32", "shape": [2]}
    assert records["0-d array"]["actual"]["shape"] == []


def _sent(outputs) -> bytes:
    """A result as a worker of another copy of this code might send it."""
    return pickle.dumps(("ok", outputs, 0.001, 0.001, False), protocol=pickle.HIGHEST_PROTOCOL)


def test_the_parent_checks_what_any_worker_sends_and_loads_no_adapter_class():
    """A worker of another environment's copy of the package may not convert:
    the parent checks the same way, and never imports an adapter's module to
    unpickle (it may hang, as tests.hanging_import_adapter does)."""
    out = np.array([[3, 4, 5]], dtype=np.int32)
    masked = np.ma.masked_array(out, mask=[[False, True, False]])
    checked = pool._raw_from_wire(_sent([masked]))
    assert checked.status == "harness_error" and "1 of 3 elements masked" in checked.message
    checked = pool._raw_from_wire(_sent([out.view(untrusted.Tagged)]))
    assert checked.status == "harness_error"
    assert "tests.untrusted_adapter.Tagged, which the harness does not load" in checked.message
    with warnings.catch_warnings():  # NumPy discourages np.matrix: an adapter may use it
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        matrix = np.asmatrix(out.astype(">i4"))
    checked = pool._raw_from_wire(_sent((matrix,)))
    assert checked.status == "ok" and type(checked.outputs[0]) is np.ndarray
    assert checked.outputs[0].dtype == np.int32 and checked.outputs[0].tolist() == out.tolist()


# -- many targets on a small machine; a target whose worker does not start ----------


def _targets_file(path: Path, adapters: dict[str, str]) -> Path:
    path.write_text(
        "targets:\n" + "".join(f"  {name}:\n    adapter: {a}\n" for name, a in adapters.items())
    )
    return path


def _gather(code: int, index: int) -> Case:
    data = np.array([code, 1, 2, 3], dtype=np.int32)
    indices = np.array([1, 0], dtype=np.int64)
    return Case("Gather", 13, 0, data, indices, id=f"many-{index}", base_id="many")


def test_64_targets_start_a_bounded_number_at_a_time_and_each_is_judged(tmp_path, monkeypatch):
    """Before: every target's fork server and worker started at once, and on
    two cores the later ones were timed out by the others' starts ("the t18
    worker did not start: no answer in 10 s"), losing every result."""
    started, overlap = [], []

    def counted(original):
        def spawn(worker):
            started.append(worker)
            overlap.append(sum(getattr(w, "state", "starting") == "starting" for w in started))
            original(worker)

        return spawn

    monkeypatch.setattr(pool.Worker, "_spawn", counted(pool.Worker._spawn))
    names = {f"t{i}": FAULTY for i in range(64)}
    chosen = targets.load_file(_targets_file(tmp_path / "targets.yaml", names))
    out = tmp_path / "run"
    options = Options(chosen, variants=["static"], timeout=5.0)
    with Run(out, options) as run:
        assert len(run.pool.servers) == 1, "one fork server for the 64 targets of one adapter"
        run.drive([(_gather(0, i), ["static"]) for i in range(2)])
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted((r["runtime"], r["kind"]) for r in records) == sorted(
        (name, "pass") for name in names for _ in range(2)
    )
    assert len(started) == 64 and max(overlap) <= pool.starts_at_once()
    assert run.summary.error is None and not run.summary.events


def test_a_target_whose_worker_never_starts_costs_its_own_results_only(tmp_path):
    """A hanging adapter import among packing targets: its cases are recorded
    as not run (harness errors: exit 2, said), every other target's are judged."""
    adapters = {"good": PACKING, "also-good": PACKING, "stuck": HANGING}
    path = _targets_file(tmp_path / "targets.yaml", adapters)
    out = tmp_path / "run"
    done = conformance_here(
        "run", "--targets", str(path), "--pack", "4", "--timeout", "1", "--variants", "static",
        "-k", "gather-rank3-axis", "--no-progress", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "not run: the stuck worker did not start: no answer in 5 s" in done.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    cases = {r["case_id"] for r in records}
    assert len(cases) >= 4, "enough cases for a pack of 4"
    kinds = {(r["runtime"], r["kind"], r.get("harness_error")) for r in records}
    assert kinds == {
        ("good", "pass", None),
        ("also-good", "pass", None),
        ("stuck", "harness_unsupported", True),
    }
    assert all(sum(r["case_id"] == c for r in records) == 3 for c in cases), "one per target"
    stuck = next(r for r in records if r["runtime"] == "stuck")
    assert stuck["message"].startswith("not run: the stuck worker did not start: no answer in 5 s")
    header = json.loads((out / "header.json").read_text())
    assert "no answer in 5 s" in header["runtimes"]["stuck"]["not_started"]
    assert header["runtimes"]["good"]["version"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["harness_errors"] == len(cases)
    assert summary["duration_s"] < pool.STARTUP_FLOOR + 10, "the stuck start cost one bound"
    assert any(event.startswith("stuck: the worker did not start") for event in summary["events"])
    # the lost target's entry is a valid one (the test adapters' own report no 'effective')
    lost = {**header, "runtimes": {"stuck": header["runtimes"]["stuck"]}}
    found = problems("header", lost, "header.json") + problems("summary", summary, "summary.json")
    assert not found, say(found)


def test_a_target_that_stops_restarting_is_given_up_and_the_others_go_on(monkeypatch, tmp_path):
    """Before: a target whose worker failed to restart three times in a row
    ended the whole run (EngineError), every target's remaining cases with it."""
    monkeypatch.setenv(untrusted.TAKEN, str(tmp_path / "taken"))
    codes = [0, faulty.SEGV, 0, 0]
    # one job per batch: the first result is delivered before the crash, not lost with it
    with WorkerPool([ONCE, FAULTY], batch_size=1, timeout=20) as engine:
        results = run_all(engine, codes)
    assert results[(0, "once")].status == "ok"
    for index in (1, 2, 3):
        lost = results[(index, "once")]
        assert (lost.status, lost.lost) == ("harness_error", True)
        assert lost.message == (
            "not run: the once worker failed to restart 3 times in a row: "
            "RuntimeError: the licence is taken"
        )
    assert [results[(i, "faulty")].status for i in range(4)] == ["ok", "crash", "ok", "ok"]
    assert any("its remaining results are recorded as harness errors" in e for e in engine.events)
