"""`conformance diff`: messages compared without build and run noise, results
between conforming and harness_unsupported counted, each group with its
inputs, and runs of different runtimes refused unless --cross-runtime."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from conformance.engine.records import counted
from conformance.report.diff import NOISE, comparable, normalised
from tests.conftest import REPO, conformance_here

# -- the normalisation, on real messages ------------------------------------------------
# Each pair is what two builds of a runtime said about the same input (A, B);
# see the note at each for where it came from.
SAME_ERROR = [
    # OpenVINO 2025.0.0 and 2026.4.1 refusing complex64 data (gather-every-dtype,
    # static): other lines, and 2026 supports two more types it lists
    (
        "rejected",
        "Exception from src/inference/src/cpp/core.cpp:99:\nException from src/frontends/onnx/"
        "frontend/src/utils/common.cpp:76:\nUnsupported data type COMPLEX64 expected: BOOL, "
        "BFLOAT16, FLOAT8E4M3FN, FLOAT8E5M2, FLOAT, FLOAT16, DOUBLE, INT4, INT8, INT16, INT32, "
        "INT64, UINT4, UINT8, UINT16, UINT32, UINT64, STRING, UNDEFINED\n\n",
        "Exception from src/inference/src/cpp/core.cpp:105:\nException from src/frontends/onnx/"
        "frontend/src/utils/common.cpp:81:\nUnsupported data type COMPLEX64 expected: BOOL, "
        "BFLOAT16, FLOAT4E2M1, FLOAT8E4M3FN, FLOAT8E5M2, FLOAT8E8M0, FLOAT, FLOAT16, DOUBLE, INT4, "
        "INT8, INT16, INT32, INT64, UINT4, UINT8, UINT16, UINT32, UINT64, STRING, UNDEFINED\n\n",
    ),
    # OpenVINO refusing an axis out of range: the same check, moved lines
    (
        "both_rejected",
        "Exception from src/inference/src/cpp/core.cpp:107:\n"
        "Check 'false' failed at src/frontends/common_translators/src/unconverted_ops_report.cpp"
        ":151:\nFrontEnd API failed with OpConversionFailure:\nModel wasn't fully converted. "
        "Failed operations detailed log:\n-- Gather-1 with a message:\nWhile validating ONNX "
        "node '<Node(Gather): output>': Exception from src/core/src/shape_util.cpp:64:\n"
        "Accessing out-of-range dimension\n\nSummary:\n-- Conversion is failed for: Gather-1\n\n",
        "Exception from src/inference/src/cpp/core.cpp:105:\n"
        "Check 'false' failed at src/frontends/common_translators/src/unconverted_ops_report.cpp"
        ":151:\nFrontEnd API failed with OpConversionFailure:\nModel wasn't fully converted. "
        "Failed operations detailed log:\n-- Gather-1 with a message:\nWhile validating ONNX "
        "node '<Node(Gather): output>': Exception from src/core/src/shape_util.cpp:66:\n"
        "Accessing out-of-range dimension\n\nSummary:\n-- Conversion is failed for: Gather-1\n\n",
    ),
    # OpenVINO 2026.4.1, the same case in two runs: it numbers the nodes it makes anew
    (
        "rejected",
        "Exception from src/inference/src/cpp/core.cpp:105:\nCheck 'false' failed at src/"
        "frontends/common_translators/src/unconverted_ops_report.cpp:151:\nFrontEnd API failed "
        "with OpConversionFailure:\nModel wasn't fully converted. Failed operations detailed "
        "log:\n-- GatherElements-11 with a message:\nWhile validating ONNX node "
        "'<Node(GatherElements): output>': Check 'output_shape.merge_into(output_shape, "
        "indices_pshape)' failed at src/core/shape_inference/include/"
        "gather_elements_shape_inference.hpp:56:\nWhile validating node 'opset6::GatherElements "
        "GatherElements_7052769 (opset1::Parameter data[0]:f32[4,3,5], opset1::Constant "
        "indices[0]:i64[2,6,3]) -> (dynamic[...])' with friendly_name 'GatherElements_7052769':"
        "\nShapes [4,3,5] and [2,6,3] are not consistent, `data` and `indices` must have equal "
        "or intersecting dimensions, except for the dimension at axis index.1\n\nSummary:\n"
        "-- Conversion is failed for: GatherElements-11\n\n",
        "Exception from src/inference/src/cpp/core.cpp:105:\nCheck 'false' failed at src/"
        "frontends/common_translators/src/unconverted_ops_report.cpp:151:\nFrontEnd API failed "
        "with OpConversionFailure:\nModel wasn't fully converted. Failed operations detailed "
        "log:\n-- GatherElements-11 with a message:\nWhile validating ONNX node "
        "'<Node(GatherElements): output>': Check 'output_shape.merge_into(output_shape, "
        "indices_pshape)' failed at src/core/shape_inference/include/"
        "gather_elements_shape_inference.hpp:56:\nWhile validating node 'opset6::GatherElements "
        "GatherElements_7047474 (opset1::Parameter data[0]:f32[4,3,5], opset1::Constant "
        "indices[0]:i64[2,6,3]) -> (dynamic[...])' with friendly_name 'GatherElements_7047474':"
        "\nShapes [4,3,5] and [2,6,3] are not consistent, `data` and `indices` must have equal "
        "or intersecting dimensions, except for the dimension at axis index.1\n\nSummary:\n"
        "-- Conversion is failed for: GatherElements-11\n\n",
    ),
    # ONNX Runtime 1.32.0 (built in /onnxruntime_src), and the same message as a Windows
    # build would print it (B's path and line are made up: 1.20.1 says the same as 1.32.0)
    (
        "both_rejected",
        "[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running "
        "GatherElements node. Name:'' Status Message: /onnxruntime_src/onnxruntime/core/"
        "providers/cpu/tensor/gather_elements.cc:150 void onnxruntime::core_impl(const Tensor*, "
        "const Tensor*, Tensor*, int64_t, concurrency::ThreadPool*) [with Tin = int; int64_t = "
        "long int] GatherElements op: Out of range value in index tensor\n",
        "[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running "
        "GatherElements node. Name:'' Status Message: D:\\a\\_work\\1\\s\\onnxruntime\\core\\"
        "providers\\cpu\\tensor\\gather_elements.cc:147 void onnxruntime::core_impl(const Tensor*, "
        "const Tensor*, Tensor*, int64_t, concurrency::ThreadPool*) [with Tin = int; int64_t = "
        "long int] GatherElements op: Out of range value in index tensor",
    ),
    # a crash whose stderr tail has Python's fault handler (addresses, lines)
    (
        "crash",
        "the worker died (SIGSEGV) running this case alone in a fresh worker\n"
        "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f3c2a1b4740 (most "
        'recent call first):\n  File "/work/main/conformance/adapters/ov.py", line 151 in execute',
        "the worker died (SIGSEGV) running this case alone in a fresh worker\n"
        "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007fa81c2d9b80 (most "
        'recent call first):\n  File "/home/ci/conformance/adapters/ov.py", line 160 in execute',
    ),
    # the memory limit: the size the worker had reached varies from run to run
    (
        "crash",
        "the worker's resident memory reached 4,412,137,472 bytes, over the limit of "
        "4,294,967,296 (--worker-memory); it was killed",
        "the worker's resident memory reached 4,301,000,704 bytes, over the limit of "
        "4,294,967,296 (--worker-memory); it was killed",
    ),
]

ANOTHER_ERROR = [
    # another index: a value of the input, not noise
    (
        "both_rejected",
        "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Non-zero status code returned while running "
        "Gather node. Name:'' Status Message: indices element out of data bounds, idx=3 must be "
        "within the inclusive range [-3,2]",
        "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Non-zero status code returned while running "
        "Gather node. Name:'' Status Message: indices element out of data bounds, idx=4 must be "
        "within the inclusive range [-3,2]",
    ),
    # other shapes in the same check: the input's, not noise
    (
        "rejected",
        "While validating node 'opset6::GatherElements GatherElements_7052769 (opset1::Parameter"
        " data[0]:f32[4,3,5], opset1::Constant indices[0]:i64[2,6,3]) -> (dynamic[...])'",
        "While validating node 'opset6::GatherElements GatherElements_7047474 (opset1::Parameter"
        " data[0]:f32[4,3,5], opset1::Constant indices[0]:i64[2,6,4]) -> (dynamic[...])'",
    ),
    # OpenVINO 2025.0.0 and 2026.4.1 refusing string data in GatherElements: the same
    # reason, reworded (a person reads both in the diff; no pattern guesses at wording)
    (
        "rejected",
        "Exception from src/inference/src/cpp/core.cpp:109:\nException from src/inference/src/"
        "dev/plugin.cpp:53:\nException from src/plugins/intel_cpu/src/nodes/gather_elements.cpp"
        ":83:\nLayer GatherElements with name 'output' has unsupported 'inputData' input "
        "precision: string\n\n\n",
        "Exception from src/inference/src/cpp/core.cpp:117:\nException from src/inference/src/"
        "dev/plugin.cpp:54:\nCheck 'any_of(inDataPrecision.size(), sizeof(element_type_traits<"
        "ov::element::i32>::value_type), sizeof(element_type_traits<ov::element::i16>::"
        "value_type), sizeof(element_type_traits<ov::element::i8>::value_type))' failed at src/"
        "plugins/intel_cpu/src/nodes/gather_elements.cpp:91:\nGatherElements node with name "
        "'output' has unsupported 'inputData' input precision: string\n\n\n",
    ),
    # another file threw it
    (
        "rejected",
        "Exception from src/inference/src/cpp/core.cpp:105:\n"
        "Exception from src/frontends/onnx/frontend/src/utils/common.cpp:81:\nUnsupported",
        "Exception from src/inference/src/cpp/core.cpp:105:\n"
        "Exception from src/frontends/onnx/frontend/src/core/tensor.cpp:81:\nUnsupported",
    ),
    # another signal
    (
        "crash",
        "the worker died (SIGSEGV) running this case alone in a fresh worker",
        "the worker died (SIGFPE) running this case alone in a fresh worker",
    ),
    # values the harness wrote: the hex digits are the element's bits
    (
        "value_mismatch",
        "1 of 4 elements differ; first at [2]: the runtime returned 7.0 (0x40e00000), "
        "the oracle computes 1.0 (0x3f800000)",
        "1 of 4 elements differ; first at [2]: the runtime returned 7.000000476837158 "
        "(0x40e00001), the oracle computes 1.0 (0x3f800000)",
    ),
    (
        "value_mismatch",
        "2 of 400 elements differ; first at [1, 0, 23]: the runtime returned 0.0 (0x00000000), "
        "the oracle computes 1.0115052960869793e-38 (0x006e24a7)",
        "2 of 400 elements differ; first at [1, 0, 23]: the runtime returned 0.0 (0x00000000), "
        "the oracle computes 1.0115052960869793e-38 (0x006e24a8)",
    ),
    (
        "value_mismatch",  # float64 bits are 16 hex digits, as long as an address
        "1 of 1 elements differ; first at [0]: the runtime returned 0.0 (0x0000000000000000), "
        "the oracle computes 5e-324 (0x0000000000000001)",
        "1 of 1 elements differ; first at [0]: the runtime returned 0.0 (0x8000000000000000), "
        "the oracle computes 5e-324 (0x0000000000000001)",
    ),
    (
        "shape_mismatch",
        "the runtime returned shape [3], the oracle computes [0, 3]",
        "the runtime returned shape [4], the oracle computes [0, 3]",
    ),
    (
        "accepted_invalid",
        "returned an output although the input violates index-out-of-range: index 3 at "
        "indices[1] is outside [-3, 2] for axis 0 of size 3",
        "returned an output although the input violates index-out-of-range: index 3 at "
        "indices[2] is outside [-3, 2] for axis 0 of size 3",
    ),
]


@pytest.mark.parametrize(("kind", "a", "b"), SAME_ERROR)
def test_messages_that_differ_only_in_noise_compare_equal(kind, a, b):
    assert a != b
    assert comparable(kind, a) == comparable(kind, b)


@pytest.mark.parametrize(("kind", "a", "b"), ANOTHER_ERROR)
def test_messages_that_differ_in_a_value_or_an_error_still_differ(kind, a, b):
    assert comparable(kind, a) != comparable(kind, b)


def test_what_normalising_keeps():
    said = normalised(SAME_ERROR[0][2])
    assert said == (
        "Exception from core.cpp:<line>: Exception from common.cpp:<line>: "
        "Unsupported data type COMPLEX64 expected: <types>"
    )
    onnxruntime = normalised(ANOTHER_ERROR[0][1])
    assert "idx=3 must be within the inclusive range [-3,2]" in onnxruntime


@pytest.mark.parametrize("noise", NOISE, ids=lambda noise: noise.name)
def test_every_noise_pattern_changes_its_own_example(noise):
    assert re.sub(noise.pattern, noise.replacement, noise.example) != noise.example


def test_the_noise_table_is_documented():
    page = (REPO / "docs" / "report.md").read_text()
    table = page.split("## What changed: `conformance diff`", 1)[1].split("| noise |", 1)[1]
    rows = table.split("\n\n", 1)[0].splitlines()[2:]  # after the header's rule
    documented = [row.split("|")[1].strip() for row in rows]
    assert documented == [noise.name for noise in NOISE]


# -- diff on real runs ----------------------------------------------------------------
@pytest.fixture(scope="module")
def ov_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("diff") / "ov"
    result = conformance_here("run", "--runtime", "openvino", "-k", "gather-every-dtype.op13*",
                              "--out", str(out))  # fmt: skip
    assert result.returncode == 1, result.stderr  # complex refused, wrong int64 and float64
    return out


@pytest.fixture(scope="module")
def ort_run(ort_every_dtype_run):
    return ort_every_dtype_run


def records(run):
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def rewrite(run, out, change):
    """Another run, made from ``run`` by changing its records: its summary
    counts the changed records, as the run that wrote them would have."""
    shutil.copytree(run, out)
    changed = [change(dict(r)) for r in records(run)]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in changed))
    summary = json.loads((out / "summary.json").read_text())
    count = counted(changed)
    groups = [dict(zip(("runtime", "kind", "op", "group"), key, strict=True), records=n)
              for key, n in sorted(count.pop("groups").items())]  # fmt: skip
    (out / "summary.json").write_text(json.dumps({**summary, **count, "groups": groups}))
    return out


def test_new_source_lines_in_the_runtimes_messages_are_not_a_change(ov_run, tmp_path):
    def rebuilt(r):  # another build: other lines, another folder
        r["message"] = (
            r["message"]
            .replace("core.cpp:105", "core.cpp:99")
            .replace("src/frontends/onnx/frontend/src/utils/common.cpp:81",
                     "/home/ci/openvino/src/frontends/onnx/frontend/src/utils/common.cpp:77")
        )  # fmt: skip
        return r

    rejected = [r for r in records(ov_run) if "core.cpp:105" in r["message"]]
    assert rejected  # complex64 and complex128, every variant and indices dtype
    b = rewrite(ov_run, tmp_path / "b", rebuilt)
    result = conformance_here("diff", str(ov_run), str(b))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 new, 0 fixed, 0 changed discrepancies" in result.stdout
    noise = f"({len(rejected)} of them differ only in noise: source lines, addresses, ids"
    assert noise in result.stdout
    assert f"{len(rejected)} of them differ only in noise" in (b / "diff.html").read_text()


def test_another_wrong_value_is_a_change_with_the_inputs_and_what_each_run_said(ov_run, tmp_path):
    wrong = [r for r in records(ov_run) if r["kind"] == "value_mismatch"]
    assert wrong
    first = wrong[0]

    def other_value(r):
        if r["case_id"] == first["case_id"] and r["variant"] == first["variant"]:
            r["message"] = r["message"].replace("the runtime returned", "the runtime returned 1")
        return r

    b = rewrite(ov_run, tmp_path / "b", other_value)
    result = conformance_here("diff", str(ov_run), str(b))
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert "0 new, 0 fixed, 1 changed discrepancies" in out
    shape = f"{first['dtype']}{first['data_shape']} {first['indices_dtype']}"
    assert f"      inputs: {shape}{first['indices_shape']} axis {first['axis']}" in out
    assert "      A said: …" in out and "the runtime returned 1" in out.split("B said:")[1]


def test_a_changed_group_shows_the_values_a_run_kept_of_one_of_its_cases(ov_run, tmp_path):
    def crashes(r):
        if r["kind"] == "rejected":
            r["kind"], r["message"] = "crash", "the worker died (SIGSEGV)"
        return r

    kept = json.loads((ov_run / "groups.json").read_text())["groups"]
    example = next(g for g in kept if g["kind"] == "rejected")
    b = rewrite(ov_run, tmp_path / "b", crashes)
    result = conformance_here("diff", str(ov_run), str(b))
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert "openvino     rejected -> crash" in out
    # B has no crash group in groups.json (copied from A): A's rejected group has the case
    data = json.dumps(example["data"]["values"], separators=(", ", ": "))
    assert f"      example {example['case_id']} (A): data {data[:20]}" in out
    page = (b / "diff.html").read_text()
    assert f"{example['case_id']} (run A)" in page
    assert f"data    {example['data']['dtype']} {example['data']['shape']}" in page


def test_results_between_conforming_and_harness_unsupported_are_counted_and_listed(
    ov_run, tmp_path
):
    def lost(r):  # the harness cannot carry bfloat16 in B; it could not carry bool in A
        if r["kind"] == "pass" and r["dtype"] == "bfloat16":
            r["kind"], r["message"] = "harness_unsupported", "the binding drops bfloat16"
        return r

    def unsupported_bool(r):
        if r["kind"] == "pass" and r["dtype"] == "bool":
            r["kind"], r["message"] = "harness_unsupported", "the binding drops bool"
        return r

    passing = passing_of(records(ov_run), "bfloat16"), passing_of(records(ov_run), "bool")
    assert all(passing)
    a = rewrite(ov_run, tmp_path / "a", unsupported_bool)
    b = rewrite(ov_run, tmp_path / "b", lost)
    result = conformance_here("diff", str(a), str(b))
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    total = sum(passing)
    assert "0 new, 0 fixed, 0 changed discrepancies" in out
    assert f"; {total} between conforming and harness_unsupported" in out
    assert f"HARNESS COVERAGE ({total} in 2 groups; conforming <-> harness_unsupported" in out
    assert "openvino     pass -> harness_unsupported" in out
    assert "openvino     harness_unsupported -> pass" in out
    assert "inputs: bfloat16[2, 3, 2] int32[2, 2] axis 1" in out
    page = (b / "diff.html").read_text()
    assert 'id="coverage"' in page and f"harness_unsupported</code> ({total})" in page


def passing_of(entries, dtype):
    return sum(1 for r in entries if r["kind"] == "pass" and r["dtype"] == dtype)


def test_runs_that_share_no_runtime_are_refused(ort_run, ov_run):
    result = conformance_here("diff", str(ort_run), str(ov_run))
    assert result.returncode == 2, result.stdout
    assert "the runs share no runtime (A has onnxruntime; B has openvino" in result.stderr
    assert "--cross-runtime" in result.stderr and "Traceback" not in result.stderr


def test_a_profile_is_another_runtime(ov_run, tmp_path):
    def profiled(r):
        r["runtime"] = "openvino:1thread"
        return r

    b = rewrite(ov_run, tmp_path / "b", profiled)
    refused = conformance_here("diff", str(ov_run), str(b))
    assert refused.returncode == 2 and "share no runtime" in refused.stderr
    result = conformance_here("diff", str(ov_run), str(b), "--cross-runtime")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cross-runtime: openvino (A) held against openvino:1thread (B)" in result.stdout
    assert "0 only in A, 0 only in B): 0 new, 0 fixed, 0 changed" in result.stdout


def test_cross_runtime_pairs_results_by_case_and_variant(ort_run, ov_run, tmp_path):
    result = conformance_here("diff", str(ort_run), str(ov_run), "--cross-runtime",
                         "-o", str(tmp_path / "d.html"))  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    both = len(records(ort_run))
    assert f"{both} results in both runs (0 only in A, 0 only in B)" in out
    # both refuse complex data, each in its own words
    assert "onnxruntime -> openvino rejected -> rejected" in out
    assert "      A said: [ONNXRuntimeError]" in out and "      B said: Exception from" in out
    assert "  onnxruntime: " in out and " (A only)" in out and " (B only)" in out
    page = (tmp_path / "d.html").read_text()
    assert "<strong>onnxruntime</strong> (A) held against <strong>openvino</strong>" in page


def test_cross_runtime_holds_one_runtime_against_one(ort_run, ov_run, tmp_path):
    both = tmp_path / "both"  # a results file alone, merged from two runs (no header to match)
    both.mkdir()
    merged = (ov_run / "results.jsonl").read_text() + (ort_run / "results.jsonl").read_text()
    (both / "results.jsonl").write_text(merged)
    result = conformance_here("diff", str(both), str(ov_run), "--cross-runtime")
    assert result.returncode == 2
    assert (
        "--cross-runtime holds one runtime against one other: A has onnxruntime, openvino; "
        "B has openvino" in result.stderr
    )


def test_two_targets_of_one_run_are_diffed_by_name(tmp_path):
    """`nox -s versions` runs every release in one run, then holds each
    against the pinned one: --cross-runtime A_NAME B_NAME picks them."""
    out = tmp_path / "run"
    done = conformance_here(
        "run", "--runtime", "onnxruntime", "onnxruntime:no-opt", "-k", "gather-example-axis0",
        "--variants", "static", "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    same = conformance_here(
        "diff", str(out), str(out), "--cross-runtime", "onnxruntime", "onnxruntime:no-opt",
        "-o", str(tmp_path / "d.html"),
    )  # fmt: skip
    assert same.returncode == 0, same.stdout + same.stderr
    assert "cross-runtime: onnxruntime (A) held against onnxruntime:no-opt (B)" in same.stdout
    assert "6 results in both runs (0 only in A, 0 only in B): 0 new" in same.stdout
    missing = conformance_here(
        "diff", str(out), str(out), "--cross-runtime", "onnxruntime", "openvino",
        "-o", str(tmp_path / "d.html"),
    )  # fmt: skip
    assert missing.returncode == 2
    assert "run B has no results of 'openvino' (it has: onnxruntime, onnxruntime:no-opt)" in (
        missing.stderr
    )
    one = conformance_here("diff", str(out), str(out), "--cross-runtime", "onnxruntime")
    assert one.returncode == 2 and "takes no name, or two" in one.stderr


# -- whole runs compared, as a user does ------------------------------------------
def test_diff_of_ort_run_with_itself_shows_nothing(ort_run, tmp_path):
    result = conformance_here("diff", str(ort_run), str(ort_run), "-o", str(tmp_path / "d.html"))
    assert result.returncode == 0, result.stderr
    assert "0 new, 0 fixed, 0 changed" in result.stdout
    assert (tmp_path / "d.html").exists()


def test_diff_names_new_fixed_and_changed_discrepancies(ort_run, tmp_path):
    def change(r):
        if r["dtype"] == "complex64" and r["variant"] == "static":
            r["kind"], r["message"] = "pass", ""  # fixed
        elif r["dtype"] == "float32" and r["variant"] == "dynamic":
            r["kind"], r["message"] = "value_mismatch", "1 of 16 elements differ"  # new
        elif r["dtype"] == "string" and r["variant"] == "static":
            r["kind"], r["message"] = "crash", "the worker died (SIGSEGV)"  # changed
        return r

    b = rewrite(ort_run, tmp_path / "b", change)
    result = conformance_here("diff", str(ort_run), str(b))
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "2 new, 2 fixed, 2 changed discrepancies" in out  # int32 and int64 indices each
    assert "onnxruntime  pass -> value_mismatch" in out and "gather-every-dtype (2)" in out
    assert "onnxruntime  rejected -> pass" in out
    assert "onnxruntime  value_mismatch -> crash" in out
    page = (b / "diff.html").read_text()
    assert 'id="new"' in page and "New (2)" in page and "Fixed (2)" in page
    assert "the worker died (SIGSEGV)" in page and "<script" not in page


def test_a_discrepancy_the_harness_cannot_carry_any_more_is_changed_not_lost(ort_run, tmp_path):
    def change(r):
        if r["kind"] == "rejected" and r["variant"] == "static":
            r["kind"], r["message"] = "harness_unsupported", "the binding cannot carry it"
        return r

    b = rewrite(ort_run, tmp_path / "b", change)
    result = conformance_here("diff", str(ort_run), str(b))
    assert result.returncode == 1, result.stdout
    assert "0 new, 0 fixed, 4 changed" in result.stdout  # complex64/128 x int32/int64
    assert "rejected -> harness_unsupported" in result.stdout


def test_diff_of_fuzz_campaigns_compares_signatures(ort_campaigns, tmp_path):
    runs = [str(folder) for folder, _ in ort_campaigns.values()]  # shared: only read
    result = conformance_here("diff", *runs, "-o", str(tmp_path / "diff.html"))
    assert result.returncode in (0, 1), result.stderr
    assert "fuzz campaigns: compared by discrepancy signature" in result.stdout


def test_diff_of_a_missing_run_is_a_usage_error(tmp_path):
    result = conformance_here("diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert result.returncode == 2 and "no such file or folder" in result.stderr
