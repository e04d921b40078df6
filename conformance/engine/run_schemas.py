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

How a file is parsed (strict JSON, at most 100 levels deep) and checked
(jsonschema-rs decides, jsonschema says where and what) is
:mod:`conformance.strict_json`, the one reader of every schema of ours; this
module says what a run folder's readers hold each file to.
"""

from __future__ import annotations

from functools import cache

from conformance import strict_json
from conformance.errors import ConformanceError
from conformance.strict_json import MAX_DEPTH, NotText, parse, parse_noting

__all__ = [
    "MAX_DEPTH", "READ_REQUIRES", "NotText", "RecordsError", "check", "parse", "parse_noting",
    "reading", "schema",
]  # fmt: skip


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
schema = strict_json.schema  # the shipped schema ``name``, as users have it


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


@cache
def _compiled(name: str) -> strict_json.Compiled:
    return strict_json.Compiled(reading(name))


def check(value, name: str, where: str, whole_floats: bool = True) -> None:
    """RecordsError ``where: field: value is not what it must be`` unless
    ``value`` is what the schema ``name`` says, as a reader reads it
    (:func:`reading`). ``whole_floats``: whether the value may hold a float of
    whole value (:func:`parse_noting`). A value jsonschema-rs finds valid is
    valid; jsonschema is asked only about the others, for its error."""
    found = strict_json.problem(_compiled(name), value, whole_floats)
    if found is not None:
        raise RecordsError(f"{where}: {found} (docs/schemas/{name}.schema.json)")
