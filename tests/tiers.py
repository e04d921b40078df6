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

The same record groups the tests for pytest-xdist (``nox -s tests`` runs
``-n 2 --dist loadgroup``): tests that share an expensive fixture (a module's
run, a session's campaign: recorded setup at least ``SLOW_S``, or unrecorded)
go to one worker as one group (:func:`groups`), so the fixture is set up once,
as in a serial run, and not once per worker or again each time a worker comes
back to its module. A test's own ``xdist_group`` joins its group to the
fixtures' (``timing``: the tests that assert how long something took run one
after another, never two at once). The other tests are dealt out one by one.
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


def shared_fixtures(item: pytest.Item, ours: bool = False) -> Iterator[str]:
    """The keys of the fixtures ``item`` uses, as :func:`fixture_key` writes them;
    with ``ours``, only the shared (not function-scoped) ones that a conftest or
    test module defines (not pytest's or a plugin's)."""
    info = getattr(item, "_fixtureinfo", None)
    for definitions in getattr(info, "name2fixturedefs", {}).values():
        if definitions:
            definition = definitions[-1]  # the one in force where the test is
            if not ours or (definition.baseid and definition.scope != "function"):
                yield fixture_key(definition)


def groups(items: list[pytest.Item], record: Record) -> dict[str, list[pytest.Item]]:
    """The tests that must share a pytest-xdist worker, by group name: those
    that use one expensive shared fixture (recorded setup at least ``SLOW_S``, or
    none recorded), and those of one ``xdist_group`` marker, joined where a test
    links two (the fixture of one and the marker of the other, say). A group
    with a marker is named by it (the least, if two meet: a test naming the
    other then stays apart), one without by its least fixture key. Tests in no
    group are not listed."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    links: list[tuple[pytest.Item, list[str]]] = []
    marked: set[str] = set()
    for item in items:
        names = [f"{m.args[0] if m.args else m.kwargs.get('name', 'default')}"
                 for m in item.iter_markers("xdist_group")]  # fmt: skip
        marked.update(names)
        names += [key for key in shared_fixtures(item, ours=True)
                  if record.fixtures.get(key, SLOW_S) >= SLOW_S]  # fmt: skip
        for name in names:
            parent[root(name)] = root(names[0])
        if names:
            links.append((item, names))
    members: dict[str, list[str]] = {}
    for name in parent:
        members.setdefault(root(name), []).append(name)
    named = {
        top: min((n for n in names if n in marked), default=min(names))
        for top, names in members.items()
    }
    found: dict[str, list[pytest.Item]] = {}
    for item, names in links:
        found.setdefault(named[root(names[0])], []).append(item)
    return found


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help="write the tests' and shared fixtures' times into tests/durations.json "
        "(merged with the file: tests not run keep theirs); run serially",
    )


NODEID = pytest.StashKey[str]()  # a test's node id before pytest-xdist adds its group


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
        self.stale_elsewhere: list[tuple[float, str]] = []  # pytest-xdist workers' stale tests

    def pytest_configure(self, config: pytest.Config) -> None:
        """--store-durations wants one serial run: pytest-xdist's workers would each
        write their share of the tests into the file, over each other."""
        if config.getoption("store_durations") and config.getoption("numprocesses", None):
            raise pytest.UsageError("--store-durations needs a serial run: add -n 0")

    @pytest.hookimpl(tryfirst=True)  # before -m deselects by the marker
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]):
        record = Record.read(config.rootpath / DURATIONS)
        for item in items:
            fixtures = list(shared_fixtures(item))
            item.stash[NODEID] = item.nodeid
            self.collected.add(item.nodeid)
            self.used.update(fixtures)
            if item.get_closest_marker("slow") is None:
                if record.slow(item.nodeid, fixtures):
                    item.add_marker(pytest.mark.slow)
                else:
                    self.fast.add(item.nodeid)
        # pytest-xdist's --dist loadgroup: a worker has it as `loadgroup` (its `dist` is "no")
        if config.getoption("loadgroup", False) or config.getoption("dist", "no") == "loadgroup":
            for name, members in groups(items, record).items():
                for item in members:
                    if name not in {m.args[0] for m in item.iter_markers("xdist_group") if m.args}:
                        item.add_marker(pytest.mark.xdist_group(name))

    @pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker sends the node ids
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """On a pytest-xdist worker under loadgroup, each grouped test's node id
        ends in ``@GROUP``: the controller's scheduler groups by that suffix
        alone. pytest-xdist 3.8 writes it where pytest 9.2 no longer reads a
        node id (pytest-dev/pytest-xdist#1386: no test is grouped), so where it
        is missing it is written here, as the proposed fix (#1388) does."""
        if not session.config.getoption("loadgroup", False):
            return
        for item in session.items:
            names = {str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                     for m in item.iter_markers("xdist_group")}  # fmt: skip
            suffix = "@" + "_".join(sorted(names))
            if names and not item.nodeid.endswith(suffix):
                if hasattr(item, "_id"):  # pytest 9.2's structured node id
                    from _pytest.nodeid import NodeId

                    item._id = NodeId.parse(item.nodeid + suffix)
                else:
                    item._nodeid = item.nodeid + suffix

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
        nodeid = item.stash.get(NODEID, item.nodeid)
        self.tests[nodeid] = self.tests.get(nodeid, 0.0) + max(seconds, 0.0)
        if report.skipped:
            self.skipped.add(nodeid)
        return report

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if session.config.getoption("store_durations"):
            self.store(session.config.rootpath / DURATIONS)
        output = getattr(session.config, "workeroutput", None)  # a pytest-xdist worker's
        if output is not None:
            output["tiers_stale"] = self.stale()

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's, on the controller
    def pytest_testnodedown(self, node, error) -> None:
        """A worker's stale tests, for the controller's summary."""
        self.stale_elsewhere += [tuple(s) for s in getattr(node, "workeroutput", {}).get(
            "tiers_stale", [])]  # fmt: skip

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

    def stale(self) -> list[tuple[float, str]]:
        """The tests the rule called fast that took ``STALE_FACTOR`` x ``SLOW_S`` or more."""
        return [
            (seconds, nodeid)
            for nodeid, seconds in self.tests.items()
            if seconds >= STALE_FACTOR * SLOW_S and nodeid in self.fast
        ]

    def pytest_terminal_summary(self, terminalreporter) -> None:
        """Name the fast tests that took long: tests/durations.json is stale for them."""
        stale = sorted(self.stale() + self.stale_elsewhere)
        if stale:
            terminalreporter.section("tests/durations.json is stale")
            for seconds, nodeid in reversed(stale):
                terminalreporter.line(f"{seconds:6.2f} s  {nodeid}  (counted fast)")
            terminalreporter.line("refresh: pytest --store-durations (docs/development.md, Tests)")
