"""Sessions: `nox -l` lists them; README.md says which to run.

Every session installs under constraints.txt (`pip -c`): the versions the
baselines in cases/known/ describe, so a session gives the same verdict on any
machine. `versions` builds environments for other runtime versions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import nox

PYTHON = "3.11"
RUNTIMES = ("onnxruntime", "openvino", "reference")
# Built in, run only when named (conformance.adapters.OPT_IN): `compilers`, the scoreboard.
COMPILERS = ("tvm", "iree")
EXTRAS = {"onnxruntime": "onnxruntime", "openvino": "openvino", "reference": ""}  # pyproject's
CONSTRAINTS = "constraints.txt"  # relative to this file, nox's working directory
# pyproject.toml's extras that are not a runtime's; every other extra installs one
# (conformance/adapters/: a new runtime is its adapter file, its baseline and its extra).
NOT_RUNTIMES = ("all", "redis", "test", "lint", "typecheck")
RUNTIME_EXTRAS = tuple(
    extra
    for extra in tomllib.loads(Path(__file__).with_name("pyproject.toml").read_text("utf-8"))[
        "project"
    ]["optional-dependencies"]
    if extra not in NOT_RUNTIMES
)
# The scoreboard's columns: the main job's runtimes, then every other runtime's extra
# (pyproject's order), then the EP (the scoreboard session adds it).
SCOREBOARD_TARGETS = (*RUNTIMES, *(extra for extra in RUNTIME_EXTRAS if extra not in RUNTIMES))
# What the tests install: every runtime, those run only when named too (their round trips).
TESTED = f".[test,{','.join(RUNTIME_EXTRAS)}]"
# Workers per runtime: the machine's cores, up to 4 (a later -j wins).
WORKERS = min(4, os.cpu_count() or 1)
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True
# uv builds an environment in ~5 s where pip takes ~25 s (the main job's budget is
# 60 s): used where it is installed (`pip install nox uv`, as README.md says), else virtualenv.
nox.options.default_venv_backend = "uv|virtualenv"
# uv, unlike pip, does not compile .pyc files at install; where PYTHONDONTWRITEBYTECODE
# is set (as on this project's machines) nothing compiles them later, and every worker
# start then recompiles numpy, onnx and the runtime (the tests ran 40 % slower).
os.environ.setdefault("UV_COMPILE_BYTECODE", "1")


def _install(session: nox.Session, *args: str) -> None:
    """`pip install ARGS` into the session's environment, under constraints.txt."""
    session.install("-c", CONSTRAINTS, *args)


