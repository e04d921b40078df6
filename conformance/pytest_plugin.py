"""The pytest plugin: case files as test items, in a run that asks for them.

Registered only on request (:mod:`conformance.pytest_switch`, which the
``pytest11`` entry point loads, registers it for ``-p conformance``,
``--conformance`` or ``conformance = true`` in the ini file; ``-p
conformance.pytest_plugin`` registers it directly): installing the package
does not make a folder named ``cases`` in another project a test folder, nor
load this module, NumPy or ONNX into every pytest run.

``pytest -p conformance cases/`` collects every YAML case file below a folder named
``cases`` (not ``cases/known/``, which holds baselines) as one test item per
concrete case x runtime x variant, named ``<case id>[<runtime>-<variant>]``.
Each item runs through the same engine as ``conformance run``: the oracle's
verdict, the model in that variant, the runtime in its isolated worker
process (one session-wide set of workers per pytest process, so ``-n``
gives each xdist worker its own), and the judge. Every result is appended to
``results.jsonl`` under ``--conformance-out`` (one folder per xdist worker),
and the controlling process writes the merged ``report.html`` at the end.
An ONNX backend test folder below a ``cases`` folder (its ``*.onnx`` model
with data sets: :mod:`conformance.cases.backend`) is collected from its model,
a case per data set; a folder that is not a Gather or GatherElements test is
a skip saying "not taken" and why.

Known discrepancies (``cases/known/<runtime>.yaml``, see
:mod:`conformance.gate.baseline`) become xfails:

* an entry with ``case`` (each result in its scope is expected to show it)
  marks its items ``xfail(strict=True)``: an item that conforms now fails as
  XPASS(strict), "fixed upstream?";
* an entry with only ``signature`` (a family that may show on some inputs)
  turns a matching discrepancy into an xfail at run time; a conforming item
  passes.

A discrepancy no entry covers fails the item with the runtime's message and
the case's file and line; so does a case whose written expectation
(``expected``, ``expect_error``, ``expected_shape``) disagrees with the oracle,
whatever the runtime did (its result is judged against the oracle): pytest
has no per-item "bad input", and ``conformance run`` exits 2 for it. An item
that could not be checked is a skip saying "not checked" and why, as
``cases validate`` and ``run`` say it: a case over the memory guard (nothing
computed, so nothing held against the oracle either) or a
``harness_unsupported`` result. A case file that does not load is a
collection error showing ``file:line: field: message``.
Options, all prefixed ``--conformance-``: ``--conformance-runtime NAME``
(repeatable; default what ``conformance run`` runs: the installed built-ins,
found without importing any package), ``--conformance-variants V ...``
and ``--conformance-known DIR`` (defined once, with ``conformance run``'s
``--variants`` and ``--known``, in :mod:`conformance.gate.settings`),
``--conformance-out DIR``, ``--conformance-pack N``, ``--conformance-timeout S``
(checked by ``run``'s own types: a bad value is a usage error, exit 4).
The former ``--runtime``, ``--variants`` and ``--known`` still work, with a
PytestDeprecationWarning; they exist only in a run that enabled the plugin
(another plugin may own those names elsewhere), are added last, once the
initial conftests have added their own options (:func:`add_deprecated`: a
project's own ``--runtime`` wins, whichever loads first), and are not shown
in --help.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance import adapters, gate
from conformance.cases import backend
from conformance.cases.check import OverMemory, verdict_of
from conformance.cases.loader import CaseErrors, load_file
from conformance.engine import records, targets
from conformance.engine.judge import DISCREPANCIES
from conformance.engine.pool import DEFAULT_TIMEOUT, RUNTIME_TIMEOUTS
from conformance.errors import ConformanceError
from conformance.gate import baseline
from conformance.gate.settings import add_known, add_variants, build, pack_size, positive_seconds
from conformance.messages import relative
from conformance.report.terminal import cases as cases_text
from conformance.report.terminal import run as run_text
from conformance.report.terminal.progress import Ticker

if TYPE_CHECKING:  # the engine's run is imported when a session starts one
    from conformance.engine.run import Recorded, Run

DEFAULT_OUT = Path("reports") / "pytest"


class KnownDiscrepancy(AssertionError):
    """The outcome a baseline entry expects: what a strict xfail waits for."""


class Discrepancy(AssertionError):
    """A discrepancy no baseline entry covers."""


class CaseProblem(AssertionError):
    """A case whose written expectation disagrees with the oracle."""


# The former spellings: (old flag, its dest, the prefixed flag it stands for).
DEPRECATED = (
    ("--runtime", "conformance_runtimes_deprecated", "--conformance-runtime"),
    ("--variants", "conformance_variants_deprecated", "--conformance-variants"),
    ("--known", "conformance_known_deprecated", "--conformance-known"),
)


def _named(add, flag: str):
    """``add`` under another flag: the shared definitions of
    :mod:`conformance.gate.settings` (``--variants``, ``--known``) spelled as
    this plugin spells them."""
    return lambda _flag, **attrs: add(flag, **attrs)


def _hidden(add, flag: str):
    """``add`` under ``flag``, left out of --help (a deprecated spelling)."""
    return lambda _flag, **attrs: add(flag, **{**attrs, "help": argparse.SUPPRESS})


def _runtime(add, flag: str, **extra) -> None:
    add(
        flag,
        action="append",
        metavar="NAME",
        help="runtime to run the case files on (repeatable; default, as conformance run: "
        "every installed built-in runtime, the compilers and other packages' adapters only "
        "when named)",
        **extra,
    )


def pytest_addoption(parser, pluginmanager) -> None:
    group = parser.getgroup("conformance", "ONNX Gather conformance (YAML case files)")
    _runtime(group.addoption, "--conformance-runtime", dest="conformance_runtimes")
    add_variants(_named(group.addoption, "--conformance-variants"), dest="conformance_variants")
    add_known(_named(group.addoption, "--conformance-known"), dest="conformance_known")
    group.addoption(
        "--conformance-out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"where results.jsonl and report.html go (default {DEFAULT_OUT})",
    )
    group.addoption(
        "--conformance-pack",
        type=pack_size,  # the one checked type of `run --pack`
        default=None,
        metavar="N",
        help="cases per model on every runtime (default: each runtime's measured size; 1: "
        "each case alone), as conformance run --pack",
    )
    group.addoption(
        "--conformance-timeout",
        type=positive_seconds,  # the one checked type of `run --timeout`
        default=None,
        metavar="S",
        help=f"seconds per case and runtime (default {DEFAULT_TIMEOUT:g}, "
        + ", ".join(f"{t:g} for {name}" for name, t in RUNTIME_TIMEOUTS.items())
        + ")",
    )
    if not _deferred(pluginmanager):
        add_deprecated(parser)


def _deferred(pluginmanager) -> bool:
    """Whether :func:`add_deprecated` runs once the initial conftests are
    loaded (a hook wrapper of ours is around their loading): always when the
    switch is registered (it registers this plugin there, or a conftest's
    ``pytest_plugins`` does), or when this plugin was named ahead (``-p
    conformance.pytest_plugin``, ``PYTEST_PLUGINS``: registered before it)."""
    from conformance import pytest_switch

    if pluginmanager.has_plugin(pytest_switch.NAME):
        return True
    config = pluginmanager.get_plugin("pytestconfig")
    named = getattr(getattr(config, "known_args_namespace", None), "plugins", None) or ()
    named = [*named, *os.environ.get("PYTEST_PLUGINS", "").split(",")]
    return __name__ in {name.strip() for name in named}


_ALIASES = "_conformance_deprecated_aliases"  # on the parser: added once


def add_deprecated(parser) -> None:
    """The former spellings, deprecated: hidden from --help, only in a run
    that enabled the plugin, and each only where its name is free. Added
    after every initial conftest and plugin has added its own options (from
    the hook wrappers around their loading: here and in the switch), so a
    project's own ``--runtime`` wins whichever loads first; once per parser."""
    if getattr(parser, _ALIASES, False):
        return
    setattr(parser, _ALIASES, True)
    group = parser.getgroup("conformance", "ONNX Gather conformance (YAML case files)")
    for flag, dest, _new in DEPRECATED:
        add = _hidden(group.addoption, flag)
        try:
            if flag == "--runtime":
                _runtime(add, flag, dest=dest)
            elif flag == "--variants":
                add_variants(add, dest=dest)
            else:
                add_known(add, dest=dest)
        except (argparse.ArgumentError, ValueError):
            continue  # another plugin's or a conftest's option of that name


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """The deprecated spellings once the initial conftests have added theirs
    (this plugin named with ``-p``; when the switch registers it, the
    switch's wrapper calls :func:`add_deprecated`)."""
    try:
        return (yield)
    finally:
        add_deprecated(parser)


