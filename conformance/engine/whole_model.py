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
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import ml_dtypes
import numpy as np
import onnx

from conformance import oracle
from conformance.adapters.registry import PRECISE, PROFILES, declared
from conformance.engine.pool import EngineError, Job, Raw, WorkerPool
from conformance.engine.targets import Target
from conformance.errors import ConformanceError
from conformance.graphs import as_fed, exposing
from conformance.graphs.capture import Captured, feeds_of, graph_inputs, with_its_data
from conformance.graphs.reading import IN_MEMORY_LIMIT, GraphFile, name_unnamed_dims, tensor_type
from conformance.messages import cause, first_line
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
class Beside:
    """Jobs of another target that run in the whole model's first pool, side by
    side with its runs: ``conformance model --inputs``' capture
    (:mod:`conformance.engine.capturing`), which the runs do not need until
    their nodes are judged, so it costs no pool start of its own and no wait
    before them (docs/development.md, Benchmarks). ``settle`` makes the
    :class:`Captured` of their results (Raw by ``id(job)``); ``seconds``: from
    the pool's start to their last result."""

    target: Target
    jobs: list[Job]
    settle: Callable[[dict[int, Raw]], Captured]
    seconds: float = 0.0


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
    beside: Beside | None = None,
) -> tuple[dict, dict]:
    """(per model: its whole-model record; per node key: its in-situ verdict per target).
    ``captured``: the nodes' inputs on ``fed`` (onnx.reference), which say whether
    the inputs break the spec at a node (issue 49); or ``beside``, the jobs that
    capture them, run in the first pool (its Captured replaces ``captured``)."""
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
        if beside is not None:  # the capture still runs, in a pool of its own
            alone = (
                _first_pool([], [], None, timeout, worker_memory, beside) if beside.jobs else None
            )
            beside.settle(alone.beside if alone is not None else {})
        return wholes, in_situ
    first = _first_pool(prepared, runtimes, fed, timeout, worker_memory, beside)
    results = first.results
    if beside is not None:
        captured = beside.settle(first.beside)
    ran = _exposed_where_refused(
        prepared, results, runtimes, fed is not None, timeout, worker_memory
    )
    for made in prepared:
        breaks = spec_breaks(made.found, captured)
        _judge_model(made, wholes[str(made.found.path)], ran, runtimes, fed, in_situ, breaks)
    _precision_reruns(prepared, wholes, runtimes, ran, timeout, worker_memory, first.reruns)
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
        exposed = _exposed_if_fed(found, base, fed is not None)  # in place: one copy
        # without --inputs nothing is exposed: the model as it is is the one run
        blob = base.SerializeToString() if fed is not None else original
    except ConformanceError:
        raise  # a broken tensor: exit 2, as when the model was read
    except Exception as error:  # a model the tool read but cannot rewrite: said, not fatal
        record["skipped"] = f"cannot prepare the model: {first_line(error)}"
        return None
    record["outputs"] = exposed.originals
    feeds = (
        feeds_of(found, fed)  # overridable inputs too, where --inputs gives them
        if fed is not None
        else _zeros(found, dims, default_dim)
    )
    return Prepared(found, exposed, blob, feeds, original)


def _exposed_if_fed(found: GraphFile, proto: onnx.ModelProto, fed: bool) -> exposing.Exposed:
    """The model with its nodes exposed when --inputs feeds it. Without, it runs
    on zeros only to see it load, which says nothing of its nodes' values: the
    model as it is, since three graph outputs a node make a model of thousands
    of Gathers load many times slower (docs/development.md, Benchmarks)."""
    if fed:
        return exposing.expose(found, proto)
    return exposing.Exposed(proto, [o.name for o in proto.graph.output])


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
        if site.opset is None:  # another domain's: listed
            continue
        key = (site.model, site.graph, site.node)
        moved = _fed_values(site, fed)  # the input as fed, once for every target
        for target in runtimes:
            name = name_of(target)
            each = got.get(name)
            judged = _judge_node(site, key, made.exposed, each, key in breaks)
            views = each.views if each is not None else []
            in_situ.setdefault(key, {})[name] = _as_fed(judged, site, views, moved)
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


