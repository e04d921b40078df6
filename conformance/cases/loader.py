"""Load YAML case files into concrete cases, or say exactly what is wrong.

Every problem is reported as ``file:line: field: message``; all problems of
all files are collected before anything fails, so one run shows them all.
The file format is documented in cases/README.md and checked against
``case_file.schema.json``.
"""

from __future__ import annotations

import itertools
import json
import reprlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import yaml

from conformance import shipped
from conformance.cases import values, yaml_lines
from conformance.cases.case import Case, CaseFileError, Expectation, Source, concrete_id
from conformance.cases.check import DEFAULT_CASE_MEMORY
from conformance.errors import ConformanceError
from conformance.strict_json import MAX_DEPTH
from conformance.tables import decisions, spec, variants
from conformance.tables.operators import OPERATORS

REQUIRED = ("id", "op", "opset", "dtype", "data", "indices", "description", "spec")
DEFAULT_INDICES_DTYPE = "int64"
# Deeper YAML (strict_json.MAX_DEPTH, every input's one depth policy) is
# refused before it is built: PyYAML's composer (and every recursive reader
# after it) would otherwise die of RecursionError. A tensor literal has at
# most 64 dimensions (NumPy's limit) below a few levels of file.
# Values in one file, aliases expanded: what every later reader (the schema
# check, the literal conversion) walks. A literal tensor this large is ~1 MB of
# YAML; the generators (full, range, random) make large tensors from a line.
MAX_NODES = 1 << 18
# What a oneOf in the schema means, in words (jsonschema's own message for a
# failed oneOf lists no alternatives).
_ONE_OF_WORDS = {
    "opset": "an opset number, a list of them, or 'all'",
    "dtype": "a dtype name, a list of them, or 'all'",
    "indices_dtype": "a dtype name, a list of them, or 'all'",
    "nodes": "a list of {model, graph, node}, or {file: NAME}: a JSON list of them beside the file",
}


class CaseErrors(ConformanceError):
    def __init__(self, errors: list[CaseFileError]) -> None:
        super().__init__("\n".join(map(str, errors)))
        self.errors = errors


@cache
def schema() -> dict:
    text = resources.files("conformance.cases").joinpath("case_file.schema.json").read_text()
    return json.loads(text)


# JSON Schema counts 13.0 as an integer; a case file may not (an opset or axis
# written 13.0 or 0.0 is a mistake, and ONNX attribute ints are int64).
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
    ),
)


# A message quotes the value it is about, shortened: a whole document or a
# large literal in a message would bury the line it is meant to point at.
_SHORT = reprlib.Repr()  # Python 3.11's Repr takes no keywords
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict = 3, 6, 6
_SHORT.maxstring = _SHORT.maxother = 80


def _shown(value) -> str:
    return _SHORT.repr(value)


def _yaml_shape_problem(text: str) -> tuple[int | None, tuple, str] | None:
    """(line, field path, message) for YAML that parses but cannot be read
    safely: nesting deeper than MAX_DEPTH, a list or mapping as a mapping key
    (unhashable), an alias inside what it names (a cycle), or more than
    MAX_NODES values once aliases are expanded. Found from the parser's
    events, which neither recurse nor expand aliases, so a "billion laughs"
    file is refused after reading its few hundred bytes once."""
    frames: list[list] = []  # [is_mapping, nodes seen, last key, anchor, expanded at start]
    sizes: dict[str, int] = {}  # anchor -> values it stands for, expanded
    open_anchors: set[str] = set()  # anchors of collections still being read
    collections: set[str] = set()  # anchors of lists and mappings
    expanded = 0  # values read so far, each alias counted as what it names

    def where() -> tuple:
        path: list = []
        for is_mapping, seen, key, *_ in frames:
            if is_mapping:
                if seen % 2 == 0:  # at a key: the mapping itself is the field
                    break
                path.append(key)
            else:
                path.append(seen)
        # a run of list positions below the last key is the value, not a field
        while path and isinstance(path[-1], int) and len(path) > 2:
            path.pop()
        return tuple(path)

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark else None
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            *_, anchor, began = frames.pop()
            if anchor:
                sizes[anchor] = expanded - began
                open_anchors.discard(anchor)
            if frames:
                frames[-1][1] += 1
            continue
        if not isinstance(event, yaml.NodeEvent):
            continue
        opens = isinstance(event, yaml.CollectionStartEvent)
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in open_anchors:
                return line, where(), f"the alias *{event.anchor} is inside what it names (a cycle)"
            expanded += sizes.get(event.anchor, 1) if event.anchor else 1  # (an alias has one)
        else:
            expanded += 1
            if event.anchor and not opens:
                sizes[event.anchor] = 1
        if expanded > MAX_NODES:
            return (
                line,
                where(),
                f"more than {MAX_NODES} values with aliases expanded (a literal this large "
                "belongs in a generator: arange, random, full)",
            )
        if frames and frames[-1][0] and frames[-1][1] % 2 == 0:  # a mapping key
            if opens or (isinstance(event, yaml.AliasEvent) and event.anchor in collections):
                return line, where(), "a mapping key is a list or mapping (keys are scalars)"
            frames[-1][2] = event.value if isinstance(event, yaml.ScalarEvent) else "?"
        if opens:
            if event.anchor:
                collections.add(event.anchor)
                open_anchors.add(event.anchor)
            if len(frames) >= MAX_DEPTH:
                return line, where(), f"nested deeper than {MAX_DEPTH} levels"
            frames.append(
                [isinstance(event, yaml.MappingStartEvent), 0, None, event.anchor, expanded - 1]
            )
        elif frames:
            frames[-1][1] += 1
    return None


