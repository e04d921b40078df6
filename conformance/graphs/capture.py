"""``--inputs FILE.npz``: the model run once on the user's inputs, every Gather
(GatherElements, GatherND) node's inputs captured, and those exact tensors
made into cases.

The model runs on ``onnx.reference`` (the header's ``graphs.captured_with``
says so), with each of our operators (the operators table's rows) replaced
by the same operator that also keeps what it was given. That reaches nodes at any depth of
If/Loop/Scan bodies (a Loop body's node is captured at each iteration; the
first :data:`KEPT` distinct inputs are kept). A node the run never reaches
(an If branch not taken) or cannot see (the body of a model-local function,
which onnx.reference evaluates apart) says so and keeps its drawn cases.
"""

from __future__ import annotations

import hashlib
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from conformance.cases import npy
from conformance.cases.check import DEFAULT_CASE_MEMORY
from conformance.graphs import drawing, reading, tensors
from conformance.graphs.reading import DEFAULT_DOMAINS, OURS, GraphFile, GraphFileError, tensor_type
from conformance.messages import first_line
from conformance.tables import dtypes
from conformance.tables.operators import OPERATORS

KEPT = 3  # distinct inputs kept per node (a Loop body's node runs once per iteration)
MARK = "__conformance_capture_"
RUNTIME = "onnx.reference"


@dataclass
class Captured:
    runtime: str = RUNTIME
    # (model, graph, node) -> [(data, indices), ...]
    tensors: dict[tuple[str, str, str], list[tuple[np.ndarray, np.ndarray]]] = field(
        default_factory=dict
    )
    missed: dict[tuple[str, str, str], str] = field(default_factory=dict)  # node -> why
    failed: dict[str, str] = field(default_factory=dict)  # model -> why the run failed


def read_inputs(
    path: Path, files: list[GraphFile], case_memory: int = DEFAULT_CASE_MEMORY
) -> dict[str, np.ndarray]:
    """The arrays of an .npz, held to every model's graph inputs (name, dtype,
    rank, sizes). The archive's headers are read first (:mod:`conformance.cases.npy`):
    a member that is not an .npy array, holds Python objects (a pickle) or
    declares more than the memory guard allows, alone or with the others, is
    refused before anything is allocated; then the names are held to the graph
    inputs, and only then are the arrays read."""
    try:
        with npy.open_regular(path) as stream:
            if stream.read(len(npy.MAGIC)) == npy.MAGIC:
                raise GraphFileError(
                    path,
                    "a .npy file (one array), not an .npz: give one array per graph input, "
                    "by name (numpy.savez(FILE, NAME=ARRAY, ...))",
                )
            stream.seek(0)
            with zipfile.ZipFile(stream) as archive:
                members = _headers(path, archive, case_memory)
                for found in files:
                    _check_names(path, found, set(members))
                arrays = {
                    name: _member(path, archive, info, header)
                    for name, (info, header) in members.items()
                }
    except GraphFileError:
        raise
    except npy.NpyProblem as problem:
        raise GraphFileError(path, f"cannot read as an .npz file: {problem}") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise GraphFileError(path, f"cannot read as an .npz file: {error}") from None
    for found in files:
        _check(path, found, arrays)
    return arrays


# What reading a member's bytes may raise: a corrupt stream, a compression or
# encryption zipfile does not read, a local header that disagrees with the index.
_MEMBER_ERRORS = (
    OSError, EOFError, ValueError, RuntimeError, NotImplementedError, zipfile.BadZipFile, zlib.error
)  # fmt: skip


