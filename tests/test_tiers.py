"""The fast tier (tests/tiers.py): which tests are `slow`, and that the marker only selects."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests import tiers
from tests.conftest import REPO, run_pytest

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


GROUPED = {
    "pytest.ini": PROJECT["pytest.ini"],
    "checks/conftest.py": """
        import pytest

        @pytest.fixture(scope="session")
        def corpus():
            pass

        @pytest.fixture(scope="session")
        def campaign():
            pass
    """,
    "checks/test_runs.py": """
        import pytest

        @pytest.fixture(scope="module")
        def run():
            pass

        @pytest.fixture(scope="module")
        def new_run():
            pass

        def test_alone(corpus, tmp_path):
            pass

        def test_reads_the_run(run):
            pass

        @pytest.mark.xdist_group("timing")
        def test_timed_on_the_run(run):
            pass

        @pytest.mark.xdist_group("timing")
        def test_timed():
            pass

        def test_reads_the_campaign(campaign):
            pass

        def test_reads_the_new_run(new_run):
            pass

        def test_reads_both(campaign, new_run):
            pass
    """,
}


class Groups:
    """The xdist_group names each collected test carries, by node id."""

    def __init__(self) -> None:
        self.of: dict[str, set[str]] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.of = {
            item.nodeid: {m.args[0] for m in item.iter_markers("xdist_group")}
            for item in session.items
        }


def test_with_loadgroup_tests_sharing_an_expensive_fixture_or_a_group_share_a_worker(tmp_path):
    for name, text in GROUPED.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    (tmp_path / tiers.DURATIONS).parent.mkdir()
    (tmp_path / tiers.DURATIONS).write_text(json.dumps({"tests": {}, "fixtures": {
        "checks::corpus": SLOW / 10, "checks::campaign": SLOW * 4,
        "checks/test_runs.py::run": SLOW * 2, "::tmp_path_factory": SLOW * 2,
    }}))  # fmt: skip
    groups = Groups()
    found = {}
    for args in ((), ("-p", "xdist", "--dist", "loadgroup")):  # without and with loadgroup
        code = pytest.main([f"--rootdir={tmp_path}", "-q", "--co", str(tmp_path), *args],
                           [tiers, tiers.Tiers(), groups])  # fmt: skip
        assert code == pytest.ExitCode.OK
        found[args] = {nodeid.partition("::")[2]: names for nodeid, names in groups.of.items()}
    # without loadgroup, the tests' own groups only
    assert {name for name, groups in found[()].items() if groups} == {
        "test_timed_on_the_run",
        "test_timed",
    }
    assert found[("-p", "xdist", "--dist", "loadgroup")] == {
        "test_alone": set(),  # a cheap fixture of ours, and pytest's own
        # the run's users join the timing group, where one of them is
        "test_reads_the_run": {"timing"},
        "test_timed_on_the_run": {"timing"},
        "test_timed": {"timing"},
        # an unrecorded fixture counts as expensive; one test links two fixtures (named
        # by the least key)
        "test_reads_the_campaign": {"checks/test_runs.py::new_run"},
        "test_reads_the_new_run": {"checks/test_runs.py::new_run"},
        "test_reads_both": {"checks/test_runs.py::new_run"},
    }


def test_on_two_xdist_workers_a_group_runs_on_one_and_stale_tests_are_named(tmp_path):
    """A real `-n 2 --dist loadgroup` run: the tests of the expensive fixture run
    on one worker (each writes its worker's name), and a test recorded fast
    that took long is named in the controller's summary, by its own node id."""
    checks = tmp_path / "checks"
    checks.mkdir()
    ini = "[pytest]\naddopts = --strict-markers\nmarkers = slow: slow\n"
    (tmp_path / "pytest.ini").write_text(ini)
    (checks / "conftest.py").write_text(
        textwrap.dedent("""
        from tests import tiers
        from tests.tiers import pytest_addoption

        def pytest_configure(config):
            config.pluginmanager.register(tiers.Tiers(), "tiers")
    """)
    )
    (checks / "test_worker.py").write_text(
        textwrap.dedent(f"""
        import os, time
        import pytest

        @pytest.fixture(scope="module")
        def run():
            pass

        @pytest.mark.parametrize("n", range(6))
        def test_reads_the_run(run, n, tmp_path_factory):
            with open(os.path.join({str(tmp_path)!r}, f"worker-{{n}}"), "w") as mark:
                mark.write(os.environ["PYTEST_XDIST_WORKER"])

        @pytest.mark.parametrize("n", range(6))
        def test_quick(n):
            pass

        def test_took_long():
            time.sleep({SLOW * tiers.STALE_FACTOR * 1.1})
    """)
    )
    (tmp_path / tiers.DURATIONS).parent.mkdir()
    (tmp_path / tiers.DURATIONS).write_text(json.dumps({"tests": {
        "checks/test_worker.py::test_took_long": SLOW / 10,
        **{f"checks/test_worker.py::test_quick[{n}]": SLOW / 10 for n in range(6)},
    }, "fixtures": {"checks/test_worker.py::run": SLOW * 2}}))  # fmt: skip
    # "checks" named, so its conftest is loaded at the start (as testpaths has tests/conftest.py)
    done = run_pytest(tmp_path, "checks", "-n", "2", "--dist", "loadgroup",
                      env={"PYTHONPATH": str(REPO)})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert len({(tmp_path / f"worker-{n}").read_text() for n in range(6)}) == 1
    stale = done.stdout.partition("tests/durations.json is stale")[2]
    assert "checks/test_worker.py::test_took_long  (counted fast)" in stale, done.stdout


def test_store_durations_refuses_xdist_workers(tmp_path, capsys):
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    code = pytest.main([f"--rootdir={tmp_path}", "-q", "-p", "no:cacheprovider", str(tmp_path),
                        "--store-durations", "-n", "2"], [tiers, tiers.Tiers()])  # fmt: skip
    assert code == pytest.ExitCode.USAGE_ERROR
    assert "--store-durations needs a serial run: add -n 0" in capsys.readouterr().err
    assert not (tmp_path / tiers.DURATIONS).exists()