def _field_name(path: Iterable) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


class YamlFileReader:
    """Collects the errors of one YAML file (case file, baseline, targets
    file) as ``file:line: field: message`` while something reads it. Every
    YAML input is parsed here, by the strict loader of
    :mod:`conformance.cases.yaml_lines`: what no file means (an integer over
    Python's 4300-digit limit, a finite number that would become inf, a
    ``!!set``) is refused at its line and field before any reader sees it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.errors: list[CaseFileError] = []
        self.root: Any = None  # the document: LineDict, LineList or a scalar

    def error(self, node_path: tuple, message: str, line: int | None = None) -> None:
        if line is None:
            line = yaml_lines.line_of(self.root, node_path) if self.root is not None else None
        self.errors.append(CaseFileError(self.path, line, _field_name(node_path), message))

    def load_yaml(self) -> bool:
        """Parse the file into ``self.root`` (lines remembered); False after an error."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            hint = ""
            if self.path.suffix.lower() == ".onnx":  # a model, not a case file
                hint = "; an ONNX model: judge its nodes with `conformance model FILE.onnx`"
            self.error((), f"cannot read: {exc}{hint}")
            return False
        try:
            problem = _yaml_shape_problem(text)
            if problem:
                line, path, message = problem
                self.error(path, message, line=line)
                return False
            self.root = yaml_lines.load(text)
        except yaml_lines.RefusedValue as exc:  # a value no file means, at its field
            self.error(exc.path, exc.message, line=exc.line)
            return False
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark else None
            self.error((), f"YAML: {exc.problem or exc.context}", line=line)
            return False
        except yaml.YAMLError as exc:
            self.error((), f"YAML: {exc}")
            return False
        return True

    def read(self) -> list:
        raise NotImplementedError

    def read_or_raise(self) -> list:
        """What ``read`` gives, or CaseErrors naming every problem of the file."""
        items = self.read()
        if self.errors:
            raise CaseErrors(self.errors)
        return items


