"""The verdict per model node of ``conformance model``: built from a run
folder's ``nodes.json`` and its results, and what the terminal shows of it.

Per model: the nodes found (judged and not), per target how many compute
as the oracle does, counted once per unique case group and weighted by how
often such a node occurs, and for each discrepancy its mechanism (as the
fuzzer names bugs: :func:`conformance.fuzz.bugs.cause_of`), the nodes it
hits by name and its smallest input.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from conformance.engine.judge import DISCREPANCIES, Outcome
from conformance.engine.whole_model import BROKEN, REFUSED_INPUTS
from conformance.fuzz.bugs import cause_of
from conformance.messages import first_line
from conformance.report.terminal.escape import safe
from conformance.tables import explanations, outcomes
from conformance.tables.operators import OPERATORS

NAMES_SHOWN = 8  # node names listed per discrepancy
NODES = "nodes.json"  # beside the results of a conformance model run
# the case id of a node case made of captured tensors (conformance.graphs.capture)
CAPTURED = re.compile(r"-captured\d+\.op\d+\.")


@dataclass
class Mechanism:
    runtime: str
    kind: str
    text: str
    nodes: list[str] = field(default_factory=list)
    occurrences: int = 0
    smallest: dict | None = None  # the record of the smallest input
    workaround: str = ""
    as_built: bool = True  # False: seen only on what-if cases (other storage, other values)
    about: str = ""  # the fitting explanation's plain-language text, when one fits


@dataclass
class TargetVerdict:
    """One target's verdict on one model. The counts are of the model as built:
    each node in its as-built variant on the values it can receive."""

    runtime: str
    unique_ok: int = 0
    unique: int = 0
    weighted_ok: int = 0
    captured: int = 0  # nodes with cases of the tensors the model was fed (--inputs)
    captured_ok: int = 0  # of them, those whose captured cases all conform
    weighted: int = 0
    differing: list[str] = field(default_factory=list)  # nodes that differ as built
    what_if: list[str] = field(default_factory=list)  # nodes exact as built, not in what-if
    whole: dict = field(default_factory=dict)  # the whole model on it: status, message
    in_situ: dict[str, int] = field(default_factory=dict)  # verdict -> nodes
    in_situ_differing: list[tuple[str, str]] = field(default_factory=list)  # (node, mechanism)
    in_situ_why: list[str] = field(default_factory=list)  # why nodes were not judged in situ
    # nodes with no as-built result that judges them on this target (only
    # harness_unsupported, or none at all), and the first such result's words
    unjudged: list[str] = field(default_factory=list)
    unjudged_why: str = ""

    @property
    def status(self) -> str:
        """The headline word: cannot load | cannot run (and the like) | differs |
        not judged | partly judged | safe. No word without the results that
        support it: *safe* only when every judged node has an as-built result on
        this target, and it is the oracle's (issue 44)."""
        whole = self.whole.get("status", "")
        if whole in ("cannot load", "cannot run", "crashed", "timed out"):
            return whole
        if self.differing or self.in_situ_differing:
            return "differs"
        if not self.unique or not self.unique_ok:
            return "not judged"
        return "partly judged" if self.unjudged else "safe"

    @property
    def judged_in_situ(self) -> bool:
        """Whether any node was judged in situ, and every one exact (with --inputs)."""
        return bool(self.in_situ.get("exact")) and not self.in_situ_differing

    def not_in_situ(self) -> str:
        """Why no node was judged in situ on this target."""
        if self.whole.get("status") == REFUSED_INPUTS:
            said = self.whole.get("message", "")
            return f"it refused the inputs, as the spec requires (conforming): {said}"
        if self.whole.get("status") not in (None, "ran"):
            return self.whole.get("message") or self.whole.get("status", "")
        if self.in_situ_why:
            return self.in_situ_why[0]
        broken = self.in_situ.get(BROKEN)
        if broken:  # it ran them: "no node was exposed" would be false
            return f"the inputs break the spec at {broken} node(s) it ran (said first)"
        return "no node was exposed"


