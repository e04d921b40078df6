"""A user's whole model on every target: does it load, does it run on the
user's inputs, and what does each target compute at each Gather node in situ.

For ``conformance model`` (docs/models.md, "The whole model"). Each model
runs once per target, in that target's isolated worker
(:class:`~conformance.engine.pool.WorkerPool`), with every Gather and
GatherElements node's inputs and output exposed as graph outputs
(:mod:`conformance.graphs.exposing`):

- without ``--inputs`` it is fed zeros of its inputs' declared types only to
  see whether it *loads* (a failure while running on zeros says nothing and
  is not reported);
- with ``--inputs`` each node's output on that target is judged against the
  oracle applied to **that target's own** inputs of the node, bit for bit
  (``in_situ``: ``exact``, ``differs`` with the explanation that fits, ``not
  exposed``, ``not reached``), and the model's own outputs are compared
  between targets (max absolute difference, max ULP distance);
- a target whose outputs differ from the others' is run again in its
  full-precision and no-optimisation profiles
  (:data:`conformance.adapters.registry.PRECISE`), and whether the difference
  disappears is recorded as measured, naming the run that shows it.

Nothing here is inferred: every claim is a run's outputs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import onnx

from conformance import oracle
from conformance.adapters.registry import PRECISE, PROFILES, declared
from conformance.engine.pool import Job, Raw, WorkerPool
from conformance.engine.targets import Target
from conformance.errors import ConformanceError
from conformance.graphs import exposing
from conformance.graphs.capture import Captured, graph_inputs, with_its_data
from conformance.graphs.reading import IN_MEMORY_LIMIT, GraphFile, name_unnamed_dims, tensor_type
from conformance.messages import first_line
from conformance.oracle import compare
from conformance.tables import dtypes
from conformance.tables.operators import OPERATORS

# Seconds a whole model may take to load and run on one target: a real model
# compiles for seconds where a one-node model takes milliseconds.
WHOLE_TIMEOUT = 120.0
STATUS = {
    "ok": "ran",
    "load_error": "cannot load",
    "run_error": "cannot run",
    "unsupported": "not run",
    "harness_error": "not run",
    "crash": "crashed",
    "timeout": "timed out",
}


# Each target's name as its results carry it (a module:Class target's is its
# adapter's own), learnt from the pool that ran it.
_NAMES: dict[Target, str] = {}


def name_of(target: Target) -> str:
    return _NAMES.get(target) or target.name or target.adapter


def _zeros(found: GraphFile, dims: dict[str, int], default: int) -> dict[str, np.ndarray]:
    feeds = {}
    for value in graph_inputs(found):
        declared = tensor_type(value)
        known = dtypes.BY_PROTO.get(declared.elem_type)
        numpy = object if known is None or known.kind == "string" else known.numpy
        shape = [
            d if isinstance(d, int) else dims.get(d, default) if isinstance(d, str) else default
            for d in (declared.shape or ())
        ]
        feeds[value.name] = np.zeros(shape, numpy) if numpy is not object else np.full(shape, "")
    return feeds


@dataclass
class Ran:
    """What one target did with one model: ``raw``, the run that speaks for the
    model (with its nodes exposed, or the model as it is when the target refused
    them); ``views``, the runs whose exposed nodes can be read (the nodes
    exposed in each); ``refused``, the nodes this target cannot expose, and why."""

    raw: Raw | None
    views: list[tuple[exposing.Exposed, Raw]] = field(default_factory=list)
    refused: dict[tuple, str] = field(default_factory=dict)


@dataclass
class Prepared:
    found: GraphFile
    exposed: exposing.Exposed  # every node that can be exposed, exposed
    blob: bytes  # that model
    feeds: dict[str, np.ndarray]
    original: bytes  # the model as it is (dims named): what a subset of nodes is exposed in


def run(
    files: Sequence[GraphFile],
    runtimes: Sequence[Target],
    fed: dict[str, np.ndarray] | None,
    dims: dict[str, int],
    default_dim: int,
    timeout: float | None,
    worker_memory: int,
    captured: Captured | None = None,
) -> tuple[dict, dict]:
    """(per model: its whole-model record; per node key: its in-situ verdict per target).
    ``captured``: the nodes' inputs on ``fed`` (onnx.reference), which say whether
    the inputs break the spec at a node (issue 49)."""
    prepared: list[Prepared] = []
    wholes: dict[str, dict] = {}
    for found in files:
        record: dict = {"fed": fed is not None, "targets": {}, "outputs": [], "differences": []}
        wholes[str(found.path)] = record
        made = _prepare(found, fed, dims, default_dim, record)
        if made is None:  # never silence: every target's line says it did not run
            for target in runtimes:
                record["targets"][name_of(target)] = {
                    "status": "not run",
                    "message": record["skipped"],
                }
            continue
        prepared.append(made)
    in_situ: dict[tuple, dict] = {}
    if not prepared:
        return wholes, in_situ
    results = _run_jobs(prepared, runtimes, timeout, worker_memory)
    ran = _exposed_where_refused(
        prepared, results, runtimes, fed is not None, timeout, worker_memory
    )
    for made in prepared:
        breaks = spec_breaks(made.found, captured)
        _judge_model(made, wholes[str(made.found.path)], ran, runtimes, fed, in_situ, breaks)
    _precision_reruns(prepared, wholes, runtimes, ran, timeout, worker_memory)
    return wholes, in_situ


def _prepare(found: GraphFile, fed, dims, default_dim, record: dict) -> Prepared | None:
    """The model with every node exposed, ready to run; None (``record`` says why) when
    it cannot be."""
    try:
        base = with_its_data(found)  # its external data too, through the one check
        name_unnamed_dims(base)  # as read: a dim with no size and no name is symbolic
        _plain_dim_names(base)
        if base.ByteSize() >= IN_MEMORY_LIMIT:
            record["skipped"] = "over 2 GB with its data: one protobuf message cannot hold it"
            return None
        original = base.SerializeToString()
        exposed = exposing.expose(found, base)  # in place: one copy of a large model
        blob = base.SerializeToString()
    except ConformanceError:
        raise  # a broken tensor: exit 2, as when the model was read
    except Exception as error:  # a model the tool read but cannot rewrite: said, not fatal
        record["skipped"] = f"cannot prepare the model: {first_line(error)}"
        return None
    record["outputs"] = exposed.originals
    feeds = (
        {v.name: fed[v.name] for v in graph_inputs(found)}
        if fed is not None
        else _zeros(found, dims, default_dim)
    )
    return Prepared(found, exposed, blob, feeds, original)


def _judge_model(
    made: Prepared, record: dict, ran: dict, runtimes, fed, in_situ: dict, breaks: dict
) -> None:
    """The model's record per target, its nodes in situ, its outputs compared."""
    model = str(made.found.path)
    got: dict[str, Ran] = ran.get(model, {})
    for target in runtimes:
        name = name_of(target)
        said = _said(got[name].raw if name in got else None, fed is not None)
        if breaks and said["status"] == "cannot run":  # as the spec requires: conforming
            said["status"] = REFUSED_INPUTS
        record["targets"][name] = said
    if fed is None:
        return
    for site in made.found.sites:
        if site.opset is None:
            continue
        key = (site.model, site.graph, site.node)
        for target in runtimes:
            name = name_of(target)
            in_situ.setdefault(key, {})[name] = _judge_node(
                site, key, made.exposed, got.get(name), key in breaks
            )
    if breaks:
        record["inputs_break_spec"] = [
            {**said, "targets": _what_each_did(key, record, in_situ)}
            for key, said in breaks.items()
        ]
    raws = {name: each.raw for name, each in got.items()}
    reference = _reference(record, raws, runtimes)
    if reference is None:
        return
    record["compared_with"] = reference
    # every target that ran, with its nodes exposed or as it is (issue 44)
    record["compared"] = [name_of(t) for t in runtimes if _outputs_of(raws.get(name_of(t)))]
    base = _outputs_of(raws[reference]) or []
    for target in runtimes:
        name = name_of(target)
        outputs = _outputs_of(raws.get(name))
        if name == reference or outputs is None:
            continue
        diffs = _differences(made.exposed.originals, base, outputs)
        if any(d["differs"] for d in diffs):
            record["differences"].append({"target": name, "outputs": diffs})


