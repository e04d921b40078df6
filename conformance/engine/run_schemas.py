"""A run folder's files held to their JSON Schemas, the ones users validate against
(and an export's ``manifest.json``, which ``export --force`` reads the same way).

The schemas (docs/schemas/*.schema.json, shipped as conformance/schemas:
:func:`conformance.shipped.schemas`) are the one statement of what each file
holds. The readers (gate, report, diff, scoreboard, the pytest plugin) read
through :func:`check`, so that a file of the wrong shape is refused naming the
file, the line and the field (exit 2) instead of ending in an exception far
from it, or in a wrong verdict. A run folder's files are input like any other:
copied between machines, cut by a full disk, edited by hand.

What a reader holds a file to is its schema, loosened where a writer
promises more than a reader needs: the fields that must be there
(``required``) are only those the readers index (:data:`READ_REQUIRES`), so
that a folder an older version wrote, or a small one made by hand, is read
for what it has.
Likewise the rules of a record's ``allOf`` (the fields each outcome kind has
and has not: a crash its ``signal``, a pass no ``stage``) are the writer's:
the readers ask for those fields as they may be absent, and the summary's
counts, checked next, tell a record whose kind was edited. A run id is held
to be text, not to the writer's form (16 hex digits): the readers only
compare the ids of a folder's files. Every other field that is there is held
to the schema (types, enums, shapes, nested objects whole).

Speed: a results file holds ten thousand records and more, and jsonschema
checks about one a millisecond. Each value is checked by jsonschema-rs (the
same draft, compiled); only a value it refuses, or one it could read
otherwise (a float with an integral value: JSON Schema counts ``13.0`` as an
integer, these readers do not), is checked again by jsonschema, whose error
says where and what (benchmarks/read_speed.py; figures in docs/development.md).
"""

from __future__ import annotations

import json
import math
import reprlib
from collections.abc import Iterator
from functools import cache

import jsonschema
import jsonschema_rs

from conformance import shipped
from conformance.errors import ConformanceError


class RecordsError(ConformanceError, ValueError):
    """A results file or run folder that cannot be read; says which and where."""


# The fields of each file that the readers index without asking whether they
# are there, by where they are in it (``groups[]``: each item of the list
# groups): what a file must have to be read at all. Everything else its schema
# requires is a writer's promise, not a reader's need.
_KEY = ("runtime", "kind", "op", "group")  # a discrepancy group's key (engine.groups)
_TENSOR = ("dtype", "shape")
READ_REQUIRES: dict[str, dict[str, tuple[str, ...]]] = {
    "result": {"": ("case_id", "runtime", "variant", "op", "kind", "message", "opset", "dtype",
                    "data_shape", "indices_shape"),
               "nodes[]": ("model", "graph", "node")},  # report/machine.py indexes them
    "header": {},
    "summary": {"": ("records", "counts", "discrepancies", "harness_errors", "groups"),
                "groups[]": (*_KEY, "records"),
                "case_problems[]": ("case_id", "source", "problem")},
    "groups": {"": ("groups",), "groups[]": (*_KEY, "case_id", "data", "indices"),
               "groups[].data": _TENSOR, "groups[].indices": _TENSOR,
               "groups[].reproducer": ("data", "indices"),
               "groups[].reproducer.data": _TENSOR, "groups[].reproducer.indices": _TENSOR},
    "gate": {"": ("passed", "new", "fixed", "not_used"), "new[]": (*_KEY, "count"),
             "groups[]": (*_KEY, "count", "new"), "fixed[]": ("where",),
             "not_used[]": ("where",), "unmatched[]": ("where",), "not_reproduced[]": ("where",),
             "entries[]": ("where",), "groups[].known[]": ("where",)},
    "findings": {"bugs[]": ("id", "runtime", "kind", "op", "cause", "classes"),
                 "classes[]": ("signature",),
                 "classes[].signature": ("runtime", "op", "kind", "dtype", "variant", "opset",
                                         "violation", "features"),
                 "classes[].case": ("data", "indices"), "classes[].case.data": _TENSOR,
                 "classes[].case.indices": _TENSOR},
    # conformance export's manifest, as --force reads a previous export's
    # (conformance.export.folder.previous_files)
    "manifest": {"": ("tool", "format", "tests", "expected_failures"),
                 "tests[]": ("name", "inputs")},
}  # fmt: skip
MAX_DEPTH = 100  # JSON nested deeper is not of ours (a tensor has at most 64 dimensions)


@cache
def schema(name: str) -> dict:
    """The shipped schema ``name`` (``result``, ``header``...), as users have it."""
    return json.loads((shipped.schemas() / f"{name}.schema.json").read_text(encoding="utf-8"))


