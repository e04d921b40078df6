"""The files of a run folder, held to their JSON Schemas (docs/schemas/): real
outputs of the real CLI (a small `conformance run` and a short `conformance
fuzz`), every record of results.jsonl included, and the schemas themselves."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from conformance import shipped
from conformance.adapters.registry import PROFILES
from conformance.engine import models, records, run_schemas
from conformance.engine.judge import DISCREPANCIES, KINDS
from conformance.engine.records import CPU_FLAGS
from conformance.report import scoreboard
from conformance.tables import decisions, dtypes, explanations, outcomes, spec
from conformance.tables.features import FEATURES
from conformance.tables.operators import OPERATORS
from tests.conftest import FIRST_ROUND_COMPLEX_SEED, REPO, conformance_here

SCHEMAS = REPO / "docs" / "schemas"
NAMES = (
    "result",
    "header",
    "summary",
    "groups",
    "gate",
    "report",
    "findings",
    "scoreboard",
    "nodes",
    "manifest",
    "baseline",
    "targets",
    "defs",
    "store-entry",
)
FILES = {  # file of a run folder -> its schema
    "header.json": "header",
    "summary.json": "summary",
    "groups.json": "groups",
    "gate.json": "gate",
    "report.json": "report",
}
# The tables the schemas' enums copy: each enum holding one of these names must be all of them.
ENUMS = {
    "kind": list(KINDS),
    "discrepancy": [kind for kind in KINDS if kind in DISCREPANCIES],  # baselines' outcomes
    "decision": list(decisions.BY_ID),
    "violation": ["none", *decisions.BY_ID],
    "explanation": list(explanations.BY_NAME),
    "profile": sorted({profile for known in PROFILES.values() for profile in known}),
    "CPU flag": list(CPU_FLAGS),
    "dtype": list(dtypes.NAMES),
    "variant": list(models.VARIANTS),
    "feature": list(FEATURES),
    "op": list(spec.OPS),
}

# A case of each outcome the run should show (on ONNX Runtime 1.2x-1.3x and
# OpenVINO 2025-2026, in the static and indices_initializer variants).
CASES = """
defaults:
  op: Gather
  opset: 13
  spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension of data"
cases:
  - id: fmt-pass
    dtype: int32
    data: [1, 2, 3]
    indices: [2, 0]
    expected: [3, 1]
    description: every runtime passes (the baseline below calls its entry fixed)
  - id: fmt-elements
    op: GatherElements
    dtype: float32
    attributes: {axis: 1}
    data: [[1, 2], [3, 4]]
    indices: [[0, 0], [1, 0]]
    expected: oracle
    description: every runtime passes
  - id: fmt-uint64-extremes
    dtype: uint64
    data: [18446744073709551615, 0, 9223372036854775808]
    indices: [2, 0]
    expected: oracle
    description: value_mismatch on OpenVINO (64-bit integers in 32 bits), cut to a reproducer
  - id: fmt-float16-nan
    dtype: float16
    data: {bits: [0x7e01, 0xfd55, 0x7c00, 0x8000, 0x0001]}
    indices: [4, 3, 2, 1, 0]
    expected: oracle
    description: value_mismatch on OpenVINO (quiet NaN); NaN and inf as strings in groups.json
  - id: fmt-complex
    dtype: complex64
    data: ["1-2j", "3+4j"]
    indices: [1]
    expected: oracle
    description: rejected by both runtimes; complex pairs in groups.json
  - id: fmt-strings
    dtype: string
    data: [["a", "b"], ["c", "d"]]
    indices: [1, 0]
    expected: oracle
    description: value_mismatch on ONNX Runtime (string blocks)
  - id: fmt-out-of-range
    dtype: int32
    data: [1, 2, 3]
    indices: [3]
    expect_error: index-out-of-range
    description: accepted_invalid on OpenVINO, both_rejected on ONNX Runtime
  - id: fmt-empty-indices
    dtype: float32
    data: {arange: {shape: [3, 4]}}
    indices: {full: {shape: [0], value: 0}}
    expected: oracle
    description: OpenVINO crashes (static) or drops the indices' shape (indices_initializer)
  - id: fmt-large
    dtype: uint64
    data: {random: {shape: [10001], seed: 1}}
    indices: {arange: {shape: [10001]}}
    expected: oracle
    description: more elements than groups.json writes out (values left out)
  - id: fmt-too-big
    dtype: float32
    data: {full: {shape: [300000], value: 1}}
    indices: [0]
    expected: oracle
    description: over --case-memory 1MiB, harness_unsupported with expected null
  - id: fmt-wrong-expected
    dtype: int32
    data: [1, 2, 3]
    indices: [0]
    expected: [2]
    description: a literal expectation the oracle disagrees with (case_problems)
