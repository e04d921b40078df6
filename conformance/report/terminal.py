"""What the commands print: the text of the gate, diff, a run's summary and
its ending (exit reasons, notes), a fuzz campaign's progress, the cases not
checked, and user-facing errors, for a terminal. The front-ends
(``conformance.cli``) print these lines; the HTML and machine-readable forms
are in :mod:`.render` and :mod:`.machine`.

Runtime names, case ids, messages, file names and baseline globs come from
files and runtimes the harness does not control: every line made here goes
through :func:`safe`, and the front-ends print their own untrusted text with
it, so no escape sequence, carriage return or backspace reaches the terminal.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from conformance.engine import credentials, files
from conformance.engine.groups import GroupKey, Signature, grouped
from conformance.engine.judge import DISCREPANCIES, KINDS
from conformance.gate.check import FIXED_EVIDENCE, Gate
from conformance.messages import cut, first_line, relative
from conformance.report.diff import Diff, comparable

if TYPE_CHECKING:  # the fuzz package (and Hypothesis) only when fuzzing
    from conformance.fuzz.campaign import Status


def safe(text, lines: bool = False) -> str:
    """Untrusted text as the terminal may show it: control characters (ESC,
    CR, BEL, backspace...), line separators, bidi overrides and lone
    surrogates escaped (``\\x1b``, ``\\r``, ``\\u2028``), tabs kept, and newlines
    kept only for text meant to span ``lines`` (:func:`conformance.engine.files.visible`)."""
    return files.visible(text, "\t\n" if lines else "\t")


def say(text: str, file=None) -> None:
    """Print text from case files or runs (ids, descriptions, paths, string
    data) with control characters escaped, newlines kept: an input must not
    drive the terminal."""
    print(safe(text, lines=True), file=file)


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
    first = verdict_line(gate, allow_fixed, decides=decides, troubles=troubles or [], code=code)
    if not decides and not verbose:
        return [safe(first)]
    places = places or {}
    lines = [first]
    if gate.unexpected:
        found = grouped(gate.unexpected)
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
            lines.append(f"      {where}: {_message(first_record)}")
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


def _message(record: dict, width: int = 160) -> str:
    """A result's message on one line: its first two lines, cut."""
    message = (record.get("message") or "").strip().splitlines()
    return " ".join(message[:2])[:width]


def run_troubles(summary) -> list[str]:
    """What makes a run (or campaign) exit non-zero whatever its verdict says:
    Ctrl-C (130), harness errors and case files the oracle contradicts (2),
    as :func:`conformance.cli.finish.exit_status` decides, and a campaign's
    targets that judged nothing (2, :func:`unjudged_troubles`)."""
    if summary.interrupted:
        return ["interrupted (exit 130)"]
    found = []
    if summary.harness_errors:
        found.append(f"{summary.harness_errors} harness error(s) (exit 2)")
    if summary.case_problems:
        found.append(f"{len(summary.case_problems)} case problem(s) (exit 2)")
    found += unjudged_troubles(summary.unjudged)
    return found


def unjudged_troubles(unjudged: dict[str, int]) -> list[str]:
    """A campaign's targets that judged none of its examples, each said on the
    verdict line: a campaign that says nothing of a target does not pass (exit 2)."""
    return [
        f"{name} judged nothing ("
        + (
            f"{_plural(count, 'result')}, each not run or harness_unsupported"
            if count
            else "no result"
        )
        + ") (exit 2)"
        for name, count in unjudged.items()
    ]


