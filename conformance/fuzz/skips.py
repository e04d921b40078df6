"""The skip rule: which runtime is no longer sent which inputs.

Once a runtime has crashed or hung on at least two inputs of a kind
(:func:`cost_keys`: operator, features and index classes, whatever their
dtype, variant, opset and broken clause) and on at least three in four of
them, it is no longer sent such inputs: each would cost a worker restart or a
timeout and tell nothing new. The campaign counts them as ``skipped``. Inputs
of a kind not yet seen twice go first in their round
(:meth:`SkipRule.probes_first`), so that the rule knows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import TypeVar

from conformance.fuzz import coverage, strategies
from conformance.fuzz.signature import features
from conformance.fuzz.strategies import Example
from conformance.tables import outcomes

EXPENSIVE = outcomes.kinds(lambda kind: kind.restarts_worker)  # kinds that cost a worker restart
HOPELESS_SHARE = 0.75  # of a kind's results expensive: the runtime is spared it (hopeless)

T = TypeVar("T")


def cost_keys(example: Example) -> list[tuple]:
    """What decides whether a runtime crashes or hangs, as far as the skip rule
    is concerned (a runtime hopeless on any of these keys is spared the input).
    Read from the input alone, so that they are known before anything runs;
    coarser than a signature, so that the rule learns fast:

    - the operator, the input's features and its index classes
      (:func:`conformance.fuzz.coverage.index_classes`);
    - for indices out of range, the operator and those classes alone: that
      is where runtimes panic (tract) or hang (onnx.reference on 2**63-1)
      whatever else the input has; in-range inputs never share this key.
    """
    classes = coverage.index_classes(example)
    keys: list[tuple] = [(example.op, features(example), classes)]
    wrong = tuple(c for c in classes if c in strategies.INVALID_INDEX_CLASSES)
    if wrong:
        keys.append((example.op, "indices", wrong))
    return keys


class SkipRule:
    def __init__(self) -> None:
        # input key -> runtime -> kinds seen
        self._seen: dict[tuple, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))

    def learn(self, keys: list[tuple], runtime: str, kind: str) -> None:
        """A judged outcome of ``runtime`` on an input with these keys."""
        for key in keys:
            self._seen[key][runtime][kind] += 1

    def hopeless(self, key: tuple, runtime: str) -> bool:
        """At least two crashes or hangs on inputs of this kind, and (nearly)
        nothing else: tract panics on most inputs with an index out of range
        and accepts a few; each panic costs a worker restart and a re-run to
        confirm it, for a bug already found."""
        kinds = self._seen[key][runtime]
        total = sum(kinds.values())
        expensive = sum(kinds[k] for k in EXPENSIVE)
        return expensive >= 2 and expensive >= HOPELESS_SHARE * total

    def runtimes_for(self, keys: list[tuple], runtimes: Sequence[str]) -> list[str]:
        """The runtimes an input with these keys is sent to: those not hopeless on any."""
        return [rt for rt in runtimes if not any(self.hopeless(key, rt) for key in keys)]

    def probes_first(
        self, items: list[T], keys_of: Callable[[T], list[tuple]], runtimes: Sequence[str]
    ) -> tuple[list[T], list[T]]:
        """A round's items split into probes and the rest: inputs of a kind some
        runtime has not been seen on twice go first, two of each, so that the
        rule knows, for the rest of the round, where a runtime crashes or hangs
        on everything (a round of 64 inputs that each hang cost 64 timeouts, not 2)."""
        probes: list[T] = []
        rest: list[T] = []
        probing: Counter = Counter()
        for item in items:
            unknown = [
                key
                for key in keys_of(item)
                if any(sum(self._seen[key][rt].values()) < 2 for rt in runtimes)
            ]
            if any(probing[key] < 2 for key in unknown):
                probing.update(unknown)
                probes.append(item)
            else:
                rest.append(item)
        return probes, rest