class _CaseFileReader(YamlFileReader):
    """Turns one case file into cases."""

    def __init__(self, path: Path, memory: int = DEFAULT_CASE_MEMORY) -> None:
        super().__init__(path)
        self.memory = memory  # the memory guard, which bounds the values read from files

    def read(self) -> list[Case]:
        if not self.load_yaml():
            return []
        if not self._schema_ok():
            return []
        defaults = self.root.get("defaults", {})
        cases: list[Case] = []
        for index, raw in enumerate(self.root["cases"]):
            cases.extend(self._expand(index, {**defaults, **raw}, raw))
        return cases

    def _schema_ok(self) -> bool:
        validator = _Validator(schema(), registry=shipped.schema_registry())
        found = False
        for err in sorted(validator.iter_errors(self.root), key=lambda e: list(map(str, e.path))):
            found = True
            path = tuple(err.absolute_path)
            shown = _shown(err.instance)
            message = err.message.replace(repr(err.instance), shown)
            if err.validator == "additionalProperties" and isinstance(err.instance, dict):
                allowed = set(err.schema.get("properties", {}))
                for key in sorted(set(err.instance) - allowed, key=str):
                    self.error(
                        (*path, key), f"unknown field (allowed: {', '.join(sorted(allowed))})"
                    )
                continue
            if err.validator == "oneOf" and path and path[-1] in _ONE_OF_WORDS:
                message = f"{shown} must be {_ONE_OF_WORDS[path[-1]]}"
            elif err.validator == "pattern":  # the regex says it to nobody
                message = (
                    f"{shown} must be lowercase letters, digits, '_' and '-', "
                    "starting with a letter or digit"
                )
            elif (
                err.validator in ("minimum", "maximum")
                and path
                and path[-1] in ("axis", "batch_dims")
            ):
                message += " (ONNX attribute ints are int64)"
            self.error(path, message)
        return not found

    def _nodes(self, nodes) -> tuple[tuple[str, str, str], ...]:
        """A case's ``nodes``: the list, or ``{file: NAME}``, the list as JSON in a
        file beside the case file (``--save-cases`` writes a long one so: each case
        of thousands of alike nodes lists them all). ValueProblem below the field."""
        if isinstance(nodes, dict):
            name, where = nodes["file"], ("file",)
            path = values.beside("nodes", name, self.path.parent, where)
            nodes = values.read_json("nodes", name, path, self.memory, where)
            valid = isinstance(nodes, list) and all(
                isinstance(n, dict) and sorted(n) == ["graph", "model", "node"]
                and all(isinstance(v, str) for v in n.values()) and n["model"]
                for n in nodes
            )  # fmt: skip
            if not valid:
                raise values.ValueProblem(
                    f"{name!r} is not a JSON list of {{model, graph, node}} objects of "
                    "strings (model not empty)",
                    where,
                )
        return tuple((n["model"], n["graph"], n["node"]) for n in nodes)

    def _expand(self, index: int, case: dict, raw: yaml_lines.LineDict) -> list[Case]:
        at = ("cases", index)
        label = f"{case.get('id', '?')}"

        def fail(field: str | tuple, message: str) -> list[Case]:
            fields = field if isinstance(field, tuple) else (field,)
            line = None
            if fields[0] not in raw:  # the value came from defaults
                line = yaml_lines.line_of(self.root, ("defaults", *fields))
                if line is None:
                    line = raw.line
            self.error((*at, *fields), f"(case {label}) {message}", line=line)
            return []

        missing = [f for f in REQUIRED if f not in case]
        if missing:
            self.error(at, f"(case {label}) missing field(s): {', '.join(missing)}")
            return []
        has_expected, has_error = "expected" in case, "expect_error" in case
        if has_expected == has_error:
            return fail(
                "expected",
                "give exactly one of 'expected' (a literal or 'oracle') "
                "and 'expect_error' (a decisions-table id)",
            )
        for field in ("decisions", "expect_error"):
            named = case.get(field, [])
            for name in [named] if isinstance(named, str) else named:
                if name not in decisions.BY_ID:
                    return fail(
                        field, f"unknown decision id {name!r} (known: {', '.join(decisions.IDS)})"
                    )
        tag_problem = _as_built_problem(case.get("tags", ()))
        if tag_problem is not None:
            return fail(*tag_problem)
        op = case["op"]
        opsets = spec.OPSETS[op] if case["opset"] == "all" else _as_list(case["opset"])
        for opset in opsets:
            if opset not in spec.OPSETS[op]:
                return fail(
                    "opset",
                    f"{op} has no opset {opset} here "
                    f"(known: {', '.join(map(str, spec.OPSETS[op]))})",
                )
        attributes = case.get("attributes", {})
        row = OPERATORS[op]
        # axis, or GatherND's batch_dims (ScatterND: none), and the reduction where the row has one
        own = [name for name in (row.attribute,) if name is not None]
        own += ["reduction"] if row.reductions else []
        wrong = sorted(set(attributes) - set(own))
        if wrong:
            return fail(
                ("attributes", wrong[0]),
                f"{op} has no attribute {wrong[0]} (its attributes: {', '.join(own) or 'none'})",
            )
        # a case's ``axis`` holds the operator's int attribute
        axis = attributes.get(row.attribute) if row.attribute is not None else None
        reduction = attributes.get("reduction")
        for field in ("updates", "updates_dtype"):
            if field in case and "updates" not in row.inputs:
                return fail(
                    field, f"{op} has no updates input (its inputs: {', '.join(row.inputs)})"
                )
        if "updates" in row.inputs and "updates" not in case:
            return fail(
                "updates", f"{op} needs an updates input (its inputs: {', '.join(row.inputs)})"
            )
        # the model nodes it stands for (--save-cases), models as written: relative to the file
        try:
            nodes = self._nodes(case.get("nodes", ()))
        except values.ValueProblem as problem:
            return fail(("nodes", *problem.path), str(problem))
        # Each value is built once per dtype, not once per expansion: the same
        # indices serve every data dtype and opset.
        built_values: dict[tuple[str, str], np.ndarray] = {}
        out: list[Case] = []
        for opset in opsets:
            op_spec = spec.op_spec(op, opset)
            data_names = _names(case["dtype"], op_spec.data_dtypes)
            index_names = _names(
                case.get("indices_dtype", DEFAULT_INDICES_DTYPE), op_spec.index_dtypes
            )
            for dtype_name, index_name in itertools.product(data_names, index_names):
                try:
                    data_type = values.dtype_named(dtype_name)
                except values.ValueProblem as problem:
                    return fail("dtype", str(problem))
                try:
                    index_type = values.dtype_named(index_name)
                except values.ValueProblem as problem:
                    return fail("indices_dtype", str(problem))
                # updates are of T, data's type, unless the file says otherwise
                # (a case of decision sc-updates-dtype)
                try:
                    updates_type = values.dtype_named(case.get("updates_dtype", dtype_name))
                except values.ValueProblem as problem:
                    return fail("updates_dtype", str(problem))
                built: dict[str, np.ndarray] = {}
                for field, dtype in (
                    ("data", data_type),
                    ("indices", index_type),
                    ("updates", updates_type),
                    ("expected", data_type),
                ):
                    if field not in case or (field == "expected" and case[field] == "oracle"):
                        continue
                    try:
                        key = (field, dtype.name)
                        if key not in built_values:
                            array = values.build(
                                case[field], dtype, folder=self.path.parent, memory=self.memory
                            )
                            array.flags.writeable = False  # shared by several cases
                            built_values[key] = array
                        built[field] = built_values[key]
                    except values.ValueProblem as problem:
                        return fail((field, *problem.path), f"as {dtype.name}: {problem}")
                shape = tuple(case["expected_shape"]) if "expected_shape" in case else None
                if has_error:
                    if shape is not None:
                        return fail("expected_shape", "an error case has no output shape")
                    expectation = Expectation("error", clause=case["expect_error"])
                elif "expected" in built:
                    expectation = Expectation("output", output=built["expected"], shape=shape)
                else:
                    expectation = Expectation("oracle", shape=shape)
                out.append(
                    Case(
                        id=concrete_id(case["id"], opset, dtype_name, index_name),
                        base_id=case["id"],
                        op=op,
                        opset=opset,
                        axis=axis,
                        data=built["data"],
                        indices=built["indices"],
                        updates=built.get("updates"),
                        reduction=reduction,
                        expectation=expectation,
                        description=case["description"].strip(),
                        spec=case["spec"],
                        decisions=tuple(case.get("decisions", ())),
                        tags=tuple(case.get("tags", ())),
                        source=Source(self.path, raw.line),
                        nodes=nodes,
                    )
                )
        return out


