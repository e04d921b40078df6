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
from dataclasses import replace

import numpy as np
import onnx

from conformance import oracle
from conformance.adapters.registry import PRECISE, PROFILES, declared
from conformance.engine.pool import Job, WorkerPool
from conformance.engine.targets import Target
from conformance.errors import ConformanceError
from conformance.graphs import as_fed, exposing
from conformance.graphs.capture import graph_inputs, with_its_data
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


def run(
    files: Sequence[GraphFile],
    runtimes: Sequence[Target],
    fed: dict[str, np.ndarray] | None,
    dims: dict[str, int],
    default_dim: int,
    timeout: float | None,
    worker_memory: int,
) -> tuple[dict, dict]:
    """(per model: its whole-model record; per node key: its in-situ verdict per target)."""
    prepared = []
    originals: dict[str, bytes | None] = {}
    wholes: dict[str, dict] = {}
    for found in files:
        model = str(found.path)
        record: dict = {"fed": fed is not None, "targets": {}, "outputs": [], "differences": []}
        wholes[model] = record
        try:
            proto = with_its_data(found)  # its external data too, through the one check
            name_unnamed_dims(proto)  # as read: a dim with no size and no name is symbolic
            _plain_dim_names(proto)
            small = proto.ByteSize() < IN_MEMORY_LIMIT
            original = proto.SerializeToString() if small else None
            exposed = exposing.expose(found, proto)
            blob = proto.SerializeToString() if small else None
        except ConformanceError:
            raise  # a broken tensor: exit 2, as when the model was read
        except Exception as error:  # a model the tool read but cannot rewrite: said, not fatal
            record["skipped"] = f"cannot prepare the model: {first_line(error)}"
            continue
        if blob is None:
            record["skipped"] = "over 2 GB with its data: one protobuf message cannot hold it"
            continue
        record["outputs"] = exposed.originals
        feeds = (
            {v.name: fed[v.name] for v in graph_inputs(found)}
            if fed is not None
            else _zeros(found, dims, default_dim)
        )
        prepared.append((found, exposed, blob, feeds))
        originals[str(found.path)] = original
    in_situ: dict[tuple, dict] = {}
    if not prepared:
        return wholes, in_situ
    results = _run_jobs(prepared, runtimes, timeout, worker_memory)
    _unexposed_where_refused(prepared, originals, results, runtimes, timeout, worker_memory)
    for found, exposed, _, _ in prepared:
        model = str(found.path)
        record = wholes[model]
        got = results.get(model, {})
        for target in runtimes:
            name = name_of(target)
            raw = got.get(name)
            record["targets"][name] = _said(raw, fed is not None)
        if fed is None:
            continue
        for site in found.sites:
            if site.opset is None or OPERATORS[site.op].indexing == "tuple":  # GatherND: listed
                continue
            key = (site.model, site.graph, site.node)
            moved = _fed_values(site, fed)  # the input as fed, once for every target
            for target in runtimes:
                name = name_of(target)
                judged = _judge_node(site, key, exposed, got.get(name))
                judged = _as_fed(judged, site, [(exposed, got.get(name))], moved)
                in_situ.setdefault(key, {})[name] = judged
        reference = _reference(record, got, runtimes)
        if reference is None:
            continue
        record["compared_with"] = reference
        base = got[reference].outputs or []
        for target in runtimes:
            name = name_of(target)
            raw = got.get(name)
            if name == reference or raw is None or raw.status != "ok" or raw.outputs is None:
                continue
            diffs = _differences(exposed.originals, base, raw.outputs or [])
            if any(d["differs"] for d in diffs):
                record["differences"].append({"target": name, "outputs": diffs})
    _precision_reruns(prepared, wholes, runtimes, results, timeout, worker_memory)
    return wholes, in_situ


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
    jobs = [Job(None, blob, feeds, tag=str(found.path)) for found, _, blob, feeds in prepared]
    results: dict[str, dict] = {}
    limit = max(timeout or 0.0, WHOLE_TIMEOUT)
    with WorkerPool(
        list(runtimes), workers=1, batch_size=1, timeout=limit, worker_memory=worker_memory
    ) as pool:
        _NAMES.update(zip(runtimes, pool.runtimes, strict=False))
        for batch in pool.run(jobs):
            for job, runtime, raw in batch:
                results.setdefault(str(job.tag), {})[runtime] = raw
    return results