"""

# A baseline that makes every list of gate.json non-empty.
KNOWN_OPENVINO = """
entries:
  - case: fmt-uint64-extremes
    signature: {variant: static}
    outcome: value_mismatch
    reason: only the static result is known, so the group is part new
    clause: bitwise-exact
  - case: fmt-pass
    outcome: value_mismatch
    reason: conforms now (fixed upstream?)
    clause: bitwise-exact
  - case: fmt-never-run
    outcome: crash
    reason: no result in scope
    clause: bitwise-exact
  - signature: {dtype: complex64}
    outcome: rejected
    reason: no complex types
    clause: data-dtype
    upstream: https://example.invalid/issues/1
    versions: ">=2000"
  - signature: {op: GatherElements, dtype: float32}
    outcome: crash
    reason: too few results in scope to tell
    clause: bitwise-exact
  - case: fmt-strings
    outcome: rejected
    reason: for other versions
    clause: data-dtype
    versions: "<1"
"""


@cache
def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(
        schema(name),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
        registry=shipped.schema_registry(),
    )


def problems(name: str, content, where: str) -> list[str]:
    """Every way ``content`` breaks its schema, and every top-level field the
    schema does not list (allowed for readers, but a writer must document it)."""
    found = [
        f"{where}: {error.json_path}: {error.message[:300]}"
        for error in validator(name).iter_errors(content)
    ]
    if isinstance(content, dict):
        extra = sorted(set(content) - set(schema(name)["properties"]))
        if extra:
            found.append(f"{where}: fields not in {name}.schema.json: {extra}")
    return found


def folder_problems(folder: Path, files) -> list[str]:
    found = []
    lines = (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines, f"{folder}: no results"
    for number, line in enumerate(lines, 1):
        found += problems("result", json.loads(line), f"results.jsonl:{number}")
    for file in files:
        path = folder / file
        assert path.exists(), f"{folder}: no {file}"
        found += problems(FILES.get(file, "findings"), json.loads(path.read_text()), file)
    return found


def say(found: list[str], most: int = 40) -> str:
    more = f"\n... and {len(found) - most} more" if len(found) > most else ""
    return "\n".join(found[:most]) + more


def read(folder: Path, file: str):
    if file.endswith(".jsonl"):
        return [json.loads(line) for line in (folder / file).read_text().splitlines()]
    return json.loads((folder / file).read_text(encoding="utf-8"))


# The two real runs are single tests, not fixtures shared by several, so that
# pytest-xdist runs them on two workers at once and each runs once.
def test_a_run_folder_matches_the_schemas(tmp_path):
    (tmp_path / "cases.yaml").write_text(CASES)
    (tmp_path / "known").mkdir()
    (tmp_path / "known" / "openvino.yaml").write_text(KNOWN_OPENVINO)
    done = conformance_here(
        "run", "--runtime", "onnxruntime", "openvino", "--cases", "cases.yaml",
        "--variants", "static", "indices_initializer", "--case-memory", "1MiB",
        "--gate", "--known", "known", "--out", "run", "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (1, 2), done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    out = tmp_path / "run"
    found = folder_problems(out, FILES)
    assert not found, say(found)

    # What the run must have exercised for the check to mean something.
    kinds = {record["kind"] for record in read(out, "results.jsonl")}
    wanted = set(KINDS) - {"dtype_mismatch", "timeout"}
    assert kinds >= wanted, f"the run showed no {sorted(wanted - kinds)}: pick other cases"
    groups = read(out, "groups.json")["groups"]
    assert any("reproducer" in group for group in groups)
    assert any("npz" not in group["data"] and "values" not in group["data"] for group in groups)
    assert read(out, "summary.json")["case_problems"]
    gate = read(out, "gate.json")
    empty = [
        name
        for name in ("new", "fixed", "unmatched", "not_reproduced", "not_used")
        if not gate[name]
    ]
    assert not empty, f"gate.json: empty {empty}"
    assert any(group["new_results"] and group["known"] for group in gate["groups"])


def test_the_schemas_are_valid_draft_2020_12():
    assert {path.name for path in SCHEMAS.glob("*.json")} == {f"{n}.schema.json" for n in NAMES}
    for name in NAMES:
        Draft202012Validator.check_schema(schema(name))
        assert schema(name)["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        # one base, so that "defs.schema.json" refers to the shared definitions from each
        assert schema(name)["$id"] == f"https://onnx-gather-conformance/{name}.schema.json"


def test_a_fuzz_campaign_matches_the_schemas(tmp_path):
    out = tmp_path / "fuzz"
    # A class in the first round (the seed's), bounded by examples: a 6 s budget
    # runs no round on a loaded machine. The files are what is checked here.
    done = conformance_here(
        "fuzz", "--max-examples", "64", "--time-budget", "3600",
        "--seed", FIRST_ROUND_COMPLEX_SEED, "--timeout", "30",
        "--runtime", "onnxruntime", "openvino", "--max-elements", "8", "--out", str(out),
        "--no-progress",
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    found = folder_problems(out, [*FILES, "findings.json"])
    assert not found, say(found)
    findings = read(out, "findings.json")
    assert findings["classes"], "the campaign found no class: nothing of findings.json checked"
    assert "campaign" in read(out, "header.json")
    assert all(r["source"].startswith("<generated>") for r in read(out, "results.jsonl"))


def enums(node):
    """Every enum list of a schema but those of conditions (``if``: which kinds...)."""
    if isinstance(node, dict):
        if "enum" in node:
            yield node["enum"]
        for key, value in node.items():
            if key != "if":
                yield from enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from enums(value)


def test_the_shared_definitions_are_the_tables():
    """defs.schema.json's enums, which the other schemas refer to, are the
    outcome table's kinds and discrepancies and the operators, in order."""
    shared = schema("defs")["$defs"]
    assert shared["kind"]["enum"] == [kind.name for kind in outcomes.OUTCOME_KINDS]
    wrong = [kind.name for kind in outcomes.OUTCOME_KINDS if kind.discrepancy]
    assert shared["discrepancy"]["enum"] == wrong
    assert shared["op"]["enum"] == list(spec.OPSETS)
    # the messages of the baselines' reader say a value's description (cases/yaml_schema.py)
    assert (shared["discrepancy"]["description"], shared["op"]["description"]) == (
        "a discrepancy kind",
        "an op",
    )


