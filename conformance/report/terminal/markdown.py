"""The gate's verdict in GitHub Markdown (``--summary-md``,
``$GITHUB_STEP_SUMMARY``): the verdict line, a table of the new groups and
the bookkeeping as a list, every untrusted text escaped (:func:`md`)."""

from __future__ import annotations

import re

from conformance.engine.groups import GroupKey
from conformance.gate.check import Gate
from conformance.messages import cut
from conformance.report.terminal.escape import safe
from conformance.report.terminal.gate import message_line

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
    found = gate.new_groups
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
            message = f"{where}: {message_line(members[0])}" if where else message_line(members[0])
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
