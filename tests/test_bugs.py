"""Bugs (conformance.fuzz.bugs): one cause per mechanism, told from the outcome alone."""

from __future__ import annotations

import hashlib

import pytest

from conformance.engine.judge import Outcome
from conformance.fuzz.bugs import NO_TRIGGER, Cause, cause_of, normalised, trigger

# Messages as the runtimes wrote them (results of a real campaign), and what
# names their cause: the check that refused, not the input's shapes or names.
MESSAGES = [
    (
        "Exception from src/inference/src/cpp/core.cpp:105:\nException from src/frontends/onnx/"
        "frontend/src/utils/common.cpp:81:\nUnsupported data type COMPLEX64 expected: BOOL\n\n",
        "Unsupported data type COMPLEXN expected: BOOL",
    ),
    (
        "Exception from src/inference/src/cpp/core.cpp:105:\nCheck 'false' failed at src/frontends/"
        "common_translators/src/unconverted_ops_report.cpp:151:\nFrontEnd API failed with "
        "OpConversionFailure:\nModel wasn't fully converted. Failed operations detailed log:\n"
        "-- Gather-11 with a message:\nWhile validating ONNX node '<Node(Gather): output>': "
        "vector::_M_default_append\nSummary:\n-- Conversion is failed for: Gather-11\n",
        "vector::_M_default_append",
    ),
    (
        "translating to fact: Tensor { elem_type: Complex128, shape: Some(TensorShapeProto { dim: "
        '[Dimension { denotation: "", value: Some(DimValue(7)) }] }) }',
        "translating to fact: Tensor { elem_type: ComplexN, shape: Some(…) }",
    ),
    (
        "[ONNXRuntimeError] : 1 : FAIL : Exception during loading: MLDataType for: "
        "tensor(complex128) is not currently registered or supported",
        "[ONNXRuntimeError] : N : FAIL : Exception during loading: MLDataType for: "
        "tensor(complexN) is not currently registered or supported",
    ),
    (
        "Exception from src/inference/src/cpp/core.cpp:105:\n-- Gather-13 with a message:\n"
        "While validating ONNX node '<Node(Gather): output>': Exception from src/core/src/"
        "shape_util.cpp:66:\nAccessing out-of-range dimension\n\nSummary:\n",
        "Accessing out-of-range dimension",  # a frame after the prefix is a frame
    ),
    ("", "(no message)"),
]


@pytest.mark.parametrize(("message", "named"), MESSAGES)
def test_a_rejection_is_named_by_its_check_not_its_input(message, named):
    assert normalised(message) == named


def test_inputs_that_differ_only_in_shapes_and_node_names_share_a_cause():
    one = "Shapes {2,5,4} and {0,4,0} are not consistent\nnode GatherElements_112390"
    other = "Shapes {7,1} and {3,3} are not consistent\nnode GatherElements_7"
    assert normalised(one) == normalised(other)


def test_the_trigger_is_the_most_degenerate_trait():
    assert trigger(("negative", "empty_data", "zero_size_axis")) == "an empty tensor"
    assert trigger(("empty_indices",)) == trigger(("zero_size_axis",)) == "an empty tensor"
    assert trigger(("negative", "out_of_range", "beyond_int32")) == "an index out of range"
    assert trigger(("out_of_range", "empty_indices")) == "an empty tensor"  # the first wins
    assert trigger(("negative", "block_copy")) == NO_TRIGGER


def test_where_a_check_ran_does_not_make_another_cause():
    frontend = "While validating ONNX node '<Node(GatherElements): output>': Check 'merge' failed"
    plugin = "[CPU] GatherElements node with name 'output' Check 'merge' failed"
    assert normalised(frontend) == normalised(plugin) == "Check 'merge' failed"


def _cause(kind, details=None, message="", features=(), violation=None, dtype="float32"):
    return cause_of(
        "openvino", "Gather", Outcome(kind, message, details or {}), features, violation, dtype
    )


def test_each_kind_is_told_apart_by_its_mechanism():
    low32 = _cause("value_mismatch", {"explained_by": ["int64-low32"]})
    saturate = _cause("value_mismatch", {"explained_by": ["saturate-int32"]})
    assert low32.id != saturate.id
    assert low32.text == "int64-low32"
    # A wrong value no model explains is a bug of its own per features.
    unexplained = _cause("value_mismatch", {"explained_by": []}, features=("negative",))
    assert unexplained.mechanism == ("unexplained", ("negative",))
    # Crashes: the signal and the trigger, whatever the incidental features.
    fpe = _cause("crash", {"signal": "SIGFPE"}, features=("negative", "empty_data"))
    assert fpe == _cause("crash", {"signal": "SIGFPE"}, features=("empty_data", "block_copy"))
    assert fpe != _cause("crash", {"signal": "SIGSEGV"}, features=("empty_data",))
    assert fpe.text == "SIGFPE on an empty tensor"
    # An accepted invalid input: the clause it breaks.
    accepted = _cause("accepted_invalid", violation="index-out-of-range")
    assert accepted.text == "accepts index-out-of-range"
    assert accepted != _cause("accepted_invalid", violation="indices-dtype")