def _outputs_of(raw) -> list | None:
    """A run's outputs, when it ran (the model's own come first, exposed or not)."""
    if raw is None or raw.status != "ok" or raw.outputs is None:
        return None
    return raw.outputs


def _plain_dim_names(proto: onnx.ModelProto) -> None:
    """Symbolic dims named as identifiers (``input[1]`` -> ``input_1_``): tract reads a
    dim's name as an expression and cannot place a bracket."""
    for value in (*proto.graph.input, *proto.graph.output):
        if value.type.WhichOneof("value") != "tensor_type":
            continue
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param:
                dim.dim_param = re.sub(r"\W", "_", dim.dim_param)


def _run_jobs(prepared, runtimes, timeout, worker_memory) -> dict[str, dict]:
    """model -> target name -> Raw."""
    jobs = [(str(made.found.path), made.blob, made.feeds) for made in prepared]
    return _pool_run(jobs, runtimes, timeout, worker_memory)


def _pool_run(jobs, runtimes, timeout, worker_memory) -> dict:
    """Each (tag, model, feeds) on each target, in one pool: tag -> target name -> Raw."""
    results: dict = {}
    limit = max(timeout or 0.0, WHOLE_TIMEOUT)
    with WorkerPool(
        list(runtimes), workers=1, batch_size=1, timeout=limit, worker_memory=worker_memory
    ) as pool:
        _NAMES.update(zip(runtimes, pool.runtimes, strict=False))
        for batch in pool.run([Job(None, blob, feeds, tag=tag) for tag, blob, feeds in jobs]):
            for job, runtime, raw in batch:
                results.setdefault(job.tag, {})[runtime] = raw
    return results


