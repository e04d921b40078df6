"""The outcome table: one row per outcome kind a result can have.

Every list of kinds derives from this table (the judge's ``KINDS``, the
gate's and the export's sets, the report's order and colours, the skip rule's
costly kinds, the scoreboard's columns); no module spells a list of kinds
inline, and the JSON schemas take the kind enum from ``docs/schemas/defs.schema.json``,
which tests/test_formats.py holds to this table. A new kind is one row here.

The order of the rows is the order of ``KINDS``: the order of results.jsonl's
kind enum, of the terminal's outcome table and of the report's diff columns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# The inputs a kind can come of: the spec's verdict on the input, not the runtime's.
VALID, INVALID, ANY = "valid", "invalid", "any"
# What the runtime did, as the worker saw it.
OUTPUT, REFUSED, DIED, HUNG, NOTHING = "output", "refused", "died", "hung", "nothing"
# Where a native runner (conformance export) sees a known failure of the kind:
# when the test runs (a wrong output, an exit status), when the model loads or
# compiles, or at one of the two, the record does not say which.
AT_RUN, AT_LOAD, AT_EITHER = "run", "load", "either"


@dataclass(frozen=True)
class OutcomeKind:
    name: str  # as records, baselines and scripts spell it
    inputs: str  # VALID, INVALID or ANY: the inputs it can come of
    response: str  # OUTPUT, REFUSED, DIED, HUNG or NOTHING: what the runtime did
    severity: int  # 0 is worst: a report's matrix cell takes the colour of its worst kind
    style: str  # the CSS of its cells, class k-<name> (the report, diff and scoreboard pages)
    conforming: bool = False  # the runtime did what the spec says
    judged: bool = True  # False: the harness could not run it; says nothing of the runtime
    native: str | None = None  # AT_RUN, AT_LOAD, AT_EITHER; None: no exported test shows it
    counted_apart: bool = False  # the scoreboard gives its count a field of its own
    # what a deployer can do about a node of a model with it, where no
    # explanation names the mechanism (conformance model's verdict per node)
    workaround: str = ""

    @property
    def discrepancy(self) -> bool:
        return self.judged and not self.conforming

    @property
    def restarts_worker(self) -> bool:
        """The worker died or was killed for hanging: the pool starts another
        (the fuzz skip rule spares a runtime the inputs that cost this)."""
        return self.response in (DIED, HUNG)

    @property
    def runtime_text(self) -> bool:
        """Its message is the runtime's (or the harness's) own text, not the
        judge's: ``conformance diff`` compares it normalised."""
        return self.response != OUTPUT


_AVOID = "keep the node's inputs away from the smallest input shown; report it upstream"
OUTCOME_KINDS: tuple[OutcomeKind, ...] = (
    # the oracle's output, bit for bit
    OutcomeKind("pass", VALID, OUTPUT, 9, "background: #cdeccd;", conforming=True),
    # right dtype and shape, some elements differ
    OutcomeKind("value_mismatch", VALID, OUTPUT, 2, "background: #ff9f9f;", native=AT_RUN,
                workaround="no known mechanism: report it upstream with the smallest input "
                           "shown"),
    OutcomeKind("dtype_mismatch", VALID, OUTPUT, 3, "background: #ffb8a8;", native=AT_RUN,
                workaround="cast the output back to the data's dtype after the Gather"),
    OutcomeKind("shape_mismatch", VALID, OUTPUT, 4, "background: #ffb8a8;", native=AT_RUN,
                workaround="reshape the output to the spec's shape after the Gather"),
    # the runtime refused a valid input (at load or at run time)
    OutcomeKind("rejected", VALID, REFUSED, 6, "background: #ffe3a3;", native=AT_LOAD,
                workaround="give the node a dtype or storage this runtime takes "
                           "(cast before the Gather)"),
    # the spec forbids the input; the runtime returned an output
    OutcomeKind("accepted_invalid", INVALID, OUTPUT, 5, "background: #ffd0a0;",
                workaround="keep indices within the axis: this runtime does not check them"),
    # the spec forbids the input; the runtime refused it: conforming
    OutcomeKind("both_rejected", INVALID, REFUSED, 8, "background: #dcefdc;", conforming=True),
    # the worker process died (signal or exit)
    OutcomeKind("crash", ANY, DIED, 0, "background: #c9302c; color: #fff;", native=AT_RUN,
                counted_apart=True,
                workaround=_AVOID),
    # no result within the per-case timeout
    OutcomeKind("timeout", ANY, HUNG, 1, "background: #d9b3ff;", native=AT_EITHER,
                counted_apart=True,
                workaround=_AVOID),
    # the harness cannot carry this case; says nothing of the runtime
    OutcomeKind("harness_unsupported", ANY, NOTHING, 7, "background: #e6e6e6;", judged=False,
                counted_apart=True),
)  # fmt: skip
BY_NAME: dict[str, OutcomeKind] = {kind.name: kind for kind in OUTCOME_KINDS}


def kinds(rule: Callable[[OutcomeKind], bool]) -> frozenset[str]:
    """The names of the kinds ``rule`` holds for (every local set of kinds is one)."""
    return frozenset(kind.name for kind in OUTCOME_KINDS if rule(kind))
