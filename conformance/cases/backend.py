"""ONNX backend test folders as cases: ``test_<name>/model.onnx`` with its data sets.

The layout is the one onnx shipped its node tests in (``onnx/backend/test/
data/node/test_gather_0/``) and every runtime's own runner reads: a folder
holding a model and one or more data-set folders of serialized tensors. It is
read here as ONNX Runtime's ``onnx_test_runner`` reads it (its source,
``onnxruntime/test/onnx/TestCase.cc``):

* a **test folder** is a folder that directly holds a ``*.onnx`` model
  (``model.onnx`` in onnx's layout; ONNX Runtime takes any name). Its data sets
  are its subfolders, whatever their names (``test_data_set_0`` in onnx's
  layout); names starting with ``.`` are not read.
* a data set holds ``input_<j>.pb`` and ``output_<j>.pb``, one serialized
  ``onnx.TensorProto`` each, numbered from 0 without a gap; or, ONNX Runtime's
  other form, ``inputs.pb`` / ``outputs.pb``: a stream of length-delimited
  (varint size, then the bytes) ``onnxruntime.proto.TraditionalMLData``
  messages (``onnxruntime/test/proto/tml.proto``), each holding one tensor
  (field 16) and optionally its name (field 15). Each side (inputs, outputs)
  is read from its stream when there is one, else from its numbered files.
* a tensor goes to the graph input it names; an unnamed one to the graph input
  at its position (its file number, or its place in the stream).

A test whose model is one node of an operator of the operators table
(``conformance/tables/operators.py``: Gather, GatherElements, GatherND) becomes
one case per data set: op, opset, its attribute (axis, batch_dims), dtypes and
values from the model, its initializers and the ``.pb`` files; the data set's
output is the case's written expectation, held against the oracle bit for bit
as a case file's ``expected`` is (:mod:`conformance.cases.check`). A folder
that is not such a test is *not taken*, with the reason; a test folder that is
one but whose files are wrong (a truncated model, a missing, extra or
mis-numbered ``.pb``, a ``.pb`` that is not a tensor, a tensor the model does not
declare) is an error naming the file. cases/README.md ("ONNX backend test
folders") has the rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import onnx
import onnx.defs
from google.protobuf.message import DecodeError
from onnx import numpy_helper

from conformance.cases.case import Case, CaseFileError, Expectation, Source, concrete_id
from conformance.cases.check import OverMemory, verdict_of
from conformance.cases.values import MAX_ELEMENTS
from conformance.tables import dtypes, spec
from conformance.tables.operators import OPERATORS

# the operators a test's node may be, from their rows: "Gather, GatherElements or GatherND"
# (those that write are named apart: not read from test folders yet, issue 47)
*_FIRST, _LAST = [name for name, row in OPERATORS.items() if not row.writes]
COVERED = f"{', '.join(_FIRST)} or {_LAST}" if _FIRST else _LAST

MODEL_SUFFIX = ".onnx"
STREAMS = {"inputs": "inputs.pb", "outputs": "outputs.pb"}  # ONNX Runtime's one-file form
FIRST_DATA_SET = "test_data_set_0"  # its cases keep the test folder's name as their id
_NUMBERED = re.compile(r"(input|output)_(.*)\.pb")
_NUMBER = re.compile(r"0|[1-9][0-9]*")
_NOT_IN_ID = re.compile(r"[^a-z0-9_-]+")
# TraditionalMLData (tml.proto): field 16 a TensorProto, 15 its name (17, debug
# text, is not read); fields 1 to 14 hold maps and vectors of traditional ML models.
_TML_TENSOR, _TML_NAME = 16, 15


@dataclass(frozen=True)
class NotTaken:
    """A folder met that is not a test of an operator covered here, and why."""

    folder: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.folder}: {self.reason}"


@dataclass
class Imported:
    """What the test folders below some folders gave."""

    cases: list[Case] = field(default_factory=list)
    not_taken: list[NotTaken] = field(default_factory=list)
    errors: list = field(default_factory=list)  # CaseFileError, each naming its file
    files: list[Path] = field(default_factory=list)  # every file a case was read from

    def extend(self, other: Imported) -> None:
        self.cases += other.cases
        self.not_taken += other.not_taken
        self.errors += other.errors
        self.files += other.files


class _NotATest(Exception):
    """The folder is not taken: the message says why."""


class _Defect(Exception):
    """A file of a test is wrong: an error naming it."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def test_folders(root: Path) -> list[Path]:
    """The test folders at or below ``root``: folders directly holding a
    ``*.onnx`` file, sorted, none below another (a model inside a data set is
    that data set's file, not another test) nor below a folder named ``.*``."""
    root = Path(root)
    if not root.is_dir():
        return []
    holders = sorted(
        {
            model.parent
            for model in root.rglob(f"*{MODEL_SUFFIX}")
            if model.is_file()
            and not any(part.startswith(".") for part in model.relative_to(root).parts)
        }
    )
    tests: list[Path] = []
    taken: set[Path] = set()
    for folder in holders:  # sorted: a folder comes before the folders below it
        if taken.isdisjoint(folder.parents):
            tests.append(folder)
            taken.add(folder)
    return tests