def test_the_scoreboard_schema_s_rows_are_the_operators():
    """A target's scores are required for every (op, opset) row, which the
    scoreboard derives from the operators' rows, in their order, then the total."""
    target = schema("scoreboard")["properties"]["targets"]["items"]
    rows = [scoreboard.row_name(op.name, opset) for op in OPERATORS.values() for opset in op.opsets]
    assert [scoreboard.row_name(*row) for row in scoreboard.ROWS] == rows
    assert target["properties"]["scores"]["required"] == [*rows, scoreboard.TOTAL]


def test_the_result_schema_s_conditions_are_the_table_s():
    """The kinds a record's conditional fields go with, as the outcome table
    has them: a stage, the refusals; what the spec expected (a dtype and a
    shape, or the violation), the kinds of valid inputs and of invalid ones."""
    rules = schema("result")["allOf"]

    def names(rule: Callable[[outcomes.OutcomeKind], bool]) -> list[str]:
        return [kind.name for kind in outcomes.OUTCOME_KINDS if rule(kind)]

    (stage,) = [rule for rule in rules if rule.get("then") == {"required": ["stage"]}]
    assert stage["if"]["properties"]["kind"]["enum"] == names(
        lambda kind: kind.response == outcomes.REFUSED
    )
    expected = {
        rule["then"]["properties"]["expected"]["required"][-1]: rule["if"]["properties"]["kind"]
        for rule in rules
        if "expected" in rule.get("then", {}).get("properties", {})
    }
    assert expected == {
        "shape": {"enum": names(lambda kind: kind.inputs == outcomes.VALID)},
        "violation": {"enum": names(lambda kind: kind.inputs == outcomes.INVALID)},
    }