def _fold_deprecated(config) -> None:
    """Fold the former spellings into the prefixed options' values (lists: both;
    a single value: the prefixed one first), once per process, saying so once
    (in the controlling process only, not again in each xdist worker)."""
    option = config.option
    for flag, dest, new_flag in DEPRECATED:
        old = getattr(option, dest, None)
        if old is None:
            continue
        new_dest = dest.removesuffix("_deprecated")
        new = getattr(option, new_dest)
        if isinstance(new, list) or isinstance(old, list):
            setattr(option, new_dest, [*(new or ()), *(old or ())])
        elif new is None:
            setattr(option, new_dest, old)
        setattr(option, dest, None)
        if not _worker(config):
            config.issue_config_time_warning(
                pytest.PytestDeprecationWarning(
                    f"{flag} is deprecated: use {new_flag} (the plugin's options are "
                    "prefixed --conformance-)"
                ),
                stacklevel=2,
            )


def _is_case_file(path: Path, root: Path) -> bool:
    """A YAML file below a folder named `cases` (but not `cases/known/`), the
    folders counted from pytest's rootdir, not from /: a checkout that happens
    to live under some /cases/ folder does not make every YAML file a case."""
    if path.suffix not in (".yaml", ".yml"):
        return False
    parts = _below(path, root)
    return "cases" in parts[:-1] and "known" not in parts[parts.index("cases") :]


