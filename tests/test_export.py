"""``conformance export``: the corpus as ONNX backend test folders, read by
consumers no one here wrote: onnx's own loader and backend runner, with ONNX
Runtime's backend, as ONNX Runtime's Python backend series runs them; the
expected-failure files each runner reads; the folder's safety (refusals,
--force, nothing half-written, the floor)."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from packaging.version import Version

from conformance import export, oracle, shipped
from conformance.cli import inputs, main
from conformance.engine import models
from conformance.export import failures, folder, names, runners
from conformance.export.selection import ExportError
from conformance.gate import baseline
from tests import onnx_backends
from tests.conftest import REPO

SCHEMA = REPO / "docs" / "schemas" / "manifest.schema.json"
SMALL_FILE = REPO / "cases" / "gather" / "dtypes.yaml"  # read alone: cheap
SMALL = "gather-every-dtype"  # every dtype, ORT's complex and string entries
# What the consumer tests export (onnx's runner on ONNX Runtime's backend and on
# onnx.reference): every case an ORT baseline entry or a runner limit names,
# cases with each value a tolerance misses (case-file ids); and GatherND's (a few
# concrete ids): ORT's complex refusal, a string the reference may get wrong,
# bfloat16 (a runner limit), the zero batches the reference refuses, batch dims.
CONSUMER_CASES = (
    "gather-every-dtype", "ge-every-dtype", "gather-string-trailing-nul",
    "gather-float32-special-bits", "gather-float16-special-bits", "gather-bfloat16-opset13",
    "gather-scalar-negative-index", "ge-onnx-negative-indices", "ge-float64-special-bits",
    "gnd-every-dtype.op13.complex64.int64", "gnd-every-dtype.op13.string.int64",
    "gnd-every-dtype.op13.bfloat16.int64", "gnd-every-dtype.op11.float32.int64",
    "gnd-zero-batches.op13.int32.int64", "gnd-batch-dims-1.op12.int32.int64",
)  # fmt: skip


def _consumer(case) -> bool:
    return case.base_id in CONSUMER_CASES or case.id in CONSUMER_CASES


@functools.cache
def corpus_cases() -> tuple:
    """The shipped corpus, read once for the module."""
    return tuple(inputs.load_cases(None))


def _export(out: Path, pattern: str | None = None, paths=None, **options) -> export.ExportSummary:
    cases = inputs.select(
        list(corpus_cases()) if paths is None else inputs.load_cases(paths), pattern
    )
    return export.export(out, cases, inputs.corpus(paths), pattern=pattern, **options)


@pytest.fixture(scope="module")
def corpus_export(tmp_path_factory) -> tuple[Path, export.ExportSummary, dict]:
    """The whole shipped corpus, exported once (in-process)."""
    out = tmp_path_factory.mktemp("export") / "out"
    summary = _export(out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return out, summary, manifest


# -- the layout ------------------------------------------------------------------------
def test_every_test_folder_has_the_strictest_readers_layout(corpus_export):
    out, summary, manifest = corpus_export
    by_name = {test["name"]: test for test in manifest["tests"]}
    folders = sorted(p.name for p in (out / "node").iterdir())
    assert folders == sorted(by_name) and len(folders) == summary.tests
    cases = {case.id: case for case in list(corpus_cases())}
    for name in folders:
        test, where = by_name[name], out / "node" / name
        assert sorted(p.name for p in where.iterdir()) == ["model.onnx", "test_data_set_0"]
        model = onnx.load(where / "model.onnx")
        graph_inputs = [value.name for value in model.graph.input]
        assert graph_inputs == test["inputs"]
        assert not {i.name for i in model.graph.initializer} & set(graph_inputs)
        data = where / "test_data_set_0"
        expected_files = [f"input_{j}.pb" for j in range(len(graph_inputs))] + ["output_0.pb"]
        assert sorted(p.name for p in data.iterdir()) == sorted(expected_files)
        for j, input_name in enumerate(graph_inputs):
            assert onnx.load_tensor(data / f"input_{j}.pb").name == input_name
        output = onnx.load_tensor(data / "output_0.pb")
        assert output.name == model.graph.output[0].name
        case = cases[test["case_id"]]
        expected = oracle.evaluate(case.op, case.opset, case.data, case.indices, case.axis)
        if expected.dtype == object:  # numpy_helper drops trailing NULs: the raw bytes
            assert list(output.string_data) == [s.encode() for s in expected.ravel()]
        else:
            got = numpy_helper.to_array(output)
            assert got.dtype == expected.dtype and got.shape == expected.shape
            assert got.tobytes() == expected.tobytes()  # bit for bit: NaN payloads, -0.0


def test_the_manifest_follows_its_schema_and_lists_the_error_cases(corpus_export):
    _, summary, manifest = corpus_export
    jsonschema.Draft202012Validator(
        json.loads(SCHEMA.read_text()), registry=shipped.schema_registry()
    ).validate(manifest)
    assert manifest["counts"]["tests"] == summary.tests == len(manifest["tests"])
    corpus = inputs.corpus(None)
    assert manifest["corpus"] == corpus and corpus["shipped"]
    errors = manifest["not_exported"]
    # the corpus fits the memory guard: an error case (its clause), or an operator
    # that writes (not exported by this version, issue 47)
    writes = [e for e in errors if e["op"] in ("ScatterElements", "ScatterND")]
    assert writes and all(not e["clause"] and "writes" in e["reason"] for e in writes)
    assert all(e["clause"] for e in errors if e not in writes)
    exported = {test["case_id"] for test in manifest["tests"]}
    assert not exported & {e["case_id"] for e in errors}
    assert len(exported) + len(errors) == len(list(corpus_cases()))
    blind = {spot for test in manifest["tests"] for spot in test["tolerance_blind"]}
    assert blind == set(export.exactness.BLIND_SPOTS)  # the corpus has each kind


def test_names_are_safe_distinct_stable_and_prefix_free(corpus_export):
    _, _, manifest = corpus_export
    all_names = [test["name"] for test in manifest["tests"]]
    assert len(set(all_names)) == len(all_names)
    assert all(re.fullmatch(r"test_[a-z0-9_]+", n) for n in all_names)
    assert not any(n.endswith(names.RUNNER_SUFFIXES) for n in all_names)
    assert names.prefix_clash(all_names) is None
    assert names.test_name("gather-x.op13.float32.int64", "static") == (
        "test_gather_x_op13_float32_int64_static"
    )
    # an id a file name or an identifier would not take, or that the rule
    # could confuse with another (an underscore in its base), is hashed
    odd = [names.test_name(i, "static") for i in ("a_b.op13.float32.int64", "A/../b", "a/b")]
    assert all(re.fullmatch(r"test_[a-z0-9_]+_x[0-9a-f]{10}_static", n) for n in odd)
    assert len(set(odd)) == 3
    long = names.test_name("g" * 400 + ".op13.float32.int64", "dynamic")
    assert len(long) <= len(names.PREFIX) + names.LIMIT and long != names.test_name(
        "g" * 401 + ".op13.float32.int64", "dynamic"
    )


# -- a real consumer: onnx's loader and runner, ONNX Runtime's backend --------------------
def _load_exported(out: Path, scratch: Path) -> list:
    """The exported tests as onnx's loader gives them. onnx >= 1.23 builds its
    own node tests in memory for kind "node", whatever data_dir says, so the
    folder is offered under another kind name (docs/export.md)."""
    from onnx.backend.test.loader import load_model_tests

    if Version(onnx.__version__) < Version("1.23"):
        return load_model_tests(data_dir=str(out), kind="node")
    scratch.mkdir(exist_ok=True)
    with contextlib.suppress(FileExistsError):
        (scratch / "gather_conformance").symlink_to(out / "node")
    return load_model_tests(data_dir=str(scratch), kind="gather_conformance")


def _ort_series_filters(path: Path) -> dict[str, list[str]]:
    """The filters file read as ONNX Runtime's series reads it (``//`` cuts a line)."""
    lines = [line.split("//")[0] for line in path.read_text(encoding="utf-8").splitlines()]
    return json.loads("\n".join(lines))