@dataclass
class ModelVerdict:
    model: str
    found: int
    judged: int
    unique: int  # case groups
    cases: int
    targets: list[TargetVerdict]
    mechanisms: list[Mechanism]
    not_judged: list[tuple[str, str]]  # (node label, reason)
    whole: dict = field(default_factory=dict)  # nodes.json's whole_model entry
    fed: bool = False

    @property
    def lines(self) -> list[str]:
        """Its verdict lines, as the terminal prints them first."""
        return headline_lines([self])


def _label(entry: dict) -> str:
    return f"{entry['graph']}/{entry['node']}" if entry["graph"] else entry["node"]


def mechanism_of(record: dict) -> str:
    """A discrepancy's mechanism in words, as the fuzzer names its bugs."""
    violation = (record.get("expected") or {}).get("violation")
    outcome = Outcome(record["kind"], record.get("message") or "", record)
    cause = cause_of(
        record["runtime"],
        record["op"],
        outcome,
        tuple(record.get("features") or ()),
        violation,
        record.get("dtype", ""),
    )
    return cause.text


# What a deployer can do, by kind, where no explanation names the mechanism.
KIND_WORKAROUNDS = {k.name: k.workaround for k in outcomes.OUTCOME_KINDS if k.workaround}


def workaround_of(record: dict) -> str:
    """One line a deployer can act on: the fitting explanation's, else the kind's."""
    for name in record.get("explained_by") or ():
        found = explanations.BY_NAME.get(name)
        if found is not None and found.workaround:
            return found.workaround
    return KIND_WORKAROUNDS.get(record["kind"], "")


def about_of(record: dict) -> str:
    """The plain-language text of the explanation that fits a wrong value, if one does."""
    for name in record.get("explained_by") or ():
        found = explanations.BY_NAME.get(name)
        if found is not None:
            return f"{name}: {found.description}"
    return ""


def as_built_record(entry: dict, record: dict) -> bool:
    """The record judges the node as built: an as-built case in its as-built
    variant (a nodes.json of format 1, or cases saved without it, say none: every
    record counts)."""
    if (record.get("expected") or {}).get("violation"):
        return False  # inputs the spec forbids (fed ones too) are no valid run's: what if
    built = entry.get("as_built")
    if built is None:  # not said (a case file saved before it was): every record counts
        return True
    return record["case_id"] in built["cases"] and record.get("variant") == built["variant"]