def read(roots) -> Imported:
    """Every test folder at or below each of ``roots`` (folders), read."""
    found = Imported()
    seen: set[Path] = set()
    for root in roots:
        for folder in test_folders(Path(root)):
            if folder.resolve() in seen:  # named twice (a folder and its parent)
                continue
            seen.add(folder.resolve())
            found.extend(read_test(folder))
    return found


def read_test(folder: Path) -> Imported:
    """One test folder: its cases (one per data set), or why it is not taken,
    or the errors of its files."""
    found = Imported()
    try:
        found.cases, found.files = _TestFolder(Path(folder)).read()
    except _NotATest as reason:
        found.not_taken.append(NotTaken(Path(folder), str(reason)))
    except _Defect as defect:
        found.errors.append(CaseFileError(defect.path, None, "", defect.message))
    return found


def base_id(folder: str, data_set: str) -> str:
    """The case-file id of a data set: the test folder's name (lower case,
    characters outside ``a-z 0-9 _ -`` as ``-``), and the data set's name after
    a ``-`` unless it is ``test_data_set_0``. Stable: it depends on the two
    names only."""
    name = _id_part(folder)
    return name if data_set == FIRST_DATA_SET else f"{name}-{_id_part(data_set)}"


def _id_part(name: str) -> str:
    return _NOT_IN_ID.sub("-", name.lower()).strip("-_") or "test"


@dataclass(frozen=True)
class _Node:
    op: str
    opset: int  # the operator's version (its since_version), one of spec.OPSETS[op]
    imported: int  # the default domain's opset the model imports
    axis: int | None
    inputs: tuple[str, str]  # the node's data and indices names
    output: str


