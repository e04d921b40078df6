"""Sessions: `nox -l` lists them; README.md says which to run."""

from __future__ import annotations

import os
from pathlib import Path

import nox

PYTHON = "3.11"
RUNTIMES = ("onnxruntime", "openvino", "reference")
# One runtime per session, so its workers may use the cores, up to 4 (a later -j wins).
WORKERS = min(4, os.cpu_count() or 1)
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
@nox.parametrize("runtime", RUNTIMES)
def conformance(session: nox.Session, runtime: str) -> None:
    """The main job, one runtime per session: the gate on every case, then the merged report.

    `nox -s conformance` runs all three in turn (`nox -s "conformance(runtime='openvino')"`
    one of them, as a CI matrix does). Each checks the case files, runs every case
    on its runtime into reports/<runtime>/ and exits by the gate: 0 when every
    discrepancy is a known one in cases/known/<runtime>.yaml, 1 on a new one or
    on an entry that no longer reproduces, 2 on usage or harness errors. The
    `report` session then merges the folders into reports/latest/. Extra
    arguments go to `conformance run`, e.g. `-- --allow-fixed` or `-- -j 2`.
    """
    session.install("-e", ".")
    session.notify("report")  # runs once, after every queued conformance session
    session.run("conformance", "cases", "validate", "--check-models")
    session.run(
        "conformance", "run", "--runtime", runtime, "--gate", "--out", f"reports/{runtime}",
        "-j", str(WORKERS), *session.posargs,
    )  # fmt: skip


@nox.session(python=PYTHON, default=False)
def report(session: nox.Session) -> None:
    """Merge the reports/<runtime>/ folders into reports/latest/ (HTML, JUnit, JSON, gate).

    The gate over all of them is written to reports/latest/gate.json; each
    runtime's session has already failed on its own gate, so it does not fail here.
    """
    session.install("-e", ".")
    runs = [
        f"reports/{name}" for name in RUNTIMES if Path(f"reports/{name}/results.jsonl").exists()
    ]
    if not runs:
        session.error("no run to report: run `nox -s conformance` first")
    Path("reports/latest").mkdir(parents=True, exist_ok=True)
    session.run(
        "conformance", "report", *runs, "-o", "reports/latest/report.html",
        "--junit", "reports/latest/junit.xml", "--json", "reports/latest/report.json",
    )  # fmt: skip
    session.run("conformance", "gate", *runs, "--out", "reports/latest", success_codes=[0, 1])


@nox.session(python=PYTHON, default=False)
def fuzz(session: nox.Session) -> None:
    """A 60 s campaign with seed 1 on every installed runtime, into reports/fuzz/.

    Exits by the gate, as `conformance fuzz` does: 1 when it finds a discrepancy
    outside cases/known/. Later arguments override earlier ones, so
    `nox -s fuzz -- --time-budget 300 --seed 7` runs longer with another seed.
    """
    session.install("-e", ".")
    session.run(
        "conformance", "fuzz", "--time-budget", "60", "--seed", "1", "--out", "reports/fuzz",
        *session.posargs,
    )  # fmt: skip


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
