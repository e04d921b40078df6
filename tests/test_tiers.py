"""The fast tier (tests/tiers.py): which tests are `slow`, and that the marker only selects."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests import tiers
from tests.conftest import REPO

SLOW = tiers.SLOW_S


def test_a_test_is_slow_by_its_time_its_shared_fixtures_or_being_unknown():
    record = tiers.Record(
        {
            "tests/test_a.py::test_quick": SLOW / 10,
            "tests/test_a.py::test_starts_a_process": SLOW,
            "tests/test_b.py::test_quick[1]": SLOW / 10,
        },
        {"tests/test_b.py::run": SLOW * 4, "tests/test_b.py::table": SLOW / 10},
    )
    assert not record.slow("tests/test_a.py::test_quick", [])
    assert record.slow("tests/test_a.py::test_starts_a_process", [])
    assert not record.slow("tests/test_b.py::test_quick[1]", ["tests/test_b.py::table"])
    # one slow shared fixture: each of its users may be the one that sets it up
    assert record.slow("tests/test_b.py::test_quick[1]", ["tests/test_b.py::run"])
    # unknown: slow, unless every recorded test of its module is fast
    assert record.slow("tests/test_a.py::test_new", [])
    assert not record.slow("tests/test_b.py::test_quick[2]", [])
    assert record.slow("tests/test_new.py::test_anything", [])


PROJECT = {
    "pytest.ini": """
        [pytest]
        addopts = --strict-markers -p no:cacheprovider --import-mode=importlib
        markers = slow: what tests/tiers.py marks
    """,
    "checks/conftest.py": """
        import time
        import pytest

        @pytest.fixture(scope="session")
        def corpus():
            time.sleep(SLEEP)
    """,
    "checks/test_quick.py": """
        def test_one():
            pass
    """,
    "checks/test_mixed.py": """
        import time
        import pytest

        @pytest.fixture(scope="module")
        def run():
            time.sleep(SLEEP)

        def test_fast():
            pass

        def test_sleeps():
            time.sleep(SLEEP)

        def test_reads_the_run(run):
            pass

        def test_reads_the_corpus(corpus):
            pass

        @pytest.mark.slow
        def test_marked():
            pass
    """,
}


class Selected:
    """The tests a pytest run kept after -k and -m, by node id."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.ids = [item.nodeid for item in session.items]


def in_process(folder: Path, *args: str) -> list[str]:
    """pytest in this process on ``folder``, with tests/tiers.py's hooks: the tests it kept.
    The folder's test modules are imported anew each time (a test appends to them)."""
    selected = Selected()
    modules = set(sys.modules)
    try:
        arguments = [f"--rootdir={folder}", "-q", str(folder), *args]
        code = pytest.main(arguments, [tiers, tiers.Tiers(), selected])
    finally:
        for name in set(sys.modules) - modules:
            del sys.modules[name]
    assert code == pytest.ExitCode.OK
    return selected.ids


def test_stored_durations_mark_slow_tests_and_a_run_without_m_keeps_every_test(tmp_path):
    for name, text in PROJECT.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).replace("SLEEP", str(SLOW * 1.2)))
    everything = in_process(tmp_path, "--store-durations")
    assert len(everything) == 6
    stored = json.loads((tmp_path / tiers.DURATIONS).read_text())
    assert set(stored["tests"]) == set(everything)
    assert stored["fixtures"]["checks/test_mixed.py::run"] >= SLOW
    assert stored["fixtures"]["checks::corpus"] >= SLOW
    # a shared fixture's setup is its own, not its first user's
    assert stored["tests"]["checks/test_mixed.py::test_reads_the_run"] < SLOW
    assert stored["tests"]["checks/test_mixed.py::test_reads_the_corpus"] < SLOW

    fast = in_process(tmp_path, "--co", "-m", "not slow")
    assert set(fast) == {"checks/test_quick.py::test_one", "checks/test_mixed.py::test_fast"}
    slow = in_process(tmp_path, "--co", "-m", "slow")
    assert sorted(fast + slow) == sorted(everything)
    assert in_process(tmp_path, "--co") == everything

    # a new test: slow in a module with slow tests, fast in one without
    for name in ("test_quick.py", "test_mixed.py"):
        with (tmp_path / "checks" / name).open("a") as module:
            module.write("\n\ndef test_new():\n    pass\n")
    fast = in_process(tmp_path, "--co", "-m", "not slow")
    assert set(fast) == {
        "checks/test_quick.py::test_one",
        "checks/test_quick.py::test_new",
        "checks/test_mixed.py::test_fast",
    }


def test_the_suite_registers_the_slow_marker_and_reads_the_stored_durations():
    content = json.loads((REPO / tiers.DURATIONS).read_text())
    assert set(content) == {"about", "tests", "fixtures"}
    assert all(isinstance(seconds, float | int) for seconds in content["tests"].values())
    assert any(nodeid.startswith("tests/adversarial/") for nodeid in content["tests"])
    # the session fixtures of tests/conftest.py are measured too (tiers.Tiers is a
    # plugin of the session, not a conftest's hooks, which would not see them)
    assert any(key.startswith("tests::") for key in content["fixtures"])
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'markers = ["slow:' in pyproject