def unjudged_lines(unjudged: dict[str, int]) -> list[str]:
    """Why a campaign with a target that judged nothing exits 2, and what to do."""
    names = ", ".join(unjudged)
    return [
        safe(
            f"the campaign judged none of its examples on {names}: every result was not run "
            "(the time budget ran out first) or harness_unsupported, so it says nothing of "
            f"{'it' if len(unjudged) == 1 else 'them'}; give a longer --time-budget, or a "
            "shorter --timeout if a pack hangs"
        )
    ]


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def verdict_line(
    gate: Gate,
    allow_fixed: bool,
    *,
    decides: bool = True,
    troubles: list[str] | None = None,
    code: int | None = None,
) -> str:
    """The gate's first line: ``gate FAILED: <reasons>; <counts>`` or ``gate
    PASSED: <counts>``, the reasons being new discrepancy groups, entries fixed
    upstream? and the ``troubles`` of the run (harness errors...). In a run it
    does not decide, ``not gated: <counts>; exit <code>: <why>``: the word
    PASSED is never said of a run that exits non-zero."""
    troubles = list(troubles or [])
    new_groups = grouped(gate.unexpected)
    known = gate.discrepancies - len(gate.unexpected)
    counts = (
        f"{gate.discrepancies} discrepancies in {gate.results} results, "
        f"{known} known, {len(gate.unexpected)} new"
    )
    if not decides:
        said = f"not gated: {counts}"
        if gate.fixed:
            said += f", {_plural(len(gate.fixed), 'entry', 'entries')} fixed upstream?"
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
            f"{_plural(len(new_groups), 'new discrepancy group')} ({', '.join(named)}{more})"
        )
    if gate.fixed and not allow_fixed:
        reasons.append(f"{_plural(len(gate.fixed), 'entry', 'entries')} fixed upstream?")
    if reasons:
        return f"gate FAILED: {', '.join(reasons)}; {counts}"
    allowed = (
        f", {_plural(len(gate.fixed), 'entry', 'entries')} fixed upstream? (allowed)"
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
                f"NOT OBSERVED: {_plural(len(unobserved), 'target')} the baseline was never "
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
            f"not reproduced: {_plural(len(unproven), 'family', 'families')} "
            f"({values} value-dependent, never called fixed; the others under "
            f"{FIXED_EVIDENCE} conforming results: too few to tell): "
            f"{_named([r.entry.where for r in unproven])}{more}"
        )
    not_judged = gate.not_judged
    if not_judged:
        lines.append(
            f"{_plural(len(not_judged), 'entry', 'entries')} not judged: this run held no "
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
            f"not used: {_plural(len(gate.inapplicable), 'entry', 'entries')} for other "
            f"versions, profiles or CPUs: {shown}{more}"
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


DIFF_WIDTH = 150  # characters of a detail line under a group of changes
NOISE_SHOWN = "source lines, addresses, ids, type lists"  # what diff.NOISE takes out


def diff_lines(diff: Diff, limit: int = 30) -> list[str]:
    """The diff in lines for the terminal: each group of changes with its
    inputs (dtypes and shapes; the values when a run kept one of its cases),
    and for a changed group what A and B said where they part."""
    lines = [f"A: {diff.a}", f"B: {diff.b}"]
    if diff.cross:
        lines.append(f"cross-runtime: {diff.cross[0]} (A) held against {diff.cross[1]} (B)")
    for name, (before, after) in diff.versions.items():
        if before is None or after is None:
            arrow = f"{before} (A only)" if after is None else f"{after} (B only)"
        else:
            arrow = f"{before} -> {after}" if before != after else f"{before} (both)"
        lines.append(f"  {name}: {arrow}")
    fixed_word = "fixed" if diff.by == "result" else "not seen again"
    if diff.by == "result":
        noise = ""
        if diff.noise:
            noise = f" ({diff.noise} of them differ only in noise: {NOISE_SHOWN})"
        lines.append(
            f"{diff.compared} results in both runs ({diff.only_a} only in A, {diff.only_b} only "
            f"in B): {len(diff.new)} new, {len(diff.fixed)} fixed, {len(diff.changed)} changed "
            f"discrepancies, {diff.same} unchanged{noise}; {len(diff.unsupported)} between "
            f"conforming and harness_unsupported"
        )
    else:
        why = "fuzz campaigns" if diff.by == "signature" else "no result in common"
        lines.append(
            f"{why}: compared by discrepancy signature, "
            f"{len(diff.new)} new, {len(diff.fixed)} not seen again, {diff.same} in both"
        )
    coverage = "; conforming <-> harness_unsupported: says nothing of the runtime"
    sections = (
        ("NEW", diff.new, ""),
        (fixed_word.upper(), diff.fixed, ""),
        ("CHANGED", diff.changed, ""),
        ("HARNESS COVERAGE", diff.unsupported, coverage),
    )
    for title, changes, note in sections:
        if not changes:
            continue
        groups = diff.grouped(changes)
        lines.append(f"{title} ({len(changes)} in {len(groups)} groups{note}):")
        for group, members in groups[:limit]:
            runtime, before, after, op, base_id = group
            arrow = f"{before or '-'} -> {after or '-'}"
            lines.append(f"  {runtime:12} {arrow:36} {op:15} {base_id} ({len(members)})")
            lines.extend(_diff_group_lines(diff, group, members, changes is diff.changed))
        if len(groups) > limit:
            lines.append(f"  ... {len(groups) - limit} more groups (see the HTML page)")
    return [safe(line) for line in lines]


def _diff_group_lines(diff: Diff, group: tuple, members: list, said: bool) -> list[str]:
    """A group's inputs, its kept example and (changed groups) what each run said."""
    indent = "      "
    inputs = diff.inputs(members)
    shown: list[str] = []
    for text, count in inputs:  # as many as the line holds, the most frequent first
        item = text + (f" ({count})" if len(inputs) > 1 else "")
        if shown and len(indent) + 24 + len("; ".join([*shown, item])) > DIFF_WIDTH:
            break
        shown.append(item)
    more = f"; +{len(inputs) - len(shown)} more" if len(inputs) > len(shown) else ""
    lines = [_cut(f"{indent}inputs: {'; '.join(shown)}{more}")] if inputs else []
    example = diff.examples.get(group)
    if example is not None:
        room = max(20, (DIFF_WIDTH - len(indent) - len(example.case_id) - 38) // 2)
        lines.append(
            _cut(
                f"{indent}example {example.case_id} ({example.run}): data "
                f"{example.values(example.data, room)} indices "
                f"{example.values(example.indices, room)}"
            )
        )
    if said:  # of the same kind: where the messages part once the noise is out
        first = members[0]
        before, after = first.before_message, first.after_message
        if first.before == first.after:
            before, after = comparable(first.before, before), comparable(first.after, after)
        before, after = _parting(before, after)
        lines.append(_cut(f"{indent}A said: {before}"))
        lines.append(_cut(f"{indent}B said: {after}"))
    return lines


def _cut(line: str, width: int = DIFF_WIDTH) -> str:
    return cut(safe(line), width)  # escaped first: the width is what the terminal shows


def _parting(a: str, b: str, context: int = 30) -> tuple[str, str]:
    """Two messages, on one line each, from a little before where they differ."""
    a, b = " ".join(a.split()), " ".join(b.split())
    common = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        common += 1
    start = a.rfind(" ", 0, max(0, common - context)) + 1 if common > context else 0
    mark = "…" if start else ""
    return (mark + a[start:]) or "(no message)", (mark + b[start:]) or "(no message)"


def summary_table(summary, runtimes: list[str]) -> Table:
    """Outcome kinds down, runtimes across: narrow enough for any terminal."""
    table = Table(title=f"{summary.cases} cases, {summary.records} results")
    table.add_column("outcome")
    for runtime in runtimes:  # Text: a name is shown as it is, never read as markup
        table.add_column(Text(safe(runtime)), justify="right")
    for kind in KINDS:
        counts = [summary.counts[rt][kind] for rt in runtimes]
        if not any(counts):
            continue
        style = (
            "green"
            if kind in ("pass", "both_rejected")
            else ("red" if kind in DISCREPANCIES else "yellow")
        )
        table.add_row(kind, *(str(n) for n in counts), style=style)
    return table


def discrepancy_groups(summary, results_path: Path, limit: int = 25) -> list[str]:
    """One line per (runtime, kind, op, case-file id): what to look at first."""
    groups = sorted(summary.groups.items())
    lines = [
        f"  {runtime:12} {kind:17} {op:15} {base_id} ({n})"
        for (runtime, kind, op, base_id), n in groups[:limit]
    ]
    if len(groups) > limit:
        lines.append(f"  ... {len(groups) - limit} more groups in {results_path}")
    return [safe(line) for line in lines]


def status_line(status: Status) -> str:
    line = (
        f"{status.elapsed_s:6.0f} s  {status.examples:7d} examples  "
        f"{status.examples_per_s:6.1f}/s  {status.bugs:3d} bugs  {status.classes:4d} classes  "
        f"{status.left_s:5.0f} s left"
    )
    if status.skipped:
        line += f"  {status.skipped} skipped"
    if status.shrinking:
        line += f"  shrinking {status.shrinking}"
    return safe(line)


def fuzz_header(runtimes: list[str], budget: float, seed: int, elements: int, out: Path) -> str:
    return safe(
        f"fuzzing {', '.join(runtimes)} for {budget:g} s, seed {seed}, "
        f"at most {elements} elements per tensor -> {out}/"
    )


BUGS_SHOWN = 60  # bugs listed at the end of a campaign (two lines each)
BUG_WIDTH = 150  # characters of a bug's line, its cause cut to fit
COLD_SHOWN = 12  # cold coverage cells named


def campaign_lines(
    findings: dict,
    records: int,
    folder: Path | None = None,
    new: set[str] | None = None,
    *,
    verbose: bool = False,
) -> list[str]:
    """What a finished campaign found, from its findings.json content: its
    pace, then its bugs (two lines each: what, and where its smallest
    reproducer is), then one line of coverage. A findings.json without bugs
    (format 1) lists its classes by family instead. ``records`` is the
    number of results; ``folder`` the campaign's folder, to show the
    reproducers' folders as typed here (else relative to it).

    ``new``: the ids of the bugs the gate found new (:func:`new_bugs`), when
    the campaign was gated. Those are listed; the bugs the baseline knows
    already are counted on one line per runtime (``verbose``: one line each),
    so that what needs a person's eyes fits on a screen."""
    classes = findings.get("classes") or []
    bugs = findings.get("bugs")
    shrink_s = sum((found.get("shrink") or {}).get("seconds", 0) for found in classes)
    skipped = findings.get("skipped") or 0
    lines = [
        safe(
            f"{findings.get('examples', 0)} examples in {findings.get('elapsed_s', 0):.0f} s "
            f"({findings.get('examples_per_s', 0):.1f} examples/s while fuzzing; "
            f"{shrink_s:.0f} s shrinking), {records} results, "
            + (f"{_plural(len(bugs), 'bug')} in " if bugs is not None else "")
            + f"{len(classes)} discrepancy classes"
            + (f", {skipped} runs skipped" if skipped else "")
        )
    ]
    if bugs and new is not None:
        fresh = [bug for bug in bugs if bug.get("id") in new]
        known = [bug for bug in bugs if bug.get("id") not in new]
        if fresh:
            lines.append(f"{_plural(len(fresh), 'bug')} not in the baseline "
                         "(classes, hits, first found; dtypes):")  # fmt: skip
            lines += bug_lines({**findings, "bugs": fresh}, folder)
        if known:
            lines.append(known_bugs_line(known))
            if verbose:
                lines += bug_lines({**findings, "bugs": known}, folder, reproducers=False)
    elif bugs:
        lines.append("bugs by runtime and kind (classes, hits, first found; dtypes):")
        lines += bug_lines(findings, folder)
    elif classes and bugs is None:
        lines.append("discrepancy classes by runtime, kind and op:")
        lines += fuzz_families(findings, folder)
    said = coverage_line(findings.get("coverage"))
    if said:
        lines.append(said)
    return lines


def new_bugs(findings: dict, gate: Gate) -> set[str]:
    """The ids of a campaign's bugs the gate found new: those with a class
    whose discrepancy group (its signature) has a result no baseline entry
    covers."""
    keys = {key for key, _ in grouped(gate.unexpected)}
    found = set()
    for one in findings.get("classes") or ():
        try:
            key = Signature.from_json(one["signature"]).key
        except (KeyError, TypeError):  # not a class as this version writes them
            continue
        if key in keys and one.get("bug"):
            found.add(one["bug"])
    return found


def known_bugs_line(bugs: list[dict]) -> str:
    """One line for the bugs a baseline knows: how many, per runtime."""
    per = Counter(str(bug.get("runtime") or "?") for bug in bugs)
    counts = ", ".join(f"{runtime} {count}" for runtime, count in sorted(per.items()))
    return safe(
        f"{_plural(len(bugs), 'bug')} the baseline knows already ({counts}): "
        "-v lists them; findings.json and report.html have each"
    )


def _bug_order(bug: dict) -> tuple:
    kind = bug.get("kind", "")
    return (
        str(bug.get("runtime", "")),
        KINDS.index(kind) if kind in KINDS else len(KINDS),
        str(bug.get("op", "")),
        -(bug.get("hits") or 0),
    )


def bug_lines(
    findings: dict, folder: Path | None = None, limit: int = BUGS_SHOWN, *, reproducers=True
) -> list[str]:
    """Two lines per bug, by runtime, then kind (as the judge orders kinds),
    op, most hits first: the bug, and its smallest reproducer's folder (not
    shown without ``reproducers``)."""
    classes = {found.get("number"): found for found in findings.get("classes") or []}
    bugs = sorted(findings.get("bugs") or [], key=_bug_order)
    lines = []
    for bug in bugs[:limit]:
        count = len(bug.get("classes") or [])
        store = {"new": "; new to the store", "known": "; in the store"}.get(bug.get("store"), "")
        first = bug.get("first_found_s")
        runtime, kind, op = (str(bug.get(name) or "?") for name in ("runtime", "kind", "op"))
        head = safe(f"  {runtime:12} {kind:17} {op:15} ")
        tail = safe(
            f" ({_plural(count, 'class', 'classes')}, {bug.get('hits', 0)} hits, "
            + (f"{first:.1f} s" if isinstance(first, int | float) else "?")
            + f"; {' '.join(bug.get('dtypes') or [])}{store})"
        )
        # The cause gives way first: the counts and dtypes stay on the line.
        cause = _cut(first_line(bug.get("cause")), max(30, BUG_WIDTH - len(head) - len(tail)))
        lines.append(head + cause + tail)
        if not reproducers:
            continue
        smallest = classes.get(bug.get("reproducer"))
        repro = ((smallest or {}).get("files") or {}).get("repro")
        if repro:
            where = Path(repro).parent
            shown_at = relative(folder / where) if folder is not None else str(where)
            state = "shrunk" if smallest.get("shrunk") else "not shrunk yet"
            lines.append(safe(f"      {shown_at}/ (case.yaml, repro.py; {state})"))
        else:
            lines.append("      (no reproducer written yet)")
    if len(bugs) > limit:
        lines.append(f"  ... {len(bugs) - limit} more bugs in findings.json")
    return lines


def replay_lines(replayed: dict, limit: int = BUGS_SHOWN) -> list[str]:
    """What `conformance fuzz replay` says: each stored bug (status, runtime,
    kind, op, cause; what it does now when it changed), then the counts."""
    bugs = replayed.get("bugs") or []
    order = {status: n for n, status in enumerate(("changed", "still there", "fixed", "not run"))}
    lines = []
    for bug in sorted(bugs, key=lambda b: (order.get(b["status"], 9), b.get("runtime") or "")):
        if len(lines) >= limit:
            lines.append(f"  ... {len(bugs) - limit} more in replay.json")
            break
        cause = first_line(bug.get("cause"), 70)
        line = f"  {bug['status']:11} {bug.get('runtime') or '?':12} {bug.get('kind') or '?':16} "
        line += f"{bug.get('op') or '?':14} {cause}"
        now = bug.get("now")
        if bug["status"] == "changed" and now:
            line += f" -> now {now['kind']}: {first_line(now.get('cause') or now['message'], 60)}"
        lines.append(safe(line))
    counts = Counter(bug["status"] for bug in bugs)
    said = ", ".join(f"{counts[s]} {s}" for s in order if counts[s])
    versions = ", ".join(f"{name} {version}" for name, version in
                         (replayed.get("versions") or {}).items())  # fmt: skip
    return [safe(f"replayed {len(bugs)} stored bugs on {versions}: {said}"), *lines]


def skipped_entry_lines(skipped: list[str], limit: int = BUGS_SHOWN) -> list[str]:
    """The store's entries that could not be used, a line each (the file or
    key and what is wrong: ``Store.skipped``), at most ``limit``."""
    lines = [safe(f"store: {line}") for line in skipped[:limit]]
    if len(skipped) > limit:
        lines.append(f"store: ... {len(skipped) - limit} more entries skipped")
    return lines


def no_bug_line(location: str, skipped: int) -> str:
    """What `conformance fuzz replay` says of a store with nothing to replay."""
    but = f" ({skipped} entries skipped, above)" if skipped else ""
    return safe(f"the store {location} holds no bug to replay{but}")


def coverage_line(coverage: dict | None) -> str | None:
    """``coverage: 187 of 197 cells reached; cold: Gather axis_lengths >=256, ...``
    from findings.json's coverage (conformance.fuzz.coverage), or None without one."""
    if not coverage or "tables" not in coverage:
        return None
    cold = [
        " ".join(map(str, cell["key"]))
        for table in coverage["tables"].values()
        for cell in table.get("cells", [])
        if cell.get("meaningful") and not cell.get("count")
    ]
    line = (
        f"coverage: {coverage.get('reached', 0)} of {coverage.get('meaningful', 0)} cells "
        f"reached in {coverage.get('examples', 0)} examples"
    )
    if cold:
        more = f", … ({len(cold) - COLD_SHOWN} more)" if len(cold) > COLD_SHOWN else ""
        line += f"; cold: {', '.join(cold[:COLD_SHOWN])}{more}"
    return safe(line)


def fuzz_families(findings: dict, folder: Path | None = None) -> list[str]:
    """One line per (runtime, kind, op) of a findings.json without bugs
    (format 1): classes often share a cause (one dtype refused in every variant
    and opset), so the terminal shows families with their dtypes, and
    findings.json every class."""
    families: dict[tuple, list] = {}
    for found in findings.get("classes") or []:
        sig = found.get("signature") or {}
        families.setdefault((sig.get("runtime"), sig.get("kind"), sig.get("op")), []).append(found)
    lines = []
    for (runtime, kind, op), members in sorted(
        families.items(), key=lambda f: tuple(map(str, f[0]))
    ):
        first = min(m.get("first_found_s", 0) for m in members)
        dtypes = sorted({str((m.get("signature") or {}).get("dtype")) for m in members})
        shrunk = [m for m in members if m.get("shrunk")]
        smallest = min(shrunk or members, key=_class_size)
        hits = sum(m.get("hits", 0) for m in members)
        where = Path((smallest.get("files") or {}).get("repro", "")).parent
        lines.append(  # two lines, each made safe: a name's newline must not start a third
            safe(
                f"  {runtime!s:12} {kind!s:17} {op!s:15} {len(members):4d} classes {hits:5d} "
                f"hits, first at {first:.1f} s, {len(shrunk)} shrunk; "
                f"dtypes: {' '.join(dtypes)}"
            )
            + "\n"
            + safe(
                f"      smallest: {relative(folder / where) if folder is not None else where}/ "
                "(case.yaml, repro.py)"
            )
        )
    return lines


def _class_size(found: dict) -> int:
    """Elements of a class's input, as findings.json describes it."""
    case = found.get("case") or {}
    shapes = [(case.get(part) or {}).get("shape") for part in ("data", "indices")]
    return sum(math.prod(shape) for shape in shapes if shape is not None)


def _places(places: list[str]) -> str:
    """``file:1``, ``file:9`` as ``N entries of file (lines 1, 9)`` when one file holds them."""
    files = {place.rpartition(":")[0] for place in places}
    if len(files) != 1:
        return ", ".join(places)
    lines = ", ".join(place.rpartition(":")[2] for place in places)
    return f"{len(places)} entries of {files.pop()} (lines {lines})"


# -- the end of a run, errors ----------------------------------------------------------------
def error_lines(error) -> list[str]:
    """A user-facing error (:class:`conformance.errors.ConformanceError`) as
    stderr shows it: its message (the problems of a file each on its line,
    ``file:line: field: message``, then the notes callers added), escaped,
    and a URL's credentials masked wherever the message repeats one."""
    return [safe(credentials.mask_text(line)) for line in error.message.splitlines()]


def case_errors_note(errors: list) -> str:
    """What follows the problems of case files a command was given."""
    return f"{len(errors)} problem(s) in case files; nothing was run"


def ungated_lines(problems: list[str]) -> list[str]:
    """A baseline that cannot be read, in a run that does not gate (no --gate)."""
    return [safe(line) for line in problems] + [
        "no gate verdict: the run goes on without one (with --gate it would stop here)"
    ]


def path_line(label: str, path: Path, width: int) -> str:
    """``label`` padded to ``width``, then the path: ``report:  reports/run-1/report.html``."""
    return safe(f"{label:<{width}} {path}")


def cpu_note(budget: dict | None) -> str | None:
    """A note when the workers' threads outnumber the cores (header.json
    ``cpu_budget``), else None."""
    if not (budget or {}).get("oversubscribed"):
        return None
    return (
        f"note: up to {budget['threads_at_most']} compute threads on {budget['cores']} "
        "cores (targets in their default profile use every core): results are exact all "
        "the same, but a starved worker may time out (fewer workers, -j, or targets per run "
        "give each more)"
    )


def interrupted_line(kept: str) -> str:
    return f"interrupted: {kept} are kept"


def harness_error_lines(summary) -> list[str]:
    """Why a run with harness errors exits 2, and the first of them."""
    lines = [
        f"{summary.harness_errors} harness error(s) (bugs of the harness, not verdicts "
        "on the runtime; 'harness_error' records in results.jsonl):"
    ]
    for example in summary.harness_error_examples:
        lines.append(
            f"  {example['runtime']}: {example['case_id']} [{example['variant']}]: "
            f"{example['error']}"
        )
    return [safe(line) for line in lines]


def run_header(cases: int, variants: int, runtimes: list[str], out: Path) -> str:
    return safe(
        f"{cases} cases x {variants} variants x {len(runtimes)} runtimes "
        f"({', '.join(runtimes)}) -> {out}/"
    )


def run_result_lines(summary, results: Path) -> list[str]:
    """After a run's table: its discrepancy groups, and where its results are."""
    groups = discrepancy_groups(summary, results)
    lines = ["discrepancies (runtime, kind, op, case-file id, count):", *groups] if groups else []
    return [*lines, path_line("results:", results, 8) + f"  ({summary.duration_s:.1f} s)"]


def progress_line(done: int, total: int, discrepancies: int, elapsed_s: float) -> str:
    """A run's progress outside a terminal (CI logs): done / total, the
    discrepancies so far, and the time left at the pace so far."""
    share = f" ({100 * done / total:.0f}%)" if total else ""
    left = f"about {_duration(elapsed_s / done * (total - done))} left" if done else "starting"
    return safe(
        f"running: {done}/{total} results{share}, {discrepancies} discrepancies so far, "
        f"{_duration(elapsed_s)} elapsed, {left}"
    )


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# -- the verdict in Markdown (--summary-md, $GITHUB_STEP_SUMMARY) -------------------------
MD_GROUPS = 50  # new groups in a Markdown summary's table
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~!&])")