# What a target may do with the model whose nodes are exposed that the model as
# it is may not make it do: refuse a value it cannot give out (tract's symbolic
# dims, a dtype its binding cannot carry), or an output too many.
REFUSALS = ("load_error", "run_error", "unsupported", "harness_error")
# Runs a target gets to find which nodes it cannot expose (halving the refused
# set each round): a model of N nodes, k of them refused, takes about 2k log2 N.
MAX_EXPOSING_RUNS = 64


def _exposed_where_refused(prepared, results, runtimes, fed, timeout, memory) -> dict:
    """model -> target name -> :class:`Ran`. A target that refuses the model with its
    nodes exposed runs the model as it is: its verdict on the model is that run's;
    with ``--inputs``, its nodes are then exposed in halves, so that the nodes it
    cannot expose (saying why) do not stop the others (issue 49)."""
    ran: dict[str, dict[str, Ran]] = {}
    for made in prepared:
        model = str(made.found.path)
        got = results.get(model, {})
        mine = ran[model] = {}
        refused = []
        for target in runtimes:
            raw = got.get(name_of(target))
            if raw is not None and raw.status in REFUSALS:
                refused.append(target)
            else:
                mine[name_of(target)] = Ran(raw, [(made.exposed, raw)] if raw else [])
        if not refused:
            continue
        plain = _pool_run([(model, made.original, made.feeds)], refused, timeout, memory)
        for target in refused:
            name = name_of(target)
            raw = plain.get(model, {}).get(name)
            if raw is None or raw.status != "ok":
                mine[name] = Ran(raw)  # the model as it is fails too: that is the verdict
                continue
            why = f"{name} runs the model, not with its Gather values exposed: "
            first = gist(got[name].message or got[name].signal or "")
            mine[name] = Ran(replace(raw, note=why + first))
            if fed:
                _expose_in_halves(made, target, mine[name], first, timeout, memory)
    return ran


def _expose_in_halves(made: Prepared, target, ran: Ran, first: str, timeout, memory) -> None:
    """The nodes ``target`` refused exposed all at once, exposed in halves of the
    refused set, round by round (one pool a round), down to the single nodes it
    cannot expose; each run that succeeds is a view of its nodes."""
    keys = list(made.exposed.nodes)
    if len(keys) < 2:
        ran.refused.update(dict.fromkeys(keys, first))
        return
    pending = _halves(keys)
    runs = 0
    while pending:
        if runs + len(pending) > MAX_EXPOSING_RUNS:
            for subset in pending:
                ran.refused.update(dict.fromkeys(subset, f"not tried alone: {first}"))
            return
        runs += len(pending)
        jobs = []
        for n, subset in enumerate(pending):
            proto = onnx.ModelProto.FromString(made.original)
            view = exposing.expose(made.found, proto, set(subset))
            jobs.append((n, subset, view, proto.SerializeToString()))
        got = _pool_run(
            [(n, blob, made.feeds) for n, _, _, blob in jobs], [target], timeout, memory
        )
        pending = []
        for n, subset, view, _ in jobs:
            raw = got.get(n, {}).get(name_of(target))
            if raw is not None and raw.status == "ok":
                ran.views.append((view, raw))
            elif len(subset) == 1:
                said = gist(raw.message or raw.signal or "") if raw is not None else ""
                ran.refused[subset[0]] = said or "its worker gave no result"
            else:
                pending += _halves(subset)


