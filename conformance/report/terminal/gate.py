"""The gate's text: its verdict line, its failures (new groups, entries
fixed upstream?) and its bookkeeping (targets never observed, entries not
reproduced, not judged, not used), for ``conformance gate`` and the end of
``run``, ``fuzz`` and ``model``. The same verdict in Markdown is
:mod:`.markdown`'s."""

from __future__ import annotations

import re

from conformance.engine.groups import GroupKey, Signature
from conformance.gate.check import FIXED_EVIDENCE, Gate
from conformance.messages import cause, relative
from conformance.report.terminal.escape import plural, safe


def gate_lines(
    gate: Gate,
    allow_fixed: bool,
    known: str,
    limit: int = 25,
    places: dict[GroupKey, str] | None = None,
    unobserved: list[str] | None = None,
    *,
    verbose: bool = False,
    decides: bool = True,
    troubles: list[str] | None = None,
    code: int | None = None,
    reason: str | None = None,
) -> list[str]:
    """What the gate found, in lines for the terminal: the verdict first, with
    its reasons (:func:`verdict_line`), then the failures, each with where to
    look and what to do, then the bookkeeping (targets the baseline was never
    observed on, entries not reproduced, not judged, not used), each kind on
    one line unless ``verbose``. ``places`` says where a group's input is when
    it is not a case file's line (:func:`fuzz_class_places`). In a run the
    verdict does not decide (``decides`` False: no --gate), the first line says
    so and why it exits with ``code``, and the rest is shown only ``verbose``.
    ``troubles`` are what else makes the exit code (:func:`run_troubles`)."""
    first = verdict_line(
        gate, allow_fixed, decides=decides, troubles=troubles or [], code=code, reason=reason
    )
    if (not decides or reason is not None) and not verbose:
        return [safe(first)]
    places = places or {}
    lines = [first]
    if gate.unexpected:
        found = gate.new_groups
        lines.append(
            f"NEW: {len(gate.unexpected)} discrepancies not in the baseline "
            f"({known}/<runtime>.yaml), in {len(found)} group(s) (runtime, kind, op, case-file id):"
        )
        for key, members in found[:limit]:
            runtime, kind, op, base_id = key
            first_record = members[0]
            variants = ", ".join(sorted({m["variant"] for m in members}))
            where = places.get(key) or first_record.get("source", "")
            lines.append(f"  {runtime:12} {kind:17} {op:15} {base_id} ({len(members)}: {variants})")
            lines.append(f"      {where}: {message_line(first_record)}")
        if len(found) > limit:
            lines.append(f"  ... {len(found) - limit} more groups")
        lines.append("  a runtime bug to accept for now? add an entry (docs/gate.md)")
    for result in gate.fixed:
        entry = result.entry
        now = ", ".join(f"{kind} {n}" for kind, n in result.scope.most_common())
        label = "FIXED UPSTREAM?" if not allow_fixed else "fixed upstream? (allowed)"
        lines.append(
            f"{label} {entry.where} ({entry.runtime}): {entry.describe()} no longer reproduces"
        )
        if entry.each:
            more = " ..." if len(result.conforming_ids) > 5 else ""
            lines.append(f"  conforming now: {', '.join(result.conforming_ids[:5])}{more}")
        lines.append(
            f"  results in scope: {now}; narrow the entry (versions, profile, cpu) to where it "
            "still holds, or remove it"
        )
    if gate.fixed and not gate.unexpected and not allow_fixed:
        lines.append(
            "only entries fixed upstream? fail the gate: to accept that for now, "
            "run again with --allow-fixed"
        )
    lines += bookkeeping_lines(gate, unobserved or [], verbose)
    return [safe(line) for line in lines]


def message_line(record: dict, width: int = 160) -> str:
    """A result's message on one line within ``width``: what failed and why
    (:func:`conformance.messages.cause`: tract's last ``Caused by``, not its
    first lines only)."""
    return cause(record.get("message") or "", width)