class _TestFolder:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def read(self) -> tuple[list[Case], list[Path]]:
        models = sorted(
            p for p in self.folder.iterdir() if p.suffix == MODEL_SUFFIX and p.is_file()
        )
        if len(models) != 1:
            names = ", ".join(p.name for p in models)
            raise _NotATest(f"{len(models)} models ({names}): the data sets belong to which?")
        self.model_path = models[0]
        self.model = _read_model(self.model_path)
        self.node = self._node()
        data_sets = sorted(
            p for p in self.folder.iterdir() if p.is_dir() and not p.name.startswith(".")
        )
        if not data_sets:
            raise _NotATest(
                "no data set (a subfolder such as test_data_set_0 with input_<j>.pb "
                "and output_0.pb)"
            )
        cases, files = [], [self.model_path]
        for data_set in data_sets:
            case, read = self._case(data_set)
            cases.append(case)
            files += read
        return cases, files

    # -- the model --------------------------------------------------------------------
    def _node(self) -> _Node:
        graph, path = self.model.graph, self.model_path
        if len(graph.node) != 1:
            ops = ", ".join(sorted({n.op_type for n in graph.node}))
            raise _NotATest(f"{len(graph.node)} nodes ({ops}): a case is one {COVERED} node")
        node = graph.node[0]
        if node.domain not in spec.DEFAULT_DOMAINS or node.op_type not in spec.OPSETS:
            named = f"{node.domain}.{node.op_type}" if node.domain else node.op_type
            raise _NotATest(f"its node is {named}, not {COVERED}")
        op = node.op_type
        imported = [o.version for o in self.model.opset_import if o.domain in spec.DEFAULT_DOMAINS]
        if not imported:
            raise _Defect(
                path,
                "imports no opset of the default domain (ai.onnx): a truncated or damaged model?",
            )
        try:
            opset = onnx.defs.get_schema(op, imported[0]).since_version
        except onnx.defs.SchemaError:
            raise _NotATest(f"{op} does not exist at opset {imported[0]}") from None
        if opset not in spec.OPSETS[op]:
            raise _NotATest(f"{op}-{opset} (model opset {imported[0]}) is not covered here")
        if OPERATORS[op].writes:  # issue 47: the run path reads their case files only
            raise _NotATest(
                f"{op} writes (a third input, updates): not read from backend test folders by "
                "this version; its cases are in the case files"
            )
        axis = None  # the operator's attribute: axis, or GatherND's batch_dims
        name = OPERATORS[op].attribute
        for attribute in node.attribute:
            if attribute.name != name:
                raise _NotATest(f"its {op} node has an attribute {attribute.name!r} (only {name})")
            if attribute.type != onnx.AttributeProto.INT:
                raise _NotATest(f"its {op} node's {name} is not an int attribute")
            axis = int(attribute.i)
        if len(node.input) != 2 or not all(node.input) or len(node.output) != 1:
            raise _Defect(
                path,
                f"its {op} node has {len(node.input)} input(s) and {len(node.output)} "
                f"output(s) ({op} takes data and indices and gives one output)",
            )
        known = {v.name for v in graph.input} | {t.name for t in graph.initializer}
        for name in node.input:
            if name not in known:
                raise _Defect(
                    path, f"the node's input {name!r} is neither a graph input nor an initializer"
                )
        unused = [v.name for v in graph.input if v.name not in node.input]
        if unused:
            raise _NotATest(f"graph input(s) {', '.join(unused)} unused by its node")
        outputs = [v.name for v in graph.output]
        if outputs != [node.output[0]]:
            raise _Defect(
                path,
                f"its graph outputs ({', '.join(outputs) or 'none'}) are not its node's "
                f"output {node.output[0]!r}",
            )
        return _Node(op, opset, imported[0], axis, (node.input[0], node.input[1]), node.output[0])

    # -- one data set -----------------------------------------------------------------
    def _case(self, data_set: Path) -> tuple[Case, list[Path]]:
        graph, node = self.model.graph, self.node
        files = {p.name: p for p in data_set.iterdir() if p.is_file()}
        inputs = self._side(data_set, files, "inputs", [v.name for v in graph.input])
        outputs = self._side(data_set, files, "outputs", [node.output])
        baked = {t.name: t for t in graph.initializer}
        arrays: dict[str, np.ndarray] = {}
        for name in node.inputs:
            if name in inputs:
                path, array = inputs[name]
                self._declared(path, array, name, graph.input)
                arrays[name] = array
            elif name in baked:
                arrays[name] = _array(baked[name], self.model_path, f"initializer {name!r}")
            else:
                number = [v.name for v in graph.input].index(name)
                raise _Defect(
                    data_set / f"input_{number}.pb",
                    f"missing: nothing in {data_set.name} gives the model's input {name!r}",
                )
        out_path, output = outputs[node.output]
        self._declared(out_path, output, node.output, graph.output)
        fed = [name for name in node.inputs if name in inputs]
        variant = self._variant([name for name in node.inputs if name not in fed], fed)
        data, indices = (arrays[name] for name in node.inputs)
        base = base_id(self.folder.name, data_set.name)
        case = Case(
            node.op,
            node.opset,
            node.axis,
            data,
            indices,
            id=concrete_id(base, node.opset, dtypes.name_of(data), dtypes.name_of(indices)),
            base_id=base,
            expectation=Expectation("output", output=output),
            description=(
                f"ONNX backend test {self.folder.name}, data set {data_set.name}: "
                f"{node.op} (model opset {node.imported}; its model is the {variant} variant)"
            ),
            spec=f"the test data's own output: {out_path.name}",
            tags=("backend-test", f"variant-{variant.replace('_', '-')}"),
            source=Source(data_set, 0),
        )
        try:  # disputed decisions it falls under: a case file lists them under `decisions`
            disputed = verdict_of(case).disputed
        except OverMemory:
            disputed = ()
        if disputed:
            case = replace(case, decisions=tuple(disputed))
        read = [path for path, _ in (*inputs.values(), *outputs.values())]
        return case, sorted(set(read))

    def _side(
        self, data_set: Path, files: dict[str, Path], side: str, declared: list[str]
    ) -> dict[str, tuple[Path, np.ndarray]]:
        """One side's tensors by the graph input or output they go to:
        ``name -> (file, array)``."""
        stem = side[:-1]  # input, output
        numbered: dict[int, Path] = {}
        for name, path in files.items():
            if not name.endswith(".pb") or name in STREAMS.values():
                continue
            match = _NUMBERED.fullmatch(name)
            if not match:
                raise _Defect(
                    path,
                    "extra file: a data set holds input_<j>.pb and output_<j>.pb "
                    "(or ONNX Runtime's inputs.pb and outputs.pb)",
                )
            if match.group(1) != stem:
                continue
            if not _NUMBER.fullmatch(match.group(2)):
                raise _Defect(path, f"mis-numbered: {stem}_<j>.pb with j = 0, 1, 2, ...")
            numbered[int(match.group(2))] = path
        stream = files.get(STREAMS[side])
        items: Sequence[tuple[Path, str | None, bytes]]  # a name in a stream's items only
        if stream is not None:
            if numbered:
                first = numbered[min(numbered)]
                raise _Defect(
                    first, f"both {stream.name} and {first.name}: which one is the {side}?"
                )
            items = _stream_items(stream)
        else:
            for position, number in enumerate(sorted(numbered)):
                if number != position:
                    raise _Defect(
                        numbered[number],
                        f"mis-numbered: {stem}_{position}.pb is missing "
                        f"({stem}_<j>.pb count from 0 without a gap)",
                    )
            items = [(numbered[j], None, _read_file(numbered[j])) for j in range(len(numbered))]
        required = [n for n in declared if n not in {t.name for t in self.model.graph.initializer}]
        if len(items) < len(required):
            missing = data_set / (stream.name if stream else f"{stem}_{len(items)}.pb")
            raise _Defect(
                missing,
                f"missing: the model has {len(required)} {stem}(s) ({', '.join(required)}), "
                f"{data_set.name} gives {len(items)}",
            )
        if len(items) > len(declared):
            path, *_ = items[len(declared)]
            raise _Defect(
                path,
                f"extra: the model has {len(declared)} {stem}(s) ({', '.join(declared)}), "
                f"{data_set.name} gives {len(items)}",
            )
        found: dict[str, tuple[Path, np.ndarray]] = {}
        for position, (path, item_name, data) in enumerate(items):
            where = path.name if stream is None else f"{path.name} item {position + 1}"
            tensor = _parse_tensor(data, path, where)
            name = tensor.name if stream is None else item_name or ""
            if not name:
                name = declared[position]
            elif name not in declared:
                raise _Defect(
                    path,
                    f"{where} names {name!r}, which is not one of the model's {stem}s "
                    f"({', '.join(declared)})",
                )
            if name in found:
                raise _Defect(path, f"{where} gives {name!r} again (as does {found[name][0].name})")
            found[name] = (path, _array(tensor, path, where))
        return found

    def _declared(self, path: Path, array: np.ndarray, name: str, values) -> None:
        """The tensor is what the model declares ``name`` to be (its element
        type, and its fixed dimensions)."""
        (value,) = [v for v in values if v.name == name] or [None]
        if value is None or not value.type.HasField("tensor_type"):
            if value is not None and value.type.WhichOneof("value") is not None:
                raise _NotATest(f"{name!r} is not a tensor")
            return
        tensor_type = value.type.tensor_type
        if tensor_type.elem_type and tensor_type.elem_type != dtypes.of_array(array).proto:
            declared = onnx.TensorProto.DataType.Name(tensor_type.elem_type).lower()
            raise _Defect(
                path,
                f"holds {dtypes.name_of(array)} but the model declares {name!r} as {declared}",
            )
        if tensor_type.HasField("shape"):
            dims = tensor_type.shape.dim
            fixed = [d.dim_value if d.HasField("dim_value") else None for d in dims]
            if len(fixed) != array.ndim or any(
                f is not None and f != s for f, s in zip(fixed, array.shape, strict=True)
            ):
                shown = ["?" if f is None else f for f in fixed]
                raise _Defect(
                    path,
                    f"has shape {list(array.shape)} but the model declares {name!r} as {shown}",
                )

    def _variant(self, baked: list[str], fed: list[str]) -> str:
        """Which of :data:`conformance.engine.models.VARIANTS` the test's own model is."""
        inputs = OPERATORS[self.node.op].inputs  # the roles of the node's inputs, in order
        roles = {role for role, name in zip(inputs, self.node.inputs, strict=True) if name in baked}
        if roles == {"data", "indices"}:
            return "both_initializers"
        if roles:
            return f"{roles.pop()}_initializer"
        for value in self.model.graph.input:
            if value.name in fed:
                tensor_type = value.type.tensor_type
                if not tensor_type.HasField("shape") or not all(
                    d.HasField("dim_value") for d in tensor_type.shape.dim
                ):
                    return "dynamic"
        return "static"


