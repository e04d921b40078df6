"""The known-discrepancy baseline and the gate: files, rules, and the CLI on real runtimes."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from conformance import gate
from conformance.cases.loader import CaseErrors
from conformance.engine import records
from conformance.engine.groups import Signature
from conformance.gate import baseline
from conformance.report.terminal import fuzz_class_places, gate_lines
from tests.conftest import CASES, conformance_here

KNOWN = CASES / "known"


def write(folder: Path, runtime: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{runtime}.yaml"
    path.write_text(text)
    return path


def problems(tmp_path, text: str) -> list[str]:
    path = write(tmp_path, "openvino", text)
    with pytest.raises(CaseErrors) as caught:
        baseline.load_file(path)
    return [str(error) for error in caught.value.errors]


# -- the shipped baselines ------------------------------------------------------------
@pytest.mark.parametrize("runtime", ["onnxruntime", "openvino", "reference"])
def test_the_shipped_baselines_load_and_every_entry_is_justified(runtime):
    entries = baseline.load_file(KNOWN / f"{runtime}.yaml")
    assert entries
    for entry in entries:
        assert len(entry.reason) > 40, entry.where  # a reason, not a label
        assert entry.clause or entry.upstream
        assert entry.runtime == runtime


def test_baseline_files_are_not_read_as_case_files():
    from conformance.cases.loader import discover

    assert not [p for p in discover([CASES]) if "known" in p.parts]


# -- file errors: file, line, field ---------------------------------------------------
def test_bad_entries_name_file_line_and_field(tmp_path):
    found = problems(
        tmp_path,
        "entries:\n"
        "  - case: gather-x\n"  # line 2
        "    outcome: pass\n"
        "    reason: conforming is not a discrepancy\n"
        "    clause: index-out-of-range\n"
        "  - signature: {op: Gather, dtype: float33, colour: red}\n"  # line 6
        "    outcome: crash\n"
        "    reason: a typo in the dtype\n"
        "    clause: no-such-clause\n"
        "    versions: 'about 2026'\n"
        "  - outcome: crash\n"  # line 11
        "    clause: bitwise-exact\n",
    )
    where = str(tmp_path / "openvino.yaml")
    assert f"{where}:3: entries[0].outcome: 'pass' is not a discrepancy kind" in found[0]
    text = "\n".join(found)
    assert f"{where}:6: entries[1].signature.dtype: 'float33' is not a dtype (bool, " in text
    assert f"{where}:6: entries[1].signature.colour: unknown field" in text
    assert f"{where}:9: entries[1].clause: 'no-such-clause' is not a decision id" in text
    assert f"{where}:10: entries[1].versions: 'about 2026' is not a version specifier" in text
    assert f"{where}:11: entries[2]: an entry needs a case pattern or a signature" in text
    assert f"{where}:11: entries[2]: missing field 'reason'" in text


def test_an_entry_needs_a_clause_or_an_upstream_link(tmp_path):
    found = problems(tmp_path, "entries:\n  - case: x\n    outcome: crash\n    reason: why\n")
    assert found == [
        f"{tmp_path / 'openvino.yaml'}:2: entries[0]: "
        "give the decisions-table 'clause' or an 'upstream' issue link"
    ]


def test_broken_yaml_is_reported_with_its_line(tmp_path):
    found = problems(tmp_path, "entries:\n  - case: [unclosed\n    outcome: crash\n")
    assert len(found) == 1 and found[0].startswith(f"{tmp_path / 'openvino.yaml'}:")
    assert "YAML" in found[0]


# -- the rules, on records ------------------------------------------------------------
def record(kind, case_id="gather-x.op13.float32.int64", variant="static", **extra):
    return {
        "runtime": "openvino",
        "case_id": case_id,
        "base_id": case_id.split(".")[0],
        "op": "Gather",
        "opset": 13,
        "dtype": "float32",
        "indices_dtype": "int64",
        "variant": variant,
        "kind": kind,
        "expected": {"dtype": "float32", "shape": [2]},
        "features": [],
        "source": "cases/x.yaml:1",
        "message": "",
        **extra,
    }


def entries(tmp_path, text):
    return {"openvino": baseline.load_file(write(tmp_path, "openvino", "entries:\n" + text))}


CASE_ENTRY = "  - case: gather-x\n    outcome: crash\n    reason: r\n    clause: empty-tensors\n"
FAMILY = (
    "  - signature: {op: Gather, dtype: float32}\n    outcome: value_mismatch\n"
    "    reason: r\n    clause: bitwise-exact\n"
)


def test_a_case_entry_expects_each_result_in_scope(tmp_path):
    known = entries(tmp_path, CASE_ENTRY)
    result = gate.check([record("crash"), record("crash", variant="dynamic")], known, {})
    assert result.passed() and not result.unexpected
    result = gate.check([record("crash"), record("pass", variant="dynamic")], known, {})
    assert [r.entry.line for r in result.fixed] == [2] and not result.passed()
    assert result.passed(allow_fixed=True)
    assert result.fixed[0].conforming_ids == ["gather-x.op13.float32.int64 [dynamic]"]


def test_another_discrepancy_kind_in_scope_is_new(tmp_path):
    known = entries(tmp_path, CASE_ENTRY)
    result = gate.check([record("crash"), record("value_mismatch", variant="dynamic")], known, {})
    assert [r["variant"] for r in result.unexpected] == ["dynamic"] and not result.passed()


def test_a_family_is_fixed_only_on_enough_evidence(tmp_path):
    known = entries(tmp_path, FAMILY)
    few = [record("pass", case_id=f"fuzz-{i}") for i in range(gate.FIXED_EVIDENCE - 1)]
    result = gate.check(few, known, {})
    assert result.passed() and len(result.unproven) == 1
    many = [*few, record("pass", case_id="fuzz-last")]
    assert not gate.check(many, known, {}).passed()
    assert gate.check([*many, record("value_mismatch")], known, {}).passed()


def test_an_entry_matching_nothing_is_reported_not_failed(tmp_path):
    known = entries(tmp_path, CASE_ENTRY)
    result = gate.check([record("pass", case_id="gather-y.op13.float32.int64")], known, {})
    assert result.passed() and len(result.not_judged) == 1
    lines = gate_lines(result, False, "known")
    assert lines[0].startswith("gate PASSED: ")
    assert (
        "1 entry not judged: this run held no result in their scope: openvino.yaml:2 "
        "(-v: in full)" in lines
    )


def test_a_new_fuzz_class_is_shown_by_its_folder_and_repro(tmp_path):
    fuzzed = record("crash", case_id="fuzz-7", source="<generated>:0", message="SIGSEGV")
    fuzzed["features"] = ["empty_indices"]
    signature = Signature.of(fuzzed)
    folder = f"classes/001-{signature.slug}"
    findings = {"classes": [{"signature": signature.to_json(), "files": {
        "case": f"{folder}/case.yaml", "repro": f"{folder}/repro.py"}}]}  # fmt: skip
    from_file = record("crash", case_id="gather-y.op13.float32.int64")
    run = records.RunFolder(tmp_path / "fz", {}, [fuzzed, from_file], findings=findings)
    places = fuzz_class_places([run])
    assert list(places.values()) == [f"{tmp_path / 'fz' / folder}/repro.py"]
    lines = gate_lines(gate.check(run.records, {}, {}), False, "known", places=places)
    assert f"      {tmp_path / 'fz' / folder}/repro.py: SIGSEGV" in lines
    assert "      cases/x.yaml:1: " in lines  # a case file's group keeps its file:line
    assert not any("<generated>" in line for line in lines)


def test_versions_limit_an_entry_to_some_runtime_versions(tmp_path):
    text = CASE_ENTRY + "    versions: '>=2026.4,<2027'\n"
    known = entries(tmp_path, text)
    crash = [record("crash")]
    # OpenVINO reports '2026.4.1-22982-e213a147257-releases/2026/4': 2026.4.1 counts.
    assert gate.check(crash, known, {"openvino": "2026.4.1-22982-e213a14-releases/2026/4"}).passed()
    other = gate.check(crash, known, {"openvino": "2027.0.0"})
    assert not other.passed() and len(other.inapplicable) == 1


def test_signature_fields_match_violation_and_features(tmp_path):
    known = entries(
        tmp_path,
        "  - signature: {violation: index-out-of-range, features: [negative, out_of_range]}\n"
        "    outcome: accepted_invalid\n    reason: r\n    clause: index-out-of-range\n",
    )
    bad = {"expected": {"violation": "index-out-of-range"}}
    both = record("accepted_invalid", features=["negative", "out_of_range"], **bad)
    one = record("accepted_invalid", case_id="g2.op13", features=["out_of_range"], **bad)
    result = gate.check([both, one], known, {})
    assert result.unexpected == [one]


# -- the CLI on the real runtimes ---------------------------------------------------
def test_the_default_gate_passes_with_the_shipped_baseline(tmp_path):
    out = tmp_path / "run"
    result = conformance_here("run", "--gate", "-k", "*complex*", "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "gate PASSED" in result.stdout
    decided = json.loads((out / "gate.json").read_text())
    assert decided["passed"] and decided["schema"] == "onnx-gather-conformance/gate"
    assert decided["discrepancies"] > 0 and decided["new"] == []


def test_removing_a_baseline_entry_fails_the_gate_with_a_clear_message(tmp_path):
    known = tmp_path / "known"
    shutil.copytree(KNOWN, known)
    text = (known / "onnxruntime.yaml").read_text()
    start = text.index("  - signature: {dtype: [complex64, complex128]}")
    end = text.index("  - signature:", start + 10)
    (known / "onnxruntime.yaml").write_text(text[:start] + text[end:])
    out = tmp_path / "run"
    args = ["run", "--gate", "--runtime", "onnxruntime", "-k", "ge-complex-values", "--out"]
    result = conformance_here(*args, str(out), "--known", str(known))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "NEW: 20 discrepancies not in the baseline" in result.stdout
    assert "onnxruntime  rejected          GatherElements  ge-complex-values (20:" in result.stdout
    assert "cases/gather_elements/values.yaml:" in result.stdout
    assert "MLDataType for: tensor(complex" in result.stdout
    assert "gate FAILED" in result.stdout
    new = json.loads((out / "gate.json").read_text())["new"]
    assert [(g["runtime"], g["kind"], g["group"], g["count"]) for g in new] == [
        ("onnxruntime", "rejected", "ge-complex-values", 20)
    ]
    # The report's verdict names the new group and links to it.
    html = (out / "report.html").read_text(encoding="utf-8")
    box = html[html.index('id="verdict"') : html.index('id="families"')]
    assert "Gate FAILED" in box
    assert (
        'NEW: onnxruntime rejected GatherElements <a href="#group-1"><code>ge-complex-values' in box
    )
    assert '<div class="group" id="group-1"' in html


def test_an_entry_that_no_longer_reproduces_fails_unless_allowed(tmp_path):
    known = tmp_path / "known"
    write(
        known,
        "onnxruntime",
        "entries:\n  - case: gather-example-axis0\n    outcome: value_mismatch\n"
        "    reason: pretend ORT got this wrong once\n    upstream: https://example.org/1\n",
    )
    out = tmp_path / "run"
    args = ["run", "--gate", "--runtime", "onnxruntime", "-k", "gather-example-axis0*", "--out"]
    result = conformance_here(*args, str(out), "--known", str(known))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"FIXED UPSTREAM? {known / 'onnxruntime.yaml'}:2 (onnxruntime):" in result.stdout
    assert "run again with --allow-fixed" in result.stdout  # the option that accepts it
    assert "conforming now: gather-example-axis0.op1.float32.int32 [static]" in result.stdout
    # A failed gate looks failed everywhere: the report's first box and JUnit.
    html = (out / "report.html").read_text(encoding="utf-8")
    box = html[html.index('id="verdict"') : html.index('id="families"')]
    assert (
        "Gate FAILED" in box
        and f"FIXED UPSTREAM? <code>{known / 'onnxruntime.yaml'}:2</code>" in box
    )
    import xml.etree.ElementTree as ElementTree

    suite = ElementTree.parse(out / "junit.xml").getroot().find("./testsuite[@name='gate']")
    (case,) = suite.findall("testcase")
    assert case.get("name") == f"fixed upstream?: {known / 'onnxruntime.yaml'}:2 (onnxruntime)"
    assert "--allow-fixed" in case.find("failure").get("message")
    allowed = conformance_here(*args, str(out), "--known", str(known), "--allow-fixed")
    assert allowed.returncode == 0, allowed.stdout
    assert "fixed upstream? (allowed)" in allowed.stdout


def test_a_bad_baseline_stops_the_run_before_it_starts(tmp_path):
    known = tmp_path / "known"
    write(known, "onnxruntime", "entries:\n  - case: x\n    outcome: wrong\n")
    out = tmp_path / "run"
    result = conformance_here("run", "--gate", "--runtime", "onnxruntime", "--known", str(known),
                              "--out", str(out))  # fmt: skip
    assert result.returncode == 2
    assert f"{known / 'onnxruntime.yaml'}:3: entries[0].outcome: 'wrong'" in result.stderr
    assert "Traceback" not in result.stderr and not out.exists()


def test_conformance_gate_checks_a_finished_run_and_merges_shards(tmp_path):
    runs = []
    for index in (1, 2):
        out = tmp_path / f"shard{index}"
        conformance_here("run", "--runtime", "onnxruntime", "-k", "*complex*", "--shard",
                         f"{index}/2", "--out", str(out))  # fmt: skip
        runs.append(str(out))
    result = conformance_here("gate", *runs, "--out", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    decided = json.loads((tmp_path / "gate.json").read_text())
    total = sum(len((Path(r) / "results.jsonl").read_text().splitlines()) for r in runs)
    assert decided["results"] == total and decided["passed"]
    broken = conformance_here("gate", str(tmp_path / "nothing-here"))
    assert broken.returncode == 2 and "no such file or folder" in broken.stderr


def test_a_fuzz_campaign_exits_by_the_baseline(ort_campaigns):
    folder, strict = ort_campaigns["strict"]  # against an empty baseline
    empty = folder.parent / "empty"
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "NEW:" in strict.stdout and "gate FAILED" in strict.stdout
    # Each new group is a fuzz class: its line names the class folder and repro.py.
    assert "<generated>" not in strict.stdout
    # (which classes come first depends on how many the budget found: any of them)
    classes = re.escape(str(folder / "classes"))
    assert re.search(rf"^      {classes}/\d{{3}}-", strict.stdout, re.MULTILINE), strict.stdout
    # (the bug list names each bug's smallest reproducer: "(case.yaml, repro.py; shrunk)")
    assert "/repro.py: " in strict.stdout and "(case.yaml, repro.py" in strict.stdout
    again = conformance_here("gate", str(folder), "--known", str(empty))
    assert again.returncode == 1 and "<generated>" not in again.stdout
    assert f"{folder / 'classes'}/" in again.stdout
    folder, known = ort_campaigns["known"]  # against the shipped baselines
    assert known.returncode == 0, known.stdout + known.stderr
    assert "gate PASSED" in known.stdout
    kinds = Counter(json.loads(line)["kind"] for line in (folder / "results.jsonl").open())
    # It found some of ORT's known discrepancies (complex refused, strings
    # emptied: which, the rounds' keys decide), and passed.
    assert kinds["rejected"] + kinds["value_mismatch"] > 0, kinds


def test_a_signature_axis_is_any_integer(tmp_path):
    found = problems(
        tmp_path,
        "entries:\n  - signature: {axis: [-2147483648, one]}\n    outcome: crash\n"
        "    reason: r\n    clause: axis-out-of-range\n",
    )
    assert found == [
        f"{tmp_path / 'openvino.yaml'}:2: entries[0].signature.axis: 'one' is not an integer "
        "within int64 (an ONNX attribute int)"
    ]


def test_only_conforming_results_are_evidence_that_a_family_is_fixed(tmp_path):
    known = entries(tmp_path, FAMILY)
    others = [record("rejected", case_id=f"x-{i}") for i in range(40)]  # another entry's
    assert not gate.check(others, known, {}).fixed
    conforming = [record("both_rejected", case_id=f"y-{i}") for i in range(gate.FIXED_EVIDENCE)]
    assert gate.check(conforming, known, {}).fixed


def test_a_family_that_depends_on_values_is_never_called_fixed(tmp_path):
    explained = "    depends_on_values: true\n    explained_by: nan-quieted\n"
    known = entries(tmp_path, FAMILY + explained)
    passes = [record("pass", case_id=f"p-{i}") for i in range(100)]
    result = gate.check(passes, known, {})
    assert result.passed() and len(result.unproven) == 1
    assert any(
        "it depends on values" in line for line in gate_lines(result, False, "k", verbose=True)
    )
    assert any(
        "1 value-dependent, never called fixed" in line for line in gate_lines(result, False, "k")
    )


def test_empty_fields_are_errors_not_wildcards(tmp_path):
    found = problems(
        tmp_path,
        "entries:\n  - case:\n    outcome:\n    reason: r\n    clause: bitwise-exact\n"
        "  - signature:\n    outcome: crash\n    reason: r\n    clause: bitwise-exact\n",
    )
    where = tmp_path / "openvino.yaml"
    assert f"{where}:2: entries[0].case: None is not a case-id glob: a non-empty string" in found
    assert any(
        line.startswith(f"{where}:3: entries[0].outcome: None is not a discrepancy kind (")
        for line in found
    )
    assert any(
        line.startswith(f"{where}:6: entries[1].signature: None is not a mapping of some of: op,")
        for line in found
    )


def test_an_absent_axis_matches_axis_0(tmp_path):
    known = entries(
        tmp_path,
        "  - signature: {axis: 0}\n    outcome: crash\n    reason: r\n    clause: bitwise-exact\n",
    )
    assert gate.check([record("crash", axis=None)], known, {}).passed()
    assert not gate.check([record("crash", axis=-1)], known, {}).passed()


def test_conformance_gate_refuses_runs_that_did_not_finish(tmp_path):
    out = tmp_path / "run"
    done = conformance_here("run", "--runtime", "onnxruntime", "-k", "gather-example-axis0*",
                            "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert conformance_here("gate", str(out)).returncode == 0
    summary = json.loads((out / "summary.json").read_text())
    (out / "summary.json").write_text(json.dumps({**summary, "interrupted": True}))
    interrupted = conformance_here("gate", str(out))
    assert interrupted.returncode == 2 and "interrupted" in interrupted.stderr
    (out / "summary.json").unlink()
    killed = conformance_here("gate", str(out))
    assert killed.returncode == 2 and "did not finish" in killed.stderr
    # A partial last line (killed mid-write) is not a reason to refuse reading the rest.
    with (out / "results.jsonl").open("a") as results:
        results.write('{"case_id": "half')
    assert "did not finish" in conformance_here("gate", str(out)).stderr


def test_known_and_allow_fixed_need_the_gate(tmp_path):
    done = conformance_here(
        "run", "--runtime", "onnxruntime", "--allow-fixed", "--out", str(tmp_path)
    )
    assert done.returncode == 2 and "add --gate" in done.stderr


# -- where entries hold: versions, profiles, CPUs -----------------------------------------
AVX512_BF16 = frozenset({"avx2", "avx512f", "avx512_bf16"})
NO_BF16 = frozenset({"avx2"})


def test_an_entry_scoped_to_a_profile_or_cpu_is_not_used_elsewhere_never_fixed(tmp_path):
    known = entries(
        tmp_path,
        CASE_ENTRY.replace("    outcome", "    profile: 1thread\n    outcome")
        + CASE_ENTRY.replace("gather-x", "gather-y").replace(
            "    outcome", "    cpu: {lacks: [avx512_bf16]}\n    outcome"
        ),
    )
    results = [record("pass"), record("pass", case_id="gather-y.op13.float32.int64")]
    on_bf16 = baseline.Where("2026.4.1", "default", AVX512_BF16)
    decided = gate.check(results, known, {"openvino": on_bf16})
    assert decided.passed() and not decided.fixed and len(decided.inapplicable) == 2
    lines = gate_lines(decided, False, "k", verbose=True)
    assert any("holds for profile 1thread" in line for line in lines)
    assert any("holds for CPU lacks avx512_bf16" in line for line in lines)
    (condensed,) = [line for line in gate_lines(decided, False, "k") if "not used" in line]
    assert condensed.startswith("not used: 2 entries for other versions, profiles, CPUs or GPUs: ")
    assert "profile 1thread" in condensed and "CPU lacks avx512_bf16" in condensed
    # Entries that hold in the same place are one line, naming each
    both = entries(
        tmp_path,
        CASE_ENTRY.replace("    outcome", "    profile: 1thread\n    outcome")
        + CASE_ENTRY.replace("gather-x", "gather-y").replace(
            "    outcome", "    profile: 1thread\n    outcome"
        ),
    )
    decided = gate.check(results, both, {"openvino": on_bf16})
    lines = gate_lines(decided, False, "k", verbose=True)
    (unused,) = [line for line in lines if line.startswith("not used")]
    assert "2 entries of" in unused and "holds for profile 1thread" in unused
    # Where they hold, they are judged: conforming results there mean fixed upstream?
    one_thread = baseline.Where("2026.4.1", "1thread", NO_BF16)
    decided = gate.check(results, known, {"openvino": one_thread})
    assert len(decided.fixed) == 2 and not decided.passed()
    # A CPU the run did not record: the condition cannot be checked, the entry is used.
    assert known["openvino"][1].applies_to(baseline.Where("2026.4.1", "default", None))


def test_model_the_old_spelling_of_explained_by_is_read_as_it(tmp_path):
    """Baselines of earlier versions name an entry's explanations ``model:``."""
    old = entries(tmp_path, FAMILY + "    depends_on_values: true\n    model: nan-quieted\n")
    assert old["openvino"][0].explained_by == ("nan-quieted",)
    found = problems(
        tmp_path,
        "entries:\n" + FAMILY + "    depends_on_values: true\n"
        "    explained_by: nan-quieted\n    model: nan-quieted\n",
    )
    assert any(
        "entries[0].model: the old spelling of explained_by: give one of the two" in line
        for line in found
    )