def _pytest(session: nox.Session, *args: str) -> None:
    session.run("pytest", "--strict-config", "--strict-markers", "-ra", *args, *session.posargs)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the tests of the harness itself (real runtimes, no mocks).

    ONNX Runtime's OpenVINO EP gets its own environment (its module is also
    `onnxruntime`); tests/test_openvino_ep.py runs its workers there
    (CONFORMANCE_EP_PYTHON).
    """
    _install(session, "-e", TESTED)
    _run_tests(session)


@nox.session(python=PYTHON, name="tests-fast", default=False)
def tests_fast(session: nox.Session) -> None:
    """The inner loop's tier: the tests that start no runtime worker or process.

    Exactly `nox -s tests -- -m "not slow"`: tests/tiers.py marks `slow` from
    the times in tests/durations.json (docs/development.md, "Tests and lint").
    """
    _install(session, "-e", TESTED)
    _run_tests(session, "-m", "not slow")


def _run_tests(session: nox.Session, *args: str) -> None:
    """pytest ARGS, with ONNX Runtime's OpenVINO EP in its environment (CONFORMANCE_EP_PYTHON),
    on two pytest-xdist workers: CI's two cores. Tests that share an expensive
    fixture, or whose time is asserted, keep to one worker (tests/tiers.py);
    `-- -n 0` runs them serially (docs/development.md, "Tests and lint")."""
    ep_python, _ = _ep_environment(session)
    session.env["CONFORMANCE_EP_PYTHON"] = str(ep_python.absolute())
    _pytest(session, "-n", "2", "--dist", "loadgroup", *args)


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """The main job: one environment, one run of every case on the three runtimes, the gate.

    Checks the case files against the oracle, runs every case on ONNX Runtime,
    OpenVINO and onnx.reference in one run into reports/latest/ (results,
    gate.json, report.html, junit.xml, report.json) and exits by the gate: 0
    when every discrepancy is a known one in cases/known/, 1 on a new one or on
    an entry that no longer reproduces, 2 on usage or harness errors. One run,
    not one per runtime: one start, one report, the cores shared; OpenVINO's
    compiles are read back from the user's cache folder on later runs
    (docs/development.md, "The main job's time"). Extra arguments go to
    `conformance run`, e.g. `-- --allow-fixed` or `-- -j 2`; one runtime per
    session (a CI matrix): `conformance-runtime`.
    """
    _install(session, "-e", ".[onnxruntime,openvino]")
    session.run("conformance", "cases", "validate", "--check-models")
    session.run(
        "conformance", "run", "--runtime", *RUNTIMES, "--gate", "--out", "reports/latest",
        "-j", str(WORKERS), *session.posargs,
    )  # fmt: skip


@nox.session(python=PYTHON, name="conformance-runtime", default=False)
@nox.parametrize("runtime", RUNTIMES)
def conformance_runtime(session: nox.Session, runtime: str) -> None:
    """The main job for one runtime, in its own environment (a CI matrix's job).

    `nox -s "conformance-runtime(runtime='openvino')"` runs the corpus on one
    runtime into reports/<runtime>/ and exits by its gate; the `report` session
    then merges the runtimes' folders into reports/latest/. Extra arguments go
    to `conformance run`.
    """
    _install(session, "-e", f".[{EXTRAS[runtime]}]" if EXTRAS[runtime] else ".")
    session.notify("report")  # runs once, after every queued conformance-runtime session
    session.run("conformance", "cases", "validate", "--check-models")
    session.run(
        "conformance", "run", "--runtime", runtime, "--gate", "--out", f"reports/{runtime}",
        "-j", str(WORKERS), *session.posargs,
    )  # fmt: skip


@nox.session(python=PYTHON, default=False)
def compilers(session: nox.Session) -> None:
    """The corpus on the compilers, Apache TVM and IREE, gated (docs/compilers.md).

    Not part of the main job: compiling every model takes them minutes, not
    seconds (about 2.5 minutes for TVM and 6.5 for IREE on 2 cores; both in
    this one run, about 11.5 minutes from a fresh clone). One run of both into
    reports/compilers/; extra arguments go to `conformance run`, e.g.
    `-- --runtime tvm:host iree:generic` for the other compile targets.
    """
    _install(session, "-e", ".[tvm,iree]")
    session.run(
        "conformance", "run", "--runtime", *COMPILERS, "--gate", "--out", "reports/compilers",
        "-j", str(WORKERS), *session.posargs,
    )  # fmt: skip


@nox.session(python=PYTHON, default=False)
def report(session: nox.Session) -> None:
    """Merge the reports/<runtime>/ folders into reports/latest/ (HTML, JUnit, JSON, gate).

    The gate over all of them is written to reports/latest/gate.json, and
    decides this session: a failed gate fails it (after the report is written),
    so `nox -s report` never says "successful" over a failed verdict.
    """
    _install(session, "-e", ".")
    runs = [
        f"reports/{name}" for name in RUNTIMES if Path(f"reports/{name}/results.jsonl").exists()
    ]
    if not runs:
        session.error('no run to report: run `nox -s "conformance-runtime(runtime=...)"` first')
    Path("reports/latest").mkdir(parents=True, exist_ok=True)
    session.run(
        "conformance", "report", *runs, "-o", "reports/latest/report.html",
        "--junit", "reports/latest/junit.xml", "--json", "reports/latest/report.json",
    )  # fmt: skip
    session.run("conformance", "gate", *runs, "--out", "reports/latest")


@nox.session(python=PYTHON, default=False)
def fuzz(session: nox.Session) -> None:
    """A 60 s campaign with seed 1 on every installed runtime, into reports/fuzz/.

    Exits by the gate, as `conformance fuzz` does: 1 when it finds a discrepancy
    outside cases/known/. Later arguments override earlier ones, so
    `nox -s fuzz -- --time-budget 300 --seed 7` runs longer with another seed.
    """
    _install(session, "-e", ".[all]")
    session.run(
        "conformance", "fuzz", "--time-budget", "60", "--seed", "1", "--out", "reports/fuzz",
        *session.posargs,
    )  # fmt: skip


@nox.session(name="fuzz-fleet", python=PYTHON, default=False)
def fuzz_fleet(session: nox.Session) -> None:
    """Two shards of one campaign sharing a regression store on a real Redis
    server, then the nightly replay of that store, into reports/fleet/.

    Starts `redis-server` (Debian's package) on a free loopback port, runs
    `conformance fuzz --shard 1/2` and `--shard 2/2` at the same time (60 s,
    seed 1, onnxruntime and openvino) with `--store redis://...`, prints the
    union of their bugs and who shrank each (a bug is shrunk by one shard
    only), then `conformance fuzz replay` on the store. Arguments after `--`
    go to both shards (`nox -s fuzz-fleet -- --time-budget 300`).
    """
    _install(session, "-e", ".[onnxruntime,openvino,redis]")
    if shutil.which("redis-server") is None:
        session.error("redis-server is not installed (Debian: apt-get install redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = Path("reports/fleet")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(out)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    store = f"redis://127.0.0.1:{port}/0"
    conformance = str(Path(session.bin) / "conformance")
    try:
        time.sleep(0.5)
        shards = []
        for i in (1, 2):
            command = [conformance, "fuzz", "--runtime", "onnxruntime", "openvino",
                       "--time-budget", "60", "--seed", "1", "--shard", f"{i}/2",
                       "--store", store, "--no-progress", "--out", str(out / f"shard-{i}"),
                       *session.posargs]  # fmt: skip
            env = {**os.environ, **session.env}  # nox marks a variable to unset with None
            shards.append(
                subprocess.Popen(command, env={k: v for k, v in env.items() if v is not None})
            )
        codes = [shard.wait() for shard in shards]
        if any(code not in (0, 1) for code in codes):
            session.error(f"a shard exited {codes}")
        bugs: dict[str, dict] = {}
        for i in (1, 2):
            findings = json.loads((out / f"shard-{i}" / "findings.json").read_text())
            for bug in findings["bugs"]:
                seen = bugs.setdefault(bug["id"], {**bug, "shards": set(), "shrinkers": set()})
                seen["shards"].add(i)
                if bug["shrunk_by"]:
                    seen["shrinkers"].add(bug["shrunk_by"])
        session.log(f"{len(bugs)} bugs in the union of the two shards:")
        for bug_id, bug in bugs.items():
            shards_of = "+".join(map(str, sorted(bug["shards"])))
            who = ", ".join(sorted(bug["shrinkers"]))
            shrinkers = f"shrunk by {who}" if who else "not shrunk"
            what = f"{bug['runtime']} {bug['kind']} {bug['op']}: {bug['cause'][:60]}"
            session.log(f"  {bug_id} {what} (shards {shards_of}; {shrinkers})")
        twice = [bug_id for bug_id, bug in bugs.items() if len(bug["shrinkers"]) > 1]
        if twice:
            session.error(f"shrunk by both shards: {', '.join(twice)}")
        session.run(
            "conformance", "fuzz", "replay", "--store", store, "--runtime", "onnxruntime",
            "openvino", "--out", str(out / "replay"), success_codes=[0, 1],
        )  # fmt: skip
    finally:
        server.kill()
        server.wait()


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Oracle speed, run throughput (packed, --pack 1, ceiling, naive), fuzzing rate, export."""
    _install(session, "-e", ".[all]")
    session.run("python", "benchmarks/oracle_speed.py")
    session.run("python", "benchmarks/run_throughput.py", *session.posargs)
    session.run("python", "benchmarks/fuzz_rate.py")
    session.run("python", "benchmarks/export_speed.py")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    _install(session, "ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy over conformance/, configured in pyproject.toml ([tool.mypy]).

    The runtimes ship no types (their modules are ignored there, one by one), so
    only the core, the Redis client, pytest and the stubs of PyYAML, jsonschema
    and protobuf (extra `typecheck`) are installed: what mypy checks calls against.
    """
    _install(session, "-e", ".[redis,typecheck]")
    session.run("mypy", *session.posargs)


# -- nox -s versions ---------------------------------------------------------------------
# Each runtime's own packages; every environment also gets COMPANIONS (what the
# adapters import besides their runtime) and this project with --no-deps.
VERSIONED = {"onnxruntime": ("onnxruntime",), "openvino": ("openvino",), "reference": ()}
COMPANIONS = ("numpy", "ml_dtypes", "onnx")
ADAPTER_MODULES = {
    "onnxruntime": "conformance.adapters.ort",
    "openvino": "conformance.adapters.ov",
    "reference": "conformance.adapters.reference",
}
# The pin a runtime held before constraints.txt last moved it: `nox -s versions`
# builds it as release `previous` (its companions at their pins) and diffs it
# against the new pin, so a move says what it changed (issue 48). The baseline
# lists both in its `observed:` (tests/test_versions.py holds the three equal).
PREVIOUS = {"onnxruntime": "1.31.1"}
RELEASES = ("oldest", "previous", "pinned", "newest")
TARGETS_FILE = Path("reports/versions/targets.yaml")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _lower_bounds() -> dict[str, str]:
    """``name>=X`` of pyproject's dependencies and extras: the oldest versions it claims
    to support."""
    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    found = {}
    extras = project.get("optional-dependencies", {}).values()
    for requirement in [*project["dependencies"], *(r for extra in extras for r in extra)]:
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*>=\s*([0-9][^,;\s]*)", requirement)
        if match:
            found[_canonical(match[1])] = match[2]
    return found


def _pins() -> dict[str, str]:
    """``name==X`` of constraints.txt, by canonical name: the pinned release."""
    found = {}
    for line in Path(CONSTRAINTS).read_text().splitlines():
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s#;]+)", line)
        if match:
            found[_canonical(match[1])] = match[2]
    return found


_VERSIONS_OF = """
import importlib.metadata as m, json, sys
print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))
"""


def _environment(
    session: nox.Session, env: Path, requirements: list[str], module: str, packages
) -> tuple[Path, dict]:
    """A worker environment at ``env``: the requirements, this project (--no-deps),
    checked by importing ``module``; its interpreter and the packages' versions."""
    python = env / "bin" / "python"
    # run_install: these build the environment, so `nox --install-only` builds it too
    # (session.run is skipped there, and the versions probe below would find no python).
    if not python.exists():
        session.run_install("python", "-m", "venv", str(env))
    pip = (str(python), "-m", "pip", "install", "--quiet")
    session.run_install(*pip, *requirements, external=True)
    session.run_install(*pip, "--no-deps", "-e", ".", external=True)
    session.run_install(str(python), "-c", f"import {module}", external=True)
    found = subprocess.run(
        [str(python), "-c", _VERSIONS_OF, *packages], capture_output=True, text=True, check=True
    ).stdout
    return python, json.loads(found)


@nox.session(python=PYTHON, default=False)
def versions(session: nox.Session) -> None:
    """An environment per runtime for its oldest supported, previous, pinned and newest release.

    oldest: pyproject's lower bounds (of the runtime, numpy, ml_dtypes and
    onnx); previous: the runtime's pin before its last move (PREVIOUS; only
    the runtimes that have one), the rest at their pins; pinned:
    constraints.txt; newest: the latest release on the index.
    Each environment holds the runtime's own packages, numpy, ml_dtypes, onnx
    and this project (`--no-deps -e .`), enough for a worker, and must import
    its adapter. The environments go to .nox/versions/envs/<runtime>-<release>/,
    and reports/versions/targets.yaml names them (`targets:` name -> adapter,
    python). Then the corpus runs on all of them in one run
    (`conformance run --targets`, into reports/versions/run/, gated against
    the shipped baselines), and each oldest, previous and newest release is
    diffed against its pinned one (reports/versions/diff-<runtime>-<release>.html).
    `nox -s versions -- openvino` does one runtime's.
    """
    unknown = sorted(set(session.posargs) - set(VERSIONED))
    if unknown:
        session.error(f"unknown runtime {unknown[0]!r}; give some of {', '.join(VERSIONED)}")
    runtimes = [name for name in VERSIONED if name in session.posargs] or list(VERSIONED)
    bounds = _lower_bounds()
    pins = _pins()
    envs = Path(session.virtualenv.location) / "envs"
    built = []
    for runtime in runtimes:
        packages = (*VERSIONED[runtime], *COMPANIONS)
        requirements = {  # pip arguments for each release
            "oldest": [f"{name}=={bounds[_canonical(name)]}" for name in packages],
            "pinned": ["-c", CONSTRAINTS, *packages],
            "newest": ["--upgrade", *packages],
        }
        if runtime in PREVIOUS:  # not `-c CONSTRAINTS`: it pins the runtime elsewhere
            requirements["previous"] = [
                *(f"{name}=={PREVIOUS[runtime]}" for name in VERSIONED[runtime]),
                *(f"{name}=={pins[_canonical(name)]}" for name in COMPANIONS),
            ]
        for release in (r for r in RELEASES if r in requirements):
            name = f"{runtime}-{release}"
            env = envs / name
            started = time.monotonic()
            python, found = _environment(
                session, env, requirements[release], ADAPTER_MODULES[runtime], packages
            )
            seconds = time.monotonic() - started
            built.append((name, runtime, python, found, seconds))
            session.log(f"{name}: {python} ({seconds:.0f} s)")
    lines = [
        "# Written by `nox -s versions`: one environment per runtime release",
        "# (oldest = pyproject's lower bounds, pinned = constraints.txt, newest).",
        "# Paths are relative to this file. Feed it to `conformance run --targets`.",
        "targets:",
    ]
    for name, runtime, python, found, _ in built:
        relative = os.path.relpath(python, TARGETS_FILE.parent)
        lines += [
            f"  {name}:  # " + ", ".join(f"{k} {v}" for k, v in found.items()),
            f"    adapter: {runtime}",
            f"    python: {json.dumps(relative)}",
        ]
    TARGETS_FILE.parent.mkdir(parents=True, exist_ok=True)
    partial = TARGETS_FILE.with_suffix(".yaml.partial")
    partial.write_text("\n".join(lines) + "\n")
    partial.replace(TARGETS_FILE)
    for name, _, python, found, seconds in built:
        versions_text = " ".join(f"{k}=={v}" for k, v in found.items())
        session.log(f"{name:<20} {seconds:4.0f} s  {versions_text}  {python}")
    session.log(f"targets: {TARGETS_FILE}")
    _install(session, "-e", ".")  # the harness itself runs here; the workers run there
    run = TARGETS_FILE.parent / "run"
    # Exit 1 is a verdict (an old release has discrepancies the baselines do not
    # know): the diffs below say what changed; 2 (a harness error) stops here.
    session.run(
        "conformance", "run", "--targets", str(TARGETS_FILE), "--out", str(run),
        "--no-progress", "--gate", success_codes=[0, 1],
    )  # fmt: skip
    for runtime in runtimes:
        for release in ("oldest", "previous", "newest"):
            if release == "previous" and runtime not in PREVIOUS:
                continue
            session.run(
                "conformance", "diff", str(run), str(run), "--cross-runtime",
                f"{runtime}-pinned", f"{runtime}-{release}",
                "-o", str(TARGETS_FILE.parent / f"diff-{runtime}-{release}.html"),
                success_codes=[0, 1],
            )  # fmt: skip


# -- nox -s scoreboard ---------------------------------------------------------------------
# Every target the project judges: the built-in runtimes of this environment, and
# ONNX Runtime's OpenVINO execution provider, whose package (onnxruntime-openvino)
# is also imported as `onnxruntime` and so gets an environment of its own.
SCOREBOARD = Path("reports/scoreboard")
EP_PACKAGES = ("onnxruntime-openvino", *COMPANIONS)


def _ep_environment(session: nox.Session) -> tuple[Path, dict]:
    """The environment of ONNX Runtime's OpenVINO EP, pinned by constraints.txt."""
    env = Path(session.virtualenv.location) / "envs" / "onnxruntime-openvino"
    return _environment(
        session, env, ["-c", CONSTRAINTS, *EP_PACKAGES], ADAPTER_MODULES["onnxruntime"],
        EP_PACKAGES,
    )  # fmt: skip


def _elsewhere(session: nox.Session) -> list[str]:
    """`--elsewhere RUN TARGET` pairs of the session's arguments, as `conformance
    scoreboard` takes them; a RUN recorded as results.jsonl.gz (tests/data/
    h200-onnxruntime-cuda/) is re-judged first into reports/scoreboard/elsewhere-N/
    (conformance/engine/rejudge.py, with the device.json beside it)."""
    given, found = list(session.posargs), []
    while given:
        if given[0] != "--elsewhere" or len(given) < 3:
            session.error(f"unknown argument {given[0]!r}: give --elsewhere RUN TARGET")
        run, target = Path(given[1]), given[2]
        del given[:3]
        if not (run / "results.jsonl").exists() and (run / "results.jsonl.gz").exists():
            out = SCOREBOARD / f"elsewhere-{len(found) // 3 + 1}"
            recorded = run / "device.json"
            device = ["--device", str(recorded)] if recorded.exists() else []
            session.run("python", "-c", REJUDGE, str(run), str(out), *device)
            run = out
        found += ["--elsewhere", str(run), target]
    return found


# onnxruntime-web's targets (docs/browser.md): their JavaScript side is npm's, not an
# extra; the adapter's own check says what is missing (Node, the install, Chromium).
BROWSER_TARGETS = ("onnxruntime-web:wasm", "onnxruntime-web:webgpu")
BROWSER_MISSING = (
    "import sys; from conformance.adapters import ortweb; "
    "print(ortweb.missing(sys.argv[1]) or '', end='')"
)


def _browser_targets(session: nox.Session) -> list[str]:
    """The browser targets this machine can run, after `npm ci` of their lockfile
    into the cache (a no-op when done); each one it cannot run said on one line."""
    if shutil.which("node") and shutil.which("npm"):
        session.run(
            "python", "-m", "conformance.adapters.ortweb_js.install", success_codes=[0, 1, 2]
        )
    found = []
    for target in BROWSER_TARGETS:
        lacking = session.run("python", "-c", BROWSER_MISSING, target.split(":")[1], silent=True)
        if lacking:
            session.log(f"{target} skipped: {lacking}")
        else:
            found.append(target)
    return found


REJUDGE = "import sys; from conformance.engine import rejudge; sys.exit(rejudge.main(sys.argv[1:]))"


@nox.session(python=PYTHON, default=False)
def scoreboard(session: nox.Session) -> None:
    """The corpus on every target, one run, then docs/scoreboard.html and .json.

    Ten targets: onnxruntime, openvino, reference, tract, tvm, iree and opencv
    (this environment), `onnxruntime:openvino-ep` (ONNX Runtime's OpenVINO execution provider, in
    .nox/scoreboard/envs/onnxruntime-openvino/, pinned by constraints.txt), and
    onnxruntime-web's `wasm` and `webgpu` where Node, npm and Chromium are installed
    (each skipped with a line saying what is missing otherwise; docs/browser.md
    says what they add to the run's time). The
    run goes to reports/scoreboard/run/ (gated against cases/known/, with its
    HTML report), with reports/scoreboard/diff-openvino-ep.html saying which of
    OpenVINO's own outcomes reach ONNX Runtime users through the EP. Commit
    docs/scoreboard.* with every baseline change (a test holds them to the
    baselines' digests). `-- --elsewhere RUN TARGET` adds a target of a run
    recorded on another machine as one more column, labelled with its device
    (`-- --elsewhere tests/data/h200-onnxruntime-cuda onnxruntime-cuda`: the
    H200 run, re-judged; docs/gpu.md).
    """
    _install(session, "-e", f".[{','.join(RUNTIME_EXTRAS)}]")
    elsewhere = _elsewhere(session)
    ep_python, found = _ep_environment(session)
    session.log("onnxruntime:openvino-ep: " + ", ".join(f"{k} {v}" for k, v in found.items()))
    browser = _browser_targets(session)
    targets = SCOREBOARD / "targets.yaml"
    targets.parent.mkdir(parents=True, exist_ok=True)
    targets.write_text(
        "# Written by `nox -s scoreboard`. Paths are relative to this file.\n"
        "targets:\n"
        + "".join(f"  {name}: {{adapter: {name}}}\n" for name in SCOREBOARD_TARGETS)
        + "  onnxruntime:openvino-ep:\n"
        "    adapter: onnxruntime\n"
        "    profile: openvino-ep\n"
        f"    python: {json.dumps(os.path.relpath(ep_python, targets.parent))}\n"
        + "".join(
            f"  {name}: {{adapter: {name.split(':')[0]}, profile: {name.split(':')[1]}}}\n"
            for name in browser
        )
    )
    run = SCOREBOARD / "run"
    # Exit 1 is a verdict (a discrepancy outside cases/known/): the scoreboard
    # shows it as not triaged; 2 (a harness error) stops here.
    session.run(
        "conformance", "run", "--targets", str(targets), "--out", str(run), "--no-progress",
        "--gate", success_codes=[0, 1],
    )  # fmt: skip
    session.run(
        "conformance", "diff", str(run), str(run), "--cross-runtime", "openvino",
        "onnxruntime:openvino-ep", "-o", str(SCOREBOARD / "diff-openvino-ep.html"),
        success_codes=[0, 1],
    )  # fmt: skip
    session.run(
        "conformance", "scoreboard", str(run), "-o", "docs/scoreboard.html",
        "--json", "docs/scoreboard.json", "--known", "cases/known", *elsewhere,
    )  # fmt: skip


# -- nox -s gpu ----------------------------------------------------------------------------
# onnxruntime-gpu is imported as `onnxruntime` too: its own environment, pinned by
# constraints.txt to what the H200 run had (docs/gpu.md). Its `cuda` extra does not
# bring cuBLAS, which the CUDA provider loads: nvidia-cublas is named.
GPU = Path("reports/gpu")
GPU_PACKAGES = ("onnxruntime-gpu[cuda,cudnn]", "nvidia-cublas", "nvidia-ml-py", *COMPANIONS)
CUDA_13_DRIVER = 580  # the oldest driver branch CUDA 13 runs on (Linux)


def _nvidia_gpu() -> tuple[str, str, str] | str:
    """(name, compute capability, driver version) of the first NVIDIA GPU, or why none."""
    if shutil.which("nvidia-smi") is None:
        return "nvidia-smi not found: no NVIDIA driver on this machine"
    query = ["nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"]
    try:
        done = subprocess.run(query, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"nvidia-smi did not answer: {error}"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        said = (done.stderr or done.stdout).strip().splitlines()
        return f"nvidia-smi sees no GPU ({said[0] if said else f'exit {done.returncode}'})"
    name, capability, driver = (part.strip() for part in lines[0].split(","))
    return name, capability, driver


@nox.session(python=PYTHON, default=False)
def gpu(session: nox.Session) -> None:
    """The corpus on an NVIDIA GPU: onnxruntime:cuda beside reference, gated; then iree:cuda.

    Without an NVIDIA GPU (nvidia-smi absent or seeing none) it ends at once, one
    line, exit 2; with a driver older than CUDA 13's it says which CUDA it needs.
    Builds .nox/gpu/envs/onnxruntime-gpu/ (onnxruntime-gpu[cuda,cudnn] and the NVIDIA
    wheels, pinned by constraints.txt), writes reports/gpu/targets.yaml and runs
    `conformance run --targets reports/gpu/targets.yaml --gate` into reports/gpu/run/
    (the session's verdict) with the wheels' libraries on LD_LIBRARY_PATH, then
    `conformance run --runtime iree:cuda --gate` into reports/gpu/iree/ (reported,
    not deciding: iree:cuda has no GPU observation yet). Extra arguments go to both
    runs (`-- --gpu-workers 2`). docs/gpu.md.
    """
    found = _nvidia_gpu()
    if isinstance(found, str):
        print(f"error: nox -s gpu needs an NVIDIA GPU: {found}", file=sys.stderr)
        raise SystemExit(2)
    name, capability, driver = found
    if int(driver.split(".")[0]) < CUDA_13_DRIVER:
        print(
            f"error: {name} has driver {driver}; onnxruntime-gpu 1.31.1 is built for CUDA 13, "
            f"which needs driver {CUDA_13_DRIVER} or newer: update the driver, or install an "
            "onnxruntime-gpu built for CUDA 12 in .nox/gpu/envs/onnxruntime-gpu (docs/gpu.md)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    session.log(f"{name}, compute capability {capability}, driver {driver}")
    _install(session, "-e", ".[iree]", "nvidia-ml-py")
    env = Path(session.virtualenv.location) / "envs" / "onnxruntime-gpu"
    python, versions = _environment(
        session, env, ["-c", CONSTRAINTS, *GPU_PACKAGES], ADAPTER_MODULES["onnxruntime"],
        ("onnxruntime-gpu", "nvidia-cublas", "nvidia-ml-py", *COMPANIONS),
    )  # fmt: skip
    session.log("onnxruntime:cuda: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    # The CUDA libraries of the NVIDIA wheels, as the H200 run found them.
    libraries = sorted(str(p) for p in env.glob("lib/python3*/site-packages/nvidia/*/lib"))
    session.env["LD_LIBRARY_PATH"] = os.pathsep.join(
        [*libraries, *filter(None, [os.environ.get("LD_LIBRARY_PATH")])]
    )
    targets = GPU / "targets.yaml"
    targets.parent.mkdir(parents=True, exist_ok=True)
    targets.write_text(
        "# Written by `nox -s gpu`. Paths are relative to this file.\n"
        "targets:\n"
        "  onnxruntime:cuda:\n"
        "    adapter: onnxruntime\n"
        "    profile: cuda\n"
        f"    python: {json.dumps(os.path.relpath(python, targets.parent))}\n"
        "  reference: {adapter: reference}\n"
    )
    session.run(
        "conformance", "run", "--targets", str(targets), "--out", str(GPU / "run"),
        "--no-progress", "--gate", *session.posargs,
    )  # fmt: skip
    session.run(
        "conformance", "run", "--runtime", "iree:cuda", "--out", str(GPU / "iree"),
        "--no-progress", "--gate", *session.posargs, success_codes=[0, 1],
    )  # fmt: skip