def verdicts(document: dict, records: list[dict]) -> list[ModelVerdict]:
    """One verdict per model of nodes.json, from the run's records."""
    by_case: dict[str, list[dict]] = defaultdict(list)
    runtimes: list[str] = []
    for record in records:
        by_case[record["case_id"]].append(record)
        if record["runtime"] not in runtimes:
            runtimes.append(record["runtime"])
    entries_by_model: dict[str, list[dict]] = defaultdict(list)
    for entry in document["nodes"]:
        entries_by_model[entry["model"]].append(entry)
    wholes = document.get("whole_model") or {}
    for whole in wholes.values():
        for name in whole.get("targets", {}):
            if name not in runtimes:
                runtimes.append(name)
    made = []
    for model, entries in entries_by_model.items():
        judged = [e for e in entries if e["not_judged"] is None and e["cases"]]
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for entry in judged:
            groups[tuple(entry["cases"])].append(entry)
        whole = wholes.get(model) or {}
        targets = []
        mechanisms: dict[tuple, Mechanism] = {}
        for runtime in runtimes:
            verdict = TargetVerdict(runtime, unique=len(groups), weighted=len(judged))
            verdict.whole = (whole.get("targets") or {}).get(runtime, {})
            for entry in judged:
                said = (entry.get("in_situ") or {}).get(runtime)
                if said:
                    verdict.in_situ[said["verdict"]] = verdict.in_situ.get(said["verdict"], 0) + 1
                    if said["verdict"] == "differs":
                        verdict.in_situ_differing.append((_label(entry), said.get("mechanism", "")))
                    elif said["verdict"] != "exact" and said.get("why"):
                        verdict.in_situ_why.append(f"{_label(entry)}: {said['verdict']}, "
                                                   f"{said['why']}")  # fmt: skip
            for ids, members in groups.items():
                mine = [r for i in ids for r in by_case.get(i, ()) if r["runtime"] == runtime]
                bad = [r for r in mine if r["kind"] in DISCREPANCIES]
                built_bad = [r for r in bad if as_built_record(members[0], r)]
                supported = [
                    r for r in mine if r["kind"] in CONFORMING and as_built_record(members[0], r)
                ]
                captured = [i for i in ids if CAPTURED.search(i)]
                if captured:
                    verdict.captured += len(members)
                    if not any(CAPTURED.search(r["case_id"]) for r in built_bad):
                        verdict.captured_ok += len(members)
                labels = [_label(m) for m in members]
                if not built_bad and not supported:  # nothing says it is exact
                    verdict.unjudged += labels
                    verdict.unjudged_why = verdict.unjudged_why or _unjudged_why(mine)
                elif not built_bad:
                    verdict.unique_ok += 1
                    verdict.weighted_ok += len(members)
                    if bad:
                        verdict.what_if += labels
                else:
                    verdict.differing += labels
                seen: set[tuple] = set()
                for record in bad:
                    built = record in built_bad
                    key = (runtime, record["kind"], mechanism_of(record), built)
                    found = mechanisms.get(key)
                    if found is None:
                        found = mechanisms[key] = Mechanism(
                            runtime, record["kind"], key[2], workaround=workaround_of(record),
                            as_built=built, about=about_of(record),
                        )  # fmt: skip
                    if key not in seen:
                        seen.add(key)
                        found.occurrences += len(members)
                        found.nodes += labels
                    size = _size(record)
                    if found.smallest is None or size < _size(found.smallest):
                        found.smallest = record
            targets.append(verdict)
        cases = {i for ids in groups for i in ids}
        made.append(
            ModelVerdict(
                model,
                len(entries),
                len(judged),
                len(groups),
                len(cases),
                targets,
                sorted(
                    mechanisms.values(),
                    key=lambda m: (not m.as_built, m.runtime, -m.occurrences, m.text),
                ),
                [(_label(e), e["not_judged"]) for e in entries if e["not_judged"] is not None],
                whole,
                bool(whole.get("fed")),
            )
        )
    return made


CONFORMING = outcomes.kinds(lambda kind: kind.conforming)


def _unjudged_why(mine: list[dict]) -> str:
    """Why a node has no as-built result on a target: the first of its results that
    judges nothing (harness_unsupported), in its words, or that none came."""
    for record in mine:
        if record["kind"] not in CONFORMING:
            return f"{record['kind']}: {first_line(record.get('message') or '')}".rstrip(": ")
    return "no result came for it"


def inputs_break_spec(made: list[ModelVerdict]) -> bool:
    """Whether the --inputs make a node's inputs forbidden by the spec in some model."""
    return any(verdict.whole.get("inputs_break_spec") for verdict in made)


def cannot_load(made: list[ModelVerdict]) -> bool:
    """Whether a target cannot load, run or finish a model (a verdict on the whole model,
    which stands when no node could be judged)."""
    return any(
        t.whole.get("status") in ("cannot load", "cannot run", "crashed", "timed out")
        for verdict in made
        for t in verdict.targets
    )


def failing(
    document: dict,
    records: list[dict],
    made: list[ModelVerdict],
    unexpected: set[tuple] | None = None,
) -> bool:
    """Whether ``conformance model`` exits 1: a target cannot load or run a model,
    differs in situ, or differs as built; with the gate (``unexpected``: the
    (runtime, case_id, variant) of each discrepancy outside the baseline), an
    as-built difference counts only when it is outside the baseline. What-if
    results never count. Inputs that break the spec at a node exit 1 whatever the
    targets did: no run on them is a valid run of the model (docs/models.md)."""
    if inputs_break_spec(made):
        return True
    for verdict in made:
        for target in verdict.targets:
            # a node of the model that has no as-built result on a target is no pass
            # (issue 44); a model with no node to judge has only its load to fail
            allowed = ("safe", "differs") if verdict.judged else ("safe", "differs", "not judged")
            if target.status not in allowed or target.in_situ_differing:
                return True
    entry_of = {i: e for e in document["nodes"] for i in e["cases"]}
    for record in records:
        if record["kind"] not in DISCREPANCIES or record["case_id"] not in entry_of:
            continue
        if not as_built_record(entry_of[record["case_id"]], record):
            continue
        key = (record["runtime"], record["case_id"], record.get("variant"))
        if unexpected is None or key in unexpected:
            return True
    return False