def verdict_line(
    gate: Gate,
    allow_fixed: bool,
    *,
    decides: bool = True,
    troubles: list[str] | None = None,
    code: int | None = None,
    reason: str | None = None,
) -> str:
    """The gate's first line: ``gate FAILED: <reasons>; <counts>`` or ``gate
    PASSED: <counts>``, the reasons being new discrepancy groups, entries fixed
    upstream? and the ``troubles`` of the run (harness errors...). In a run it
    does not decide, ``not gated: <counts>; exit <code>: <why>``: the word
    PASSED is never said of a run that exits non-zero; ``reason`` (when
    another verdict decides the exit) says why it exits as it does."""
    troubles = list(troubles or [])
    new_groups = gate.new_groups
    known = gate.discrepancies - len(gate.unexpected)
    counts = (
        f"{gate.discrepancies} discrepancies in {gate.results} results, "
        f"{known} known, {len(gate.unexpected)} new"
    )
    if reason is not None:  # another verdict decides the exit (conformance model's)
        return f"{'gated' if decides else 'not gated'} (every result): {counts}; {reason}"
    if not decides:
        said = f"not gated: {counts}"
        if gate.fixed:
            said += f", {plural(len(gate.fixed), 'entry', 'entries')} fixed upstream?"
        would = "pass" if gate.passed(allow_fixed) else "fail"
        if troubles:
            return f"{said}; exit {code if code is not None else 2}: {', '.join(troubles)}"
        if gate.discrepancies:
            return (
                f"{said}; exit 1 because a run without --gate fails on any discrepancy "
                f"(with --gate the baseline would {would} it)"
            )
        return f"{said}; exit 0"
    reasons = list(troubles)
    if new_groups:
        named = [" ".join(key) + f" ({len(members)})" for key, members in new_groups[:3]]
        more = ", …" if len(new_groups) > 3 else ""
        reasons.append(
            f"{plural(len(new_groups), 'new discrepancy group')} ({', '.join(named)}{more})"
        )
    if gate.fixed and not allow_fixed:
        reasons.append(f"{plural(len(gate.fixed), 'entry', 'entries')} fixed upstream?")
    if reasons:
        return f"gate FAILED: {', '.join(reasons)}; {counts}"
    allowed = (
        f", {plural(len(gate.fixed), 'entry', 'entries')} fixed upstream? (allowed)"
        if gate.fixed
        else ""
    )
    return f"gate PASSED: {counts}{allowed}"


SHOWN_PLACES = 8  # entries named on a condensed bookkeeping line


def _file_name(where: str) -> str:
    return where.rsplit("/", 1)[-1]


def _named(wheres: list[str]) -> str:
    """Entries' places (file:line), each once, the first :data:`SHOWN_PLACES`."""
    unique = list(dict.fromkeys(_file_name(w) for w in wheres))
    more = f", … ({len(unique) - SHOWN_PLACES} more)" if len(unique) > SHOWN_PLACES else ""
    return ", ".join(unique[:SHOWN_PLACES]) + more


def _unobserved_brief(line: str) -> str:
    """``<target>: <what differs>`` of a NOT OBSERVED line (verdict._unobserved)."""
    match = re.match(r"(.*?) \(.*?\) was never observed by .*?: (.*?)\. Its verdict", line)
    return f"{match.group(1)}: {match.group(2)}" if match else line[:120]