def _headers(
    path: Path, archive: zipfile.ZipFile, case_memory: int
) -> dict[str, tuple[zipfile.ZipInfo, npy.Header]]:
    """Each member's name (without ``.npy``) with its .npy header, read without
    reading its data; refused: a member that is not one, a name twice, and
    what the memory guard refuses."""
    members: dict[str, tuple[zipfile.ZipInfo, npy.Header]] = {}
    total = 0
    for info in archive.infolist():
        if info.is_dir() or not info.filename.endswith(".npy"):
            raise GraphFileError(
                path,
                f"member {info.filename!r} is not a .npy array (an .npz holds one NAME.npy per "
                "graph input: numpy.savez)",
            )
        name = info.filename.removesuffix(".npy")
        if name in members:
            raise GraphFileError(path, f"member {info.filename!r} is there twice")
        try:
            with archive.open(info) as stream:
                header = npy.read_header(stream)
        except npy.NpyProblem as problem:
            raise GraphFileError(path, f"member {info.filename!r}: {problem}") from None
        except _MEMBER_ERRORS as error:
            raise GraphFileError(path, f"member {info.filename!r}: cannot read ({error})") from None
        if header.nbytes > case_memory:
            raise GraphFileError(
                path,
                f"member {info.filename!r}: its header declares {header.said()}, over the "
                f"memory guard's limit of {case_memory:,} (--case-memory); nothing was read",
            )
        total += header.nbytes
        if total > case_memory:
            raise GraphFileError(
                path,
                f"its arrays declare {total:,} bytes or more together, over the memory guard's "
                f"limit of {case_memory:,} (--case-memory); nothing was read",
            )
        members[name] = (info, header)
    return members


def _member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, header) -> np.ndarray:
    """A member's array, as its header (already allowed) declares it."""
    try:
        with archive.open(info) as stream:
            npy.read_header(stream)
            array = npy.read_data(stream, header)
            # text as ONNX strings are fed (object arrays of str), never a pickle
            return npy.strings(array) if array.dtype.kind in "US" else array
    except npy.NpyProblem as problem:
        raise GraphFileError(path, f"member {info.filename!r}: {problem}") from None
    except _MEMBER_ERRORS as error:
        raise GraphFileError(path, f"member {info.filename!r}: cannot read ({error})") from None


def graph_inputs(found: GraphFile) -> list[onnx.ValueInfoProto]:
    """The graph inputs that must be fed (those without a default initializer)."""
    initializers = {t.name for t in found.proto.graph.initializer}
    return [v for v in found.proto.graph.input if v.name not in initializers]


def overridable(found: GraphFile) -> set[str]:
    """The graph inputs with a default initializer: fed when given, else their default."""
    initializers = {t.name for t in found.proto.graph.initializer}
    return {v.name for v in found.proto.graph.input if v.name in initializers}


def _check_names(path: Path, found: GraphFile, given: set[str]) -> None:
    """One array per graph input of ``found``, and one for an overridable input
    where the file overrides its default."""
    names = {v.name for v in graph_inputs(found)}
    optional = overridable(found)
    missing = sorted(n for n in names if n not in given)
    takes = f"its inputs: {', '.join(sorted(names))}" + (
        f"; with a default it overrides: {', '.join(sorted(optional))}" if optional else ""
    )
    if missing:
        raise GraphFileError(
            path,
            f"no array for graph input {missing[0]!r} of {found.path} "
            f"({takes}; the file's: {', '.join(sorted(given))})",
        )
    extra = sorted(given - names - optional)
    if extra:
        raise GraphFileError(
            path, f"array {extra[0]!r} is no graph input of {found.path} ({takes})"
        )


def _check(path: Path, found: GraphFile, arrays: dict[str, np.ndarray]) -> None:
    """Each array of the dtype, rank and fixed sizes its graph input declares."""
    for value in found.proto.graph.input:
        if value.name not in arrays:
            continue  # an overridable input left at its default (the names are checked)
        array = arrays[value.name]
        declared = tensor_type(value)
        have = dtypes.name_of(array)
        if declared.dtype is not None and have != declared.dtype:
            raise GraphFileError(
                path, f"input {value.name!r}: dtype {have}, the graph takes {declared.dtype}"
            )
        if declared.shape is None:
            continue
        if array.ndim != len(declared.shape):
            raise GraphFileError(
                path,
                f"input {value.name!r}: rank {array.ndim} (shape {list(array.shape)}), "
                f"the graph takes rank {len(declared.shape)} {list(declared.shape)}",
            )
        for i, (size, dim) in enumerate(zip(array.shape, declared.shape, strict=True)):
            if isinstance(dim, int) and size != dim:
                raise GraphFileError(
                    path, f"input {value.name!r}: dim {i} is {size}, the graph fixes it at {dim}"
                )


