"""One round of a campaign in flight: its examples by case id, their cost
keys (:func:`conformance.fuzz.skips.cost_keys`), their outcomes so far and
the runs skipped until each one's first result; and what the engine's
callbacks do with each result: counted and recorded in the findings, taught
to the skip rule, a new class saved at once (``findings.json`` is saved at the
round's end). Held by the round, never kept on the campaign.
"""

from __future__ import annotations

from pathlib import Path

from conformance.cases.case import Case
from conformance.engine.judge import Outcome
from conformance.engine.run import Recorded
from conformance.engine.schedule import Settled
from conformance.fuzz import artifacts, skips
from conformance.fuzz.findings import Findings
from conformance.fuzz.strategies import Example


class Round:
    def __init__(self, findings: Findings, rule: skips.SkipRule, out_dir: Path) -> None:
        self.findings = findings
        self.rule = rule
        self.out_dir = out_dir
        self.examples: dict[str, Example] = {}  # case id -> example
        self.keys: dict[str, list[tuple]] = {}  # case id -> its cost keys, computed once
        self.outcomes: dict[str, dict[str, Outcome]] = {}  # case id -> runtime -> outcome
        self.uncounted: dict[str, int] = {}  # case id -> runs skipped, until its first result

    def add(self, example: Example, case: Case) -> None:
        self.examples[case.id] = example
        self.keys[case.id] = skips.cost_keys(example)  # once: index classes cost a scan

    def parts(self, cases: list[Case]) -> tuple[list[Case], list[Case]]:
        """The round's cases, the skip rule's probes first (:meth:`SkipRule.probes_first`)."""
        runtimes = self.findings.runtimes
        return self.rule.probes_first(cases, lambda case: self.keys[case.id], runtimes)

    def item(self, case: Case) -> tuple:
        """The example's run on every runtime the skip rule does not spare it."""
        every = self.findings.runtimes
        runtimes = self.rule.runtimes_for(self.keys[case.id], every)
        example = self.examples[case.id]
        if runtimes:
            self.uncounted[case.id] = len(every) - len(runtimes)  # counted at its first result
        else:  # skipped everywhere: no result to wait for
            self.findings.count(example, len(every))
        return (case, [example.variant], runtimes)

    def settled(self) -> None:
        """A drive ended: what it stopped before anything of it ran is not counted."""
        self.uncounted.clear()

    def recorded(self, result: Recorded) -> None:
        """The engine's callback for each result written (``Run.drive``)."""
        case_id, runtime, outcome = result.case.id, result.runtime, result.outcome
        findings, example = self.findings, self.examples[case_id]
        if case_id in self.uncounted:  # its first result
            findings.count(example, self.uncounted.pop(case_id))
        verdict = result.verdict
        findings.result(runtime, verdict, outcome)
        if verdict is None:  # nothing ran (the memory guard, or the budget ran out first)
            return
        outcomes = self.outcomes.setdefault(case_id, {})
        outcomes[runtime] = outcome  # a new class's: the other runtimes' fill in
        self.rule.learn(self.keys[case_id], runtime, outcome.kind)
        found = findings.record(example, runtime, verdict, outcome, outcomes)
        if found is not None:
            artifacts.write_class(found, self.out_dir)

    def confirm(self, shown: Settled) -> bool:
        """The engine's question: is a discrepancy a pack showed re-run alone?"""
        assert shown.verdict is not None  # a pack ran it: the case has its verdict
        example = self.examples.get(shown.case.id)
        return self.findings.confirm(example, shown.runtime, shown.verdict, shown.outcome)