# -- files ----------------------------------------------------------------------------
def _read_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _Defect(path, f"cannot read: {exc.strerror or exc}") from None


def _read_model(path: Path) -> onnx.ModelProto:
    model = onnx.ModelProto()
    try:
        model.ParseFromString(_read_file(path))
    except DecodeError as exc:
        raise _Defect(path, f"not an ONNX model ({exc}): a truncated or damaged file?") from None
    if not model.graph.node:
        raise _Defect(path, "not an ONNX model: no graph node (a truncated or damaged file?)")
    return model


def _parse_tensor(data: bytes, path: Path, where: str) -> onnx.TensorProto:
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(data)
    except DecodeError as exc:
        raise _Defect(path, f"{where} is not a TensorProto ({exc})") from None
    if tensor.data_type == onnx.TensorProto.UNDEFINED:
        raise _Defect(path, f"{where} is not a TensorProto: it has no element type (data_type 0)")
    return tensor


def _array(tensor: onnx.TensorProto, path: Path, where: str) -> np.ndarray:
    """The tensor's values as the project holds them (read-only), or why not."""
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        raise _NotATest(f"{where} keeps its values in an external file (not read here)")
    row = dtypes.BY_PROTO.get(tensor.data_type)
    if row is None:
        name = (
            onnx.TensorProto.DataType.Name(tensor.data_type)
            if (tensor.data_type in onnx.TensorProto.DataType.values())
            else str(tensor.data_type)
        )
        raise _NotATest(f"{where} holds {name.lower()} elements, not a dtype covered here")
    if any(d < 0 for d in tensor.dims):
        raise _Defect(path, f"{where} is not a TensorProto: dims {list(tensor.dims)}")
    if math.prod(tensor.dims) > MAX_ELEMENTS:
        raise _NotATest(
            f"{where} holds {math.prod(tensor.dims):,} elements, over the case files' "
            f"limit of {MAX_ELEMENTS:,}"
        )
    if row.name == "string":
        array = _strings(tensor, path, where)
    else:
        try:
            array = numpy_helper.to_array(tensor)
        except Exception as exc:  # onnx raises several unrelated types for a bad tensor
            raise _Defect(path, f"{where} is not a readable TensorProto: {exc}") from None
    if array.dtype != row.numpy or list(array.shape) != list(tensor.dims):
        raise _Defect(path, f"{where} does not read back as {row.name} {list(tensor.dims)}")
    if not array.flags.c_contiguous:  # (np.ascontiguousarray would make a scalar 1-d)
        array = array.copy()
    array.flags.writeable = False
    return array


