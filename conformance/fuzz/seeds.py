"""The seeds a campaign derives from its own: one per batch of examples and
one per shrink, stable across Python runs, and a stream per shard."""

from __future__ import annotations

import random


def derive(campaign_seed: int, purpose: str, number: int) -> int:
    """A seed for one batch or one shrink, stable across Python runs."""
    return random.Random(f"{campaign_seed}/{purpose}/{number}").getrandbits(64)


def stream(shard: tuple[int, int]) -> str:
    """The name of a shard's example stream; shard 1/1 keeps the plain one."""
    return "batch" if shard == (1, 1) else f"batch/{shard[0]}/{shard[1]}"
