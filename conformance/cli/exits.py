"""Exit codes of every ``conformance`` command, defined once.

Every command's ``--help`` epilog is made from :data:`MEANING`; docs/cli.md
and README.md quote it word for word (tests/test_docs.py holds them to it).
"""

from __future__ import annotations

OK = 0
FAILED = 1
USAGE = 2
INTERRUPTED = 130

# code -> what it means, per command (the commands that can return it)
MEANING: dict[int, str] = {
    OK: "success: every outcome conforms, or with the gate every discrepancy is a known "
    "one that still reproduces; `diff`: nothing changed",
    FAILED: "a check failed: a discrepancy (with the gate: a new one, or a known one fixed "
    "upstream? unless `--allow-fixed`), a case file that disagrees with the oracle; "
    "`diff`: something changed",
    USAGE: "usage error or bad input: malformed case or baseline file, unknown runtime or "
    "case id, an unreadable or unfinished run folder, a runtime that does not start, "
    "a harness error during the run, a case whose expectation disagrees with the oracle "
    "(`run`), two runs that share no runtime (`diff`, without --cross-runtime)",
    INTERRUPTED: "interrupted (Ctrl-C): every result recorded so far is kept",
}


def epilog(*codes: int) -> str:
    """The ``--help`` epilog of a command that can exit with these codes."""
    return "Exit codes: " + "; ".join(f"{code} {MEANING[code]}" for code in codes) + "."
