"""What ``conformance diff`` prints: the versions, the counts, then each
group of changes with its inputs, its kept example and where the two runs'
messages part."""

from __future__ import annotations

from conformance.report.diff import Diff, comparable
from conformance.report.terminal.escape import safe, safe_cut

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
    lines = [safe_cut(f"{indent}inputs: {'; '.join(shown)}{more}", DIFF_WIDTH)] if inputs else []
    example = diff.examples.get(group)
    if example is not None:
        room = max(20, (DIFF_WIDTH - len(indent) - len(example.case_id) - 38) // 2)
        lines.append(
            safe_cut(
                f"{indent}example {example.case_id} ({example.run}): data "
                f"{example.values(example.data, room)} indices "
                f"{example.values(example.indices, room)}",
                DIFF_WIDTH,
            )
        )
    if said:  # of the same kind: where the messages part once the noise is out
        first = members[0]
        before, after = first.before_message, first.after_message
        if first.before == first.after:
            before, after = comparable(first.before, before), comparable(first.after, after)
        before, after = _parting(before, after)
        lines.append(safe_cut(f"{indent}A said: {before}", DIFF_WIDTH))
        lines.append(safe_cut(f"{indent}B said: {after}", DIFF_WIDTH))
    return lines


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
