"""onnxruntime-web's adapter, whose JavaScript side is killed on demand: a
real runner (Node, and for webgpu its Chromium) killed with SIGKILL when a
case's data holds :data:`KILL` (tests/test_browser_targets.py), as an
out-of-memory kill or a browser crash would end it. Everything else is the
real adapter."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np

from conformance.adapters.ortweb import WEBGPU, OrtWebAdapter

KILL = 12345.0  # a data element that asks for the kill


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


class KillingAdapter(OrtWebAdapter):
    name = "ortweb-killed"

    def execute(self, session, feeds):
        if any(np.any(array == KILL) for array in feeds.values() if array.dtype.kind == "f"):
            assert self._runner is not None
            # webgpu: the browser (the runner's child), which takes the runner with it
            victims = _children(self._runner.pid) if self.backend == WEBGPU else []
            for pid in victims or [self._runner.pid]:
                os.kill(pid, signal.SIGKILL)
        return super().execute(session, feeds)


class KillingWebGpu(KillingAdapter):
    name = "ortweb-killed-webgpu"

    def __init__(self, properties: dict | None = None) -> None:
        super().__init__({"backend": WEBGPU, **(properties or {})})
