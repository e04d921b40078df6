"""Shared fixtures and Hypothesis profiles for the tests of the harness itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


# One place for the profiles: dev (fast feedback), ci (the default), nightly.
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "nightly", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
