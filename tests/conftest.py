"""Shared fixtures and Hypothesis profiles for the tests of the harness itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "cases"
SPECS = REPO / "specs"


def conformance(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """The CLI as a user runs it: a real process, text output captured."""
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


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
    result = conformance("run", "--runtime", "onnxruntime", "-k", "gather-every-dtype.op13*",
                         "--out", str(out))  # fmt: skip
    assert result.returncode == 1, result.stderr  # complex refused, strings wrong
    return out
