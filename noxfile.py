"""Sessions: `nox -l` lists them; README.md says which to run."""

from __future__ import annotations

import nox

PYTHON = "3.11"
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True


def _pytest(session: nox.Session, *args: str) -> None:
    session.run("pytest", "--strict-config", "--strict-markers", "-ra", *args, *session.posargs)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the tests of the harness itself (real ONNX Runtime and OpenVINO, no mocks)."""
    session.install("-e", ".[test]")
    _pytest(session)


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """The main job: check the case files, then run every case on every installed runtime.

    Results go to reports/latest/ (results.jsonl, header.json, summary.json).
    Exit status 1 (discrepancies found) is the expected outcome while runtimes
    have known discrepancies, so it does not fail the session; 2 (usage or
    harness error) and 130 (interrupted) do. Extra arguments go to
    `conformance run`, e.g. `nox -s conformance -- --runtime openvino`.
    """
    session.install("-e", ".")
    session.run("conformance", "cases", "validate", "--check-models")
    session.run(
        "conformance", "run", "--out", "reports/latest", *session.posargs, success_codes=[0, 1]
    )


@nox.session(python=PYTHON, default=False)
def fuzz(session: nox.Session) -> None:
    """A 60 s campaign with seed 1 on every installed runtime, into reports/fuzz/.

    Exit 1 (classes found) does not fail the session until the baseline gate
    lands; 2 (usage or harness error) does. Later arguments override earlier
    ones, so `nox -s fuzz -- --time-budget 300` runs longer.
    """
    session.install("-e", ".")
    session.run(
        "conformance",
        "fuzz",
        "--time-budget",
        "60",
        "--seed",
        "1",
        "--out",
        "reports/fuzz",
        *session.posargs,
        success_codes=[0, 1],
    )


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Oracle speed, and end-to-end run throughput against the ceiling and the naive loop."""
    session.install("-e", ".")
    session.run("python", "benchmarks/oracle_speed.py")
    session.run("python", "benchmarks/run_throughput.py", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