def _size(record: dict) -> int:
    count = 1
    for shape in (record.get("data_shape") or [], record.get("indices_shape") or []):
        for dim in shape:
            count *= max(dim, 1)
    return sum(record.get("data_shape") or []) + count


# -- terminal ---------------------------------------------------------------------------
_NAMES = list(OPERATORS)  # the operators a model is read for, in the table's order
_ANY_OF = "/".join(_NAMES)  # "Gather/GatherElements/GatherND"
_NONE_OF = f"{', '.join(_NAMES[:-1])} or {_NAMES[-1]}" if len(_NAMES) > 1 else _NAMES[0]


def found_lines(files) -> list[str]:
    """What was read, before anything runs: per model its nodes, or that it has none."""
    lines = []
    for found in files:
        sites = found.sites
        if not sites:
            lines.append(safe(f"{found.path}: no {_NONE_OF} node"))
            continue
        ours = sum(1 for s in sites if s.opset is not None)
        graphs = len({s.graph for s in sites})
        lines.append(
            safe(
                f"{found.path}: opset {found.opset}, {len(sites)} {_ANY_OF} node(s) "
                f"({ours} of the ONNX domain) in {graphs} graph(s)"
            )
        )
    return lines


def capture_lines(failed: dict[str, str]) -> list[str]:
    """Each model whose --inputs capture run did not end (what ran out, or
    what failed): its nodes keep their drawn cases."""
    return [
        safe(f"{model}: --inputs not captured whole: {why}; its nodes keep their drawn cases")
        for model, why in failed.items()
    ]


def nothing_judged_line(path) -> str:
    return safe(f"no node can be judged (each says why in {path})")


def headline_lines(made: list[ModelVerdict]) -> list[str]:
    """The verdict first: per model, one line per target (*safe*, *differs* with
    the nodes, mechanism and what to do, *cannot load* with why), then what the
    whole model's outputs show, then the what-if part in one line."""
    lines: list[str] = []
    for verdict in made:
        lines.append(safe(f"model {verdict.model}:"))
        lines += [safe("  " + line) for line in spec_lines(verdict)]
        if not verdict.judged:
            lines.append("  no node judged (nodes.json says why)")
        for target in verdict.targets:
            lines.append(safe("  " + target_line(verdict, target)))
            for line in todo_lines(verdict, target):
                lines.append(safe("    " + line))
        lines += [safe("  " + line) for line in output_lines(verdict)]
        what_if = [t for t in verdict.targets if t.what_if]
        if what_if:
            said = "; ".join(f"{t.runtime} on {len(set(t.what_if))} node(s)" for t in what_if)
            lines.append(
                safe(
                    f"  what if (not the verdict: other storage, or values these nodes never "
                    f"receive as built): differs {said}; see below"
                )
            )
    return lines


BREAKS_SHOWN = 3  # nodes whose inputs break the spec, said each; the rest counted


def spec_lines(verdict: ModelVerdict) -> list[str]:
    """First, the inputs that break the spec at a node, as the inputs' property: which
    input and element, which node and clause, what each target did, what to do."""
    breaks = verdict.whole.get("inputs_break_spec") or []
    lines = []
    for said in breaks[:BREAKS_SHOWN]:
        node = f"{said['graph']}/{said['node']}" if said["graph"] else said["node"]
        where = f"node {node}'s indices"
        if said.get("input") is not None:
            where = f"input {said['input']}, as node {node}'s indices"
        if "element" in said:
            where += f", element {said['element']} = {said['value']}"
        lines.append(
            f"inputs break the spec: {where}: {said['op']} {said['clause']}: {said['detail']}"
        )
        did = "; ".join(f"{name}: {what}" for name, what in said["targets"].items())
        lines.append(f"  what each target did: {did}")
        lines.append(f"  to do: {_break_todo(said)}")
    if len(breaks) > BREAKS_SHOWN:
        lines.append(f"... and {len(breaks) - BREAKS_SHOWN} more node(s) (nodes.json)")
    return lines


