"""The element cap of a fuzz example's tensors, apart from the strategies that
honour it: the command line's help and defaults need it without importing
Hypothesis (which every ``conformance`` command would then pay for at start)."""

from __future__ import annotations

import os

from conformance.cases.values import MAX_ELEMENTS

DEFAULT_MAX_ELEMENTS = 256
MAX_ELEMENTS_ENV = "CONFORMANCE_MAX_ELEMENTS"


def max_elements() -> int:
    """The element cap per tensor: $CONFORMANCE_MAX_ELEMENTS or the default."""
    raw = os.environ.get(MAX_ELEMENTS_ENV)
    if raw is None:
        return DEFAULT_MAX_ELEMENTS
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{MAX_ELEMENTS_ENV}={raw!r} is not a whole number") from None
    if not 1 <= value <= MAX_ELEMENTS:  # the case files' limit: one cap for every tensor
        raise ValueError(f"{MAX_ELEMENTS_ENV}={raw!r} must be from 1 to {MAX_ELEMENTS}")
    return value