@cache
def reading(name: str) -> dict:
    """The schema ``name`` as a reader holds a file to it: every ``required``
    but those that tell things apart (:func:`_loosened`) replaced by
    :data:`READ_REQUIRES`, no ``allOf`` at the top, and a run id any text (the
    module's docstring says why). KeyError for a field of READ_REQUIRES that
    the schema does not have (tests/test_formats.py asks)."""
    full = schema(name)
    read = _loosened(full)
    read.pop("allOf", None)  # which fields each outcome kind has: a writer's promise
    properties = read.get("properties", {})
    if "run_id" in properties:
        run_id = {key: value for key, value in properties["run_id"].items() if key != "pattern"}
        read["properties"] = {**properties, "run_id": run_id}
    for where, names in READ_REQUIRES[name].items():
        node = read
        for step in filter(None, where.replace("[]", ".[]").split(".")):
            node = _inlined(node, full)
            node = node["items"] if step == "[]" else node["properties"][step]
        node = _inlined(node, full)
        missing = [field for field in names if field not in node["properties"]]
        if missing:
            raise KeyError(f"{name}.schema.json: {where or 'the file'} has no {missing}")
        node["required"] = list(names)
    return read


def _loosened(node, telling: bool = False):
    """A copy of the schema ``node`` without ``required``, but where it
    tells things apart (``telling``): the forms of a oneOf or anyOf, what a
    ``not`` forbids, the condition of an ``if``."""
    if isinstance(node, list):
        return [_loosened(item, telling) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: _loosened(value, telling or key in ("oneOf", "anyOf", "not", "if"))
        for key, value in node.items()
        if key != "required" or telling
    }


def _inlined(node: dict, full: dict) -> dict:
    """``node`` made a place of its own to write in: a ``$ref`` to the
    schema's ``$defs`` replaced by a copy of what it names (loosened)."""
    ref = node.get("$ref")
    if ref and ref.startswith("#/$defs/"):
        named = _loosened(full["$defs"][ref.removeprefix("#/$defs/")])
        node.clear()
        node.update(named)
    return node


def _integer(_checker, value) -> bool:
    # JSON Schema counts 13.0 as an integer; these readers index lists and count
    # with them, so a float is not one (as case files: conformance.cases.loader).
    return isinstance(value, int) and not isinstance(value, bool)


def _number(_checker, value) -> bool:
    # NaN and Infinity are not JSON numbers (Python's parser reads them all the same).
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not isinstance(value, float) or math.isfinite(value)


_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _integer, "number": _number}
    ),
)


@cache
def _exact(name: str):
    return _Validator(reading(name), registry=shipped.schema_registry())


@cache
def _fast(name: str):
    return jsonschema_rs.validator_for(reading(name), registry=shipped.fast_schema_registry())


def shown(value) -> str:
    text = reprlib.repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# -- parsing: what is JSON text of ours --------------------------------------------------
class NotText(ValueError):
    """JSON that parses but holds what no terminal or page can show."""


class _Floats:
    """json's float hook: notes a float whose value is whole (13.0), which
    jsonschema-rs would take for an integer where the readers do not."""

    def __init__(self) -> None:
        self.whole = False

    def __call__(self, text: str) -> float:
        value = float(text)
        if value.is_integer():
            self.whole = True
        return value


def _depth(value) -> int:
    """How deep lists and objects nest in a JSON value (iteratively: no recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if depth > MAX_DEPTH:
                break
            todo.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict)
                                                          else item))  # fmt: skip
    return deepest


def parse_noting(raw: bytes) -> tuple[object, bool]:
    """(the JSON value of ``raw``, whether it holds a float of whole value);
    ValueError saying why it is not JSON (for a person)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    floats = _Floats()
    try:
        value = json.loads(text, parse_float=floats)
    except json.JSONDecodeError as error:
        raise ValueError(error.msg) from None
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:  # an integer of more digits than Python converts
        raise ValueError(str(error).split(";")[0]) from None
    # as deep as the brackets it has at most (each counted, even those in strings)
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    if b"\\ud" in raw.lower():
        try:  # an escaped lone surrogate: JSON holds it, no terminal or page can
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise NotText("a lone surrogate in a string: not text") from None
    return value, floats.whole


def parse(raw: bytes):
    """The JSON value of ``raw``; ValueError saying why not (for a person)."""
    return parse_noting(raw)[0]