def _pool_run(jobs, runtimes, timeout, worker_memory, only: dict | None = None) -> dict:
    """Each (tag, model, feeds) on each target, in one pool: tag -> target name -> Raw;
    ``only``: tag -> the targets its job runs on (None: all)."""
    results: dict = {}
    limit = max(timeout or 0.0, WHOLE_TIMEOUT)
    with WorkerPool(
        list(runtimes), workers=1, batch_size=1, timeout=limit, worker_memory=worker_memory
    ) as pool:
        _NAMES.update(zip(runtimes, pool.runtimes, strict=False))
        names = dict(zip(runtimes, pool.runtimes, strict=False))
        made = [
            Job(None, blob, feeds, tag=tag, runtimes=_only(only, tag, names))
            for tag, blob, feeds in jobs
        ]
        for batch in pool.run(made):
            for job, runtime, raw in batch:
                results.setdefault(job.tag, {})[runtime] = raw
    return results


@dataclass
class _First:
    """What the first pool ran: ``results``, model -> target name -> Raw;
    ``reruns``, (model, target name) -> precise target name -> Raw, the
    precision reruns it ran (:func:`_early_reruns`); ``beside``, the Beside
    jobs' Raw by ``id(job)``."""

    results: dict = field(default_factory=dict)
    reruns: dict = field(default_factory=dict)
    beside: dict = field(default_factory=dict)


def _first_pool(prepared, runtimes, fed, timeout, memory, beside: Beside | None) -> _First:
    """The first pool: every model on every target; the :class:`Beside` jobs (the
    capture) on their target; and, with ``--inputs``, each target's precise
    profiles, idle until every target has run a model: the targets whose
    outputs then differ (as :func:`_judge_model` will find) run it again there
    at once (:func:`_early_reruns`), where a pool of their own would start
    after (docs/development.md, Benchmarks). What cannot be decided then (a
    target refused the model with its nodes exposed) is left to
    :func:`_precision_reruns`' pool, as is a profile whose worker did not start."""
    first = _First()
    limit = max(timeout or 0.0, WHOLE_TIMEOUT)
    taken = {t.name or t.adapter for t in runtimes}
    precise: list[Target] = []
    for target in runtimes if fed else ():
        for again in _precise_targets(target):
            if again.name not in taken:  # a target named twice cannot share a pool
                taken.add(again.name)
                precise.append(again)
    extra = [beside.target] if beside is not None and beside.jobs else []
    start = time.perf_counter()
    with WorkerPool(
        [*runtimes, *precise, *extra],
        workers=1,
        batch_size=1,
        timeout=limit,
        worker_memory=memory,
    ) as pool:
        lanes = list(pool.lanes.values())
        main, spare = lanes[: len(runtimes)], lanes[len(runtimes) : len(runtimes) + len(precise)]
        _as_alone([main, lanes[len(runtimes) + len(precise) :]])
        _NAMES.update((t, lane.name) for t, lane in zip(runtimes, main, strict=True))
        _NAMES.update((t, lane.name) for t, lane in zip(precise, spare, strict=True))
        names = [lane.name for lane in main]
        started = {again for again, lane in zip(precise, spare, strict=True) if not lane.lost}
        jobs: list[Job] = []
        if beside is not None and extra:
            for job in beside.jobs:  # first: the capture starts with the runs
                job.runtimes = [lanes[-1].name]
            jobs += beside.jobs
        by_model = {str(made.found.path): made for made in prepared}
        jobs += [Job(None, made.blob, made.feeds, tag=model, runtimes=names)
                 for model, made in by_model.items()]  # fmt: skip
        waiting = {id(job) for job in beside.jobs} if beside is not None else set()
        more: deque = deque()
        for batch in pool.run(jobs, more=more):
            for job, runtime, raw in batch:
                if id(job) in waiting:
                    first.beside[id(job)] = raw
                    waiting.discard(id(job))
                    if not waiting and beside is not None:
                        beside.seconds = time.perf_counter() - start
                elif isinstance(job.tag, tuple):  # a precision rerun
                    first.reruns.setdefault(job.tag, {})[runtime] = raw
                else:
                    got = first.results.setdefault(job.tag, {})
                    got[runtime] = raw
                    if len(got) == len(names) and fed:
                        made = by_model[str(job.tag)]
                        for tag, agains in _early_reruns(made, got, runtimes, started):
                            more.append(Job(None, made.blob, made.feeds, tag=tag, runtimes=agains))
    return first


