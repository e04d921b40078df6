"""Whole causes (issue 49, "What to build" 4; issue 44, 14): a runtime's load
or start error keeps the line that names its cause, within a length limit,
in the terminal and the page. Real runtimes: tract refusing two input dims it
cannot unify, OpenVINO refusing a property it does not know."""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from conformance.messages import CAUSE_CHARS, cause
from tests.conftest import conformance_here

TRACT_WHY = "Impossible to unify Sym(unk__330) with Sym(unk__331)"


def _two_dims(tmp_path: Path) -> Path:
    """Two inputs whose first dims are named apart and joined by a Concat
    along the other axis: tract's inference must unify the two names, and
    refuses (onnx.reference runs it)."""
    inputs = [
        h.make_tensor_value_info("a", T.FLOAT, ["unk__330", 2]),
        h.make_tensor_value_info("b", T.FLOAT, ["unk__331", 2]),
        h.make_tensor_value_info("i", T.INT64, [2]),
    ]
    nodes = [
        h.make_node("Concat", ["a", "b"], ["s"], axis=1),
        h.make_node("Gather", ["s", "i"], ["y"], axis=0),
    ]
    graph = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info("y", T.FLOAT, None)])
    path = tmp_path / "two_dims.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), path)
    return path


def test_tracts_load_error_keeps_its_last_cause_in_the_terminal_and_the_page(tmp_path):
    out = tmp_path / "run"
    done = conformance_here(
        "model", str(_two_dims(tmp_path)), "--runtime", "tract", "--out", str(out)
    )
    line = next(x for x in done.stdout.splitlines() if x.strip().startswith("tract: "))
    assert "cannot load" in line and TRACT_WHY in line, done.stdout
    assert "Failed analyse for node" in line  # what failed, before why
    assert TRACT_WHY in (out / "report.html").read_text(encoding="utf-8")


def test_an_unknown_openvino_property_is_named_when_its_target_does_not_start(tmp_path):
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        "targets:\n  ovbad:\n    adapter: openvino\n    properties: {NOT_A_PROPERTY: 1}\n",
        encoding="utf-8",
    )
    done = conformance_here(
        "run", "--targets", str(targets), "--cases", "cases/gather/dtypes.yaml",
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert done.returncode == 2
    said = done.stdout + done.stderr
    assert "did not start" in said and "Unsupported property NOT_A_PROPERTY" in said, said
    assert "core.cpp:117" not in said  # where it was raised says nothing of why


def test_a_long_error_keeps_what_failed_and_why_within_the_limit():
    chain = "\n".join(f"    {i}: step {i} of the analysis, " + "x" * 60 for i in range(12))
    message = f"Failed analyse for node #3\n\nCaused by:\n{chain}\n    12: {TRACT_WHY}."
    said = cause(message)
    assert len(said) <= CAUSE_CHARS
    assert said.startswith("Failed analyse for node #3") and said.endswith(TRACT_WHY + ".")
    assert "…" in said  # lines between were left out, and it says so
    assert cause("one\ntwo\nthree\nfour") == "one; two; three; four"  # short: whole
    # a cause longer than the limit by itself: the why, cut, rather than the what
    assert cause("what\n" + "why " * 200, 50).startswith("why why")
    ort = "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Non-zero status code returned while "
    said = cause(
        ort + "running Gather node. Name:'" + "/a" * 200 + "' idx=160 must be within [-160,159]"
    )
    assert len(said) == CAUSE_CHARS and said.startswith(ort[:50])
    assert said.endswith("idx=160 must be within [-160,159]")  # one line: its end says why
    assert cause("Exception from src/inference/src/cpp/core.cpp:117:\n") == (
        "Exception from src/inference/src/cpp/core.cpp:117:"
    )  # nothing informative: the first line, not nothing


def test_a_new_refusal_keeps_its_cause_in_the_gate_s_lines_and_the_page(tmp_path):
    """tract refuses complex64 data with its cause on the last line, after a
    first line longer than a terminal's: the gate's line for the new group and
    the page's family say the cause, not the first line cut."""
    cases = tmp_path / "complex.yaml"
    cases.write_text(
        "defaults: {op: Gather, opset: 13, indices_dtype: int64, description: complex data,\n"
        '           spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension"}\n'
        "cases:\n"
        "  - {id: complex-data, dtype: complex64, expected: oracle,\n"
        "     data: [[1, 2], [3, 4], [5, 6]], indices: [0, 2]}\n",
        encoding="utf-8",
    )
    known, out = tmp_path / "known", tmp_path / "run"
    known.mkdir()
    done = conformance_here(
        "run", "--runtime", "tract", "--cases", str(cases), "--variants", "static",
        "--no-progress", "--gate", "--known", str(known), "--out", str(out),
    )  # fmt: skip
    line = next(x for x in done.stdout.splitlines() if "translating to fact" in x)
    assert line.endswith("Caused by: Unknown DatumType Complex64"), done.stdout
    page = (out / "report.html").read_text(encoding="utf-8")
    family = page[page.index('<span class="new-badge">NEW</span> translating') :]
    assert family[: family.index("</td>")].endswith("Caused by: Unknown DatumType Complex64")