def _break_todo(said: dict) -> str:
    if said["clause"] != "index-out-of-range" or "size" not in said:
        return (
            "keep the inputs within what the spec allows at this node; no verdict in situ "
            "holds for inputs that break it"
        )
    what = said.get("input") or "the values that reach these indices"
    if "component" in said:  # an index tuple's component, against the dim it indexes
        return (
            f"validate component {said['component']} of {what}'s index tuples (its last dim) "
            f"against the size of the data dim it indexes ({said['size']}) before inference, "
            "in the code that feeds the model"
        )
    return (
        f"validate {what} against the axis's size ({said['size']}: for an embedding, the "
        "vocabulary) before inference, in the tokenizer or the code that feeds the model"
    )


def target_line(verdict: ModelVerdict, target: TargetVerdict) -> str:
    status = target.status
    n = verdict.judged
    if status in ("cannot load", "cannot run", "crashed", "timed out"):
        what = {
            "cannot load": "cannot load this model",
            "cannot run": "cannot run this model on --inputs",
            "crashed": "crashed on this model",
            "timed out": "did not finish this model",
        }[status]
        if verdict.whole.get("inputs_break_spec") and status in ("crashed", "timed out"):
            what = what.replace("this model", "these inputs") + ", which break the spec (above)"
        message = target.whole.get("message") or "no message"
        return (
            f"{target.runtime}: {what}: {message}; its node verdicts are judged only on "
            "extracted one-node models"
        )
    situ = ""
    if verdict.fed:
        exact = target.in_situ.get("exact", 0)
        situ = f"; in situ {exact} exact"
        others = [f"{k} {v}" for k, v in sorted(target.in_situ.items()) if k != "exact"]
        situ += f", {', '.join(others)}" if others else ""
    if status == "not judged":
        why = target.unjudged_why or "no node of this model could be judged (nodes.json says why)"
        said = f"{target.runtime}: not judged: no node has an as-built result on it ({why})"
        return said + _whole_said(target)
    if status in ("safe", "partly judged"):
        return _safe_line(verdict, target, situ)
    wrong = len(set(target.differing))
    said = f"{target.runtime}: differs: {wrong} of {n} node(s) as built"
    if target.in_situ_differing:
        said += f", {len(target.in_situ_differing)} in situ"
    return said + situ + _whole_said(target)


def _whole_said(target: TargetVerdict) -> str:
    """What became of the whole model on a target that did not refuse it but did not
    run it either (a model the tool cannot prepare, an input its binding cannot
    carry): never silence."""
    whole = target.whole.get("status")
    if whole in (None, "", "ran", "loads"):
        return ""
    return f"; whole model {whole}: {target.whole.get('message') or 'no message'}"


def _safe_line(verdict: ModelVerdict, target: TargetVerdict, situ: str) -> str:
    """A target on which no node differs: what was judged, as built and in situ,
    and what was not (each word with the results behind it)."""
    n = verdict.judged
    if target.unjudged:
        built = (
            f"partly judged: {n - len(target.unjudged)} of {n} node(s) exact as built, "
            f"{len(target.unjudged)} with no as-built result ({target.unjudged_why})"
        )
    else:
        built = f"every one of {n} node(s) exact as built"
    word = "safe" if not target.unjudged else ""
    if not verdict.fed:
        return f"{target.runtime}: {word + ': ' if word else ''}{built}{_whole_said(target)}"
    if target.judged_in_situ:
        head = f"{word} as built and in situ: " if word else ""
        return f"{target.runtime}: {head}{built}{situ}"
    head = f"{word} as built; " if word else ""
    return f"{target.runtime}: {head}not judged in situ: {target.not_in_situ()}; {built}{situ}"