def bookkeeping_lines(gate: Gate, unobserved: list[str], verbose: bool = False) -> list[str]:
    """What the gate notes without failing, each kind on one line (in full
    when ``verbose``): targets the baseline was never observed on, families
    not reproduced on too few results, entries not judged (no result of the
    run could have reproduced them), entries for other targets (not used)."""
    lines = []
    more = "" if verbose else " (-v: in full)"
    if unobserved:
        if verbose:
            lines += [f"NOT OBSERVED: {line}" for line in unobserved]
        else:
            briefs = "; ".join(_unobserved_brief(line) for line in unobserved)
            lines.append(
                f"NOT OBSERVED: {plural(len(unobserved), 'target')} the baseline was never "
                f"observed on, the verdict may differ there: {briefs}{more}"
            )
    unproven = gate.unproven
    if unproven and verbose:
        for result in unproven:
            entry = result.entry
            lines.append(
                f"not reproduced: {entry.where} ({entry.runtime}): {entry.describe()} on "
                f"{result.scope.total()} "
                + (
                    "results in scope (it depends on values: never called fixed)"
                    if entry.depends_on_values
                    else f"results in scope (under {FIXED_EVIDENCE} conforming: too few to tell)"
                )
            )
    elif unproven:
        values = sum(1 for r in unproven if r.entry.depends_on_values)
        lines.append(
            f"not reproduced: {plural(len(unproven), 'family', 'families')} "
            f"({values} value-dependent, never called fixed; the others under "
            f"{FIXED_EVIDENCE} conforming results: too few to tell): "
            f"{_named([r.entry.where for r in unproven])}{more}"
        )
    not_judged = gate.not_judged
    if not_judged:
        lines.append(
            f"{plural(len(not_judged), 'entry', 'entries')} not judged: this run held no "
            "result in their scope"
            + ("" if verbose else f": {_named([r.entry.where for r in not_judged])}{more}")
        )
        if verbose:
            lines += [
                f"  {r.entry.where} ({r.entry.runtime}): {r.entry.describe()}" for r in not_judged
            ]
    # One line per (runtime, where they hold) with -v: a baseline scoped to
    # another profile or version (the OpenVINO EP's entries for plain ONNX
    # Runtime) is a dozen entries that do not apply, not a dozen things to read.
    unused: dict[tuple[str, str], list[str]] = {}
    for result in gate.inapplicable:
        entry = result.entry
        unused.setdefault((entry.runtime, entry.conditions()), []).append(entry.where)
    if verbose:
        lines += [
            f"not used: {where[0] if len(where) == 1 else _places(where)} ({runtime}): "
            f"holds for {holds}"
            for (runtime, holds), where in unused.items()
        ]
    elif unused:
        said = [
            f"{_named(where)} ({runtime}): holds for {holds}"
            for (runtime, holds), where in unused.items()
        ]
        shown = "; ".join(said[:3]) + (f"; … ({len(said) - 3} more)" if len(said) > 3 else "")
        lines.append(
            f"not used: {plural(len(gate.inapplicable), 'entry', 'entries')} for other "
            f"versions, profiles, CPUs or GPUs: {shown}{more}"
        )
    return lines


def fuzz_class_places(runs) -> dict[GroupKey, str]:
    """Where the fuzz class of each discrepancy group of these runs (run
    folders) lives: its ``repro.py`` in ``<run folder>/classes/NNN-<slug>/``,
    as findings.json says. The group of a fuzz class is its signature; shards
    number their classes apart, so the first run that has the class names it."""
    places: dict[GroupKey, str] = {}
    for run in runs:
        for found in (run.findings or {}).get("classes") or ():
            repro = (found.get("files") or {}).get("repro")
            try:
                key = Signature.from_json(found["signature"]).key
            except (KeyError, TypeError):  # not a class as this version writes them
                continue
            if repro:
                places.setdefault(key, str(relative(run.folder / repro)))
    return places


def _places(places: list[str]) -> str:
    """``file:1``, ``file:9`` as ``N entries of file (lines 1, 9)`` when one file holds them."""
    files = {place.rpartition(":")[0] for place in places}
    if len(files) != 1:
        return ", ".join(places)
    lines = ", ".join(place.rpartition(":")[2] for place in places)
    return f"{len(places)} entries of {files.pop()} (lines {lines})"


def ungated_lines(problems: list[str]) -> list[str]:
    """A baseline that cannot be read, in a run that does not gate (no --gate)."""
    return [safe(line) for line in problems] + [
        "no gate verdict: the run goes on without one (with --gate it would stop here)"
    ]