def test_bad_scopes_are_errors_with_their_line(tmp_path):
    found = problems(
        tmp_path,
        "entries:\n"
        "  - case: x\n    outcome: crash\n    reason: r\n    clause: bitwise-exact\n"
        "    profile: turbo\n    cpu: {lacks: [avx1024]}\n"
        "  - signature: {dtype: int64}\n    depends_on_values: true\n    outcome: value_mismatch\n"
        "    reason: r\n    clause: bitwise-exact\n    explained_by: garbage\n",
    )
    where = tmp_path / "openvino.yaml"
    assert any(
        line.startswith(f"{where}:6: entries[0].profile: 'turbo' is not a profile")
        for line in found
    )
    assert any(line.startswith(f"{where}:7: entries[0].cpu.lacks: 'avx1024'") for line in found)
    assert any(
        line.startswith(f"{where}:13: entries[1].explained_by: 'garbage' is not an explanation")
        for line in found
    )


def test_a_target_the_baseline_never_observed_is_named_first(tmp_path):
    write(
        tmp_path,
        "openvino",
        "observed:\n"
        "  - {version: 2026.4.1, profile: default, cpu_flags: [avx2, avx512f, avx512_bf16]}\n"
        "entries:\n" + CASE_ENTRY,
    )
    from conformance.gate.verdict import _unobserved

    seen = baseline.Where("2026.4.1-22982-e213a147257", "default", AVX512_BF16)
    assert _unobserved(tmp_path, {"openvino": seen}, {}, {"openvino"}) == []
    amx = baseline.Where("2026.4.1", "default", AVX512_BF16 | {"amx_bf16", "amx_tile"})
    older = baseline.Where("2025.0.0", "1thread", AVX512_BF16)
    (line,) = _unobserved(
        tmp_path, {"openvino:amx": amx}, {"openvino:amx": "openvino"}, {"openvino:amx"}
    )
    assert "openvino:amx" in line and "CPU flags +amx_bf16 +amx_tile" in line
    assert "scope the entries" in line and "do not remove them" in line
    (line,) = _unobserved(tmp_path, {"openvino": older}, {}, {"openvino"})
    assert (
        "version 2025.0.0 (observed 2026.4.1)" in line
        and "profile 1thread (observed default)" in line
    )
    checked = gate.check([], entries(tmp_path, CASE_ENTRY), {})
    gated = gate_lines(checked, False, "k", unobserved=[line])
    assert gated[0].startswith("gate PASSED: ")  # the verdict first, then the bookkeeping
    assert gated[1].startswith("NOT OBSERVED: 1 target the baseline was never observed on")
    assert "openvino: version 2025.0.0 (observed 2026.4.1); profile 1thread" in gated[1]
    assert f"NOT OBSERVED: {line}" in gate_lines(
        checked, False, "k", unobserved=[line], verbose=True
    )


