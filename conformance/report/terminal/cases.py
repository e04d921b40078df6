"""The text about case files and cases: ``conformance cases validate``'s
summary and last line, the cases nobody checked (over the memory guard), and
the case files whose expectation disagrees with the oracle."""

from __future__ import annotations

from conformance.messages import first_line
from conformance.report.terminal.escape import safe


def case_problem_lines(problems: list[dict]) -> list[str]:
    """A warning per case whose written expectation disagrees with the oracle
    (a run's ``case_problems``): ``warning: <source>: <case id>: <problem>``."""
    return [
        safe(f"warning: {problem['source']}: {problem['case_id']}: {problem['problem']}")
        for problem in problems
    ]


def case_problems_line(problems: list[dict]) -> str:
    """Why a run whose case files disagree with the oracle exits 2."""
    return safe(
        f"{len(problems)} case problem(s): a case file's expectation disagrees with the oracle "
        "(the warnings above; `conformance cases validate` checks case files)"
    )


def not_checked(reason: str, where: str = "") -> str:
    """A case nobody checked (over the memory guard: neither the oracle nor a
    runtime saw it), with its reason; ``where`` is ``<source>: <case id>``.
    The same words in ``cases validate``, ``run`` and the pytest plugin's skips."""
    return safe(f"not checked: {where}: {reason}" if where else f"not checked: {reason}")


def not_checked_lines(records, limit: int = 10) -> list[str]:
    """A line per case of a run that nobody checked (``harness_unsupported``
    with ``expected`` null: the memory guard refused it before the oracle),
    the first ``limit`` of them."""
    cases: dict[tuple[str, str], str] = {}
    for record in records:
        if record.get("kind") == "harness_unsupported" and record.get("expected") is None:
            where = (str(record.get("source", "")), str(record.get("case_id", "")))
            cases.setdefault(where, first_line(record.get("message")))
    lines = [not_checked(why, f"{source}: {case_id}") for (source, case_id), why in cases.items()]
    if len(lines) > limit:
        lines[limit:] = [f"  ... {len(lines) - limit} more cases not checked (harness_unsupported)"]
    return lines


def validate_summary(cases: int, files: int, kinds, models: bool, unchecked: int) -> str:
    """What ``cases validate`` held against the oracle: ``kinds`` counts the
    cases checked by expectation (output, error, oracle)."""
    return (
        f"{cases} cases from {files} files: {kinds['output']} literal outputs and "
        f"{kinds['error']} expected errors checked against the oracle, {kinds['oracle']} "
        "computed by it"
        + (f", {unchecked} not checked" if unchecked else "")
        + (", models of every valid case checked in 5 variants" if models else "")
    )


def validated_line(unchecked: int) -> str:
    """The last line of a ``cases validate`` that found no problem."""
    if not unchecked:
        return "all cases agree with the oracle"
    return (
        f"all checked cases agree with the oracle; {unchecked} case(s) not checked "
        "(over the memory guard: --case-memory)"
    )


def validate_failed_line(failed: int, unchecked: int) -> str:
    """The last line of a ``cases validate`` that found problems (exit 2)."""
    also = f"; {unchecked} not checked (over the memory guard)" if unchecked else ""
    return f"FAILED: {failed} case(s) with problems{also}"


def not_taken_lines(not_taken: list) -> list[str]:
    """A line per folder met among ``--cases`` that is not an ONNX backend test
    of Gather or GatherElements (``conformance.cases.backend.NotTaken``), with
    its reason: never a silent skip."""
    return [safe(f"not taken: {n.folder}: {n.reason}") for n in not_taken]


def case_errors_note(errors: list) -> str:
    """What follows the problems of case files a command was given."""
    return f"{len(errors)} problem(s) in case files; nothing was run"