def _strings(tensor: onnx.TensorProto, path: Path, where: str) -> np.ndarray:
    """A string tensor as an object array of str, every character kept
    (onnx.numpy_helper.to_array goes through NumPy's fixed-width strings,
    which drop trailing NULs: 'a\\0' would come back as 'a')."""
    try:
        values = [value.decode("utf-8") for value in tensor.string_data]
    except UnicodeDecodeError:
        raise _NotATest(
            f"{where} holds a string that is not UTF-8 (strings here are text)"
        ) from None
    if len(values) != math.prod(tensor.dims):
        raise _Defect(
            path,
            f"{where} is not a readable TensorProto: {len(values)} strings for dims "
            f"{list(tensor.dims)}",
        )
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array.reshape(tuple(tensor.dims))


def _stream_items(path: Path) -> list[tuple[Path, str, bytes]]:
    """ONNX Runtime's ``inputs.pb`` / ``outputs.pb``: (file, name, tensor bytes)
    for each TraditionalMLData message of the stream, in order."""
    data = _read_file(path)
    items, at, number = [], 0, 0
    while at < len(data):
        number += 1
        size, at = _varint(data, at, path, f"item {number}'s size")
        if at + size > len(data):
            raise _Defect(
                path, f"item {number} is truncated: {size} bytes said, {len(data) - at} left"
            )
        name, tensor = _tml_fields(data[at : at + size], path, number)
        items.append((path, name, tensor))
        at += size
    return items