def test_junit_fails_the_gate_suite_for_each_kind_of_gate_failure():
    from conformance.report import machine

    trace = "Traceback (most recent call last):\n  ...\nAttributeError: no size"
    broken = record("harness_unsupported", harness_error=True, message=trace)
    verdict = {
        "allow_fixed": False,
        "new": [{"runtime": "openvino", "kind": "crash", "op": "Gather", "group": "gather-x",
                 "count": 2, "source": "cases/x.yaml:1", "message": "SIGSEGV"}],
        "fixed": [{"where": "cases/known/openvino.yaml:9", "runtime": "openvino", "reason": "r",
                   "conforming_now": ["gather-y.op13.float32.int64 [static]"]}],
    }  # fmt: skip
    tree = machine.junit([broken], {}, [verdict], ["run/: the run was interrupted (Ctrl-C)"])
    suite = tree.getroot().find("./testsuite[@name='gate']")
    names = [case.get("name") for case in suite.findall("testcase")]
    assert names == [
        "run did not finish",
        "harness errors (1)",
        "new: openvino crash Gather gather-x",
        "fixed upstream?: cases/known/openvino.yaml:9 (openvino)",
    ]
    assert suite.get("failures") == "4"
    harness = suite.find("./testcase[@name='harness errors (1)']/failure")
    assert harness.get("message").endswith("AttributeError: no size")
    # the harness error itself is an <error>, not a skip
    runtime = tree.getroot().find("./testsuite[@name='openvino']")
    assert runtime.get("errors") == "1" and runtime.find("./testcase/error") is not None
    verdict["allow_fixed"] = True
    allowed = machine.junit([], {}, [{**verdict, "new": []}], [])
    assert [
        c.get("name") for c in allowed.getroot().findall("./testsuite[@name='gate']/testcase")
    ] == ["verdict"]