def _below(path: Path, root: Path) -> tuple[str, ...]:
    """The parts of ``path`` below pytest's rootdir (all of them outside it)."""
    return path.relative_to(root).parts if path.is_relative_to(root) else path.parts


def pytest_collect_file(file_path: Path, parent):
    if _is_case_file(file_path, parent.config.rootpath):
        config = parent.config
        if _REFUSED in config.stash:
            return None  # said once, after collection
        try:  # options and baselines checked once, at the first case file
            _session(config)
        except pytest.UsageError as error:
            # Raised here it would be one collection error per case file: kept,
            # and raised once collection ends (pytest_collection_modifyitems).
            config.stash[_REFUSED] = error
            return None
        return CaseFile.from_parent(parent, path=file_path)
    if _is_backend_test(file_path, parent.config.rootpath):
        return BackendTest.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    """A session whose options or baselines were refused at its first case
    file (below a folder ``_wants_cases`` does not look into) stops here with
    that one usage error (exit 4)."""
    if _REFUSED in config.stash:
        raise config.stash[_REFUSED]


def _is_backend_test(path: Path, root: Path) -> bool:
    """The model of an ONNX backend test folder (conformance.cases.backend)
    below a folder named `cases`, as a case file is."""
    if path.suffix != backend.MODEL_SUFFIX:
        return False
    parts = _below(path, root)
    return "cases" in parts[:-1]


