"""What ``conformance fuzz`` prints: its header and status line, the end of
a campaign (pace, bugs with their smallest reproducers, coverage), the
targets that judged nothing, and ``conformance fuzz replay``'s lines."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.engine.groups import Signature
from conformance.engine.judge import KINDS
from conformance.gate.check import Gate
from conformance.messages import first_line, relative
from conformance.report.terminal.escape import plural, safe, safe_cut

if TYPE_CHECKING:  # the fuzz package (and Hypothesis) only when fuzzing
    from conformance.fuzz.campaign import Status


def unjudged_troubles(unjudged: dict[str, int]) -> list[str]:
    """A campaign's targets that judged none of its examples, each said on the
    verdict line: a campaign that says nothing of a target does not pass (exit 2)."""
    return [
        f"{name} judged nothing ("
        + (
            f"{plural(count, 'result')}, each not run or harness_unsupported"
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


def fuzz_header(
    runtimes: list[str],
    budget: float,
    seed: int,
    elements: int,
    out: Path,
    examples: int | None = None,
) -> str:
    bound = f"{examples} examples or {budget:g} s" if examples is not None else f"{budget:g} s"
    return safe(
        f"fuzzing {', '.join(runtimes)} for {bound}, seed {seed}, "
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
            + (f"{plural(len(bugs), 'bug')} in " if bugs is not None else "")
            + f"{len(classes)} discrepancy classes"
            + (f", {skipped} runs skipped" if skipped else "")
        )
    ]
    if bugs and new is not None:
        fresh = [bug for bug in bugs if bug.get("id") in new]
        known = [bug for bug in bugs if bug.get("id") not in new]
        if fresh:
            lines.append(f"{plural(len(fresh), 'bug')} not in the baseline "
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
    keys = {key for key, _ in gate.new_groups}
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
        f"{plural(len(bugs), 'bug')} the baseline knows already ({counts}): "
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
        # "known": "held" as findings of earlier versions spell it
        store = {
            "new": "; new to the store",
            "held": "; in the store",
            "known": "; in the store",
        }.get(bug.get("store"), "")
        first = bug.get("first_found_s")
        runtime, kind, op = (str(bug.get(name) or "?") for name in ("runtime", "kind", "op"))
        head = safe(f"  {runtime:12} {kind:17} {op:15} ")
        tail = safe(
            f" ({plural(count, 'class', 'classes')}, {bug.get('hits', 0)} hits, "
            + (f"{first:.1f} s" if isinstance(first, int | float) else "?")
            + f"; {' '.join(bug.get('dtypes') or [])}{store})"
        )
        # The cause gives way first: the counts and dtypes stay on the line.
        cause = safe_cut(first_line(bug.get("cause")), max(30, BUG_WIDTH - len(head) - len(tail)))
        lines.append(head + cause + tail)
        if not reproducers:
            continue
        smallest = classes.get(bug.get("reproducer")) or {}
        repro = (smallest.get("files") or {}).get("repro")
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
    lines: list[str] = []
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
