"""Machine-readable output of a report: JUnit XML and report.json (versioned).

JUnit: one ``<testsuite>`` per runtime, one ``<testcase>`` per (case,
runtime, variant) named ``<case id>[<variant>]`` with classname
``<runtime>.<op>``; a discrepancy is a ``<failure>`` (type = outcome kind)
unless a baseline entry covers it (``<skipped>``, as an xfail), a harness
error is an ``<error>``, another ``harness_unsupported`` result is
``<skipped>``, conforming results pass. Results of ``conformance model``
also make one ``nodes.<runtime>`` suite per target with one test case per
model node. When the runs were gated, a
``gate`` suite says the verdict as CI reads it: a failing test case for each
new group, each entry fixed upstream? (unless allowed), each run that did not
finish, and one for the harness errors; a passing ``gate.verdict`` otherwise.

report.json (``REPORT_SCHEMA``, a contract; the version goes up when a
field changes meaning or goes away)::

    {"schema": "onnx-gather-conformance/report", "version": 2,
     "results": N, "runtimes": {name: {"version", "outcomes": {kind: n}}},
     "discrepancies": [{"runtime", "kind", "op", "group", "count",
                        "dtypes", "variants", "smallest_case", "message"}],
     "matrix": [{"op", "opset", "dtype", "runtime", "variant", "outcomes": {kind: n}}],
     "fuzz_classes": N}
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

from conformance.engine import files
from conformance.engine.judge import DISCREPANCIES
from conformance.report.views.report import Report

# Version 2: the schema was named .../summary (the name of another file of a
# run, summary.json), and "group" replaced "base_id" (fuzz groups by signature).
REPORT_SCHEMA = "onnx-gather-conformance/report"
REPORT_VERSION = 2


def report_json(report: Report) -> dict:
    versions = {}
    for header in report.headers:
        for name, info in (header.get("runtimes") or {}).items():
            versions[name] = info.get("version")
    return {
        "schema": REPORT_SCHEMA,
        "version": REPORT_VERSION,
        "results": report.total,
        "runtimes": {
            runtime: {
                "version": versions.get(runtime),
                "outcomes": dict(sorted(report.totals[runtime].items())),
            }
            for runtime in report.runtimes
        },
        "discrepancies": [
            {
                "runtime": group.runtime,
                "kind": group.kind,
                "op": group.op,
                "group": group.name,
                "count": group.count,
                "dtypes": sorted(group.dtypes),
                "variants": sorted(group.variants),
                "smallest_case": group.example["case_id"],
                "message": group.example["message"],
            }
            for group in report.groups
        ],
        "matrix": [
            {
                "op": op,
                "opset": opset,
                "dtype": dtype,
                "runtime": runtime,
                "variant": variant,
                "outcomes": dict(sorted(cell.counts.items())),
            }
            for (op, opset, dtype), row in report.matrix
            for (runtime, variant), cell in sorted(row.items())
        ],
        "fuzz_classes": len(report.findings),
    }


def write_report_json(report: Report, path: Path) -> None:
    files.write_json(path, report_json(report))


def junit(
    results: list[dict],
    known: dict | None = None,
    verdicts: list[dict] | None = None,
    unfinished: list[str] | None = None,
) -> ElementTree.ElementTree:
    """``known`` maps id(record) -> the baseline entry covering it: such a
    discrepancy is ``<skipped>`` ("known: ..."), as pytest reports an xfail,
    so CI annotations show what is new, not every known bug. ``verdicts``
    (gate.json contents) and ``unfinished`` (why a run cannot stand for a
    whole one) make the ``gate`` suite."""
    known = known or {}
    by_runtime: dict[str, list[dict]] = defaultdict(list)
    for record in results:
        by_runtime[record["runtime"]].append(record)
    root = ElementTree.Element("testsuites", name="onnx-gather-conformance")
    for runtime, mine in sorted(by_runtime.items()):
        failures = sum(e["kind"] in DISCREPANCIES and id(e) not in known for e in mine)
        errors = sum(bool(e.get("harness_error")) for e in mine)
        skipped = sum(
            (e["kind"] == "harness_unsupported" and not e.get("harness_error")) or id(e) in known
            for e in mine
        )
        suite = ElementTree.SubElement(
            root,
            "testsuite",
            name=_clean(runtime),
            tests=str(len(mine)),
            failures=str(failures),
            errors=str(errors),
            skipped=str(skipped),
        )
        for record in mine:
            seconds = ((record.get("load_ms") or 0) + (record.get("run_ms") or 0)) / 1000
            case = ElementTree.SubElement(
                suite,
                "testcase",
                name=_clean(f"{record['case_id']}[{record['variant']}]"),
                classname=_clean(f"{runtime}.{record['op']}"),
                time=f"{seconds:.6f}",
            )
            if id(record) in known:
                cover = known[id(record)]
                why = f"known {record['kind']} ({cover['where']}): {cover['reason']}"
                ElementTree.SubElement(case, "skipped", message=_clean(why)[:500])
            elif record["kind"] in DISCREPANCIES:
                failure = ElementTree.SubElement(
                    case, "failure", type=record["kind"], message=_clean(record["message"])[:500]
                )
                failure.text = _clean(record["message"])
            elif record.get("harness_error"):
                error = ElementTree.SubElement(
                    case, "error", type="harness_error", message=_clean(record["message"])[:500]
                )
                error.text = _clean(record["message"])
            elif record["kind"] == "harness_unsupported":
                ElementTree.SubElement(case, "skipped", message=_clean(record["message"])[:500])
    _node_suites(root, results, known)
    if verdicts or unfinished:
        _gate_suite(root, results, verdicts or [], unfinished or [])
    return ElementTree.ElementTree(root)


def _node_suites(root, results: list[dict], known: dict) -> None:
    """``conformance model``: one ``nodes.<runtime>`` suite per target, one test
    case per model node (``<model>:<graph>/<node>``), failing when a result of
    a case the node became is a discrepancy no baseline entry covers, skipped
    when every discrepancy is a known one."""
    by_node: dict[str, dict[tuple, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for record in results:
        for node in record.get("nodes") or ():
            where = (node["model"], node["graph"], node["node"])
            by_node[record["runtime"]][where].append(record)
    for runtime, nodes in sorted(by_node.items()):
        verdicts = {}
        for where, mine in nodes.items():
            wrong = [r for r in mine if r["kind"] in DISCREPANCIES]
            new = [r for r in wrong if id(r) not in known]
            verdicts[where] = (wrong, new)
        suite = ElementTree.SubElement(
            root, "testsuite", name=_clean(f"nodes.{runtime}"), tests=str(len(nodes)),
            failures=str(sum(bool(new) for _, new in verdicts.values())), errors="0",
            skipped=str(sum(bool(wrong) and not new for wrong, new in verdicts.values())),
        )  # fmt: skip
        for (model, graph, node), (wrong, new) in sorted(verdicts.items()):
            label = f"{graph}/{node}" if graph else node
            case = ElementTree.SubElement(
                suite, "testcase", name=_clean(f"{model}:{label}"),
                classname=_clean(f"nodes.{runtime}"), time="0",
            )  # fmt: skip
            if new:
                first = new[0]
                message = (
                    f"{len(new)} result(s) differ from the oracle: {first['kind']} on "
                    f"{first['case_id']} [{first['variant']}]: {first.get('message') or ''}"
                )
                failure = ElementTree.SubElement(
                    case, "failure", type=first["kind"], message=_clean(message)[:500]
                )
                failure.text = _clean(message)
            elif wrong:
                message = f"{len(wrong)} known discrepancies ({wrong[0]['kind']})"
                ElementTree.SubElement(case, "skipped", message=_clean(message)[:500])


def last_line(text: str | None) -> str:
    """The last non-empty line of a message: an exception's type and text."""
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _gate_suite(root, results: list[dict], verdicts: list[dict], unfinished: list[str]) -> None:
    """The gate's verdict as test cases: what a CI summary shows first."""
    failing: list[tuple[str, str, str]] = []  # (name, type, message)
    for why in unfinished:
        failing.append(("run did not finish", "unfinished", why))
    harness = [r for r in results if r.get("harness_error")]
    if harness:
        first = harness[0]
        failing.append((
            f"harness errors ({len(harness)})",
            "harness_error",
            f"{first['runtime']} {first['case_id']} [{first['variant']}]: "
            f"{last_line(first.get('message'))}",
        ))  # fmt: skip
    for verdict in verdicts:
        for item in verdict.get("new", []):
            failing.append((
                f"new: {item['runtime']} {item['kind']} {item['op']} {item['group']}",
                item["kind"],
                f"{item['count']} result(s) outside the baseline ({item.get('source')}): "
                f"{item.get('message') or ''}",
            ))  # fmt: skip
        if not verdict.get("allow_fixed"):
            for item in verdict.get("fixed", []):
                failing.append((
                    f"fixed upstream?: {item['where']} ({item['runtime']})",
                    "fixed_upstream",
                    f"{item['reason']} -- conforming now: {', '.join(item['conforming_now'][:5])}; "
                    "narrow or remove the entry, or accept with --allow-fixed",
                ))  # fmt: skip
    suite = ElementTree.SubElement(
        root, "testsuite", name="gate", tests=str(max(1, len(failing))),
        failures=str(len(failing)), errors="0", skipped="0",
    )  # fmt: skip
    if not failing:
        ElementTree.SubElement(suite, "testcase", name="verdict", classname="gate", time="0")
    for name, kind, message in failing:
        case = ElementTree.SubElement(
            suite, "testcase", name=_clean(name), classname="gate", time="0"
        )
        failure = ElementTree.SubElement(case, "failure", type=kind, message=_clean(message)[:500])
        failure.text = _clean(message)


def _clean(text: str) -> str:
    """XML 1.0 cannot hold most control characters, even escaped: show them as \\xNN."""
    return "".join(
        c if c in "\t\n\r" or (c >= " " and c not in "\ufffe\uffff") else f"\\x{ord(c):02x}"
        for c in text
    )


def write_junit(
    results: list[dict],
    path: Path,
    known: dict | None = None,
    verdicts: list[dict] | None = None,
    unfinished: list[str] | None = None,
) -> None:
    tree = junit(results, known, verdicts, unfinished)
    ElementTree.indent(tree)
    root = tree.getroot()
    assert root is not None  # junit builds the tree on its root
    text = ElementTree.tostring(root, encoding="unicode", xml_declaration=True)
    files.write_text(path, text + "\n")