def _run_with_ort(tests: list, excluded: list[str]) -> tuple[int, set[str]]:
    """Run the tests through onnx's backend Runner on onnxruntime.backend,
    excluding the patterns as the series does; (tests run, names of those that
    failed)."""
    import onnxruntime.backend as ort_backend

    return onnx_backends.run(ort_backend, tests, excluded)


@pytest.fixture(scope="module")
def consumer_export(tmp_path_factory) -> tuple[Path, export.ExportSummary, dict]:
    out = tmp_path_factory.mktemp("consumer") / "out"
    cases = [c for c in list(corpus_cases()) if _consumer(c)]
    assert {c.base_id for c in cases} | {c.id for c in cases} >= set(CONSUMER_CASES)
    summary = export.export(out, cases, inputs.corpus(None))
    return out, summary, json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def test_onnx_runner_on_onnxruntime_passes_with_the_generated_failure_list(
    consumer_export, tmp_path
):
    out, summary, manifest = consumer_export
    loaded = _load_exported(out, tmp_path)
    assert sorted(t.name for t in loaded) == sorted(t["name"] for t in manifest["tests"])
    filters = _ort_series_filters(
        out / "expected-failures" / "onnxruntime" / "onnx_backend_test_series_filters.jsonc"
    )
    baseline_list = filters["current_failing_tests"]
    runner_limits = filters["unsupported_usages"]
    ran, failed = _run_with_ort(loaded, baseline_list + runner_limits)
    assert failed == set()
    assert ran == summary.tests - len(
        {t["name"] for t in manifest["tests"] if _matches(baseline_list + runner_limits, t)}
    )

    # without the baseline's list, exactly the tests the baseline names fail
    ran, failed = _run_with_ort(loaded, runner_limits)
    known = {
        test["name"]: {k["status"] for k in test["known"]}
        for test in manifest["tests"]
        if any(k["runtime"] == "onnxruntime" and k["profile"] == "default" for k in test["known"])
    }
    limited = {t["name"] for t in manifest["tests"] if _matches(runner_limits, t)}
    certain = {n for n, s in known.items() if "fails" in s} - limited
    may = {n for n, s in known.items() if s == {"may_fail"}} - limited
    assert certain, "the ORT baseline names tests of the corpus"
    assert certain <= failed <= certain | may
    assert {n for n in certain if "_gnd_" in n}, "GatherND's entries are held too"