def test_models_of_one_family_are_one_bug_and_the_first_in_the_table_names_it():
    # Whether the constant-narrowing models fit too depends on the values drawn.
    alone = _cause("value_mismatch", {"explained_by": ["float64-as-float32"]})
    three = _cause("value_mismatch", {"explained_by": [
        "float64-constant-as-float32-bf16-clamp", "float64-as-float32",
        "float64-constant-as-float32", "subnormals-flushed"]})  # fmt: skip
    clamp = _cause("value_mismatch", {"explained_by": ["float64-constant-as-float32-bf16-clamp"]})
    assert alone == three == clamp
    assert alone.mechanism == ("explanations", ("float64-as-float32",))
    flushed = _cause("value_mismatch", {"explained_by": ["subnormals-flushed"]})
    assert flushed != alone and flushed.text == "subnormals-flushed"


def test_a_rejection_that_names_the_data_type_is_one_bug_per_type_whatever_the_check():
    # tract refuses complex data at two stages, by variant; two messages, one bug.
    fact = ("translating to fact: Tensor { elem_type: Complex128, shape: Some(TensorShapeProto "
            "{ dim: [] }) }\n\nCaused by:\n    Unknown DatumType Complex128")  # fmt: skip
    datum = _cause("rejected", message="Unknown DatumType Complex128", dtype="complex128")
    assert _cause("rejected", message=fact, dtype="complex128") == datum
    assert datum.mechanism == ("dtype", "complex") and datum.text == "rejects complex data"
    # No complex kernels: both widths are one bug; bfloat16 is another.
    assert datum == _cause("rejected", message="Unknown DatumType Complex64", dtype="complex64")
    assert datum != _cause("rejected", message="Unknown DatumType Bfloat16", dtype="bfloat16")
    # A message that names another type, or the short forms OpenVINO prints in
    # every node description, is not about the data type: its check names it.
    rank = ("While validating node 'opset6::GatherElements (opset1::Constant data[0]:bf16[])':"
            "\ndata rank must be >= 1.")  # fmt: skip
    assert _cause("rejected", message=rank, dtype="bfloat16").mechanism[0] == "message"
    listed = "Unsupported data type UINT4 expected: BOOL, BFLOAT16, FLOAT16"
    assert _cause("rejected", message=listed, dtype="float32").mechanism[0] == "message"


PANIC = (
    "the worker died (SIGABRT) running this case alone in a fresh worker\n"
    "thread '<unnamed>' (16655) panicked at core/src/ops/array/gather.rs:75:52:\n"
    "index out of bounds: the len is 64 but the index is 64\nnote: run with `RUST_BACKTRACE=1`"
    "\n…\n  37:     0x55784398b081 - _start\nthread caused non-unwinding panic. aborting."
)


def test_a_rust_panic_names_its_crash_by_the_file_that_panicked_not_the_input():
    crash = _cause("crash", {"signal": "SIGABRT"}, message=PANIC, features=("empty_data",))
    # Another line (another version), another message (the index's sign), other features.
    moved = PANIC.replace("gather.rs:75:52", "gather.rs:81:9").replace(
        "index out of bounds: the len is 64 but the index is 64",
        "range start index 9 out of range for slice of length 4",
    )
    assert crash == _cause("crash", {"signal": "SIGABRT"}, message=moved, features=("negative",))
    assert crash.text == "SIGABRT: panic in core/src/ops/array/gather.rs"
    # A dependency's file, without the build machine's registry and the crate's version.
    ndarray = PANIC.replace(
        "core/src/ops/array/gather.rs:75:52",
        "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/ndarray-0.17.2/src/"
        "arraytraits.rs:36:5",
    )
    elsewhere = _cause("crash", {"signal": "SIGABRT"}, message=ndarray)
    assert elsewhere.text == "SIGABRT: panic in ndarray/src/arraytraits.rs" and elsewhere != crash
    # Without a panic, the trigger names it.
    assert _cause("crash", {"signal": "SIGABRT"}, features=("empty_data",)).text == (
        "SIGABRT on an empty tensor"
    )


def test_the_id_is_stable_across_versions_of_the_harness():
    # Stores keep bugs by id across campaigns, machines and releases: a change
    # of the hash would make every stored bug look new. Pinned here.
    cause = Cause("openvino", "value_mismatch", "Gather", ("explanations", ("int64-low32",)))
    text = b"openvino\x1fvalue_mismatch\x1fGather\x1fbug_models\x1fint64-low32"
    assert cause.id == "b-" + hashlib.sha256(text).hexdigest()[:12] == "b-0dad6bb1b1a9"


@pytest.mark.parametrize(
    "cause",
    [
        _cause("value_mismatch", {"explained_by": ["int64-low32", "saturate-int32"]}),
        _cause("rejected", message="Unknown DatumType Complex64", dtype="complex64"),
        _cause("crash", {"signal": "SIGABRT"}, message=PANIC),
        _cause("value_mismatch", {}, features=("negative",)),
        _cause("crash", {"signal": "SIGABRT"}, features=("out_of_range",)),
        _cause("timeout"),
        _cause("rejected", message="Unknown type"),
        _cause("accepted_invalid", violation="data-dtype"),
        _cause("shape_mismatch", features=("empty_indices",)),
    ],
)
def test_a_cause_survives_its_json(cause):
    again = Cause.from_json(cause.runtime, cause.kind, cause.op, cause.to_json())
    assert again == cause and again.id == cause.id
