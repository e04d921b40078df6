"""The one reader of our JSON Schemas: strict JSON, and a value held to a shipped schema.

Every file of ours that a user, a machine of a fleet or a full disk may have
written is input: a run folder's files (:mod:`conformance.engine.run_schemas`),
an export's ``manifest.json``, a fuzz store's entries
(:mod:`conformance.fuzz.store.entry`) and, read from YAML, baselines and
targets files (:mod:`conformance.cases.yaml_schema`). Each is held to its
schema in ``docs/schemas/`` as shipped (:func:`conformance.shipped.schemas`),
the one statement of its format, through this module:

* :func:`parse_noting`: JSON text of ours: UTF-8, nested at most
  :data:`MAX_DEPTH` levels (the one depth policy of every input of ours, case
  files included), no lone surrogate; with ``finite``, no ``NaN`` or
  ``Infinity`` anywhere (a store entry's opaque fields, which no schema
  types). It notes whether a float of whole value (``13.0``) is there.
* :class:`Compiled`: a schema compiled twice. jsonschema-rs (the same draft,
  compiled) decides whether a value is valid; only a value it refuses is
  checked again by the ``jsonschema`` library, whose errors say where and
  what (about one record a millisecond: benchmarks/read_speed.py, figures
  in docs/development.md). Both hold the readers' types: ``13.0`` and
  ``true`` are not integers, ``NaN`` is not a number (jsonschema-rs, which
  would count ``13.0`` an integer, is asked about the value with each whole
  float made an integer and made a fraction: valid both ways, valid).
* :func:`said`: a jsonschema error in the JSON readers' words,
  ``field: VALUE is not WHAT IT MUST BE`` (the YAML readers say theirs at a
  line: :mod:`conformance.cases.yaml_schema`).

Where it sits: beside :mod:`conformance.shipped`, below ``cases``, so that
``cases``, ``engine``, ``fuzz`` and ``export`` all read through it; it
imports nothing of ours but :mod:`conformance.shipped` and
:mod:`conformance.messages`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from functools import cache

import jsonschema
import jsonschema_rs

from conformance import shipped
from conformance.messages import shown

# How deep lists and mappings nest in any input of ours, JSON or YAML: deeper
# is not of ours (a tensor has at most 64 dimensions, a store entry's found is
# 4 deep), and a recursive reader stays far from Python's recursion limit. An
# input the tool copies deeper into a file of its own is read less deep
# (parse_noting's max_depth: a store entry, conformance.fuzz.store.entry).
MAX_DEPTH = 100


# -- parsing: what is JSON text of ours --------------------------------------------------
class NotText(ValueError):
    """JSON that parses but holds what no terminal or page can show."""


class NotJsonText(ValueError):
    """Not JSON: ``str()`` is the reason in a few words (``Expecting value``),
    :attr:`detail` the same with where in the text it is."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(reason)
        self.detail = detail


class NotUtf8(NotJsonText):
    """Bytes that are not UTF-8 text."""