def _as_built_problem(tags) -> tuple[tuple, str] | None:
    """(field, message) for ``as-built-`` tags that name no variant, or name
    two: ``run --cases`` runs a saved node case as built in the variant its
    tag names, so a misspelt one would leave the node judged as built nowhere."""
    built = [(i, t) for i, t in enumerate(tags) if t.startswith(variants.AS_BUILT_TAG)]
    for index, tag in built:
        if tag[len(variants.AS_BUILT_TAG) :] not in variants.VARIANTS:
            known = ", ".join(variants.AS_BUILT_TAG + v for v in variants.VARIANTS)
            return ("tags", index), f"{tag!r} names no model variant (known: {known})"
    if len(built) > 1:
        return ("tags", built[1][0]), (
            f"{built[1][1]!r}: a second as-built tag (the case is as built in "
            f"{built[0][1][len(variants.AS_BUILT_TAG) :]!r}); a case is as built in one variant"
        )
    return None


def _as_list(value) -> list:
    return list(value) if isinstance(value, list) else [value]


def _names(value, all_names: tuple[str, ...]) -> list[str]:
    return list(all_names) if value == "all" else _as_list(value)


def discover(paths: Iterable[Path]) -> list[Path]:
    """Case files named by paths: files as given, folders searched for *.yaml / *.yml
    except below a ``known/`` folder (baselines of known discrepancies, not cases).
    Each file once (by its resolved path, where first named): a file named
    twice, or by its folder and by itself (``--cases shipped cases/gather``),
    is read, counted and digested once."""
    found: dict[Path, Path] = {}  # resolved -> as first named
    for path in paths:
        path = Path(path)
        if path.is_dir():
            named = sorted(
                p
                for p in path.rglob("*")
                if p.suffix in (".yaml", ".yml") and "known" not in p.relative_to(path).parts
            )
        else:
            named = [path]
        for file in named:
            found.setdefault(file.resolve(), file)
    return list(found.values())