def _halves(keys: list) -> list[list]:
    middle = len(keys) // 2
    return [keys[:middle], keys[middle:]]


def gist(message: str) -> str:
    """The informative part of a runtime's error, on one line: its boilerplate
    lines (where in the runtime's source it was raised) left out."""
    lines = [line.strip(" -") for line in (message or "").splitlines() if line.strip(" -")]
    useful = [line for line in lines if not line.startswith(BOILERPLATE)][:3]
    # a line ending in a colon introduces the next ("Conv-16 with a message: While ...")
    said = "".join(
        line + ("" if i == len(useful) - 1 else " " if line.endswith(":") else "; ")
        for i, line in enumerate(useful)
    )
    return said[:300] or first_line(message)


BOILERPLATE = (
    "Exception from",
    "Check 'false' failed",
    "FrontEnd API failed with",
    "Model wasn't fully converted",
    "Failed operations detailed log",
    "Summary:",
    "[ONNXRuntimeError]",
)


def _said(raw, fed: bool) -> dict:
    if raw is None:
        return {"status": "not run", "message": "its worker gave no result"}
    status = STATUS.get(raw.status, raw.status)
    if raw.status == "run_error" and not fed:
        # fed zeros only to see it load: a failure to run them says nothing
        return {"status": "loads", "message": "run on zeros only to load it (no --inputs)"}
    if raw.status == "ok":
        return {"status": "ran" if fed else "loads", "message": raw.note}
    return {"status": status, "message": gist(raw.message or raw.signal or "")}


def _judge_node(site, key, exposed: exposing.Exposed, ran: Ran | None, broken=False) -> dict:
    """The node on one target, in situ; ``broken``: the inputs the model was fed make
    this node's inputs break the spec (onnx.reference's run says so), so what the
    target does with them is said as what it did, never as a wrong value."""
    if key in exposed.not_exposed:
        return {"verdict": "not exposed", "why": exposed.not_exposed[key]}
    roles = exposed.nodes.get(key)
    if roles is None or len(roles) < 3:
        return {"verdict": "not exposed", "why": "not found in the model as rewritten"}
    if ran is None or _outputs_of(ran.raw) is None:
        why = "the whole model did not run on this target"
        return {"verdict": "not run", "why": why}
    if key in ran.refused:
        return {"verdict": "not exposed", "why": ran.refused[key]}
    view = next((v for v in ran.views if v[0].nodes.get(key) and v[1].outputs), None)
    if view is None:
        return {"verdict": "not exposed", "why": (ran.raw and ran.raw.note) or "no run exposed it"}
    exposed, raw = view
    roles = exposed.nodes[key]
    outputs = raw.outputs or []
    if not exposed.reached(key, outputs):
        return {"verdict": "not reached", "why": "its If branch did not run on these inputs"}
    data, indices, actual = (outputs[roles[r]] for r in exposing.ROLES)
    said = {"data": _type(data), "indices": _type(indices)}
    try:
        judged = oracle.verdict(site.op, site.opset, data, indices, site.axis)
    except Exception as error:  # inputs the oracle does not take (a dtype not ours)
        return {"verdict": "not run", "why": f"the oracle cannot take them: {first_line(error)}"}
    if isinstance(judged, oracle.Violated) and broken:
        return {**said, "verdict": BROKEN, "did": _accepted(site, data, indices, actual)}
    if isinstance(judged, oracle.Violated):
        return {
            **said,
            "verdict": "differs",
            "mechanism": f"its own inputs break the spec ({first_line(judged.violation)}), "
            "and it returned an output",
        }
    expected = judged.output
    if compare.difference(expected, actual) is None:
        return {**said, "verdict": "exact"}
    mechanism = _mechanism(expected, actual)
    return {**said, "verdict": "differs", "mechanism": mechanism}