# -- checking: the schema's verdict, said as a person reads it ---------------------------
def check(value, name: str, where: str, whole_floats: bool = True) -> None:
    """RecordsError ``where: field: value is not what it must be`` unless
    ``value`` is what the schema ``name`` says, as a reader reads it
    (:func:`reading`). ``whole_floats``: whether the value may hold a float of
    whole value (:func:`parse_noting`). A value jsonschema-rs finds valid is
    valid; jsonschema is asked only about the others, for its error."""
    fast = _fast(name)
    if whole_floats:
        # JSON Schema's 13.0 is an integer; the readers' is not. Valid with each
        # whole float an integer (every other keyword as the readers judge it)
        # and valid with each one off the integers (no integer field holds one):
        # valid as the readers judge it.
        if fast.is_valid(_whole_floats(value, int)) and fast.is_valid(
            _whole_floats(value, _off_whole)
        ):
            return
    elif fast.is_valid(value):
        return
    error = next(_exact(name).iter_errors(value), None)
    if error is not None:
        field, said = _said(error)
        field = f"{field}: " if field else ""
        raise RecordsError(f"{where}: {field}{said} (docs/schemas/{name}.schema.json)")


def _off_whole(value: float) -> float:
    return value + 0.5


def _whole_floats(value, to):
    """``value`` with each float of whole value (13.0) made ``to(it)``."""
    if isinstance(value, float):
        return to(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {key: _whole_floats(item, to) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_floats(item, to) for item in value]
    return value


def _field(path) -> str:
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            step = step if step.isprintable() else repr(step)  # a name from the file: shown safely
            out += f".{step}" if out else step
    return out


_TYPES = {
    "integer": "a whole number",
    "number": "a finite number",
    "string": "text",
    "array": "a list",
    "object": "an object",
    "boolean": "true or false",
    "null": "null",
}


def _must(error) -> str:
    """What the value must be, in words, for a failed keyword."""
    keyword, wanted = error.validator, error.validator_value
    if keyword == "type":
        wanted = [wanted] if isinstance(wanted, str) else wanted
        return " or ".join(_TYPES.get(kind, kind) for kind in wanted)
    if keyword == "enum":
        names = ", ".join(map(json.dumps, wanted[:8])) + (", ..." if len(wanted) > 8 else "")
        return f"one of {names}"
    if keyword == "const":
        return json.dumps(wanted)
    if keyword in ("minimum", "exclusiveMinimum"):
        return f"{'>=' if keyword == 'minimum' else '>'} {wanted}"
    if keyword in ("maximum", "exclusiveMaximum"):
        return f"{'<=' if keyword == 'maximum' else '<'} {wanted}"
    if keyword == "minLength":
        return "non-empty text" if wanted == 1 else f"text of {wanted} characters or more"
    if keyword == "maxLength":
        return f"text of {wanted} characters or fewer"
    if keyword == "minItems":
        return "a non-empty list" if wanted == 1 else f"a list of {wanted} items or more"
    if keyword == "maxItems":
        return f"a list of {wanted} items or fewer"
    if keyword == "uniqueItems":
        return "a list without repeats"
    if keyword == "pattern":
        return f"text of the form {wanted}"
    return f"what the schema says ({error.message[:120]})"


def _deepest(errors) -> Iterator:
    """The errors of a failed oneOf/anyOf that say most: in the branch that
    went deepest into the value (a type error at the value itself only says
    the branch was of another type)."""
    errors = list(errors)
    return iter(sorted(errors, key=lambda error: -len(error.absolute_path)))


def _said(error) -> tuple[str, str]:
    """(field, what is wrong with it) for a jsonschema error."""
    keyword, path = error.validator, list(error.absolute_path)
    if keyword in ("oneOf", "anyOf") and error.context:
        typed = [e for e in error.context if not (e.validator == "type" and
                                                  list(e.absolute_path) == path)]  # fmt: skip
        deeper = [e for e in typed if len(e.absolute_path) > len(path)]
        if deeper:
            return _said(next(_deepest(deeper)))
        if len(typed) == 1:
            return _said(typed[0])
        return _field(path), f"{shown(error.instance)} is not of a form the schema gives"
    if keyword == "required":
        missing = next(name for name in error.validator_value if name not in error.instance)
        return _field([*path, missing]), "None is not there (a field every one has)"
    if keyword == "additionalProperties":
        extra = sorted(map(repr, set(error.instance) - set(error.schema.get("properties", {}))))
        return _field(path), (
            f"{shown(error.instance)} is not an object of only "
            f"{', '.join(error.schema.get('properties', {}))} ({extra[0] if extra else '?'}?)"
        )
    if keyword == "not":
        present = [name for name in _named(error.validator_value) if name in error.instance]
        name = present[0] if present else None
        if name is not None:
            return _field([*path, name]), (
                f"{shown(error.instance[name])}: a field this record's kind does not have"
            )
    return _field(path), f"{shown(error.instance)} is not {_must(error)}"


def _named(schema: dict) -> list[str]:
    """The field names a ``not`` forbids (``required``, or ``anyOf`` of them)."""
    names = list(schema.get("required", []))
    for branch in schema.get("anyOf", []):
        names += branch.get("required", [])
    return names