def load_file(path: Path, memory: int = DEFAULT_CASE_MEMORY) -> list[Case]:
    """The cases of one case file; ``memory``: the memory guard (``--case-memory``)
    that bounds the values its ``npy`` and ``json`` generators read."""
    return _CaseFileReader(Path(path), memory).read_or_raise()


def load(paths: Iterable[Path]) -> list[Case]:
    """All cases of all files, or CaseErrors listing every problem found."""
    return load_all(paths).cases


@dataclass
class Loaded:
    """What ``--cases`` paths gave: the cases (case files first, then the
    backend test folders'), the test folders not taken (each with its reason:
    :class:`conformance.cases.backend.NotTaken`), and every file a case was
    read from (the case files, the tests' models and ``.pb`` files)."""

    cases: list[Case]
    not_taken: list
    files: list[Path]


def load_all(paths: Iterable[Path], memory: int = DEFAULT_CASE_MEMORY) -> Loaded:
    """The cases of case files and of ONNX backend test folders
    (:mod:`conformance.cases.backend`) below the given paths, or CaseErrors
    listing every problem found; ``memory`` as :func:`load_file` takes it."""
    from conformance.cases import backend  # it imports this module's CaseFileError

    paths = [Path(p) for p in paths]
    # a model named on its own stands for its test folder
    models = [p for p in paths if p.suffix == backend.MODEL_SUFFIX and p.is_file()]
    files = discover([p for p in paths if p not in models])
    tests = backend.read([*(p for p in paths if p.is_dir()), *(m.parent for m in models)])
    errors: list[CaseFileError] = []
    if not files and not (tests.cases or tests.not_taken or tests.errors):
        errors.append(
            CaseFileError(
                Path(", ".join(map(str, paths)) or "."),
                None,
                "",
                "no case files (*.yaml, *.yml) and no backend test folders (*/model.onnx) found",
            )
        )
    cases: list[Case] = []
    first_seen: dict[str, Source] = {}  # base id -> where it was first defined
    for path in files:  # each once: discover drops a file named twice
        if not path.exists():
            errors.append(CaseFileError(path, None, "", "no such file or folder"))
            continue
        reader = _CaseFileReader(path, memory)
        file_cases = reader.read()
        errors.extend(reader.errors)
        reported: set[Source] = set()
        for case in file_cases:
            first = first_seen.setdefault(case.base_id, case.source)
            if first == case.source:
                cases.append(case)
            elif case.source not in reported:  # once per entry, not per expansion
                reported.add(case.source)
                message = f"duplicate id {case.base_id!r} (first at {first})"
                errors.append(CaseFileError(path, case.source.line, "id", message))
    errors.extend(tests.errors)
    for case in tests.cases:
        first = first_seen.setdefault(case.base_id, case.source)
        if first == case.source:
            cases.append(case)
        else:
            message = f"duplicate id {case.base_id!r} (first at {first})"
            errors.append(CaseFileError(case.source.path, None, "id", message))
    if not cases and not errors and tests.not_taken:  # nothing to judge: said, not passed
        errors += [
            CaseFileError(n.folder, None, "", f"not taken: {n.reason}") for n in tests.not_taken
        ]
        message = "no case: no case file, and no test folder is a Gather or GatherElements test"
        if any(Path(p).suffix.lower() == ".onnx" for p in paths):  # a user's model, most likely
            message += "; an ONNX model: judge its nodes with `conformance model FILE.onnx`"
        errors.append(CaseFileError(Path(", ".join(map(str, paths))), None, "", message))
    if errors:
        raise CaseErrors(errors)
    return Loaded(cases, tests.not_taken, [*files, *tests.files])


def default_case_paths() -> list[Path]:
    """The shipped corpus (:func:`conformance.shipped.corpus`: the wheel's, or a
    clone's cases/), never a ``cases`` folder that happens to be in the working
    directory: a run names its own case files with ``--cases``."""
    return [shipped.corpus()]


def case_paths(paths: Iterable[Path | str] | None) -> list[Path]:
    """The case paths a command was given: none means the shipped corpus; given
    ones replace it, and the word ``shipped`` among them stands for it
    (``--cases shipped my/cases`` adds to it)."""
    paths = list(paths or [])
    if not paths:
        return default_case_paths()
    return shipped.expand(paths, shipped.corpus())