class _Floats:
    """json's float hook: notes a float whose value is whole (13.0), which
    jsonschema-rs would take for an integer where the readers do not; with
    ``finite``, refuses one beyond a float's range (``1e999``)."""

    def __init__(self, finite: bool) -> None:
        self.whole = False
        self.finite = finite

    def __call__(self, text: str) -> float:
        value = float(text)
        if value.is_integer():
            self.whole = True
        elif self.finite and not math.isfinite(value):
            raise ValueError(f"{shown(text)} is beyond a float's range: not a JSON number")
        return value


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _depth(value, most: int = MAX_DEPTH) -> int:
    """How deep lists and objects nest in a JSON value (iteratively: no
    recursion), counted up to one past ``most``."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if depth > most:
                break
            todo.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict)
                                                          else item))  # fmt: skip
    return deepest


def parse_noting(
    raw: bytes, *, finite: bool = False, max_depth: int = MAX_DEPTH
) -> tuple[object, bool]:
    """(the JSON value of ``raw``, whether it holds a float of whole value);
    ValueError saying why it is not JSON of ours (for a person): :class:`NotUtf8`,
    :class:`NotJsonText`, :class:`NotText`, or too deep, or (``finite``) a NaN.
    ``max_depth``: less than :data:`MAX_DEPTH` for an input whose values the
    tool copies deeper into a file of its own (a store entry's), so that what
    is read here is written and read back within :data:`MAX_DEPTH`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotUtf8(
            "not UTF-8", f"not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None
    floats = _Floats(finite)
    try:
        if finite:
            value = json.loads(text, parse_float=floats, parse_constant=_not_a_number)
        else:
            value = json.loads(text, parse_float=floats)
    except json.JSONDecodeError as error:
        raise NotJsonText(error.msg, str(error)) from None
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    except ValueError as error:  # an integer of more digits than Python converts; a NaN
        raise ValueError(str(error).split(";")[0]) from None
    # as deep as the brackets it has at most (each counted, even those in strings)
    if raw.count(b"[") + raw.count(b"{") > max_depth and _depth(value, max_depth) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    if b"\\ud" in raw.lower():
        try:  # an escaped lone surrogate: JSON holds it, no terminal or page can
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise NotText("a lone surrogate in a string: not text") from None
    return value, floats.whole


def parse(raw: bytes, *, finite: bool = False):
    """The JSON value of ``raw``; ValueError saying why not (for a person)."""
    return parse_noting(raw, finite=finite)[0]


# -- the schemas, compiled ------------------------------------------------------------
@cache
def schema(name: str) -> dict:
    """The shipped schema ``name`` (``result``, ``baseline``...), as users have it."""
    return json.loads((shipped.schemas() / f"{name}.schema.json").read_text(encoding="utf-8"))


def _integer(_checker, value) -> bool:
    # JSON Schema counts 13.0 as an integer; our readers index lists and count
    # with them, so a float is not one (as case files: conformance.cases.loader),
    # and true is not 1.
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


class Compiled:
    """The schema ``document`` compiled for both validators (the module
    docstring says which decides and which explains)."""

    def __init__(self, document: dict) -> None:
        self.document = document
        # references to the shared definitions (defs.schema.json) resolve through the registries
        self.exact = _Validator(document, registry=shipped.schema_registry())
        self.fast = jsonschema_rs.validator_for(document, registry=shipped.fast_schema_registry())

    def surely_valid(self, value, whole_floats: bool | None = True) -> bool:
        """Whether jsonschema-rs finds ``value`` valid as the readers judge it
        (False: ask :meth:`errors`). ``whole_floats``: whether ``value`` may
        hold a float of whole value (:func:`parse_noting` says; None: look)."""
        if whole_floats is None:
            whole_floats = _has_whole_float(value)
        try:
            if not whole_floats:
                return self.fast.is_valid(value)
            # Valid with each whole float an integer (every other keyword as
            # the readers judge it) and valid with each one off the integers
            # (no integer field holds one): valid as the readers judge it.
            return self.fast.is_valid(_whole_floats(value, int)) and self.fast.is_valid(
                _whole_floats(value, _off_whole)
            )
        except ValueError:  # a mapping key that is not a string (YAML): jsonschema says where
            return False

    def errors(self, value) -> Iterator[jsonschema.ValidationError]:
        """jsonschema's errors for ``value``, in the order it finds them."""
        return self.exact.iter_errors(value)


def _has_whole_float(value) -> bool:
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, float):
            if item.is_integer():
                return True
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return False


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


# -- the JSON readers' words ----------------------------------------------------------
def problem(
    compiled: Compiled, value, whole_floats: bool | None = True, strict: bool = False
) -> str | None:
    """``field: VALUE is not WHAT IT MUST BE`` (or ``VALUE is not...`` for the
    whole value) if ``value`` breaks the schema as the readers judge it, else None.

    Where the two validators disagree (jsonschema-rs refuses, jsonschema finds
    nothing: Python's ``$`` also matches before a final line break, and only
    jsonschema-rs may check a ``format``), the value is valid, as the run
    folders' readers have always read it; ``strict`` (a store entry, whose
    patterns keep names safe to use) refuses it."""
    if compiled.surely_valid(value, whole_floats):
        return None
    error = next(compiled.errors(value), None)
    if error is None:
        return "not what the schema says (a line break at the end of a name?)" if strict else None
    field, what = said(error)
    return f"{field}: {what}" if field else what


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


def said(error) -> tuple[str, str]:
    """(field, what is wrong with it) for a jsonschema error."""
    keyword, path = error.validator, list(error.absolute_path)
    if keyword in ("oneOf", "anyOf") and error.context:
        typed = [e for e in error.context if not (e.validator == "type" and
                                                  list(e.absolute_path) == path)]  # fmt: skip
        deeper = [e for e in typed if len(e.absolute_path) > len(path)]
        if deeper:
            return said(next(_deepest(deeper)))
        if len(typed) == 1:
            return said(typed[0])
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