def _early_reruns(made: Prepared, got: dict, runtimes, started: set[Target]) -> list:
    """(tag, the names of its precise targets) of each target whose outputs differ,
    once every target has run the model (``got``: name -> Raw): as
    :func:`_judge_model` and :func:`_precision_reruns` will decide, so none is
    decided here where a target refused the model with its nodes exposed (the
    model as it is runs next) or a precise target is not in ``started`` (the
    pool's that started; one name, one target, as in :func:`_precision_reruns`'
    own pool)."""
    raws = {name_of(t): got.get(name_of(t)) for t in runtimes}
    if any(raw is None or raw.status in REFUSALS for raw in raws.values()):
        return []
    reference = _reference({}, raws, runtimes)
    if reference is None:
        return []
    base = _outputs_of(raws[reference]) or []
    found = []
    for target in runtimes:
        name = name_of(target)
        outputs = _outputs_of(raws[name])
        if name == reference or outputs is None:
            continue
        diffs = _differences(made.exposed.originals, base, outputs)
        agains = _precise_targets(target)
        if any(d["differs"] for d in diffs) and agains and set(agains) <= started:
            found.append(((str(made.found.path), name), [name_of(a) for a in agains]))
    return found


def _as_alone(parts) -> None:
    """A pool shared by parts that had pools of their own raises as each would
    have alone: when no target of a part starts (WorkerPool raises only when
    no target of the pool does), EngineError says why."""
    for part in parts:
        if part and all(lane.lost for lane in part):
            more = f" (and {len(part) - 1} other target(s))" if len(part) > 1 else ""
            raise EngineError(part[0].lost.removeprefix("not run: ") + more)


def _only(only: dict | None, tag, names: dict) -> list[str] | None:
    """The names of the targets a job runs on (None: every target of its pool)."""
    return None if only is None else [names[target] for target in only[tag]]


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
        exposed = made.blob is not made.original  # without --inputs: the model as it is
        for target in runtimes:
            raw = got.get(name_of(target))
            if exposed and raw is not None and raw.status in REFUSALS:
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
    """The informative part of a runtime's error, on one line: what failed
    and why, where in the runtime's source it was raised left out
    (:func:`conformance.messages.cause`, which holds the boilerplate lines,
    ``BOILERPLATE``, and the length limit)."""
    return cause(message)


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
        # a target may have run it and not given its outputs back (tract's tdim)
        why = "no output of the whole model came back from this target"
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


def _fed_values(site, fed: dict) -> dict[str, tuple[dict, np.ndarray | None]]:
    """Per input of the node (data, indices) that is a fed graph input, or moved
    from one by ops that keep its values: its record (the input, the ops) and
    the fed values moved there by ``onnx.reference`` (None where it refuses
    them). Once per node: every target's values are held to the same."""
    if site.scope is None or site.graph.startswith("function:"):
        return {}  # a function's inputs are not what was fed
    found = {}
    for role, name in (("data", site.data_name), ("indices", site.indices_name)):
        path = as_fed.path_to_input(site.scope, name, set(fed))
        if path is None:
            continue
        source, nodes = path
        record = {"input": source, "through": [n.op_type for n in nodes]}
        found[role] = (record, as_fed.replay(site.scope, nodes, source, np.asarray(fed[source])))
    return found


def _as_fed(judged: dict, site, views: list, moved: dict) -> dict:
    """The node's in-situ verdict with, for each input :func:`_fed_values` found,
    the values the target gave the node (read from the first of ``views``, the
    target's runs as (exposed model, Raw), that exposes it) against the values
    fed (``as_fed``). A change is a finding named by its mechanism (OpenVINO
    narrowing int64 inputs on entry): a node exact on the values it was given,
    when they are not the fed ones, is not exact."""
    if judged["verdict"] not in ("exact", "differs") or not moved:
        return judged
    key = (site.model, site.graph, site.node)
    view = next(
        ((e, r) for e, r in views if r is not None and r.outputs and e.nodes.get(key)), None
    )
    if view is None:
        return judged
    exposed, raw = view
    roles = exposed.nodes[key]
    found, changed = {}, []
    for role, (record, expected) in moved.items():
        said = _seen_as_fed(record, expected, np.asarray(raw.outputs[roles[role]]))
        found[role] = {k: v for k, v in said.items() if k != "said"}
        changed += [f"its {role} {said['said']}"] if "said" in said else []
    if not changed or judged["verdict"] != "exact":
        return {**judged, "as_fed": found}
    return {**judged, "verdict": "differs", "mechanism": "; ".join(changed), "as_fed": found}