def _statuses(manifest: dict, runtime: str, profile: str = "default") -> dict[str, set[str]]:
    """Test name -> the statuses (fails, may_fail) the runtime's profile lists it with."""
    found: dict[str, set[str]] = {}
    for test in manifest["tests"]:
        for k in test["known"]:
            if k["runtime"] == runtime and k["profile"] == profile:
                found.setdefault(test["name"], set()).add(k["status"])
    return found


def test_onnx_runner_on_the_reference_evaluator_fails_the_listed_tests(consumer_export, tmp_path):
    """onnx's own way of running its backend tests on onnx.reference (its
    test_backend_reference.py) over the export: the tests that fail are the
    reference's failing.txt, those that may fail aside, and those the runner
    cannot carry (onnx.numpy_helper drops trailing NULs: the expected output
    it reads is not the one written)."""
    out, summary, manifest = consumer_export
    loaded = _load_exported(out, tmp_path)
    ran, failed = onnx_backends.run(onnx_backends.ReferenceBackend, loaded, [])
    assert ran == summary.tests
    cases = [c for c in list(corpus_cases()) if _consumer(c)]
    tests, _ = export.selection.select(cases, models.VARIANTS, 1 << 30)
    limited = {t.name for t in tests if runners.python_loader_limit(t)}
    listed = _failing(out, "reference")  # the runtime's one list
    assert {n: {s} for n, s in listed.items()} == _statuses(manifest, "reference")
    certain = {n for n, s in listed.items() if s == failures.FAILS} - limited
    may = {n for n, s in listed.items() if s == failures.MAY_FAIL}
    assert {n for n in certain if "_gnd_zero_batches_" in n}, "GatherND's refusal is listed"
    assert certain <= failed - limited <= certain | may


@functools.cache
def _pattern(patterns: tuple[str, ...]) -> re.Pattern | None:
    """The patterns as one, as the series joins them for its exclude."""
    return re.compile("(" + "|".join(patterns) + ")") if patterns else None


def _matches(patterns: list[str], test: dict) -> bool:
    joined = _pattern(tuple(patterns))
    return joined is not None and joined.search(test["name"] + "_cpu") is not None


# TVM's Relax ONNX backend test over GatherND tests: batch dims at opset 12 and 13 in
# every variant (the dynamic ones refused), and a complex dtype (refused everywhere).
TVM_CASES = ("gnd-batch-dims-1.op13.int32.int64", "gnd-negative-indices.op12.int32.int64",
             "gnd-every-dtype.op13.complex64.int64")  # fmt: skip


def test_tvm_relax_backend_test_fails_exactly_the_deselected_tests(tmp_path):
    """TVM's own backend test (its Relax backend under onnx's runner,
    tests/onnx_backends.py) over GatherND tests: the tests that fail are the
    ones deselect.txt names, so with it every test passes."""
    pytest.importorskip("tvm.relax.frontend.onnx")
    out = tmp_path / "out"
    cases = [c for c in list(corpus_cases()) if c.id in TVM_CASES]
    assert sorted(c.id for c in cases) == sorted(TVM_CASES)
    summary = export.export(out, cases, inputs.corpus(None))
    lines = (out / "expected-failures" / "tvm" / "deselect.txt").read_text().splitlines()
    prefix = (
        "--deselect=tests/python/relax/test_frontend_onnx_backend.py::OnnxBackendNodeModelTest::"
    )
    assert all(line.startswith(prefix) and line.endswith("_cpu") for line in lines)
    deselected = {line.removeprefix(prefix).removesuffix("_cpu") for line in lines}
    ran, failed = onnx_backends.run(
        onnx_backends.TVMRelaxBackend, _load_exported(out, tmp_path / "scratch"), []
    )
    assert ran == summary.tests == 5 * len(TVM_CASES)
    assert {n for n in deselected if n.endswith("_dynamic")} and len(deselected) < ran
    assert failed == deselected