# -- no catch-all entries ---------------------------------------------------------------
def _entry(head: str, outcome: str = "crash", extra: str = "") -> str:
    return f"  - {head}\n    outcome: {outcome}\n    reason: r\n    clause: bitwise-exact\n{extra}"


EVERY_DTYPE = "[" + ", ".join(baseline.dtypes.NAMES) + "]"
CATCH_ALL = [  # (entry, the outcomes it would cover whole, the field named)
    (_entry("signature: {op: [Gather, GatherElements]}"), "crash", "signature"),
    (_entry("signature: {op: Gather, opset: 13, variant: static}"), "crash", "signature"),
    (_entry("signature: {dtype: " + EVERY_DTYPE + "}", "[crash, timeout]"), "crash/timeout",
     "signature"),
    (_entry("signature: {violation: none}"), "crash", "signature"),
    (_entry("signature: {violation: [none, index-out-of-range]}", "value_mismatch"),
     "value_mismatch", "signature"),
    (_entry("signature: {indices_dtype: [int32, int64]}", "rejected"), "rejected", "signature"),
    (_entry("signature: {op: Gather}", "[value_mismatch, crash]",
            "    explained_by: int64-low32\n"),
     "crash", "signature"),
    (_entry("case: '*'"), "crash", "case"),
    (_entry("case: ['gather-x', '*-*']"), "crash", "case"),
    (_entry("case: '*.op13.*'\n    signature: {variant: static}", "shape_mismatch"),
     "shape_mismatch", "signature"),
    (_entry("case: '[a-z]*'", "accepted_invalid"), "accepted_invalid", "case"),
]  # fmt: skip
NARROW = [  # each narrows by what the input is or how the runtime fails
    _entry("case: gather-x"),
    _entry("case: 'ge-*'\n    signature: {variant: static}"),
    _entry("signature: {violation: index-out-of-range}", "accepted_invalid"),
    _entry("signature: {violation: [none, index-out-of-range]}"),  # crashes: not every one
    _entry("signature: {dtype: [complex64, complex128]}", "rejected"),
    _entry("signature: {op: Gather, axis: -1}"),
    _entry("signature: {features: empty_indices, variant: static}"),
    _entry("signature: {indices_dtype: [uint8, int16]}", "accepted_invalid"),
    _entry("signature: {op: Gather}", "value_mismatch",
           "    depends_on_values: true\n    explained_by: int64-low32\n"),
]  # fmt: skip


