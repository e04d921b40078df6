"""Baselines and targets files held to their JSON Schemas
(docs/schemas/baseline.schema.json, targets.schema.json): every shipped
baseline and every targets file the docs show is valid for a user's own
validator, each class of error is said at its file, line and field, and the
schemas say what the code's tables say. In process: the readers, no runs."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from jsonschema import Draft202012Validator

from conformance import shipped
from conformance.cases.loader import CaseErrors
from conformance.engine import targets
from conformance.gate import baseline
from tests.conftest import REPO

SCHEMAS = REPO / "docs" / "schemas"
TAIL = "    outcome: crash\n    reason: r\n    clause: bitwise-exact\n"


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def errors_of(load, path, text: str) -> list[str]:
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CaseErrors) as raised:
        load(path)
    return [str(error) for error in raised.value.errors]


def test_every_shipped_baseline_is_valid_for_a_users_validator():
    """What a user runs (any draft 2020-12 validator, the YAML read plainly)
    passes every shipped baseline, and the reader loads each."""
    validator = Draft202012Validator(schema("baseline"), registry=shipped.schema_registry())
    files = sorted(shipped.baselines().glob("*.yaml"))
    assert len(files) >= 6
    for path in files:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        problems = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(document)]
        assert not problems, (path, problems[:5])
        assert baseline.load_file(path), path


def test_every_targets_file_of_the_docs_is_valid():
    blocks = []
    for doc in ("docs/cli.md", "docs/development.md", "docs/oracle.md", "README.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        # an indented block that starts with `targets:` (the docs' YAML examples)
        for match in re.finditer(r"^    targets:\n(?:     .*\n|\n(?=     ))*", text, re.M):
            blocks.append((doc, "\n".join(line[4:] for line in match.group(0).splitlines())))
    assert len(blocks) >= 2, blocks
    validator = Draft202012Validator(schema("targets"), registry=shipped.schema_registry())
    for doc, block in blocks:
        document = yaml.safe_load(block)
        assert not list(validator.iter_errors(document)), (doc, block)


def test_what_loaded_before_the_schemas_still_loads(tmp_path):
    """An empty file, `entries:` and `observed:` with nothing: empty baselines."""
    path = tmp_path / "openvino.yaml"
    for text in ("", "# nothing known\n", "entries:\n", "observed:\nentries: []\n"):
        path.write_text(text)
        assert baseline.load_observed(path) == ([], [])


# -- each class of error, at its file, line and field ------------------------------------
BASELINE_ERRORS = {
    "type": (
        "entries:\n  - case: x\n" + TAIL + "    depends_on_values: 'yes'\n",
        ":6: entries[0].depends_on_values: 'yes' is not true or false",
    ),
    "missing field": (
        "entries:\n  - case: x\n    outcome: crash\n    clause: bitwise-exact\n",
        ":2: entries[0]: missing field 'reason': why this is known and accepted",
    ),
    "unknown field": (
        "entries:\n  - case: x\n" + TAIL + "    reasons: two\n",
        ":6: entries[0].reasons: unknown field (allowed: case, signature, outcome, reason,",
    ),
    "bad enum": (
        "entries:\n  - signature: {dtype: string, variant: [static, dynamc]}\n" + TAIL,
        ":2: entries[0].signature.variant: 'dynamc' is not a variant (static, dynamic, ",
    ),
    "bad pattern": (
        "entries:\n  - case: x\n    outcome: crash\n    reason: '   '\n    clause: bitwise-exact\n",
        ":4: entries[0].reason: '   ' is not why this is known and accepted: a non-empty string",
    ),
    "neither of two fields": (
        "entries:\n  - case: x\n    outcome: crash\n    reason: r\n",
        ":2: entries[0]: give the decisions-table 'clause' or an 'upstream' issue link",
    ),
    "a falsy entries (once read as none)": (
        "entries: 0\n",
        ":1: entries: 0 is not a list of entries",
    ),
}


@pytest.mark.parametrize("kind", BASELINE_ERRORS)
def test_a_bad_baseline_names_file_line_and_field(tmp_path, kind):
    text, expected = BASELINE_ERRORS[kind]
    path = tmp_path / "openvino.yaml"
    found = errors_of(baseline.load_file, path, text)
    assert any(line.startswith(f"{path}{expected}") for line in found), found


TARGETS_ERRORS = {
    "type": (
        "targets:\n  a:\n    adapter: reference\n    properties: [1]\n",
        ":4: targets.a.properties: [1] is not a mapping of property name to value",
    ),
    "missing field": (
        "targets:\n  a:\n    profile: default\n",
        ":2: targets.a: missing field 'adapter': a runtime name (openvino) or module:Class",
    ),
    "unknown field": (
        "targets:\n  a:\n    adapter: reference\n    pyhton: x\n",
        ":4: targets.a.pyhton: unknown field (allowed: adapter, profile, properties, python, "
        "device, gpu_workers)",
    ),
    "bad enum": (
        "targets:\n  a:\n    adapter: openvino\n    profile: fast\n",
        ":4: targets.a.profile: 'fast' is not a profile name (1thread, accuracy, ",
    ),
    "bad pattern": (
        "targets:\n  a:\n    adapter: reference\n  'a b':\n    adapter: reference\n",
        ":4: targets: 'a b' is not a target's name: 1 to 64 ASCII letters",
    ),
    "two fields that exclude each other": (
        "targets:\n  a:\n    adapter: openvino\n    profile: f32\n    properties: {A: 1}\n",
        ":5: targets.a.properties: give a profile or properties, not both",
    ),
}


@pytest.mark.parametrize("kind", TARGETS_ERRORS)
def test_a_bad_targets_file_names_file_line_and_field(tmp_path, kind):
    text, expected = TARGETS_ERRORS[kind]
    path = tmp_path / "targets.yaml"
    found = errors_of(targets.load_file, path, text)
    assert any(line.startswith(f"{path}{expected}") for line in found), found


def test_a_bad_target_does_not_hide_the_others_problems(tmp_path):
    """The schema's problems and the code's are said together, in line order."""
    path = tmp_path / "targets.yaml"
    found = errors_of(
        targets.load_file,
        path,
        "targets:\n  a:\n    adapter: nothing\n  b:\n    adapter: reference\n    extra: 1\n"
        "  c:\n    adapter: openvino\n    profile: no-opt\n",
    )
    assert [line.split(": ", 2)[:2] for line in found] == [
        [f"{path}:3", "targets.a.adapter"],
        [f"{path}:6", "targets.b.extra"],
        [f"{path}:9", "targets.c.profile"],  # a profile, of onnxruntime: the code says
    ]


# -- the schemas say what the code's tables say ---------------------------------------
def test_the_baseline_schema_is_the_signature_table():
    document = schema("baseline")
    fields = document["$defs"]["signature"]["properties"]
    assert list(fields) == list(baseline.SIGNATURE_FIELDS)
    # its $refs resolved as a validator does: its own $defs, and defs.schema.json's
    registry = shipped.schema_registry().with_contents([(document["$id"], document)])
    for name, allowed in baseline.SIGNATURE_FIELDS.items():
        ref = fields[name]["anyOf"][0]["$ref"]
        node = registry.resolver(document["$id"]).lookup(ref).contents
        if allowed is None:
            assert (node["minimum"], node["maximum"]) == (-(1 << 63), (1 << 63) - 1)
        else:
            assert tuple(node["enum"]) == allowed, name


def test_the_targets_schema_is_the_name_rule():
    document = schema("targets")
    names = document["properties"]["targets"]["propertyNames"]
    assert names["pattern"] == f"^{targets.NAME.pattern}(?!\\n)$"
    assert list(document["$defs"]["target"]["properties"]) == [
        "adapter", "profile", "properties", "python", "device", "gpu_workers",
    ]  # fmt: skip
