"""Exit codes of every ``conformance`` command, defined once.

Every command's ``--help`` epilog is made from :data:`MEANING`; docs/cli.md
and README.md quote it word for word (tests/test_docs.py holds them to it).

One rule for what is whose: 1 is a verdict on the runtimes (or, for
``diff``, on what changed); 2 means no verdict can be given: the input is
wrong or the harness is. A case file that disagrees with the oracle is 2
wherever it is met (``cases validate``, ``run``; ``gate`` refuses such a
run): the file or the oracle is wrong, and until one is fixed nothing judged
against it can be trusted. A case nobody could check (over the memory guard)
is neither: it is reported as "not checked", with its reason, and exits 0
when nothing else failed. The user-facing errors
(:class:`conformance.errors.ConformanceError`) carry 2 themselves and are
mapped once, in :func:`conformance.cli.main`.
"""

from __future__ import annotations

OK = 0
FAILED = 1
USAGE = 2
INTERRUPTED = 130

# code -> what it means, per command (the commands that can return it)
MEANING: dict[int, str] = {
    OK: "success: every outcome conforms, or with the gate every discrepancy is a known one "
    "that still reproduces; a case not checked (over the memory guard) is reported, not "
    "failed; `diff`: nothing changed",
    FAILED: "a check failed: a discrepancy (with the gate: a new one, or a known one fixed "
    "upstream? unless `--allow-fixed`); `diff`: something changed; `export --check`: a "
    "stale or missing line in a runner's list",
    USAGE: "usage error or bad input: malformed case or baseline file, a case file that "
    "disagrees with the oracle (`cases validate`, `run`; with `--check-models`, one whose "
    "model fails onnx.checker), unknown runtime or case id, an unreadable or unfinished run "
    "folder, a runtime that does not start, a harness error during the run, two runs that "
    "share no runtime (`diff`, without --cross-runtime)",
    INTERRUPTED: "interrupted (Ctrl-C): every result recorded so far is kept",
}


def epilog(*codes: int) -> str:
    """The ``--help`` epilog of a command that can exit with these codes."""
    return "Exit codes: " + "; ".join(f"{code} {MEANING[code]}" for code in codes) + "."