# -- inputs that break the spec (issue 49) ------------------------------------------------
BROKEN = "inputs break the spec"  # an in-situ verdict: the fed inputs', not the target's
REFUSED_INPUTS = "refused the inputs"  # a whole-model status: as the spec requires


def spec_breaks(found: GraphFile, captured: Captured | None) -> dict[tuple, dict]:
    """Each node whose inputs, on the inputs the model was fed (as onnx.reference
    computed them), the spec forbids: the clause, and where (its first such input)."""
    breaks: dict[tuple, dict] = {}
    if captured is None:
        return breaks
    for site in found.sites:
        key = (site.model, site.graph, site.node)
        if site.opset is None:  # not of the ONNX domain: not ours to hold to the spec
            continue
        for data, indices in captured.tensors.get(key, ()):
            try:
                judged = oracle.verdict(site.op, site.opset, data, indices, site.axis)
            except Exception:  # a dtype the oracle does not take: judged elsewhere
                break
            if isinstance(judged, oracle.Violated):
                breaks[key] = _break_of(site, data, indices, judged.violation)
                break
    return breaks


def _break_of(site, data: np.ndarray, indices: np.ndarray, violation) -> dict:
    """The break as the input's property: the clause, the graph input the indices are
    (when they are one, element for element), the first forbidden element and its value."""
    said: dict = {
        "graph": site.graph,
        "node": site.node,
        "op": site.op,
        "clause": violation.clause,
        "detail": violation.detail,
    }
    source = site.sources.get("indices")
    if source is not None and source.kind == "input":
        said["input"] = source.name
    if violation.clause == "index-out-of-range" and data.ndim:
        size = data.shape[OPERATORS[site.op].axis(site.axis) % data.ndim]
        wide = indices.astype(np.int64)
        bad = np.argwhere((wide < -size) | (wide >= size))
        if len(bad):
            at = tuple(int(i) for i in bad[0])
            said.update(element=list(at), value=int(wide[at]), size=int(size))
    return said


def _accepted(site, data: np.ndarray, indices: np.ndarray, actual: np.ndarray) -> str:
    """What a target that took forbidden inputs made of them, by the explanation that
    fits (an out-of-range index that reads zeros), else that it returned values."""
    try:
        defined = oracle.in_range(site.op, site.opset, data, indices, site.axis)
    except Exception:
        defined = None
    if defined is not None and defined.output.shape == actual.shape:
        found = compare.explained_invalid(defined, actual)
        if "out-of-range-reads-zero" in found:
            return "accepted them and read zeros"
        if found:
            return f"accepted them and returned what {', '.join(found)} makes"
    return "accepted them and returned values the spec does not define"


def _what_each_did(key: tuple, record: dict, in_situ: dict) -> dict[str, str]:
    """Per target, what it did with the forbidden inputs at this node."""
    did = {}
    for name, said in record["targets"].items():
        status = said["status"]
        node = in_situ.get(key, {}).get(name, {})
        if status == REFUSED_INPUTS:
            did[name] = "refused them, as the spec requires (conforming)"
        elif status in ("crashed", "timed out"):
            did[name] = f"aborted ({status})"
        elif status != "ran":
            did[name] = f"{status}: {said['message']}"
        elif node.get("verdict") == BROKEN:
            did[name] = node["did"]
        else:
            did[name] = f"ran the model (the node {node.get('verdict', 'not judged')} there)"
    return did


def _type(array: np.ndarray) -> dict:
    return {"dtype": dtypes.name_of(array), "shape": list(array.shape)}


def _mechanism(expected: np.ndarray, actual: np.ndarray) -> str:
    if expected.dtype != actual.dtype:
        return f"dtype {dtypes.name_of(actual)}, the oracle's {dtypes.name_of(expected)}"
    if expected.shape != actual.shape:
        return f"shape {list(actual.shape)}, the oracle's {list(expected.shape)}"
    found = compare.explained_by(expected, actual)
    return found[0] if found else "no known explanation fits"