def _unexposed_where_refused(prepared, originals, results, runtimes, timeout, memory) -> None:
    """A target that refuses the model with its nodes exposed runs the model as
    it is: its verdict on the model is that run's; its nodes are then *not
    exposed*, saying why (``Raw.note``)."""
    for found, exposed, _, feeds in prepared:
        model = str(found.path)
        refused = [
            t
            for t in runtimes
            if (raw := results.get(model, {}).get(name_of(t))) is not None
            and raw.status in ("load_error", "run_error")
        ]
        if not refused or originals.get(model) is None:
            continue
        again = _run_jobs([(found, exposed, originals[model], feeds)], refused, timeout, memory)
        for target in refused:
            name = name_of(target)
            raw = again.get(model, {}).get(name)
            first = results[model][name]
            if raw is not None and raw.status == "ok":
                why = f"{name} runs the model, not with its Gather values exposed: "
                results[model][name] = replace(raw, outputs=None, note=why + gist(first.message))
            elif raw is not None:
                results[model][name] = raw


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


def _judge_node(site, key, exposed: exposing.Exposed, raw) -> dict:
    if key in exposed.not_exposed:
        return {"verdict": "not exposed", "why": exposed.not_exposed[key]}
    roles = exposed.nodes.get(key)
    if roles is None or len(roles) < 3:
        return {"verdict": "not exposed", "why": "not found in the model as rewritten"}
    if raw is not None and raw.status == "ok" and raw.outputs is None:
        return {"verdict": "not exposed", "why": raw.note}
    if raw is None or raw.status != "ok" or raw.outputs is None:
        why = "the whole model did not run on this target"
        return {"verdict": "not run", "why": why}
    outputs = raw.outputs
    if not exposed.reached(key, outputs):
        return {"verdict": "not reached", "why": "its If branch did not run on these inputs"}
    data, indices, actual = (outputs[roles[r]] for r in exposing.ROLES)
    said = {"data": _type(data), "indices": _type(indices)}
    try:
        judged = oracle.verdict(site.op, site.opset, data, indices, site.axis)
    except Exception as error:  # inputs the oracle does not take (a dtype not ours)
        return {"verdict": "not run", "why": f"the oracle cannot take them: {first_line(error)}"}
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
    if a.dtype.kind not in "fiu" or a.size == 0:
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
    if a.dtype.kind != "f":
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


def _precision_reruns(prepared, wholes, runtimes, results, timeout, worker_memory) -> None:
    """Each target whose outputs differ, in its full-precision and no-optimisation
    profiles: does the difference disappear? Recorded as measured."""
    for found, exposed, blob, feeds in prepared:
        model = str(found.path)
        record = wholes[model]
        reference = record.get("compared_with")
        if reference is None:
            continue
        base = results[model][reference].outputs or []
        for difference_of in record["differences"]:
            target = next(t for t in runtimes if name_of(t) == difference_of["target"])
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
                got = _run_jobs(
                    [(found, exposed, blob, feeds)], [again], timeout, worker_memory
                ).get(model, {})
                raw = got.get(name_of(again))
                if raw is None or raw.status != "ok":
                    said = _said(raw, True)
                    reruns.append({"target": name_of(again), "status": said["status"],
                                   "message": said["message"]})  # fmt: skip
                    continue
                diffs = _differences(exposed.originals, base, raw.outputs or [])
                reruns.append({"target": name_of(again), "status": "ran", "outputs": diffs})
            difference_of["reruns"] = reruns
