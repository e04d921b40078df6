"""The campaign's options: what `conformance fuzz` is given (`CampaignOptions`,
derived from the engine's `Options`), the engine options it sets itself, its
default timeouts, and the errors of a campaign that cannot run or ran nothing.
Apart from the loop (:mod:`conformance.fuzz.campaign`) so that the objects the
loop drives (findings, shrinker) can name them without importing the loop."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance import adapters
from conformance.engine import models
from conformance.engine.pool import RUN_TIMEOUTS, EngineError, Timeouts
from conformance.engine.run import Options
from conformance.engine.targets import Target
from conformance.errors import ConformanceError
from conformance.fuzz import limits
from conformance.fuzz.store import Store

if TYPE_CHECKING:  # Hypothesis is imported with a campaign, not with the command line
    from hypothesis.strategies import SearchStrategy

    from conformance.fuzz.strategies import Example

# Seconds per job when --timeout is not given: 2 s, where a healthy runtime
# takes milliseconds and a hang costs a whole timeout. The compilers compile
# each job: a full pack of 32 examples takes TVM ~4 s and IREE ~2.7 s alone,
# past 2 s (campaigns' packs are mostly smaller: 40 s campaigns at 2 s timed
# nothing out), and a false timeout would be a false bug; they get run's 30 s.
FUZZ_TIMEOUTS = Timeouts(2.0, {name: RUN_TIMEOUTS.of(name) for name in sorted(adapters.OPT_IN)})

# Engine options the campaign sets itself, whatever it is given.
CAMPAIGN_SETS: dict[str, Any] = {  # engine option -> its value in a campaign
    "variants": models.VARIANTS,  # each example runs in its own drawn variant (of these)
    "default_timeouts": FUZZ_TIMEOUTS,
}


# kw_only: fields without a default follow the engine's, which have one (its own
# __init__ takes them by position; kw_only only tells type checkers the order is fine)
@dataclass(init=False, kw_only=True)
class CampaignOptions(Options):
    """The engine's options (:class:`conformance.engine.run.Options`, defined
    there only: ``workers``, ``timeout``, ``pack``, ``worker_memory``...) and the
    campaign's own. Built as ``CampaignOptions(runtimes, time_budget, seed,
    out_dir, **options)``; the engine's options the campaign sets itself
    (:data:`CAMPAIGN_SETS`) are not given."""

    time_budget: float  # seconds, shrinking included
    seed: int
    out_dir: Path
    max_elements: int = limits.DEFAULT_MAX_ELEMENTS
    round_size: int = 64  # examples per round (also the Hypothesis batch)
    # the campaign's own examples at most (None: the time budget alone ends it):
    # a campaign bounded so ends the same on a loaded machine as on a quiet one
    max_examples: int | None = None
    shrink_seconds: float = 10.0  # per class
    shrink_calls: int = 1000  # runtime calls per class (the 10 s usually binds first)
    shrink_share: float = 0.5  # of the elapsed time, at most
    shard: tuple[int, int] = (1, 1)  # (I, N): shards draw different examples
    store: Store | None = None  # the regression store (None: none)
    confirm_alone: int = 2  # discrepancies per bug re-run alone before packs are trusted
    # fuzz --model: a strategy of Examples every round draws from (None: coverage-guided
    # keys), and what the header says of it
    strategy: SearchStrategy[Example] | None = None
    extra_header: dict | None = None
    batch_size: int = 16  # the engine's, smaller: rounds are short
    # the engine's, set by the campaign whatever it is given (CAMPAIGN_SETS)
    variants: Sequence[str] = field(default=CAMPAIGN_SETS["variants"], init=False)
    default_timeouts: Timeouts = field(default=CAMPAIGN_SETS["default_timeouts"], init=False)

    def __init__(
        self, runtimes: Sequence[str | Target], time_budget: float, seed: int, out_dir: Path,
        **given: object,
    ) -> None:  # fmt: skip
        self.runtimes, self.time_budget, self.seed, self.out_dir = (
            runtimes, time_budget, seed, out_dir,
        )  # fmt: skip
        settable = {f.name: f for f in fields(self) if f.init}
        for name in given.keys() - settable.keys():
            raise TypeError(f"CampaignOptions() got an unexpected keyword argument {name!r}")
        for name, option in {f.name: f for f in fields(self)}.items():
            if name in given:
                setattr(self, name, given[name])
            elif option.default is not MISSING:
                setattr(self, name, option.default)
            elif option.default_factory is not MISSING:
                setattr(self, name, option.default_factory())
        self.__post_init__()

    def __post_init__(self) -> None:
        # Every duration the campaign computes and writes (findings.json,
        # header.json, the status line) derives from these: none may be NaN or
        # infinite, which JSON cannot hold and no budget can mean.
        for name, low, strict in _CHECKED:
            value = getattr(self, name)
            if value is None and name in _OPTIONAL:
                continue
            if not _finite_number(value) or value < low or (strict and value == low):
                bound = f"> {low:g}" if strict else f">= {low:g}"
                raise BadCampaign(f"campaign option {name}={value!r}: give a finite number {bound}")
        if not 0 <= self.shrink_share <= 1:
            raise BadCampaign(f"campaign option shrink_share={self.shrink_share!r}: from 0 to 1")

    def engine(self) -> Options:
        """The engine's options alone, as the engine's own class (the run's
        header records those). An engine option this class does not hold is an
        error here, at the first campaign, not a default silently kept."""
        names = [f.name for f in fields(Options)]
        missing = [name for name in names if not hasattr(self, name)]
        if missing:
            raise TypeError(
                f"engine option(s) {', '.join(sorted(missing))} not derived: "
                "CampaignOptions must derive from conformance.engine.run.Options"
            )
        return Options(**{name: getattr(self, name) for name in names})


class NothingRan(EngineError):
    """The time budget ran out before any of the campaign's own examples ran
    (the store's replay does not count): nothing was fuzzed, so nothing passed
    (``conformance gate`` refuses such a folder too)."""


class BadCampaign(ConformanceError, ValueError):
    """A campaign option no campaign can run with (a budget that is NaN, infinite or <= 0)."""


# (option, lowest value, whether the lowest is excluded): numbers that must be finite
_CHECKED = (
    ("time_budget", 0.0, True),
    ("timeout", 0.0, True),
    ("shrink_seconds", 0.0, False),
    ("shrink_share", 0.0, False),
    ("round_size", 1, False),
    ("max_examples", 1, False),
    ("shrink_calls", 0, False),
    ("confirm_alone", 0, False),
)

_OPTIONAL = ("timeout", "max_examples")  # of those, the ones that may be None (not given)


def _finite_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