def _reference(record: dict, got: dict, runtimes) -> str | None:
    ran = [
        name_of(t)
        for t in runtimes
        if got.get(name_of(t)) and got[name_of(t)].status == "ok" and got[name_of(t)].outputs
    ]
    if not ran:
        return None
    # the runtime whose outputs the others are compared with, when it ran
    base = [name for name in ran if (runtime := declared(name)) and runtime.compared_against]
    return base[0] if base else ran[0]


def _differences(names: list[str], base: list, other: list) -> list[dict]:
    found = []
    for i, name in enumerate(names):
        a = np.asarray(base[i]) if i < len(base) else None
        b = np.asarray(other[i]) if i < len(other) else None
        found.append({"output": name, **difference(a, b)})
    return found


def difference(a: np.ndarray | None, b: np.ndarray | None) -> dict:
    """How far ``b`` is from ``a``: bit-exact or not, max absolute difference, max ULP distance."""
    if a is None or b is None:
        return {"differs": True, "max_abs": None, "max_ulp": None, "note": "missing output"}
    if a.dtype != b.dtype or a.shape != b.shape:
        note = f"{dtypes.name_of(b)}{list(b.shape)} vs {dtypes.name_of(a)}{list(a.shape)}"
        return {"differs": True, "max_abs": None, "max_ulp": None, "note": note}
    same = compare.difference(a, b) is None
    if a.dtype.kind not in "fiu" or a.size == 0:
        return {"differs": not same, "max_abs": None, "max_ulp": None, "note": ""}
    with np.errstate(all="ignore"):
        gap = np.abs(a.astype(np.float64) - b.astype(np.float64))
        finite = np.isfinite(gap)
        max_abs = float(gap[finite].max()) if finite.any() else None
    ulp = _ulps(a, b) if a.dtype.kind == "f" else None
    return {"differs": not same, "max_abs": max_abs, "max_ulp": ulp, "note": ""}


def _ulps(a: np.ndarray, b: np.ndarray) -> int | None:
    """The largest distance in units in the last place between finite elements."""
    width = a.dtype.itemsize
    if width not in (2, 4, 8):
        return None
    signed = {2: np.int16, 4: np.int32, 8: np.int64}[width]

    def ordered(x: np.ndarray) -> np.ndarray:
        bits = x.view(signed).astype(object if width == 8 else np.int64)
        low = -(1 << (8 * width - 1))
        return np.where(bits < 0, low - bits, bits)

    finite = np.isfinite(a) & np.isfinite(b)
    if not finite.any():
        return None
    gap = np.abs(ordered(a[finite]) - ordered(b[finite]))
    return int(gap.max())


def _precision_reruns(prepared, wholes, runtimes, ran, timeout, worker_memory) -> None:
    """Each target whose outputs differ, in its full-precision and no-optimisation
    profiles, on the model it ran (its nodes exposed, or as it is): does the
    difference disappear? Recorded as measured."""
    for made in prepared:
        model = str(made.found.path)
        record = wholes[model]
        reference = record.get("compared_with")
        if reference is None:
            continue
        base = _outputs_of(ran[model][reference].raw) or []
        for difference_of in record["differences"]:
            target = next(t for t in runtimes if name_of(t) == difference_of["target"])
            views = ran[model][difference_of["target"]].views
            blob = made.blob if views and views[0][0] is made.exposed else made.original
            reruns = []
            for profile in PRECISE.get(target.adapter, ()):
                if target.profile == profile:
                    continue
                again = replace(
                    target,
                    name=f"{target.adapter}:{profile}",
                    profile=profile,
                    properties={**target.properties, **PROFILES[target.adapter][profile]},
                )
                got = _pool_run([(model, blob, made.feeds)], [again], timeout, worker_memory)
                raw = got.get(model, {}).get(name_of(again))
                if raw is None or raw.status != "ok":
                    said = _said(raw, True)
                    reruns.append({"target": name_of(again), "status": said["status"],
                                   "message": said["message"]})  # fmt: skip
                    continue
                diffs = _differences(made.exposed.originals, base, raw.outputs or [])
                reruns.append({"target": name_of(again), "status": "ran", "outputs": diffs})
            difference_of["reruns"] = reruns