def refs(node):
    """Every $ref of a schema."""
    if isinstance(node, dict):
        if "$ref" in node:
            yield node["$ref"]
        for value in node.values():
            yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


@pytest.mark.parametrize("name", NAMES)
def test_the_kind_enum_and_the_other_tables_are_the_code_s(name):
    document = schema(name)
    without_kinds = ("header", "nodes", "manifest", "baseline", "targets", "defs", "store-entry")
    if name not in without_kinds:  # all kinds
        assert "defs.schema.json#/$defs/kind" in set(refs(document))
    for ref in refs(document):  # to the shared definitions, or within the schema
        target = "defs" if ref.startswith("defs.schema.json#") else name
        assert ref.startswith(("#/$defs/", "defs.schema.json#/$defs/")), ref
        assert ref.rsplit("/", 1)[-1] in schema(target)["$defs"], ref
    for values in enums(document):
        tables = {table: names for table, names in ENUMS.items() if set(values) & set(names)}
        if tables:  # one of the tables it shares names with, whole (a decision id is a violation)
            assert values in tables.values(), f"{name}: an enum of {', '.join(tables)} is not one"
        shared = {"kind", "discrepancy", "op"} & set(tables)
        assert name == "defs" or not shared, f"{name}: its own {shared}, not defs.schema.json's"


def test_definitions_of_the_same_name_are_the_same_everywhere():
    seen: dict[str, tuple[str, dict]] = {}
    for name in NAMES:
        for definition, content in schema(name).get("$defs", {}).items():
            first = seen.setdefault(definition, (name, content))
            assert content == first[1], f"$defs/{definition}: {name} differs from {first[0]}"


def record(**changes) -> dict:
    base = {
        "case_id": "x.op13.int32.int64", "base_id": "x", "op": "Gather", "opset": 13,
        "runtime": "openvino", "variant": "static", "kind": "rejected", "message": "no",
        "dtype": "int32", "indices_dtype": "int64", "axis": None, "data_shape": [3],
        "indices_shape": [1], "source": "cases/x.yaml:3",
        "expected": {"dtype": "int32", "shape": [1]}, "disputed": [], "features": [],
        "load_ms": 0.2, "run_ms": None, "cached": False, "packed": False, "confirmed": None,
        "stage": "load",
    }  # fmt: skip
    base.update(changes)
    return {k: v for k, v in base.items() if v is not ...}


@pytest.mark.parametrize(
    "changes",
    [
        {"kind": "refused"},  # not a kind
        {"stage": ...},  # rejected without its stage
        {"kind": "pass", "stage": ...},  # fine...
        {"kind": "pass"},  # ...but a pass has no stage
        {"kind": "crash", "stage": ...},  # a crash needs its signal
        {"kind": "both_rejected"},  # refusing a valid input is not conforming
        {"expected": {"dtype": "int32", "shape": [1], "values": [2]}},
        {"dtype": "float8"},
        {"axis": "0"},
        {"harness_error": True},  # only on harness_unsupported
        {"case_id": ...},
        {"packed": ...},  # every record says whether it came from a pack
        {"confirmed": "yes"},
        {"packed_kind": "sort_of"},  # the kind a pack gave is a kind
    ],
)
def test_the_result_schema_is_exact(changes):
    broken = record(**changes)
    valid = changes == {"kind": "pass", "stage": ...}
    assert validator("result").is_valid(broken) == valid, problems("result", broken, "record")
    assert validator("result").is_valid(record())


def test_a_tensor_is_exact():
    tensor = {
        "dtype": "complex64",
        "shape": [2],
        "values": [[1.0, -2.0], [3.0, "nan (0x7fc00001)"]],
    }
    group = {
        "runtime": "openvino", "kind": "rejected", "op": "Gather", "group": "x",
        "case_id": "x.op13.complex64.int64", "variant": "static", "source": "x.yaml:1",
        "axis": None, "data": tensor, "indices": {"dtype": "int64", "shape": [], "values": 1},
    }  # fmt: skip
    assert validator("groups").is_valid(
        {"format": 1, "run_id": "0123456789abcdef", "groups": [group]}
    )
    wrong = copy.deepcopy(group)
    wrong["data"]["values"] = [{"re": 1}]
    assert not validator("groups").is_valid(
        {"format": 1, "run_id": "0123456789abcdef", "groups": [wrong]}
    )
    wrong = copy.deepcopy(group)
    wrong["data"]["elements"] = 2
    assert not validator("groups").is_valid(
        {"format": 1, "run_id": "0123456789abcdef", "groups": [wrong]}
    )


