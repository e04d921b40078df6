"""Adapters that leave things behind: temporary files, and processes of their own.

What a runtime may do inside its worker and not clean up when it crashes, or
when the run is killed: tests pass them to the engine as
``tests.leaky_adapter:TempFileAdapter`` or ``tests.leaky_adapter:ForkingAdapter``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile

from tests.faulty_adapter import FaultyAdapter, SlowAdapter

# ForkingAdapter's grandchild appends its pid to the file this variable names.
GRANDCHILD_PIDS = "LEAKY_GRANDCHILD_PIDS"


def _leave_a_file() -> None:
    """A temporary file never removed, where the runtime's own would go."""
    descriptor, _ = tempfile.mkstemp(prefix="leaky-", suffix=".onnx")
    os.write(descriptor, b"a model a runtime wrote and never removed")
    os.close(descriptor)


class TempFileAdapter(FaultyAdapter):
    """FaultyAdapter that leaves a temporary file behind at every job (and
    crashes on the faulty codes as FaultyAdapter does)."""

    name = "tempfile"

    def execute(self, session, feeds):
        _leave_a_file()
        return super().execute(session, feeds)


class ForkingAdapter(SlowAdapter):
    """SlowAdapter that starts a long-lived process of its own at its first
    job (through subprocess, as a runtime's helper would be: no Python fork
    hook runs in it), and leaves a temporary file behind at every job."""

    name = "forking"

    def __init__(self) -> None:
        super().__init__()
        self.helper: subprocess.Popen | None = None

    def execute(self, session, feeds):
        if self.helper is None:
            self.helper = subprocess.Popen(["sleep", "600"])
            with open(os.environ[GRANDCHILD_PIDS], "a", encoding="ascii") as pids:
                pids.write(f"{self.helper.pid}\n")
        _leave_a_file()
        return super().execute(session, feeds)