def _tml_fields(message: bytes, path: Path, number: int) -> tuple[str, bytes]:
    name, tensor, at = "", None, 0
    while at < len(message):
        key, at = _varint(message, at, path, f"item {number}")
        field_number, wire = key >> 3, key & 7
        if wire == 0:
            _, at = _varint(message, at, path, f"item {number}")
            continue
        if wire in (1, 5):
            at += 8 if wire == 1 else 4
            continue
        if wire != 2:
            raise _Defect(path, f"item {number} is not a TraditionalMLData message")
        size, at = _varint(message, at, path, f"item {number}")
        value, at = message[at : at + size], at + size
        if len(value) != size:
            raise _Defect(path, f"item {number} is truncated")
        if field_number == _TML_TENSOR:
            tensor = value
        elif field_number == _TML_NAME:
            try:
                name = value.decode("utf-8")
            except UnicodeDecodeError:
                raise _Defect(path, f"item {number}'s name is not UTF-8") from None
        elif 1 <= field_number <= 14:
            raise _Defect(path, f"item {number} holds a map or a vector, not a tensor")
    if at > len(message):
        raise _Defect(path, f"item {number} is truncated")
    if tensor is None:
        raise _Defect(path, f"item {number} holds no tensor (TraditionalMLData field 16)")
    return name, tensor


def _varint(data: bytes, at: int, path: Path, what: str) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise _Defect(path, f"{what} is truncated or is not a varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def files(paths) -> list[Path]:
    """The files the test folders below ``paths`` hold (models and data-set
    files, sorted; the run header's corpus digest covers them). Read from the
    folders, not from the cases: a test not taken is in none."""
    found: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.suffix == MODEL_SUFFIX and path.is_file():
            path = path.parent
        for folder in test_folders(path):
            found += sorted(p for p in folder.rglob("*") if p.is_file())
    return found
