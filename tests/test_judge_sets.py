"""The engine's judge on an operator whose output is a set (ScatterElements):
every member passes, a value outside the set is a value mismatch that names
the set, through the whole run (models built, a worker, records), not only
the oracle's own judge (tests/test_oracle_scatter.py)."""

from __future__ import annotations

import itertools
import json

import numpy as np

from conformance import oracle
from conformance.cases.case import Case
from conformance.engine.run import Options, run_cases
from tests.order_adapter import WRONG_ORDER

ORDERED = "tests.order_adapter:OrderAdapter"
# float32 writes to one element whose sum depends on the order of the adds.
UPDATES = np.array([1e8, 1.0, -1e8], dtype=np.float32)


def _case(reduction: str | None, opset: int, order: int) -> Case:
    data = np.array([0.0, order], dtype=np.float32)  # element 1: the adapter's order, never written
    return Case(
        "ScatterElements", opset, None, data, np.zeros(3, dtype=np.int64),
        updates=UPDATES, reduction=reduction, id=f"order-{reduction}-{order}",
    )  # fmt: skip


def test_every_member_passes_and_a_value_outside_the_set_does_not(tmp_path):
    orders = range(len(list(itertools.permutations(range(3)))))
    cases = [_case(r, opset, p) for r, opset in ((None, 13), ("add", 18)) for p in orders]
    cases += [_case(None, 13, WRONG_ORDER), _case("add", 18, WRONG_ORDER)]
    # the orders give several members: the set is not one output
    added = oracle.verdict("ScatterElements", 18, cases[6].data, cases[6].indices,
                           updates=UPDATES, reduction="add")  # fmt: skip
    assert added.valid and added.admissible is not None
    assert len(added.admissible.at((0,))[0]) >= 2
    run_cases(cases, tmp_path, Options([ORDERED], ("static", "both_initializers")))
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    kinds = {(r["case_id"], r["variant"]): r for r in records}
    assert len(kinds) == 2 * len(cases)
    for (case_id, _), record in kinds.items():
        assert record["updates_shape"] == [3]
        assert record["reduction"] == (None if "None" in case_id else "add")
        if case_id.endswith(f"-{WRONG_ORDER}"):
            assert record["kind"] == "value_mismatch", record
            assert record["positions"] == [[0]]
            assert record["expected_values"][0].startswith("one of ")
        else:
            assert record["kind"] == "pass", record