class _Session:
    """What one pytest process shares: runtimes, baselines, and the run."""

    def __init__(self, config) -> None:
        self.config = config
        option = config.option
        # Without --conformance-runtime, what `conformance run` runs: the installed
        # built-ins (found without importing them; the compilers only when named).
        # An adapter of another package runs when named: it is imported by its
        # workers alone, never here, where a failing import would stop every run.
        named = list(dict.fromkeys(option.conformance_runtimes or ()))
        try:  # the one choice of targets and reading of baselines, `conformance run`'s
            self.settings = build(
                runtimes=named,
                known=option.conformance_known,  # 'shipped' read; default: it
                known_flag="--conformance-known",
                variants=option.conformance_variants,
                timeout=option.conformance_timeout,
                pack=option.conformance_pack,
            )
        except ConformanceError as error:
            raise pytest.UsageError(error.message) from None
        # The items are named by the runtimes as given (onnxruntime:default too).
        self.runtimes = named or self.settings.names
        baselines = self.settings.baselines or {}
        self.baselines = {
            runtime: baselines.get(name, [])
            for runtime, name in zip(self.runtimes, self.settings.names, strict=True)
        }
        self.variants = self.settings.variants
        self.known = self.settings.known
        worker = _worker(config)
        self.out = option.conformance_out / worker if worker else option.conformance_out
        _check_out(option.conformance_out)
        self.run: Run | None = None
        self.failed: str | None = None  # why the run did not start: said once, then exit 4
        # (case id, source, variant, runtime) -> record, run ahead of the items
        self.records: dict[tuple, dict] | None = None
        self._where: dict[str, baseline.Where] = {}

    def start(self):
        """The session's run: workers start at the first item, not at collection.
        A run that cannot start (a ``module:Class`` that does not import, a
        worker that does not start, an output folder that cannot be made)
        ends the session with that one usage error (exit 4), not an error per
        item, and the session's end has no run to close."""
        if self.run is None:
            if self.failed is not None:
                pytest.exit(self.failed, returncode=pytest.ExitCode.USAGE_ERROR)
            from conformance.engine.run import Run

            assert self.settings.engine is not None  # built with the engine's options
            command = ["pytest", *self.config.invocation_params.args]
            try:
                run = Run(self.out, self.settings.engine, command=[str(c) for c in command])
                run.__enter__()  # on failure it has closed what it opened
            except (ConformanceError, OSError) as error:
                said = error.message if isinstance(error, ConformanceError) else _oserror(error)
                self.failed = f"conformance: the run did not start: {said}"
                pytest.exit(self.failed, returncode=pytest.ExitCode.USAGE_ERROR)
            self.run = run
        return self.run

    def record_of(self, item: CaseItem) -> dict:
        """The item's record. Without xdist, the first item runs every selected
        item's case at once (one drive: packed, engine/packs.py), and each
        item then judges its own record; under xdist a worker does not know
        its share ahead, so each item runs its case alone."""
        run = self.start()
        if self.records is None and not _worker(self.config):
            self.records = {}
            wanted: dict[int, tuple] = {}  # case -> (case, runtime -> its selected variants)
            for other in item.session.items:
                if isinstance(other, CaseItem):
                    case, chosen = wanted.setdefault(id(other.case), (other.case, {}))
                    chosen.setdefault(other.runtime, []).append(other.variant)
            items = []  # exactly the selected (variant, runtime) pairs, nothing more
            for case, chosen in wanted.values():
                variants = list(chosen.values())
                if all(v == variants[0] for v in variants):
                    items.append((case, variants[0], list(chosen)))
                else:
                    items += [(case, v, [runtime]) for runtime, v in chosen.items()]
            total = sum(len(variants) * len(runtimes) for _, variants, runtimes in items)
            run.drive(items, progress=self._progress(total), recorded=self._keep)
        key = (item.case.id, str(item.case.source), item.variant, item.runtime)
        if self.records is not None and key in self.records:
            return self.records.pop(key)
        got = []
        run.drive(
            [(item.case, [item.variant], [item.runtime])],
            recorded=lambda result: got.append(result.record),
        )
        return got[0]

    def where(self, runtime: str) -> baseline.Where:
        """The target as the gate matches entries on it: version, profile, CPU
        flags, its GPU (read once per session, not per item)."""
        if runtime not in self._where:
            about = self.start().pool.info.get(runtime) or {}
            self._where[runtime] = baseline.Where(
                about.get("version"),
                about.get("profile"),
                frozenset(records.cpu_flags()),
                baseline.gpu_of(about.get("gpu")),
                baseline.webgpu_of(about.get("webgpu_adapter")),
            )
        return self._where[runtime]

    def _progress(self, total: int):
        """Outside a terminal (CI logs, where pytest shows nothing until the
        items report), a progress line at most every 10 s while the one drive
        runs every case (report/terminal/progress.py: the same line and pace as ``run``)."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or reporter.isatty():
            return None
        ticker = Ticker()
        # The drive runs inside the first item's call, whose output pytest
        # captures (and drops when it passes): the line goes around the capture.
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        around = capture.global_and_fixture_disabled if capture else contextlib.nullcontext

        def update(done: int, summary) -> None:
            if done < total and ticker.due():
                line = run_text.progress_line(done, total, summary.discrepancies, ticker.elapsed())
                with around():
                    reporter.write_line(f"conformance {line}")

        return update

    def _keep(self, result: Recorded) -> None:
        case = result.case
        assert self.records is not None  # set before the run ahead that calls this
        self.records[(case.id, str(case.source), result.variant, result.runtime)] = result.record

    def close(self) -> None:
        if self.run is not None:
            self.run.__exit__(None, None, None)
            self.run = None


def _oserror(error: OSError) -> str:
    """``FILE: REASON``, as ``conformance`` says an unusable file."""
    where = f"{error.filename}: " if error.filename else ""
    return f"{where}{error.strerror or error}"


def _check_out(out: Path) -> None:
    """``--conformance-out`` must be a folder, or be makeable as one: a file
    there, or above it, is a usage error before anything runs."""
    folder = Path(out)
    while not folder.exists() and folder != folder.parent:  # False below a file, too
        folder = folder.parent
    if not folder.is_dir():
        raise pytest.UsageError(f"--conformance-out {out}: Not a directory ({folder} is a file)")


_KEY = pytest.StashKey[_Session]()
_REFUSED = pytest.StashKey[pytest.UsageError]()


def _worker(config) -> str | None:
    """The xdist worker id (gw0...) in a worker process, else None. Read from
    the config, not the environment: a pytest started by a test that itself
    runs under xdist inherits PYTEST_XDIST_WORKER."""
    return getattr(config, "workerinput", {}).get("workerid")


def _session(config) -> _Session:
    if _KEY not in config.stash:
        config.stash[_KEY] = _Session(config)
    return config.stash[_KEY]


def _wants_cases(config) -> bool:
    """Whether the session's paths hold case files: a `cases` folder in or
    below one of them. Only then are runtimes and baselines checked."""
    for arg in config.args:
        path = Path(arg.split("::")[0]).resolve()
        if "cases" in _below(path, config.rootpath) or (path / "cases").is_dir():
            return True
    return False


def pytest_sessionstart(session) -> None:
    """Check --runtime, --known and the baselines once, before collection: a
    bad baseline file stops the session with its file:line (exit 4), not once
    per case file."""
    if _wants_cases(session.config):
        _session(session.config)


_STARTED = pytest.StashKey[float]()


def pytest_configure(config) -> None:
    _fold_deprecated(config)
    config.addinivalue_line("markers", "conformance_case: a concrete case of a YAML case file")
    config.stash[_STARTED] = time.time()


def pytest_sessionfinish(session) -> None:
    config = session.config
    state = config.stash.get(_KEY, None)
    if state is not None:
        state.close()
    if _worker(config):
        return  # the controlling process merges the workers' folders
    if state is not None and state.failed is not None:
        return  # the run never started: said already (exit 4), nothing to report
    out = config.option.conformance_out
    started = config.stash.get(_STARTED, 0.0)
    folders = [
        results.parent
        for results in (sorted(out.glob("**/results.jsonl")) if out.is_dir() else ())
        # this session's, not an earlier one's; a run that started wrote its header
        if results.stat().st_mtime >= started and (results.parent / records.HEADER).exists()
    ]
    if not folders:
        return  # no case file ran: nothing to report
    from conformance.report import render

    reporter = config.pluginmanager.get_plugin("terminalreporter")
    try:
        known = state.known if state is not None else config.option.conformance_known
        known = baseline.folders(known) if isinstance(known, list) else known
        runs = records.read_folders(folders)
        render.write(runs, out / "report.html", report_json=out / "report.json", known=known)
    except (ConformanceError, OSError) as error:  # the items' verdicts stand: a line, no traceback
        said = error.message if isinstance(error, ConformanceError) else _oserror(error)
        if reporter is not None:
            reporter.write_line(f"conformance report not written: {said}", red=True)
        return
    if reporter is not None:
        reporter.write_line(f"conformance report: {out / 'report.html'}")


class CaseFile(pytest.File):
    def repr_failure(self, excinfo, style=None):  # Node's signature; a Collector's takes no style
        if isinstance(excinfo.value, ConformanceError):  # CaseErrors, or an unknown opset
            return excinfo.value.message  # file:line: field: message, no traceback
        return super().repr_failure(excinfo)

    def _cases(self, path: Path):
        return load_file(path)  # CaseErrors: a collection error, every problem of the file

    def collect(self):
        path = relative(self.path)  # messages and records name cases/x.yaml:12
        cases = self._cases(path)
        state = _session(self.config)
        for case in cases:
            try:
                verdict = verdict_of(case)
            except OverMemory:  # the run refuses it: its items are skips, "not checked"
                verdict = None
            about = records.about(case, verdict)
            for runtime in state.runtimes:
                for variant in state.variants:
                    record = {**about, "runtime": runtime, "variant": variant}
                    entries = [
                        entry
                        for entry in state.baselines.get(runtime, ())
                        if entry.in_scope(record)
                    ]
                    yield CaseItem.from_parent(
                        self,
                        name=f"{case.id}[{runtime}-{variant}]",
                        case=case,
                        runtime=runtime,
                        variant=variant,
                        entries=entries,
                    )


class BackendTest(CaseFile):
    """An ONNX backend test folder, collected from its model: a case per data
    set; one that is not a Gather or GatherElements test is a skip saying
    "not taken" and why; a broken one a collection error naming its file."""

    def _cases(self, path: Path):
        found = backend.read_test(path.parent)
        if found.errors:
            raise CaseErrors(found.errors)
        for not_taken in found.not_taken:
            pytest.skip(cases_text.not_taken_lines([not_taken])[0])
        return found.cases


class CaseItem(pytest.Item):
    def __init__(self, *, case, runtime, variant, entries, **kwargs) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.runtime = runtime
        self.variant = variant
        self.entries = entries  # baseline entries in scope (version not checked yet)
        self.add_marker(pytest.mark.conformance_case)
        self.user_properties.append(("source", str(case.source)))
        self.record: dict | None = None

    def setup(self) -> None:
        # Entries hold for a version, a profile and CPU flags: scoped as the gate does.
        where = _session(self.config).where(self.runtime)
        self.entries = [e for e in self.entries if e.applies_to(where)]
        each = [e for e in self.entries if e.each]
        if each:
            reason = "; ".join(f"{e.where}: {e.reason}" for e in each)
            self.add_marker(pytest.mark.xfail(strict=True, raises=KnownDiscrepancy, reason=reason))

    def runtest(self) -> None:
        run = _session(self.config).start()
        self.record = _session(self.config).record_of(self)
        kind = self.record["kind"]
        self.user_properties.append(("outcome", kind))
        if self.record["expected"] is None:  # over the memory guard: no oracle verdict either
            pytest.skip(cases_text.not_checked(self.record["message"]))
        problems = run.case_problems(self.case)  # checked once, when the case first ran
        if problems:
            case = self.case
            raise CaseProblem(
                "\n".join(f"{case.source}: {case.id}: {problem}" for problem in problems)
                + f"\nthe case file disagrees with the oracle; {self.runtime}'s result, judged "
                f"against the oracle, is {kind}"
            )
        if kind == "harness_unsupported":  # says nothing of the runtime, either way
            pytest.skip(cases_text.not_checked(f"harness_unsupported: {self.record['message']}"))
        if kind not in DISCREPANCIES:
            return
        where = _session(self.config).where(self.runtime)
        decided = gate.check([self.record], {self.runtime: self.entries}, {self.runtime: where})
        cover = decided.covered_by.get(id(self.record))
        if cover is not None:
            if cover.each:
                raise KnownDiscrepancy(f"{kind} (known: {cover.where}): {cover.reason}")
            pytest.xfail(f"{kind}, known family {cover.where}: {cover.reason}")
        raise Discrepancy(self._describe())

    def _describe(self) -> str:
        record = self.record
        assert record is not None  # described once the item has its result
        lines = [
            f"{record['runtime']} {record['kind']}: {record.get('message', '')}",
            f"case {record['case_id']} ({record['source']}), variant {record['variant']}",
        ]
        expected = record.get("expected") or {}
        if "violation" in expected:
            lines.append(f"expected: an error ({expected['violation']})")
        elif expected:
            lines.append(f"expected: {expected['dtype']} of shape {expected['shape']}")
        if record.get("actual"):
            actual = record["actual"]
            lines.append(
                f"actual: {actual['dtype']} of shape {actual['shape']}: {actual['values']}"
            )
        if self.entries:
            kinds = sorted({k for e in self.entries for k in e.outcome})
            lines.append(
                f"baseline entries in scope expect {', '.join(kinds)}: the outcome changed"
            )
        else:
            lines.append(f"not in the baseline ({self._baseline_files()})")
        return "\n".join(lines)

    def _baseline_files(self) -> str:
        """The files the gate reads for this item's runtime: its baseline
        name's (:func:`conformance.adapters.baseline_name`: ``openvino.yaml``
        for ``openvino:1thread``) in each ``--conformance-known`` folder."""
        name = adapters.baseline_name(targets.adapter_of(self.runtime), self.runtime)
        if name is None:
            return f"no baseline file: {self.runtime!r} is not a baseline name"
        return ", ".join(str(f / f"{name}.yaml") for f in _session(self.config).known)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (Discrepancy, KnownDiscrepancy, CaseProblem)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return (
            self.path,
            self.case.source.line - 1 if self.case.source.line else None,  # a folder: no line
            f"{self.case.id} [{self.runtime}-{self.variant}]",
        )
