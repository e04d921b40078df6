"""The fast tier: which tests are `slow`, from their measured times.

`nox -s tests` runs every test; `nox -s tests-fast` (`pytest -m "not slow"`)
runs the inner loop's tier, every test that starts no runtime worker, no
`conformance` process and no campaign. Which tests those are is measured, not
written on each test: tests/durations.json holds each test's time (setup, call
and teardown, less the shared fixtures it was the first to use) and each
shared fixture's setup, from one serial run with ``--store-durations``. A test
is marked ``slow`` (:meth:`Record.slow`) when

1. its recorded time is at least ``SLOW_S``; or
2. it uses a shared (module, class or session) fixture whose recorded setup is
   at least ``SLOW_S``, since any one of its users pays for it; or
3. it is not recorded (a new test, a renamed one, or one that skipped when the
   file was written), unless its module's recorded tests are all fast:
   unknown means slow, so a new test that starts processes does not slip into
   the fast tier; or
4. it carries ``@pytest.mark.slow`` itself.

The marker only selects: without ``-m`` every test runs, marked or not, so the
full suite never loses a test to this rule. After a run, a test the rule
called fast that took over ``STALE_FACTOR`` x ``SLOW_S`` is named in the
summary: the file is stale and wants a refresh (docs/development.md, "Tests").
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

DURATIONS = Path("tests", "durations.json")  # under the rootdir
SLOW_S = 0.5  # a Python start-up alone (numpy, onnx) is about a second of CPU
STALE_FACTOR = 3  # a fast test this many times over SLOW_S says the file is stale
ABOUT = (
    "Each test's seconds (setup + call + teardown, less the shared fixtures it was first "
    "to use) and each shared fixture's setup, from a serial run with --store-durations; "
    "tests/tiers.py marks `slow` what takes SLOW_S or more (docs/development.md)."
)


def function_of(nodeid: str) -> str:
    """The node id without its parameters: one test function's every case."""
    return nodeid.partition("[")[0]


def module_of(nodeid: str) -> str:
    return nodeid.partition("::")[0]


def fixture_key(fixturedef) -> str:
    """Where a fixture is defined and its name: two modules' `run` fixtures are two."""
    return f"{fixturedef.baseid}::{fixturedef.argname}"


class Record:
    """tests/durations.json, read: the tests' and shared fixtures' seconds."""

    def __init__(self, tests: dict[str, float], fixtures: dict[str, float]) -> None:
        self.tests = tests
        self.fixtures = fixtures
        self.slow_modules = {module_of(t) for t, s in tests.items() if s >= SLOW_S}
        self.recorded_modules = {module_of(t) for t in tests}

    @classmethod
    def read(cls, path: Path) -> Record:
        if not path.exists():
            return cls({}, {})
        content = json.loads(path.read_text(encoding="utf-8"))
        return cls(dict(content["tests"]), dict(content["fixtures"]))

    def slow(self, nodeid: str, fixtures: Iterable[str]) -> bool:
        """Whether a test is slow by rules 1 to 3 of the module's docstring."""
        if any(self.fixtures.get(key, 0.0) >= SLOW_S for key in fixtures):
            return True
        if nodeid in self.tests:
            return self.tests[nodeid] >= SLOW_S
        module = module_of(nodeid)
        return module not in self.recorded_modules or module in self.slow_modules


def shared_fixtures(item: pytest.Item) -> Iterator[str]:
    """The keys of the fixtures ``item`` uses, as :func:`fixture_key` writes them."""
    info = getattr(item, "_fixtureinfo", None)
    for definitions in getattr(info, "name2fixturedefs", {}).values():
        if definitions:
            yield fixture_key(definitions[-1])  # the one in force where the test is


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help="write the tests' and shared fixtures' times into tests/durations.json "
        "(merged with the file: tests not run keep theirs); run serially",
    )


class Tiers:
    """The plugin: marks `slow` at collection, measures every test and shared
    fixture, stores the times when asked. Registered for the whole session
    (tests/conftest.py's pytest_configure), not as a conftest's hooks, which
    would not see the session fixtures' setup."""

    def __init__(self) -> None:
        self.tests: dict[str, float] = {}  # this run's seconds, by node id
        self.fixtures: dict[str, float] = {}  # this run's shared fixtures' setups
        self.skipped: set[str] = set()
        self.collected: set[str] = set()  # before -k and -m deselect
        self.used: set[str] = set()  # the shared fixtures the collected tests use
        self.fast: set[str] = set()  # the collected tests the rule counts fast
        self.in_shared = 0.0  # the current phase's time spent setting up shared fixtures

    @pytest.hookimpl(tryfirst=True)  # before -m deselects by the marker
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]):
        record = Record.read(config.rootpath / DURATIONS)
        for item in items:
            fixtures = list(shared_fixtures(item))
            self.collected.add(item.nodeid)
            self.used.update(fixtures)
            if item.get_closest_marker("slow") is None:
                if record.slow(item.nodeid, fixtures):
                    item.add_marker(pytest.mark.slow)
                else:
                    self.fast.add(item.nodeid)

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        started = time.perf_counter()
        try:
            return (yield)
        finally:
            if fixturedef.scope != "function":
                seconds = time.perf_counter() - started
                key = fixture_key(fixturedef)
                self.fixtures[key] = max(self.fixtures.get(key, 0.0), seconds)
                self.in_shared += seconds

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call):
        report = yield
        seconds = report.duration - self.in_shared  # the shared fixtures' setup is theirs
        self.in_shared = 0.0
        self.tests[item.nodeid] = self.tests.get(item.nodeid, 0.0) + max(seconds, 0.0)
        if report.skipped:
            self.skipped.add(item.nodeid)
        return report

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if session.config.getoption("store_durations"):
            self.store(session.config.rootpath / DURATIONS)

    def store(self, path: Path) -> None:
        """Merge this run's times into tests/durations.json: a test that ran gets
        its time, one that skipped loses it (unknown), one no longer collected
        from a module that was goes, the rest keep theirs; so do the fixtures."""
        from conformance.engine.files import write_json

        old = Record.read(path)
        modules = {module_of(nodeid) for nodeid in self.collected}
        tests = {
            nodeid: seconds
            for nodeid, seconds in old.tests.items()
            if (nodeid in self.collected or module_of(nodeid) not in modules)
            and nodeid not in self.skipped
        }
        tests |= {n: s for n, s in self.tests.items() if n not in self.skipped}
        fixtures = {
            key: seconds
            for key, seconds in old.fixtures.items()
            if key in self.used or key.partition("::")[0] not in modules
        }
        fixtures |= self.fixtures
        write_json(
            path,
            {
                "about": ABOUT,
                "tests": {n: round(s, 3) for n, s in sorted(tests.items())},
                "fixtures": {k: round(s, 3) for k, s in sorted(fixtures.items())},
            },
        )

    def pytest_terminal_summary(self, terminalreporter) -> None:
        """Name the fast tests that took long: tests/durations.json is stale for them."""
        stale = sorted(
            (seconds, nodeid)
            for nodeid, seconds in self.tests.items()
            if seconds >= STALE_FACTOR * SLOW_S and nodeid in self.fast
        )
        if stale:
            terminalreporter.section("tests/durations.json is stale")
            for seconds, nodeid in reversed(stale):
                terminalreporter.line(f"{seconds:6.2f} s  {nodeid}  (counted fast)")
            terminalreporter.line("refresh: pytest --store-durations (docs/development.md, Tests)")
