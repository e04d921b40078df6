"""A campaign's time budget: when it started, what is left of it, and whether
Ctrl-C asked it to stop. The campaign, its findings (``first_found_s``,
``elapsed_s``) and its shrinker read one clock."""

from __future__ import annotations

import time


class OutOfBudget(BaseException):
    """Raised inside a Hypothesis test when the budget is spent. A
    BaseException: Hypothesis passes those on at once instead of shrinking them."""


class Budget:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds  # shrinking included
        self.started = 0.0  # time.monotonic() when the campaign started; 0: not yet
        self.stopping = False  # Ctrl-C was pressed

    def start(self) -> None:
        self.started = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def left(self) -> float:
        return 0.0 if self.stopping else self.seconds - self.elapsed()

    def deadline(self) -> float:
        """The end of the budget, as a ``time.monotonic()`` value."""
        return self.started + self.seconds