# -- the other runners' forms --------------------------------------------------------------
def _failing(out: Path, runtime: str, profile: str = "default") -> dict[str, str]:
    found = {}
    for line in (out / "expected-failures" / runtime / "failing.txt").read_text().splitlines():
        if line.startswith("#"):
            continue
        name, line_profile, status, *_ = line.split("\t")
        if line_profile == profile:
            found[name] = status
    return found


def test_each_runners_file_names_exactly_the_baselines_tests(corpus_export):
    out, _, manifest = corpus_export
    everything = {t["name"] for t in manifest["tests"]}
    base = out / "expected-failures"
    assert sorted(p.name for p in base.iterdir()) == sorted(
        p.stem for p in baseline.default_folder()[0].glob("*.yaml")
    )

    # ONNX Runtime's Python series: read as it reads it; the runner's own limits apart
    filters = _ort_series_filters(base / "onnxruntime" / "onnx_backend_test_series_filters.jsonc")
    for key, profile in runners.ORT_SERIES_KEYS.items():
        named = {t["name"] for t in manifest["tests"] if _matches(filters[profile], t)}
        assert named == set(_failing(out, "onnxruntime", key)), key
    limited = {t["name"] for t in manifest["tests"] if _matches(filters["unsupported_usages"], t)}
    assert {t["name"] for t in manifest["tests"] if t["dtype"] == "bfloat16"} <= limited
    assert any("trailing_nul" in name for name in limited)

    # IREE: judged through its op suite's pipeline. pyjson5 reads the config; without
    # its // comment lines it is JSON. No config for the adapter's own profiles.
    assert sorted(p.name for p in (base / "iree").iterdir()) == [
        "failing.txt", "import_failures.txt", "onnx_ops_cpu_llvm_sync.json"
    ]  # fmt: skip
    config = _iree_config_text(base / "iree" / "onnx_ops_cpu_llvm_sync.json")
    listed = [
        name.rsplit("/", 1)[-1]
        for key in runners.IREE_LISTS
        for name in config[key]
        if name.startswith(runners.IREE_FOLDER + "/")
    ]
    assert len(listed) == len(set(listed))  # one list each
    refused = {line for line in (base / "iree" / "import_failures.txt").read_text().splitlines()
               if not line.startswith("#")}  # fmt: skip
    not_packed = ("bfloat16", "complex64", "complex128", "string")
    assert refused == {t["name"] for t in manifest["tests"] if t["dtype"] in not_packed}
    dynamic = {t["name"] for t in manifest["tests"] if t["variant"] == "dynamic"} - refused
    assert {n.rsplit("/", 1)[-1] for n in config["skip_compile_tests"]} >= dynamic
    assert set(listed) == dynamic | set(_failing(out, "iree", "onnx-ops")) - refused

    # OpenVINO: a Python module of xfail tuples
    namespace: dict = {}
    exec(compile((base / "openvino" / "xfail.py").read_text(), "xfail.py", "exec"), namespace)
    xfailed = {
        test.split(".", 1)[1].removesuffix("_cpu")
        for mark, *tests in namespace["tests_expected_to_fail"]
        if mark.name == "xfail"
        and mark.kwargs["reason"]
        and not mark.kwargs["reason"].startswith("runner limit")
        for test in tests
    }
    assert xfailed == set(_failing(out, "openvino"))

    # tract: an allow list; every test it leaves out is a known one
    allowed = [
        line
        for line in (base / "tract" / "node.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert all(re.fullmatch(line, line) for line in allowed)  # literal names
    assert everything - set(allowed) == set(_failing(out, "tract"))

    # TVM: --deselect lines of existing tests
    deselected = (base / "tvm" / "deselect.txt").read_text().splitlines()
    ids = {line.rsplit("::", 1)[-1].removesuffix("_cpu") for line in deselected}
    assert ids == set(_failing(out, "tvm")) and ids <= everything

    # ONNX Runtime's C++ runner: BrokenTest entries, names without test_
    broken = re.findall(
        r'^\{"([a-z0-9_]+)", ', (base / "onnxruntime" / "broken_tests.inc").read_text(), re.M
    )
    expected_broken = {
        n for p in ("default", "openvino-ep") for n in _failing(out, "onnxruntime", p)
    }
    assert {"test_" + n for n in broken} == expected_broken


# -- IREE's own op suite over the export, under the generated list ---------------------------
# One test of each kind of line the IREE list has, and what it would have been wrong
# about before: float64 (listed as failing while the suite keeps float64),
# GatherElements-11 (listed while the suite imports at opset 17), bfloat16 (the
# suite's importer refuses it), a float32 signalling NaN (the importer quiets it: a
# pass on other bits), GatherND-12 with batch dims (refused by the adapter's profiles,
# computed once the suite upgrades it to opset 17), GatherND's zero batches (iree-compile
# dies of SIGFPE: a compile failure), and the dynamic variant of each (symbolic dims
# written as 0).
IREE_SUITE_CASES = (
    "gather-every-dtype.op13.float64.int64", "ge-every-dtype.op11.float32.int64",
    "gather-every-dtype.op13.bfloat16.int64", "gather-float32-special-bits.op13.float32.int64",
    "gnd-batch-dims-1.op12.int32.int64", "gnd-zero-batches.op12.int32.int64",
)  # fmt: skip


def _iree_config_text(path: Path) -> dict:
    return json.loads(
        "\n".join(x for x in path.read_text().splitlines() if not x.lstrip().startswith("//"))
    )


def test_iree_op_suite_passes_the_export_under_its_generated_list(tmp_path, capsys):
    pytest.importorskip("iree.compiler")
    from tests import iree_onnx_ops

    out = tmp_path / "out"
    cases = [c for c in list(corpus_cases()) if c.id in IREE_SUITE_CASES]
    assert sorted(c.id for c in cases) == sorted(IREE_SUITE_CASES)
    export.export(out, cases, inputs.corpus(None), variants=("static", "dynamic"))
    lists = out / "expected-failures" / "iree"
    generated = lists / "onnx_ops_cpu_llvm_sync.json"
    config = _iree_config_text(generated)
    assert "--iree-input-demote-f64-to-f32=false" in config["iree_compile_flags"]
    assert config["iree_run_module_flags"] == ["--device=local-sync"]
    assert {n.rsplit("/", 1)[1] for n in config["skip_compile_tests"]} == {
        names.test_name(i, "dynamic") for i in IREE_SUITE_CASES if "bfloat16" not in i
    }  # every dynamic test the importer takes, none silently
    refused = [line for line in (lists / "import_failures.txt").read_text().splitlines()
               if not line.startswith("#")]  # fmt: skip
    assert sorted(refused) == sorted(
        names.test_name("gather-every-dtype.op13.bfloat16.int64", v) for v in ("static", "dynamic")
    )

    # the suite's import step, then its pytest with the generated config and a drifted
    # copy: the float64 demotion back on (so float64 fails, unlisted) and the
    # GatherElements-11 test listed as a compile failure (as the old list had it)
    work = tmp_path / "onnx_ops"
    imported_refused = iree_onnx_ops.import_tests(out / "node", work / iree_onnx_ops.GENERATED)
    ge11 = names.test_name("ge-every-dtype.op11.float32.int64", "static")
    f64 = names.test_name("gather-every-dtype.op13.float64.int64", "static")
    drifted = dict(config, config_name="drifted")
    drifted["iree_compile_flags"] = [
        flag for flag in config["iree_compile_flags"] if "demote-f64" not in flag
    ]
    drifted["expected_compile_failures"] = [
        *config["expected_compile_failures"],
        f"{runners.IREE_FOLDER}/{ge11}",
    ]
    (lists / "drifted.json").write_text(json.dumps(drifted))
    junit = tmp_path / "junit.xml"
    iree_onnx_ops.run_pytest(work, [generated, lists / "drifted.json"], f"--junitxml={junit}", "-q")

    # the generated config: every test the suite ran passed, as the list says
    import xml.etree.ElementTree as ElementTree

    outcomes = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        failed = any(child.tag in ("failure", "error") for child in case)
        outcomes[properties["test_name"], properties["relative_test_directory_name"]] = failed
    ran = {name.rsplit("/", 1)[1] for config, name in outcomes if config == "cpu_llvm_sync"}
    assert ran == {names.test_name(i, "static") for i in IREE_SUITE_CASES if "bfloat16" not in i}
    zero_batches = names.test_name("gnd-zero-batches.op12.int32.int64", "static")
    assert config["expected_compile_failures"] == [f"{runners.IREE_FOLDER}/{zero_batches}"]
    assert not any(failed for (name, _), failed in outcomes.items() if name == "cpu_llvm_sync")

    # the importer changes the signalling NaN's bits, and the manifest says so for IREE
    snan = names.test_name("gather-float32-special-bits.op13.float32.int64", "static")
    pb = numpy_helper.to_array(
        onnx.load_tensor(out / "node" / snan / export.DATA_SET / "input_0.pb")
    )
    written = (work / iree_onnx_ops.GENERATED / snan / "input_0.bin").read_bytes()
    assert written != pb.tobytes() and len(written) == pb.nbytes
    manifest = json.loads((out / "manifest.json").read_text())
    marked = {t["name"] for t in manifest["tests"] if "iree_import_bits" in t["tolerance_blind"]}
    assert marked == {snan, snan.replace("_static", "_dynamic")}

    # --check: the generated lines hold; the drifted config's stale and missing lines show
    code = main(["export", str(out), "--check", str(junit),
                 str(work / iree_onnx_ops.GENERATED / "import_failures.txt")])  # fmt: skip
    said = capsys.readouterr().out.splitlines()
    assert sorted(imported_refused) == sorted(refused)
    assert code == 1
    assert sorted(line for line in said if line.startswith(("stale:", "missing:"))) == [
        f"missing: {f64} (expected-failures/iree/drifted.json): fails at run",
        f"stale: {ge11} (expected-failures/iree/drifted.json: expected_compile_failures): "
        "compiles and runs: it passes",
    ]
    assert said[-1] == "1 stale line, 1 missing line"


def test_check_refuses_results_it_cannot_read_naming_them(tmp_path, capsys):
    out = tmp_path / "out"
    _export(out, SMALL, [SMALL_FILE], variants=("static",))
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    broken = tmp_path / "results.xml"
    broken.write_text("<testsuites><testcase", encoding="utf-8")
    other = tmp_path / "other.xml"  # a JUnit file of another suite: no suite properties
    other.write_text('<testsuites><testsuite><testcase classname="a" name="b"/></testsuite>'
                     "</testsuites>", encoding="utf-8")  # fmt: skip
    log = tmp_path / "log.jsonl"
    log.write_text("not json\n", encoding="utf-8")
    for results, said in (
        (broken, "not a JUnit XML file"),
        (other, "testcase a::b has no relative_test_directory_name and test_name properties"),
        (log, "line 1: not JSON"),
        (tmp_path / "absent.xml", "no such file"),
    ):
        assert main(["export", str(out), "--check", str(results)]) == 2
        assert f"error: {results}: {said}" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "none"), "--check", str(other)]) == 2
    assert "not an export (no manifest.json)" in capsys.readouterr().err
    assert main(["export", str(out), str(SMALL_FILE), "--check", str(other)]) == 2
    assert "PATHS do not apply" in capsys.readouterr().err
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # nothing written