def md(text, width: int | None = None) -> str:
    """Untrusted text as Markdown shows it literally: control characters
    escaped (:func:`safe`), on one line, cut to ``width``, and every character
    Markdown or HTML reads (``| < > * _ [ ] ` \\ # ~ ! &``) backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", cut(" ".join(safe(text).split()), width))


def summary_markdown(
    title: str,
    gate: Gate,
    first: str,
    bookkeeping: list[str],
    places: dict[GroupKey, str] | None = None,
) -> str:
    """The verdict and the new groups in Markdown, for a CI job's summary:
    ``title`` (the command), the verdict line (``first``: :func:`verdict_line`),
    a table of the new groups (runtime, kind, op, case id, count, example
    message) and the bookkeeping lines as a list."""
    places = places or {}
    lines = [f"### {md(title)}", "", f"**{md(first)}**", ""]
    found = grouped(gate.unexpected)
    if found:
        lines += [
            f"New discrepancy groups ({len(found)}):",
            "",
            "| runtime | kind | op | case id | count | example message |",
            "| --- | --- | --- | --- | ---: | --- |",
        ]
        for key, members in found[:MD_GROUPS]:
            runtime, kind, op, base_id = key
            where = places.get(key) or members[0].get("source") or ""
            message = f"{where}: {_message(members[0])}" if where else _message(members[0])
            lines.append(
                f"| {md(runtime)} | {md(kind)} | {md(op)} | {md(base_id)} | {len(members)} "
                f"| {md(message, 200)} |"
            )
        if len(found) > MD_GROUPS:
            lines.append(f"\n… {len(found) - MD_GROUPS} more groups (gate.json `new`)")
        lines.append("")
    else:
        lines += ["No new discrepancy group.", ""]
    lines += [f"- {md(line)}" for line in bookkeeping]
    return "\n".join(lines).rstrip("\n") + "\n"
