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
    """The main job: validate every case file, compute the oracle for every case, check models."""
    session.install("-e", ".")
    session.run("conformance", "cases", "validate", "--check-models", *session.posargs)


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Oracle speed against onnx.reference and ONNX Runtime (takes about half a minute)."""
    session.install("-e", ".")
    session.run("python", "benchmarks/oracle_speed.py", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