def todo_lines(verdict: ModelVerdict, target: TargetVerdict) -> list[str]:
    """For a target that differs: each mechanism, its nodes, and what to do."""
    lines = []
    for m in verdict.mechanisms:
        if m.runtime != target.runtime or not m.as_built:
            continue
        names = ", ".join(dict.fromkeys(m.nodes[:3])) + (
            f" and {len(m.nodes) - 3} more" if len(m.nodes) > 3 else ""
        )
        lines.append(f"{m.kind}: {m.text} ({names}); to do: {m.workaround or 'see docs/models.md'}")
    for label, mechanism in target.in_situ_differing[:5]:
        found = explanations.BY_NAME.get(mechanism)
        todo = (
            found.workaround
            if found is not None and found.workaround
            else ("report it upstream with the model and inputs")
        )
        lines.append(f"in situ: {label}: {mechanism}; to do: {todo}")
    return lines


def output_lines(verdict: ModelVerdict) -> list[str]:
    """The model's outputs between targets, and what the precision reruns measured."""
    whole = verdict.whole
    if whole.get("skipped"):
        return [f"whole model not run: {whole['skipped']}"]
    if not verdict.fed:
        return _loaded_lines(whole)  # which targets loaded it (the verdict helper's)
    reference = whole.get("compared_with")
    if reference is None:
        return []
    if not whole.get("differences"):
        return [_same_line(whole, reference)]  # which targets ran (the verdict helper's)
    lines = []
    for found in whole["differences"]:
        target = found["target"]
        line = f"outputs: {target} differs from {reference}" + _gap_said(
            found["outputs"], target, reference
        )
        situ = next((t for t in verdict.targets if t.runtime == target), None)
        if situ is not None and not situ.in_situ_differing and situ.in_situ.get("exact"):
            line += "; not from Gather: every Gather exposed is exact in situ"
        for rerun in found.get("reruns", []):
            if rerun["status"] != "ran":
                line += f"; {rerun['target']}: {rerun['status']}"
                continue
            same = not any(d["differs"] for d in rerun["outputs"])
            line += f"; with {rerun['target']} " + (
                "the outputs are bit for bit the same"
                if same
                else "it differs" + _gap_said(rerun["outputs"], rerun["target"], reference)
            )
        lines.append(line)
    return lines


def _gap_said(outputs: list[dict], target: str, reference: str) -> str:
    """How far a target's outputs are from the reference's, as a deployer reads
    it: the largest difference, it relative to the output's scale, ULP only
    where values are not tiny; then where NaN or an infinity stands on one side
    only (which no finite figure shows); else that only bits differ."""
    parts = []
    gap = _largest(outputs)
    if gap:
        rel = [d["max_rel"] for d in outputs if d.get("max_rel") is not None]
        ulp = [d["ulp_not_tiny"] for d in outputs if d.get("ulp_not_tiny") is not None]
        scale = f"{_num(max(rel))} of the output's scale" if rel else ""
        beyond = f"{max(ulp)} ULP at most where values are not tiny" if ulp else ""
        said = "; ".join(p for p in (scale, beyond) if p)
        parts.append(f" by {_num(gap)}" + (f" ({said})" if said else ""))
    for d in outputs:
        for key, what in (("nan_one_side", "NaN"), ("inf_one_side", "an infinity")):
            if d.get(key):
                parts.append(_one_side_said(d["output"], d[key], what, target, reference))
        if d.get("note"):
            parts.append(f": {d['output']} is {d['note']}")
    if not parts:
        parts.append(" in bits only (every finite value equal: a NaN's payload, a zero's sign)")
    return parts[0] + "".join(";" + p.lstrip(":") for p in parts[1:])


def _one_side_said(output: str, side: dict, what: str, target: str, reference: str) -> str:
    """``: NaN on one side only at 2 element(s) of y (2 from openvino); first y[1]:
    openvino nan, reference 0.0``."""
    sides = [f"{side['target']} from {target}"] if side["target"] else []
    sides += [f"{side['compared']} from {reference}"] if side["compared"] else []
    return (
        f": {what} on one side only at {side['count']} element(s) of {output} "
        f"({', '.join(sides)}); first {output}{side['first']}: {target} "
        f"{side['target_value']}, {reference} {side['compared_value']}"
    )