def _seen_as_fed(record: dict, expected: np.ndarray | None, seen: np.ndarray) -> dict:
    """The values a target gave the node (``seen``) against the fed ones moved
    there (``expected``): as fed, or changed with the mechanism that fits and
    the first element that differs (``said``: in words, for the verdict)."""
    if expected is None:
        why = "onnx.reference refuses the fed value through these ops"
        return {**record, "verdict": "not compared", "why": why}
    if compare.difference(expected, seen) is None:
        return {**record, "verdict": "as fed"}
    widened = seen
    if expected.dtype != seen.dtype:
        mechanism = f"dtype {dtypes.name_of(seen)}, fed {dtypes.name_of(expected)}"
        if expected.shape == seen.shape and seen.dtype.kind in "iuf":
            widened = seen.astype(expected.dtype)  # a narrower dtype: which values changed too
    elif expected.shape != seen.shape:
        mechanism = f"shape {list(seen.shape)}, fed {list(expected.shape)}"
    if expected.dtype == widened.dtype and expected.shape == widened.shape:
        fits = compare.explained_by(expected, widened)
        found = fits[0] if fits else "no known explanation fits"
        mechanism = found if widened is seen else f"{mechanism}: {found}"
    first = compare.difference(expected, widened)
    through = f" through {', '.join(record['through'])}" if record["through"] else ""
    said = f"are not the values fed to input {record['input']}{through}: {mechanism}"
    changed = {**record, "verdict": "changed", "mechanism": mechanism}
    if first is not None and first.kind == "value":
        position = list(first.positions[0])
        changed.update(first=position, fed=first.expected, seen=first.actual)
        said += f" (fed {first.expected} at {position}, it saw {first.actual})"
    return {**changed, "said": said}


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
        if site.opset is None:  # another domain's: not ours to hold to the spec
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
    row = OPERATORS[site.op]
    sizes = row.index_sizes(data.shape, indices.shape, site.axis) if data.ndim else None
    if violation.clause == "index-out-of-range" and sizes:
        # each index against the dim it indexes (an index tuple's k-th component: its k-th)
        bound = np.resize(np.array(sizes, np.int64), indices.size).reshape(indices.shape)
        wide = indices.astype(np.int64)
        bad = np.flatnonzero((wide < -bound) | (wide >= bound))
        if len(bad):
            at = tuple(int(i) for i in np.unravel_index(int(bad[0]), indices.shape))
            size = sizes[int(bad[0]) % len(sizes)]
            said.update(element=list(at), value=int(wide[at]), size=int(size))
            if row.indexing == "tuple":
                said["component"] = int(bad[0]) % len(sizes)
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


# Below this fraction of an output's scale (its largest finite magnitude) a value
# is "tiny": near zero a unit in the last place is so small that a count of them
# says nothing to a deployer (a gap of 6e-08 around zero is 800 million ULP), so
# ULP are counted only where either side is at least this.
TINY = 2.0**-10


def _differences(names: list[str], base: list, other: list) -> list[dict]:
    found = []
    for i, name in enumerate(names):
        a = np.asarray(base[i]) if i < len(base) else None
        b = np.asarray(other[i]) if i < len(other) else None
        found.append({"output": name, **difference(a, b)})
    return found


def difference(a: np.ndarray | None, b: np.ndarray | None) -> dict:
    """How far ``b`` (a target's output) is from ``a`` (the one it is compared
    with): bit-exact or not; the largest absolute difference over finite
    elements, and it as a fraction of ``a``'s scale; the largest ULP distance
    (raw, and over elements that are not tiny); where NaN or an infinity
    stands on one side only, which the finite figures cannot show."""
    found: dict = {"differs": True, "max_abs": None, "max_ulp": None, "note": ""}
    found.update(scale=None, max_rel=None, ulp_not_tiny=None, nan_one_side=None,
                 inf_one_side=None)  # fmt: skip
    if a is None or b is None:
        return {**found, "note": "missing output"}
    if a.dtype != b.dtype or a.shape != b.shape:
        note = f"{dtypes.name_of(b)}{list(b.shape)} vs {dtypes.name_of(a)}{list(a.shape)}"
        return {**found, "note": note}
    found["differs"] = compare.difference(a, b) is not None
    kind = _kind(a)
    if kind not in "fiu" or a.size == 0:
        return found
    with np.errstate(all="ignore"):
        wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
        gap = np.abs(wide_a - wide_b)
        finite = np.isfinite(gap)
        found["max_abs"] = float(gap[finite].max()) if finite.any() else None
        magnitudes = np.abs(wide_a[np.isfinite(wide_a)])
        found["scale"] = float(magnitudes.max()) if magnitudes.size else None
    if found["max_abs"] is not None and found["scale"]:
        found["max_rel"] = found["max_abs"] / found["scale"]
    if kind != "f":
        return found
    found["max_ulp"] = _ulps(a, b)
    if found["scale"]:
        floor = found["scale"] * TINY
        found["ulp_not_tiny"] = _ulps(a, b, (np.abs(wide_a) >= floor) | (np.abs(wide_b) >= floor))
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    found["nan_one_side"] = _one_side(a, b, nan_a ^ nan_b, nan_a, nan_b)
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    with np.errstate(all="ignore"):
        unmatched = (inf_a | inf_b) & (a != b) & ~nan_a & ~nan_b
    found["inf_one_side"] = _one_side(a, b, unmatched, inf_a, inf_b)
    return found