# -- how baseline entries map to tests (no run) --------------------------------------------
def test_entries_map_to_tests_as_the_gate_matches_them(tmp_path):
    (tmp_path / "tract.yaml").write_text(
        "observed:\n"
        "  - {version: '1.0', profile: default, cpu_flags: [avx2]}\n"
        "entries:\n"
        "  - case: gather-every-dtype\n"
        "    signature: {dtype: int8, variant: static}\n"
        "    outcome: rejected\n"
        "    reason: a case entry\n"
        "    clause: data-dtype\n"
        "  - signature: {dtype: int64}\n"
        "    depends_on_values: true\n"
        "    outcome: value_mismatch\n"
        "    explained_by: int64-low32\n"
        "    reason: a value-dependent family with an explanation\n"
        "    clause: bitwise-exact\n"
        "  - signature: {dtype: uint8}\n"
        "    outcome: rejected\n"
        "    versions: '>=2'\n"
        "    reason: not on the version observed\n"
        "    clause: data-dtype\n"
        "  - signature: {dtype: int16}\n"
        "    outcome: accepted_invalid\n"
        "    reason: only an invalid input can show it\n"
        "    clause: data-dtype\n",
        encoding="utf-8",
    )
    cases = [c for c in list(corpus_cases()) if c.dtype in ("int8", "int64", "uint8", "int16")]
    tests, _ = export.selection.select(cases, ("static",), 1 << 30)
    entries = baseline.load_file(tmp_path / "tract.yaml")
    config, *_ = failures.configurations("tract", baseline.observed(tmp_path / "tract.yaml"))
    known = {k.test.name: k for k in failures.classify(tests, entries, config)}
    int8 = [t.name for t in tests if t.case.dtype == "int8"]
    named = [n for n in int8 if n.startswith("test_gather_every_dtype_")]
    assert named and {known[n].status for n in named} == {failures.FAILS}
    assert not [n for n in int8 if n not in named and n in known]
    for test in (t for t in tests if t.case.dtype == "int64"):
        beyond = bool(np.any(test.output != test.output.astype(np.int32)))
        # the explanation leaves an output within int32 as it is: the bug cannot show
        assert (test.name in known) == beyond, test.name
        if beyond:
            assert known[test.name].status == failures.MAY_FAIL
    assert not {t.name for t in tests if t.case.dtype in ("uint8", "int16")} & set(known)