# -- which targets the outputs line speaks of (issue 44, 49: every target that ran, named) --
def _loaded_lines(whole: dict) -> list[str]:
    if not whole:
        return []
    said = whole.get("targets") or {}
    loaded = [name for name, t in said.items() if t.get("status") == "loads"]
    give = "give --inputs to run it, and to judge every node in situ"
    if loaded and len(loaded) == len(said):
        return [f"whole model: loaded on each target ({give})"]
    if loaded:
        return [f"whole model: loaded on {', '.join(loaded)} only ({give})"]
    return ["whole model: no target loaded it"]


def _same_line(whole: dict, reference: str) -> str:
    compared = whole.get("compared")
    if compared is None:  # a nodes.json written before the field was
        return f"outputs: every target that ran gives {reference}'s outputs bit for bit"
    others = [name for name in compared if name != reference]
    if not others:
        return f"outputs: only {reference} ran the model: no other target's outputs to compare"
    verb = "gives" if len(others) == 1 else "give"
    return f"outputs: {', '.join(others)} {verb} {reference}'s outputs bit for bit"


def _largest(outputs: list[dict]) -> float | None:
    gaps = [d["max_abs"] for d in outputs if d.get("max_abs") is not None]
    return max(gaps) if gaps else None


def _num(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g}"


def table_lines(document: dict, records: list[dict]) -> list[str]:
    """Per model: the details after the verdict: the table and the discrepancies."""
    lines: list[str] = []
    for verdict in verdicts(document, records):
        lines += model_lines(verdict)
    return lines


def model_lines(verdict: ModelVerdict) -> list[str]:
    lines = [
        safe(
            f"model {verdict.model}: {verdict.found} node(s) found, {verdict.judged} judged as "
            f"{verdict.unique} unique node case group(s) ({verdict.cases} cases), "
            f"{len(verdict.not_judged)} not judged"
        )
    ]
    if verdict.targets and verdict.judged:
        width = max(len(t.runtime) for t in verdict.targets) + 2
        fed = any(t.captured for t in verdict.targets)
        head = f"  {'target':<{width}}{'as built (unique)':<22}{'weighted by occurrence':<26}"
        lines.append((head + ("on the inputs it was fed" if fed else "")).rstrip())
        for t in verdict.targets:
            row = f"  {t.runtime:<{width}}{f'{t.unique_ok}/{t.unique}':<22}"
            row += f"{f'{t.weighted_ok}/{t.weighted}':<26}"
            row += f"{t.captured_ok}/{t.captured}" if fed else ""
            lines.append(safe(row.rstrip()))
    for m in verdict.mechanisms:
        names = ", ".join(dict.fromkeys(m.nodes[:NAMES_SHOWN]))
        more = f" and {len(m.nodes) - NAMES_SHOWN} more" if len(m.nodes) > NAMES_SHOWN else ""
        small = m.smallest or {}
        part = "as built" if m.as_built else "what if"
        lines.append(
            safe(
                f"  {part}: {m.runtime} {m.kind}: {m.text}; {m.occurrences} node(s): {names}{more}"
            )
        )
        axis = small.get("axis")  # the operator's attribute (GatherND's batch_dims)
        named = OPERATORS[small["op"]].attribute if small.get("op") in OPERATORS else "axis"
        lines.append(
            safe(
                f"    smallest input: {small.get('case_id')} ({small.get('variant')}): data "
                f"{small.get('dtype')}{small.get('data_shape')}, indices "
                f"{small.get('indices_dtype')}{small.get('indices_shape')}, "
                f"{named} {0 if axis is None else axis}"
                f"{' (the default)' if axis is None else ''}"
            )
        )
    for label, reason in verdict.not_judged[:20]:
        lines.append(safe(f"  not judged: {label}: {reason}"))
    if len(verdict.not_judged) > 20:
        lines.append(f"  ... and {len(verdict.not_judged) - 20} more not judged (nodes.json)")
    return lines
