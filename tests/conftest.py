"""Shared fixtures and Hypothesis profiles for the tests of the harness itself."""

from __future__ import annotations

import compileall
import contextlib
import io
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, settings

from tests import tiers
from tests.tiers import pytest_addoption  # noqa: F401  (--store-durations)

REPO = Path(__file__).resolve().parents[1]
# Fuzz campaigns (in-process and the CLI's processes) use no regression store
# unless a test gives one: the default, the user's cache folder, would carry
# bugs from one test (and one run of the suite) to the next.
os.environ["CONFORMANCE_FUZZ_STORE"] = "off"
# Nor OpenVINO's compiled-model cache (the main job's default): a test compiles
# what it tests; tests/test_main_job_levers.py gives the cache its own folder.
os.environ["CONFORMANCE_OPENVINO_CACHE"] = "off"
CASES = REPO / "cases"
SPECS = REPO / "specs"
# A campaign seed whose first round is drawn at a complex dtype (a round's key
# depends on the seed alone; tests/test_fuzz.py holds this to it), which ONNX
# Runtime and OpenVINO both refuse: a discrepancy in the first round, however
# few rounds a slow or loaded machine gets through in a test's budget.
FIRST_ROUND_COMPLEX_SEED = "6"


def pytest_sessionstart(session) -> None:
    """The package's bytecode, compiled once for every process the tests start.
    Where PYTHONDONTWRITEBYTECODE is set (as on this project's machines) no
    process caches it, and each `conformance` process and worker would compile
    conformance/ (and a worker tests/'s adapters) again; they read .pyc files
    that exist. Nothing else changes: the sources are the same."""
    for folder in ("conformance", "tests"):
        compileall.compile_dir(REPO / folder, quiet=1)


def pytest_configure(config: pytest.Config) -> None:
    """The fast tier: the `slow` marker, set from tests/durations.json (tests/tiers.py)."""
    config.pluginmanager.register(tiers.Tiers(), "tiers")


def conformance(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """The CLI as a user runs it: a real process, text output captured."""
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def conformance_here(
    *args: str, cwd: Path = REPO, env: dict[str, str | None] | None = None
) -> subprocess.CompletedProcess:
    """The CLI in this process, for a command whose process is not what a test
    checks (a run's or a campaign's verdict, records, files and output; gate
    and diff of finished runs): its exit code and output as :func:`conformance`
    gives them (stdout strict UTF-8, stderr backslashreplace, not a terminal,
    ``sys.argv`` the command's, which the run's header records), without a
    Python start-up per call (a second of CPU: numpy, onnx, Hypothesis). The
    workers are processes all the same. ``env`` sets environment variables
    for the call (None: unset). An exception cli.main does not map escapes. A
    test of the process itself (signals, its exit, its children, its
    encoding) uses :func:`conformance`."""
    from conformance import cli

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    argv = sys.argv
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with mock.patch.dict(os.environ):  # restored as it was, whatever the call set
            for name, value in (env or {}).items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            sys.argv = [str(REPO / "conformance" / "__main__.py"), *args]
            try:
                code = cli.main(list(args))
            except SystemExit as exit:  # argparse: usage errors (2), --help and --version (0)
                code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
            finally:
                sys.argv = argv
        out.flush()
        err.flush()
    text = [stream.buffer.getvalue().decode("utf-8") for stream in (out, err)]
    return subprocess.CompletedProcess(["conformance", *args], code, *text)


def run_pytest(folder: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """pytest as a user runs it in another project: a real process in ``folder``,
    this interpreter's packages importable, no PYTEST_ADDOPTS of ours."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env or {})}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


# One place for the profiles: dev (fast feedback), ci (the default), nightly.
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "nightly", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def ort_every_dtype_run(tmp_path_factory) -> Path:
    """ONNX Runtime on gather-every-dtype (opset 13), every variant: a real run
    with discrepancies (complex refused, strings wrong). Tests only read it."""
    out = tmp_path_factory.mktemp("ort-every-dtype") / "run"
    result = conformance_here("run", "--runtime", "onnxruntime", "-k",
                              "gather-every-dtype.op13*", "--out", str(out))  # fmt: skip
    assert result.returncode == 1, result.stderr  # complex refused, strings wrong
    return out


@pytest.fixture(scope="session")
def ort_campaigns(tmp_path_factory) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    """Two campaigns on ONNX Runtime of one round (64 examples) with the seed
    whose first round finds a discrepancy: `strict` against an empty baseline
    (exit 1), `known` against the shipped ones and into an empty folder store
    (`store`, beside the folders); each one's folder and what it said. Tests
    only read them (the gate's exit, a diff of two campaigns); one that writes
    to the store copies it first. Bounded by examples, not by a 6 s budget,
    which runs no round on a loaded machine (issue 44, item 17)."""
    made = tmp_path_factory.mktemp("ort-campaigns")
    empty = made / "empty"
    empty.mkdir()
    args = ["fuzz", "--runtime", "onnxruntime", "--max-examples", "64", "--time-budget",
            "3600", "--seed", FIRST_ROUND_COMPLEX_SEED]  # fmt: skip
    return {
        "strict": (made / "a", conformance_here(*args, "--out", str(made / "a"), "--known",
                                                str(empty))),
        "known": (made / "b", conformance_here(*args, "--out", str(made / "b"), "--store",
                                               str(made / "store"))),
    }  # fmt: skip


@pytest.fixture(scope="session")
def ov_campaign(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A campaign of 192 examples (three rounds) on OpenVINO, seed 1, gated
    against the shipped baselines (every class it finds is a known one: exit
    0): its folder and what it said. Tests only read it (the classes and their
    files, the report). Bounded by examples, not by a 25 s budget, whose
    rounds a loaded machine's pace decides (issue 44, item 17)."""
    out = tmp_path_factory.mktemp("ov-campaign") / "fz"
    args = ["fuzz", "--runtime", "openvino", "--max-examples", "192", "--time-budget", "3600",
            "--seed", "1"]  # fmt: skip
    return out, conformance_here(*args, "--out", str(out))


def dead(pid: int, within: float = 5.0) -> bool:
    """Whether the process ``pid`` dies within ``within`` seconds: no such
    process, or a zombie waiting for whoever reaps it (it runs nothing more)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                if stat.read().rpartition(")")[2].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def free_port() -> int:
    """A TCP port on the loopback that nothing listens on (now)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """A real redis-server on a loopback port, without persistence: ``url``,
    :meth:`stop` and :meth:`start` (again on the same port: a restart)."""

    def __init__(self, folder: Path, args: tuple[str, ...] = ()) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.args = args  # more of redis-server's options (--requirepass, --user)
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        assert self.process is None, "already running"
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", str(self.folder), *self.args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while not self._pong():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not answer PING on port {self.port}")
            time.sleep(0.02)

    def _pong(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(64).startswith((b"+PONG", b"-NOAUTH"))  # up
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def redis_server(tmp_path_factory) -> Iterator[RedisServer]:
    """A fresh redis-server for one test (it starts in some 10 ms)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()