# -- the folder: refusals, --force, nothing half-written, the floor -------------------------
def _cli(capsys, out: Path, *args: str) -> tuple[int, str]:
    """``conformance export OUT_DIR cases/gather/dtypes.yaml ARGS``, in-process."""
    code = main(["export", str(out), str(SMALL_FILE), *map(str, args)])
    return code, capsys.readouterr().err


def test_a_folder_that_is_not_empty_is_refused_and_kept(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("not the export's")
    code, err = _cli(capsys, out, "-k", SMALL, "--variants", "static")
    assert code == 2 and f"error: {out}: not empty" in err
    code, err = _cli(capsys, out, "-k", SMALL, "--variants", "static", "--force")
    assert code == 2 and "not a previous export" in err
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary folder left


def test_options_may_come_between_out_dir_and_the_case_paths(tmp_path, capsys):
    """`export OUT --force cases/x.yaml` takes the path as PATHS, as a user
    means it (argparse alone gives PATHS nothing and calls the path unrecognized)."""
    out = tmp_path / "out"
    args = ["--variants", "static", "-k", SMALL]
    assert main(["export", str(out), *args, str(SMALL_FILE)]) == 0, capsys.readouterr().err
    first = json.loads((out / "manifest.json").read_text())
    assert main(["export", str(out), "--force", str(SMALL_FILE), *args]) == 0
    assert json.loads((out / "manifest.json").read_text()) == first
    assert {Path(t["source"]).name.split(":")[0] for t in first["tests"]} == {SMALL_FILE.name}


def test_force_replaces_only_a_previous_export(tmp_path, capsys):
    out = tmp_path / "out"
    assert _cli(capsys, out, "-k", SMALL, "--variants", "static")[0] == 0
    first = json.loads((out / "manifest.json").read_text())
    assert _cli(capsys, out, "-k", SMALL, "--variants", "dynamic", "--force")[0] == 0
    second = json.loads((out / "manifest.json").read_text())
    assert {t["variant"] for t in second["tests"]} == {"dynamic"}
    assert len(second["tests"]) == len(first["tests"])
    assert not list((out / "node").glob("*_static"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]

    planted = out / "node" / second["tests"][0]["name"] / "test_data_set_1" / "input_0.pb"
    planted.parent.mkdir()
    planted.write_bytes(b"someone's")
    code, err = _cli(capsys, out, "-k", SMALL, "--force")
    assert code == 2 and f"error: {planted}: not written by the previous export" in err
    assert planted.read_bytes() == b"someone's"
    assert json.loads((out / "manifest.json").read_text()) == second


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (
            lambda m: m.update(expected_failures=[]),
            "expected_failures: [] is not an object (docs/schemas/manifest.schema.json)",
        ),
        (lambda m: m["tests"][0].update(inputs=3), "tests[0].inputs: 3 is not a list"),
        (None, "not JSON: nested deeper than 100 levels"),
    ],
    ids=["expected-failures-a-list", "inputs-a-number", "nested-200000-deep"],
)
def test_force_over_a_malformed_manifest_names_it_and_deletes_nothing(
    tmp_path, capsys, spoil, said
):
    out = tmp_path / "out"
    assert _cli(capsys, out, "-k", SMALL, "--variants", "static")[0] == 0
    manifest = json.loads((out / "manifest.json").read_text())
    if spoil is None:
        text = "[" * 200_000 + "]" * 200_000
    else:
        spoil(manifest)
        text = json.dumps(manifest)
    (out / "manifest.json").write_text(text)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, err = _cli(capsys, out, "-k", SMALL, "--variants", "static", "--force")
    assert code == 2, err
    assert err.startswith(f"error: {out / 'manifest.json'}: not the manifest of a previous export")
    assert said in err and "internal error" not in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