# The readers (engine/run_schemas) hold a run folder to these same schemas, as
# shipped, loosened only where a writer promises more than a reader needs.
READ = ("result", "header", "summary", "groups", "gate", "findings", "manifest")


@pytest.mark.parametrize("name", READ)
def test_the_readers_read_the_shipped_schemas_and_need_only_what_they_promise(name):
    shipped_schema = json.loads((shipped.schemas() / f"{name}.schema.json").read_text())
    assert run_schemas.schema(name) == shipped_schema == schema(name)
    run_schemas.reading(name)  # KeyError: the readers need a field the schema does not have
    for where, names in run_schemas.READ_REQUIRES[name].items():
        node = schema(name)
        for step in filter(None, where.replace("[]", ".[]").split(".")):
            node = node["items"] if step == "[]" else node["properties"][step]
            if "$ref" in node:
                node = schema(name)["$defs"][node["$ref"].removeprefix("#/$defs/")]
        if "$ref" in node:
            node = schema(name)["$defs"][node["$ref"].removeprefix("#/$defs/")]
        assert set(names) <= set(node.get("required", [])), (
            name,
            where,
            "required by readers only",
        )


RECORD = {
    "case_id": "a.op13.float32.int64", "base_id": "a", "op": "Gather", "opset": 13,
    "runtime": "onnxruntime", "variant": "static", "kind": "pass", "message": "",
    "dtype": "float32", "indices_dtype": "int64", "axis": 0, "data_shape": [3],
    "indices_shape": [2], "source": "x.yaml:1", "expected": {"dtype": "float32", "shape": [2]},
    "disputed": [], "features": [], "load_ms": 1.25, "run_ms": 0.5, "cached": False,
    "packed": False, "confirmed": None,
}  # fmt: skip


def _checked(text: str) -> str | None:
    """The reader's error for one line of results.jsonl, or None when it reads it."""
    value, whole = run_schemas.parse_noting(text.encode())
    try:
        run_schemas.check(value, "result", "r.jsonl:1", whole)
    except records.RecordsError as error:
        return str(error)
    return None


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({}, None),
        ({"load_ms": 2.0}, None),  # a whole float where a number goes: read
        ({"actual": {"dtype": "<U2", "shape": [], "values": ["ab"], "elements": 1},
          "kind": "dtype_mismatch"}, None),  # NumPy's name of a dtype outside ours
        ({"opset": 13.0}, "r.jsonl:1: opset: 13.0 is not a whole number"),
        ({"opset": float("nan")}, "r.jsonl:1: opset: nan is not a whole number"),
        ({"load_ms": float("nan")}, "r.jsonl:1: load_ms: nan is not a finite number or null"),
        ({"data_shape": [3, -1]}, "r.jsonl:1: data_shape[1]: -1 is not >= 0"),
        ({"dtype": "float33"}, "r.jsonl:1: dtype: 'float33' is not one of"),
        ({"expected": {"dtype": "float32", "shape": "2"}},
         "r.jsonl:1: expected.shape: '2' is not a list"),
        ({"actual": {"dtype": "int8", "shape": [], "values": [], "elements": 1, "x": 1}},
         "r.jsonl:1: actual: {"),
        ({"nodes": [{"model": "m", "graph": "g"}]},
         "r.jsonl:1: nodes[0].node: None is not there"),
    ],
    ids=repr,
)  # fmt: skip
def test_a_record_is_read_as_its_schema_says_fast_or_slow_alike(change, said):
    """jsonschema-rs says yes or no, jsonschema says where and what: both the
    same schema, and a whole float (13.0, which JSON Schema counts as an
    integer) judged as the readers judge it."""
    record = {**RECORD, **change}
    found = _checked(json.dumps(record))
    if said is None:
        assert found is None, found
    else:
        assert found is not None and found.startswith(said), found
        assert found.endswith("(docs/schemas/result.schema.json)")
