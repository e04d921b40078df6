"""A YAML input held to its JSON Schema, each problem said at its line and field.

Baselines (``cases/known/*.yaml``) and targets files (``--targets``) are
checked against the schemas users validate them against,
``docs/schemas/baseline.schema.json`` and ``targets.schema.json`` (shipped as
``conformance/schemas``: :func:`conformance.shipped.schemas`), as a run
folder's files are, through the one reader of our schemas
(:mod:`conformance.strict_json`): jsonschema-rs (the same draft, compiled)
decides whether a file is valid, and only a file it refuses is checked again
by the ``jsonschema`` library, whose errors carry the path that the YAML
loader's lines (:mod:`conformance.cases.yaml_lines`) turn into
``file:line: field: message``. Every command that gates reads the
baselines, and jsonschema alone took about as long again as parsing them
(benchmarks/baseline_read.py). Both are held to the readers' ``integer``:
``13.0`` and ``true`` are not integers.

A message says the value and what it must be, in the schema's own words (the
``description`` of the node the value broke, with its ``enum`` listed): the
schema is the one statement of the format, and its words are what a user
reading it sees too.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from conformance import strict_json
from conformance.cases import yaml_lines
from conformance.messages import shown

if TYPE_CHECKING:
    from conformance.cases.loader import YamlFileReader

_TYPES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "array": "a list",
    "object": "a mapping",
    "boolean": "true or false",
    "null": "empty",
}
# Keywords that judge a value of the right type: said only when its type is right.
_VALUE_KEYWORDS = frozenset(
    {"enum", "const", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems",
     "minProperties"}
)  # fmt: skip


schema = strict_json.schema  # the shipped schema ``name`` (``baseline``, ``targets``)


@cache
def _compiled(name: str) -> strict_json.Compiled:
    return strict_json.Compiled(schema(name))


def check(reader: YamlFileReader, name: str) -> set[tuple]:
    """Report every way ``reader.root`` breaks the schema ``name`` through
    ``reader.error`` (in the order of the file's lines); return the paths of
    the values found wrong (a mapping missing a field, the key of a bad name),
    so that the reader checks in code only what the schema passed."""
    if _compiled(name).surely_valid(reader.root, whole_floats=None):
        return set()
    problems = []
    for error in _compiled(name).errors(reader.root):
        problems.extend(_problems(error))
    by_path: dict[tuple, list] = {}
    for problem in problems:
        by_path.setdefault(problem[0], []).append(problem)
    said: dict[tuple, None] = {}  # (field, message, line), each once, in order found
    for found in by_path.values():
        if any(keyword == "type" for *_, keyword in found):  # the type says it; the rest follows
            found = [p for p in found if p[-1] not in _VALUE_KEYWORDS]
        for key_path, field, message, line, _ in found:
            if line is None:
                line = yaml_lines.line_of(reader.root, key_path)
            while len(field) > 2 and isinstance(field[-1], int):
                field = field[:-1]  # an item of a list of values is the value, not a field
            said[(field, message, line)] = None
    for field, message, line in sorted(said, key=lambda s: s[2] or 0):  # stable: schema order
        reader.error(field, message, line=line)
    return set(by_path)


def _problems(error) -> list[tuple]:
    """(path, field, message, line or None, keyword) for each problem ``error`` stands for."""
    keyword, path, node = error.validator, tuple(error.absolute_path), error.schema
    if "propertyNames" in error.schema_path:  # a bad key: said of the mapping, at the key's line
        key_path = (*path, error.instance)
        return [(key_path, path, _wrong(error), None, keyword)]
    if keyword == "additionalProperties" and node.get("additionalProperties") is False:
        allowed = ", ".join(node.get("properties", {}))
        extra = sorted(set(error.instance) - set(node.get("properties", {})), key=str)
        return [
            ((*path, key), (*path, key), f"unknown field (allowed: {allowed})", None, keyword)
            for key in extra
        ]
    if keyword == "required":
        found = []
        for field in error.validator_value:
            if field not in error.instance:
                said = node.get("properties", {}).get(field, {}).get("description")
                message = f"missing field {field!r}" + (f": {said}" if said else "")
                found.append((path, path, message, None, keyword))
        return found
    if keyword in ("anyOf", "oneOf"):
        branches = error.validator_value
        if all(set(branch) == {"required"} for branch in branches):  # which fields to give
            names = " or ".join(repr(b["required"][0]) for b in branches)
            return [(path, path, node.get("description") or f"give {names}", None, keyword)]
        # one value or a list of them: the branch of the value's own kind says what is wrong
        listed = isinstance(error.instance, list)
        chosen = next(
            (i for i, branch in enumerate(branches) if (branch.get("type") == "array") == listed),
            None,
        )
        inner = [e for e in error.context or () if e.relative_schema_path[0] == chosen]
        if inner:
            return [problem for e in inner for problem in _problems(e)]
    if keyword == "not" and set(error.validator_value) == {"required"}:  # fields not together
        field = (*path, error.validator_value["required"][-1])
        return [(field, field, node.get("description") or "not allowed here", None, keyword)]
    return [(path, path, _wrong(error), None, keyword)]


def _wrong(error) -> str:
    """``VALUE is not WHAT IT MUST BE`` for a keyword that judged one value."""
    keyword, value, node = error.validator, error.instance, error.schema
    what = node.get("description") or _words(error)
    if "enum" in node and keyword in ("enum", "type"):
        what += f" ({', '.join(map(str, node['enum']))})"
    if keyword in ("minItems", "minProperties", "minLength") and not value:
        return f"{shown(value)} is empty; give {what}"
    said = shown(value)
    if isinstance(value, bool) and "integer" in str(node.get("type")):
        said += " (a boolean)"
    return f"{said} is not {what}"


def _words(error) -> str:
    keyword, wanted = error.validator, error.validator_value
    if keyword == "type":
        kinds = [wanted] if isinstance(wanted, str) else wanted
        return " or ".join(_TYPES.get(kind, kind) for kind in kinds)
    if keyword == "enum":
        return "one of"
    if keyword == "pattern":
        return f"text of the form {wanted}"
    if keyword in ("minimum", "maximum"):
        return f"{'>=' if keyword == 'minimum' else '<='} {wanted}"
    return f"what the schema says ({error.message[:120]})"