def input_dims(files: list[GraphFile], arrays: dict[str, np.ndarray]) -> dict[str, int]:
    """The sizes the arrays give the graph inputs' symbolic dims."""
    found: dict[str, int] = {}
    for each in files:
        for value in graph_inputs(each):
            shape = tensor_type(value).shape or ()
            for dim, size in zip(shape, arrays[value.name].shape, strict=False):
                if isinstance(dim, str):
                    found.setdefault(dim, int(size))
    return found


def _marked(proto: onnx.ModelProto, files_model: str) -> dict[str, tuple[str, str, str]]:
    """Name every Gather node of the graphs (not of functions) with a mark; mark -> node."""
    marks: dict[str, tuple[str, str, str]] = {}

    def walk(graph: onnx.GraphProto, path: str) -> None:
        for index, node in enumerate(graph.node):
            label = node.name or f"#{index}"
            if node.op_type in OURS and node.domain in DEFAULT_DOMAINS:
                mark = f"{MARK}{len(marks)}"
                marks[mark] = (files_model, path, label)
                node.name = mark
            for attribute in node.attribute:
                subs = [attribute.g] if attribute.HasField("g") else list(attribute.graphs)
                for k, sub in enumerate(subs):
                    name = attribute.name if len(subs) == 1 else f"{attribute.name}[{k}]"
                    walk(sub, f"{path}/{label}/{name}" if path else f"{label}/{name}")

    walk(proto.graph, "")
    return marks


def capturing_ops(kept: dict[str, list], given: Sequence[type] = ()) -> list:
    """onnx.reference's operator of each row of the operators table (or the
    subclass of it ``given`` names by its class name: the reference adapter's
    counted GatherElements) made to also keep, in ``kept`` under the node's
    name, the first :data:`KEPT` distinct (data, indices) it is given."""
    from onnx.reference.ops import load_op

    chosen = {cls.__name__: cls for cls in given}

    def keep(name: str, data, indices) -> None:
        seen = kept.setdefault(name, [])
        if len(seen) >= KEPT:
            return
        pair = (np.array(data, copy=True), np.array(indices, copy=True))
        digest = _digest(*pair)
        if all(_digest(*other) != digest for other in seen):
            seen.append(pair)

    def keeping(base: type) -> type:
        def _run(self, data, indices, **attributes):
            keep(self.onnx_node.name, data, indices)
            return base._run(self, data, indices, **attributes)  # type: ignore[attr-defined]  # an OpRun class, found at run time

        return type(base.__name__, (base,), {"_run": _run})

    return [keeping(chosen.get(name) or load_op("", name)) for name in OPERATORS]


def _digest(data: np.ndarray, indices: np.ndarray) -> str:
    hashed = hashlib.blake2b(digest_size=12)
    for array in (data, indices):
        hashed.update(f"{array.dtype}{array.shape}".encode())
        hashed.update(
            "\x00".join(map(str, array.ravel())).encode()
            if array.dtype == object
            else array.tobytes()
        )
    return hashed.hexdigest()


def with_its_data(found: GraphFile) -> onnx.ModelProto:
    """A copy of the model with every external tensor's bytes in it, read and
    checked by :func:`.tensors.inline` (onnx's own loader would open the files
    past our check: a FIFO, a file outside the model's folder)."""
    proto = onnx.ModelProto()
    proto.CopyFrom(found.proto)
    for tensor in tensors.every_tensor(proto):
        tensors.inline(tensor, found.path)
    return proto


def prepared(found: GraphFile) -> tuple[onnx.ModelProto, dict[str, tuple[str, str, str]]]:
    """The model to capture with (its data in it, its Gather nodes named by
    their marks) and mark -> node."""
    proto = with_its_data(found)
    return proto, _marked(proto, str(found.path))