def test_a_catch_all_entry_is_refused_with_its_line(tmp_path):
    found = problems(tmp_path, "entries:\n" + "".join(entry for entry, _, _ in CATCH_ALL))
    where = tmp_path / "openvino.yaml"
    assert len(found) == len(CATCH_ALL), "\n".join(found)
    line = 2
    for index, (entry, kinds, field) in enumerate(CATCH_ALL):
        at = line + next(n for n, text in enumerate(entry.splitlines()) if f"{field}:" in text)
        expected = (
            f"{where}:{at}: entries[{index}].{field}: a catch-all: it would cover every {kinds} "
            "of this runtime"
        )
        assert any(problem.startswith(expected) for problem in found), (expected, found)
        line += entry.count("\n")


def test_entries_that_narrow_load(tmp_path):
    loaded = baseline.load_file(write(tmp_path, "openvino", "entries:\n" + "".join(NARROW)))
    assert len(loaded) == len(NARROW)
    # The shipped baselines narrow every entry (they load: the test at the top).
    for runtime in ("onnxruntime", "openvino", "reference"):
        for entry in baseline.load_file(KNOWN / f"{runtime}.yaml"):
            narrowed_by = (entry.case, entry.signature, entry.explained_by)
            assert not baseline.unnarrowed(entry.outcome, *narrowed_by)


