"""Progress for logs: when no live display is shown (stderr is not a
terminal, as in CI), ``run`` and ``fuzz`` print a status line at most every
:data:`EVERY_S` seconds (``$CONFORMANCE_PROGRESS_EVERY`` sets another
interval, in seconds: for tests of this output)."""

from __future__ import annotations

import os
import time

EVERY_S = 10.0
EVERY_ENV = "CONFORMANCE_PROGRESS_EVERY"


def every() -> float:
    """The interval: $CONFORMANCE_PROGRESS_EVERY when it is a positive number, else 10 s."""
    try:
        value = float(os.environ.get(EVERY_ENV, ""))
    except ValueError:
        return EVERY_S
    return value if value > 0 else EVERY_S


class Ticker:
    """Says when a status line is due: the first after one interval, then
    at most one per interval."""

    def __init__(self) -> None:
        self.every = every()
        self.start = self.last = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def due(self) -> bool:
        now = time.monotonic()
        if now - self.last < self.every:
            return False
        self.last = now
        return True