def _kind(a: np.ndarray) -> str:
    """NumPy's kind letter, but 'f' for ml_dtypes' floats (bfloat16, the float8s),
    whose NumPy kind is 'V': without it such an output got no figure, and a real
    gap was said to be "in bits only"."""
    if a.dtype.kind == "V":
        try:
            ml_dtypes.finfo(a.dtype)
        except ValueError:
            return "V"
        return "f"
    return a.dtype.kind


def _one_side(a, b, only: np.ndarray, in_a: np.ndarray, in_b: np.ndarray) -> dict | None:
    """The elements ``only`` marks (a NaN, or an infinity, that the other side
    does not have): how many, how many of them have it on each side (``in_a``,
    ``in_b``), the first position and both values there; None where none."""
    count = int(np.count_nonzero(only))
    if not count:
        return None
    first = tuple(int(i) for i in np.argwhere(only)[0])
    return {
        "count": count,
        "target": int(np.count_nonzero(only & in_b)),
        "compared": int(np.count_nonzero(only & in_a)),
        "first": list(first),
        "target_value": repr(b[first].item()),
        "compared_value": repr(a[first].item()),
    }


def _ulps(a: np.ndarray, b: np.ndarray, where: np.ndarray | None = None) -> int | None:
    """The largest distance in units in the last place between finite elements
    (of those ``where`` selects)."""
    width = a.dtype.itemsize
    if width not in (2, 4, 8):
        return None
    signed = {2: np.int16, 4: np.int32, 8: np.int64}[width]

    def ordered(x: np.ndarray) -> np.ndarray:
        bits = x.view(signed).astype(object if width == 8 else np.int64)
        low = -(1 << (8 * width - 1))
        return np.where(bits < 0, low - bits, bits)

    finite = np.isfinite(a) & np.isfinite(b)
    if where is not None:
        finite &= where
    if not finite.any():
        return None
    gap = np.abs(ordered(a[finite]) - ordered(b[finite]))
    return int(gap.max())


def _precision_reruns(
    prepared, wholes, runtimes, ran, timeout, worker_memory, early: dict | None = None
) -> None:
    """Each target whose outputs differ, in its full-precision and no-optimisation
    profiles, on the model it ran (its nodes exposed, or as it is): does the
    difference disappear? Recorded as measured. ``early``: the reruns the first
    pool ran (:func:`_early_reruns`); every other such profile of every model's
    differing targets shares one pool (one start, side by side)."""
    early = early or {}
    wanted = []  # (model, its difference record, the base outputs, the profiles)
    jobs, only, agains_all = [], {}, []
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
            agains = _precise_targets(target)
            tag = (model, difference_of["target"])
            wanted.append((made, tag, difference_of, base, agains))
            if agains and not {name_of(again) for again in agains} <= set(early.get(tag, {})):
                jobs.append((tag, blob, made.feeds))
                only[tag] = agains
                agains_all += [again for again in agains if again not in agains_all]
    got = _pool_run(jobs, agains_all, timeout, worker_memory, only) if jobs else {}
    got = {**early, **got}
    for made, tag, difference_of, base, agains in wanted:
        reruns = []
        for again in agains:
            raw = got.get(tag, {}).get(name_of(again))
            if raw is None or raw.status != "ok":
                said = _said(raw, True)
                reruns.append({"target": name_of(again), "status": said["status"],
                               "message": said["message"]})  # fmt: skip
                continue
            diffs = _differences(made.exposed.originals, base, raw.outputs or [])
            reruns.append({"target": name_of(again), "status": "ran", "outputs": diffs})
        difference_of["reruns"] = reruns


def _precise_targets(target: Target) -> list[Target]:
    """The differing target in each of its precise profiles it is not already in."""
    return [
        replace(
            target,
            name=f"{target.adapter}:{profile}",
            profile=profile,
            properties={**target.properties, **PROFILES[target.adapter][profile]},
        )
        for profile in PRECISE.get(target.adapter, ())
        if target.profile != profile
    ]