def test_gate_and_run_refuse_a_catch_all_baseline_with_exit_2(tmp_path):
    out = tmp_path / "run"
    done = conformance_here("run", "--runtime", "onnxruntime", "-k", "gather-example-axis0",
                            "--variants", "static", "--out", str(out), "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    known = tmp_path / "known"
    write(known, "onnxruntime", "entries:\n" + _entry("signature: {op: Gather}", "rejected"))
    expected = (
        f"{known / 'onnxruntime.yaml'}:2: entries[0].signature: a catch-all: it would cover "
        "every rejected of this runtime"
    )
    gated = conformance_here("gate", str(out), "--known", str(known))
    assert gated.returncode == 2, gated.stdout + gated.stderr
    assert expected in gated.stderr and "Traceback" not in gated.stderr
    assert "gate PASSED" not in gated.stdout
    again = tmp_path / "again"
    rerun = conformance_here("run", "--gate", "--runtime", "onnxruntime", "-k",
                             "gather-example-axis0", "--known", str(known), "--out",
                             str(again))  # fmt: skip
    assert rerun.returncode == 2, rerun.stdout + rerun.stderr
    assert expected in rerun.stderr and not again.exists()


# -- issue 25: what YAML allows but a baseline does not mean ---------------------------
ENTRY_TAIL = "    outcome: rejected\n    reason: r\n    clause: data-dtype\n"


def test_observed_fields_have_their_types(tmp_path):
    """`observed` takes a version string, a profile name and a list of flags:
    a list as version, a mapping as profile, a number YAML read from an
    unquoted version, a flag that is not a string are refused at their line."""
    found = problems(
        tmp_path,
        "observed:\n"
        "  - {version: [1, 2], profile: default, cpu_flags: []}\n"
        "  - {version: 1.2.3, profile: {a: 1}, cpu_flags: []}\n"
        "  - {version: 2026.4, profile: default, cpu_flags: [true]}\n"
        "  - {version: '', profile: turbo, cpu_flags: avx2}\n"
        "  - {version: 2026.4.1, profile: default, cpu_flags: [avx2]}\n"
        "entries:\n  - signature: {dtype: string}\n" + ENTRY_TAIL,
    )
    where = tmp_path / "openvino.yaml"
    version = "is not the runtime's version as the run header has it, a string (quote a "
    version += "version YAML reads as a number: '2026.4')"
    profiles = f"({', '.join(sorted(baseline.KNOWN_PROFILES))})"
    assert found == [
        f"{where}:2: observed[0].version: [1, 2] {version}",
        f"{where}:3: observed[1].profile: {{'a': 1}} is not a profile {profiles}",
        f"{where}:4: observed[2].version: 2026.4 {version}",
        f"{where}:4: observed[2].cpu_flags: True is not a recorded CPU flag "
        f"({', '.join(records.CPU_FLAGS)})",
        f"{where}:5: observed[3].version: '' {version}",
        f"{where}:5: observed[3].profile: 'turbo' is not a profile {profiles}",
        f"{where}:5: observed[3].cpu_flags: 'avx2' is not a list of CPU flags",
    ]
    path = write(tmp_path, "openvino", "observed:\n  - {version: 2026.4.1, profile: default, "
                 "cpu_flags: [avx2]}\nentries: []\n")  # fmt: skip
    (seen,) = baseline.observed(path)
    assert seen == baseline.Observed("2026.4.1", "default", frozenset({"avx2"}))


def test_signature_integers_are_integers(tmp_path):
    """`true` is not opset 1 (bool is an int in Python), 13.0 is not opset 13,
    `false` is not axis 0, and an axis is an int64."""
    from conformance.tables import dtypes

    found = problems(
        tmp_path,
        "entries:\n"
        "  - signature: {opset: true, dtype: string}\n" + ENTRY_TAIL
        + "  - signature: {opset: [13.0, 11], dtype: string}\n" + ENTRY_TAIL
        + "  - signature: {axis: [0, false], dtype: string}\n" + ENTRY_TAIL
        + "  - signature: {axis: 9223372036854775808, dtype: string}\n" + ENTRY_TAIL
        + "  - signature: {dtype: [string, 1]}\n" + ENTRY_TAIL,
    )  # fmt: skip
    where = tmp_path / "openvino.yaml"
    assert found == [
        f"{where}:2: entries[0].signature.opset: True (a boolean) is not an opset "
        "(1, 11, 12, 13, 16, 18)",
        f"{where}:6: entries[1].signature.opset: 13.0 is not an opset (1, 11, 12, 13, 16, 18)",
        f"{where}:10: entries[2].signature.axis: False (a boolean) is not an integer within "
        "int64 (an ONNX attribute int)",
        f"{where}:14: entries[3].signature.axis: 9223372036854775808 is not an integer within "
        "int64 (an ONNX attribute int)",
        f"{where}:18: entries[4].signature.dtype: 1 is not a dtype ("
        + ", ".join(dtypes.NAMES)
        + ")",
    ]
    text = "entries:\n  - signature: {opset: 1, axis: -9223372036854775808, dtype: string}\n"
    (entry,) = baseline.load_file(write(tmp_path, "openvino", text + ENTRY_TAIL))
    assert entry.signature["opset"] == (1,) and entry.signature["axis"] == (-(1 << 63),)


def test_a_baseline_yaml_cannot_mean_is_refused_by_the_cli_at_its_line(tmp_path):
    """A 5000-digit integer (once "internal error: ValueError", no line), a
    number beyond float64 and a list as `observed` version: exit 2, each at
    its file:line and field, nothing run."""
    digits = "9" * 5000
    for text, expected in [
        (f"entries:\n  - signature: {{axis: {digits}, dtype: string}}\n" + ENTRY_TAIL,
         ":2: entries[0].signature.axis: 999999999999...999999 (5000 characters): an integer "
         "of more than 4300 digits"),
        (f"observed:\n  - {{version: {digits}, profile: default, cpu_flags: []}}\nentries: []\n",
         ":2: observed[0].version: 999999999999...999999 (5000 characters)"),
        ("entries:\n  - signature: {axis: 1.0e+999, dtype: string}\n" + ENTRY_TAIL,
         ":2: entries[0].signature.axis: 1.0e+999 is out of range for a float"),
        ("observed:\n  - {version: [2026, 4], profile: default, cpu_flags: []}\nentries: []\n",
         ":2: observed[0].version: [2026, 4] is not the runtime's version"),
        ("observed:\n  - {version: 2026.4.1, profile: {a: 1}, cpu_flags: []}\nentries: []\n",
         ":2: observed[0].profile: {'a': 1} is not a profile"),
        ("entries:\n  - signature: {opset: true, dtype: string}\n" + ENTRY_TAIL,
         ":2: entries[0].signature.opset: True (a boolean) is not an opset "
         "(1, 11, 12, 13, 16, 18)"),
    ]:  # fmt: skip
        known = tmp_path / "known"
        shutil.rmtree(known, ignore_errors=True)
        path = write(known, "reference", text)
        out = tmp_path / "out"
        done = conformance_here("run", "--runtime", "reference", "-k", "gather-example-axis0",
                                "--variants", "static", "--gate", "--known", str(known),
                                "--out", str(out), "--no-progress")  # fmt: skip
        said = done.stdout + done.stderr
        assert done.returncode == 2, said
        assert "internal error" not in said and "Traceback" not in said, said
        assert f"{path}{expected}" in said, (expected, said)


def test_a_baseline_folder_gone_during_the_run_is_a_gate_error(tmp_path):
    """`run --gate` reads the baselines before the run and --known again to
    gate it: a folder removed meanwhile is a GateError (exit 2, said), not a
    TypeError from gating against None (found by mypy)."""
    import io

    from rich.console import Console

    from conformance.cli import finish
    from conformance.gate import settings, verdict

    known = tmp_path / "known"
    known.mkdir()
    built = settings.build(known=[known], choose=False, engine=False)
    built = replace(built, baselines=verdict.load_baselines(built.known, ["openvino"]))
    known.rmdir()
    run = records.RunFolder(tmp_path / "run", {}, [record("value_mismatch")])
    err = io.StringIO()
    with pytest.raises(verdict.GateError, match="gone since the run began"):
        finish.gate_run(run, built, Console(file=err, width=1000))
    assert f"--known {known}: no such folder" in err.getvalue()