KILLED_EXPORT = """
import os, signal, sys
from pathlib import Path
from conformance.export import folder

def fill(temporary):  # killed half-way through its files: nothing can clean up after it
    (temporary / "node").mkdir()
    (temporary / "node" / "half.pb").write_bytes(b"half")
    os.kill(os.getpid(), signal.SIGKILL)

folder.write_into(Path(sys.argv[1]), False, fill)
"""


def test_a_later_export_removes_what_a_killed_one_left_and_only_that(tmp_path, capsys):
    out = tmp_path / "out"
    killed = subprocess.Popen(
        [sys.executable, "-c", KILLED_EXPORT, str(out)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
    )
    _, stderr = killed.communicate(timeout=120)
    assert killed.returncode == -signal.SIGKILL, stderr
    left = tmp_path / f".out.export-{killed.pid}"
    assert (left / "node" / "half.pb").read_bytes() == b"half" and not out.exists()
    # not provably ours: no mark (a dead process's id), or a process that still runs
    unmarked = tmp_path / f".out.replaced-{killed.pid}"
    unmarked.mkdir()
    (unmarked / "mine.txt").write_text("someone's")
    running = tmp_path / f".out.export-{os.getppid()}"
    running.mkdir()
    shutil.copy(left / folder.MARK, running / folder.MARK)
    assert _cli(capsys, out, "-k", SMALL, "--variants", "static")[0] == 0
    assert not left.exists()
    assert (unmarked / "mine.txt").read_text() == "someone's" and running.is_dir()
    assert not (out / folder.MARK).exists()


def test_an_unwritable_place_is_an_error_naming_it(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, err = _cli(capsys, blocker / "out", "-k", SMALL)
    assert code == 2 and err.startswith(f"error: {blocker / 'out'}: cannot write")
    code, err = _cli(capsys, blocker, "-k", SMALL)
    assert code == 2 and err.startswith(f"error: {blocker}: not a folder")


def test_a_failed_write_leaves_nothing_half_written(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    assert _cli(capsys, out, "-k", SMALL, "--variants", "static")[0] == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    writes = []
    real = export.files.write_new

    def full_disk(path, data):  # what a full disk does on the 5th file
        writes.append(path)
        if len(writes) == 5:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, data)

    monkeypatch.setattr(export.files, "write_new", full_disk)
    code, err = _cli(capsys, out, "-k", SMALL, "--force")
    fifth = out.joinpath(*writes[4].parts[len(out.parts) :])  # below the temporary folder
    assert code == 2 and err.startswith(f"error: {fifth}: No space left on device")
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_floor_fails_an_export_that_writes_fewer_tests_than_selected(tmp_path, monkeypatch):
    real = export._write_test
    monkeypatch.setattr(
        export,
        "_write_test",
        lambda root, test: 0 if test.variant == "dynamic" else real(root, test),
    )
    with pytest.raises(ExportError, match=r"test folders written, \d+ selected"):
        _export(tmp_path / "out", SMALL, [SMALL_FILE], variants=("static", "dynamic"))
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ExportError, match="nothing to export"):
        _export(tmp_path / "out", "no-such-case-id", [SMALL_FILE])
    assert list(tmp_path.iterdir()) == []


def test_the_manifest_of_a_previous_export_lists_every_file_it_wrote(tmp_path):
    _export(tmp_path / "out", SMALL, [SMALL_FILE], variants=("both_initializers", "static"))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    written = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")}
    assert {w for w in written if "." in w.rsplit("/", 1)[-1]} == folder.previous_files(manifest)


def test_ctrl_c_leaves_out_dir_as_it_was(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    real = export.files.write_new
    writes = []

    def interrupted(path, data):  # Ctrl-C arriving on the 3rd file
        writes.append(path)
        if len(writes) == 3:
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(export.files, "write_new", interrupted)
    code, err = _cli(capsys, out, "-k", SMALL)
    assert code == 130 and f"interrupted: nothing was written to {out}" in err
    assert list(tmp_path.iterdir()) == []


def test_an_export_is_the_same_bytes_every_time(tmp_path):
    for name in ("a", "b"):
        _export(tmp_path / name, SMALL, [SMALL_FILE], variants=("static", "data_initializer"))
    first, second = (
        {
            p.relative_to(tmp_path / n): p.read_bytes()
            for p in (tmp_path / n).rglob("*")
            if p.is_file()
        }
        for n in ("a", "b")
    )
    assert first == second


def test_a_case_file_that_disagrees_with_the_oracle_is_not_exported(tmp_path, capsys):
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(
        "cases:\n"
        "  - id: gather-wrong-expectation\n"
        "    description: an output the oracle does not give\n"
        "    spec: a transcription mistake\n"
        "    op: Gather\n"
        "    opset: 13\n"
        "    dtype: float32\n"
        "    data: [1.0, 2.0]\n"
        "    indices: [1]\n"
        "    expected: [1.0]\n",
        encoding="utf-8",
    )
    code = main(["export", str(tmp_path / "out"), str(wrong)])
    err = capsys.readouterr().err
    assert code == 2 and f"error: {wrong}:" in err and "gather-wrong-expectation" in err
    assert "expected output differs from the oracle's" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wrong.yaml"]