def feeds_of(found: GraphFile, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What ``found`` is fed of ``arrays``: every graph input, and each
    overridable input (one with a default initializer) that was given."""
    names = {v.name for v in graph_inputs(found)} | overridable(found)
    return {name: array for name, array in arrays.items() if name in names}


def settle(
    result: Captured,
    found: GraphFile,
    marks: dict[str, tuple[str, str, str]],
    kept: dict[str, list],
    failure: str | None,
) -> None:
    """What one model's run captured into ``result``: each node's kept inputs,
    the run's failure (``failure``: why, said whole), and each node not
    captured with why."""
    model = str(found.path)
    if failure is not None:
        result.failed[model] = failure
    for mark, where in marks.items():
        if kept.get(mark):
            result.tensors[where] = kept[mark]
    for site in found.sites:
        if site.domain not in DEFAULT_DOMAINS or site.opset is None:
            continue
        key = (site.model, site.graph, site.node)
        if key in result.tensors:
            continue
        if site.graph.startswith("function:"):
            why = "inside a model-local function: onnx.reference runs its body apart"
        elif model in result.failed and kept:
            why = f"the run failed before it: {result.failed[model]}"
        elif model in result.failed:  # stopped from outside: what ran before is lost too
            why = f"nothing was captured: {result.failed[model]}"
        else:
            why = "the run never reached it (a branch not taken, a loop run zero times)"
        result.missed[key] = why


def run_failure(error: BaseException) -> str:
    """How a failed capture run is said: the exception's type and first line."""
    text = first_line(error) or type(error).__name__
    return f"{type(error).__name__}: {text}"[:300]


# Why a node was not judged that the run's real tensors settle (its shapes or types).
SETTLED_BY_CAPTURE = ("the rank of", "dim ", "the data element type", "the indices element type")


def captured_cases(
    groups: list[drawing.NodeGroup],
    captured: Captured,
    dims: dict[str, int],
    case_memory: int,
    files: Sequence[GraphFile] = (),
) -> list:
    """Cases of the captured tensors: each site's own, deduplicated in its group.
    A node not judged because shape inference left its shapes or types unknown
    is judged on what the run fed it (a group of its own, appended to ``groups``)."""
    from conformance.cases.check import over_memory

    made = []
    taken = {c.base_id for g in groups for c in g.cases}
    by_site = {(s.model, s.graph, s.node): g for g in groups for s in g.sites}
    unknown = {
        (s.model, s.graph, s.node): s
        for f in files
        for s in f.sites
        if s.not_judged and s.not_judged.startswith(SETTLED_BY_CAPTURE)
    }
    for key, pairs in captured.tensors.items():
        group = by_site.get(key)
        if group is None and key in unknown:
            group = _group_of_captured(unknown[key], pairs[0])
            if group is not None:
                groups.append(group)
        if group is None:
            continue  # a node not judged (another domain, memory guard)
        seen = set(group.made.get("__captured__", ()))
        for data, indices in pairs:
            digest = _digest(data, indices)
            if digest in seen:
                continue
            seen.add(digest)
            count = sum(1 for c in group.cases if "-captured" in c.base_id) + 1
            base = drawing.base_of(group.sites[0])
            case = drawing.node_case(
                group, f"{base}-captured{count}", data, indices, "captured", taken
            )
            if case.dtype != group.data_dtype or case.indices_dtype != group.indices_dtype:
                continue  # the run fed what the declared types do not say: not this group
            if over_memory(case, case_memory):
                continue
            group.cases.append(case)
            group.made[case.id] = {"data": "captured", "indices": "captured"}
            group.as_built.add(case.id)  # what the model was fed: receivable by proof
            made.append(case)
        group.made["__captured__"] = seen
        for site in group.sites:
            site.cases = [c.id for c in group.cases]
            site.as_built_cases = [c.id for c in group.cases if c.id in group.as_built]
            if site.cases and site.not_judged:  # judged on what the run fed it
                site.not_judged = None
                site.data = reading.TensorType(group.data_dtype, group.data_shape)
                site.indices = reading.TensorType(group.indices_dtype, group.indices_shape)
    return made


def _group_of_captured(site, pair) -> drawing.NodeGroup | None:
    data, indices = pair
    data_dtype, indices_dtype = dtypes.name_of(data), dtypes.name_of(indices)
    if data_dtype not in dtypes.NAMES or indices_dtype not in dtypes.NAMES:
        return None
    key = ("captured", site.model, site.graph, site.node)
    site.variant = "dynamic"  # its shapes unknown to the model: run-time values, symbolic dims
    return drawing.NodeGroup(
        key,
        [site],
        site.op,
        site.opset,
        site.axis,
        tuple(data.shape),
        tuple(indices.shape),
        data_dtype,
        indices_dtype,
        None,
        None,
        variant="dynamic",
    )
