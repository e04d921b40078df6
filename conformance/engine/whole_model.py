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
from conformance.engine.pool import Job, Raw, WorkerPool
from conformance.engine.targets import Target
from conformance.errors import ConformanceError
from conformance.graphs import exposing
from conformance.graphs.capture import feeds_of, graph_inputs, with_its_data
from conformance.graphs.reading import IN_MEMORY_LIMIT, GraphFile, name_unnamed_dims, tensor_type
from conformance.messages import first_line
from conformance.oracle import compare
from conformance.tables import dtypes

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
            # without --inputs nothing is exposed: no earlier copy to fall back to
            original = proto.SerializeToString() if small and fed is not None else None
            exposed = _exposed_if_fed(found, proto, fed is not None)
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
            feeds_of(found, fed)  # overridable inputs too, where --inputs gives them
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
            if site.opset is None:
                continue
            key = (site.model, site.graph, site.node)
            for target in runtimes:
                name = name_of(target)
                in_situ.setdefault(key, {})[name] = _judge_node(site, key, exposed, got.get(name))
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


def _exposed_if_fed(found: GraphFile, proto: onnx.ModelProto, fed: bool) -> exposing.Exposed:
    """The model with its nodes exposed when --inputs feeds it. Without, it runs
    on zeros only to see it load, which says nothing of its nodes' values: the
    model as it is, since three graph outputs a node make a model of thousands
    of Gathers load many times slower (docs/development.md, Benchmarks)."""
    if fed:
        return exposing.expose(found, proto)
    return exposing.Exposed(proto, [o.name for o in proto.graph.output])


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


def _precision_reruns(prepared, wholes, runtimes, results, timeout, worker_memory) -> None:
    """Each target whose outputs differ, in its full-precision and no-optimisation
    profiles: does the difference disappear? Recorded as measured. A model's
    reruns share one pool (one start, and its workers side by side), not one each."""
    for found, exposed, blob, feeds in prepared:
        model = str(found.path)
        record = wholes[model]
        reference = record.get("compared_with")
        if reference is None:
            continue
        base = results[model][reference].outputs or []
        planned = {id(d): _precise_targets(d, runtimes) for d in record["differences"]}
        rounds: list[list[Target]] = []  # a name once a round: results are by name
        for again in (again for agains in planned.values() for again in agains):
            free = [r for r in rounds if all(name_of(t) != name_of(again) for t in r)]
            if free:
                free[0].append(again)
            else:
                rounds.append([again])
        got: dict[int, Raw | None] = {}
        for chosen in rounds:
            ran = _run_jobs([(found, exposed, blob, feeds)], chosen, timeout, worker_memory)
            got.update({id(t): ran.get(model, {}).get(name_of(t)) for t in chosen})
        for difference_of in record["differences"]:
            reruns = []
            for again in planned[id(difference_of)]:
                raw = got.get(id(again))
                if raw is None or raw.status != "ok":
                    said = _said(raw, True)
                    reruns.append({"target": name_of(again), "status": said["status"],
                                   "message": said["message"]})  # fmt: skip
                    continue
                diffs = _differences(exposed.originals, base, raw.outputs or [])
                reruns.append({"target": name_of(again), "status": "ran", "outputs": diffs})
            difference_of["reruns"] = reruns


def _precise_targets(difference_of: dict, runtimes) -> list[Target]:
    """The differing target in each of its precise profiles it is not already in."""
    target = next(t for t in runtimes if name_of(t) == difference_of["target"])
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
