"""The CLI as a user runs it: a real process, exit codes, and no tracebacks."""

from __future__ import annotations

from tests.conftest import CASES, conformance


def test_validate_the_shipped_cases():
    result = conformance("cases", "validate", "--check-models")
    assert result.returncode == 0, result.stderr
    assert "all cases agree with the oracle" in result.stdout


def _case_file(path, dtype: str, data: str, expected: str):
    path.write_text(
        f"cases:\n  - id: x\n    op: Gather\n    opset: 13\n    dtype: {dtype}\n"
        f"    data: {data}\n    indices: [0]\n    expected: {expected}\n"
        "    description: d\n    spec: s\n"
    )
    return path


def test_validate_a_malformed_file_exits_2_with_file_line_field(tmp_path):
    bad = _case_file(tmp_path / "bad.yaml", "float33", "[1]", "oracle")
    result = conformance("cases", "validate", str(bad))
    assert result.returncode == 2
    assert f"{bad}:5: cases[0].dtype" in result.stderr and "float33" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_validate_a_wrong_expectation_exits_1_saying_which_side_is_which(tmp_path):
    wrong = _case_file(tmp_path / "wrong.yaml", "int32", "[5, 6]", "[6]")
    result = conformance("cases", "validate", str(wrong))
    assert result.returncode == 1
    assert f"{wrong}:2: x.op13.int32.int64: expected output differs from the oracle's: " in (
        result.stderr
    )
    assert "1 of 1 elements differ; first at [0]: the file says 6, the oracle computes 5" in (
        result.stderr
    )
    wrong = _case_file(tmp_path / "shape.yaml", "int32", "[5, 6]", "[[5]]")
    result = conformance("cases", "validate", str(wrong))
    assert result.returncode == 1
    assert "the file says shape [1, 1], the oracle computes [1]" in result.stderr


def test_missing_path_exits_2(tmp_path):
    result = conformance("cases", "validate", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2 and "no such file" in result.stderr


def test_list_and_filter():
    result = conformance("cases", "list", "-k", "ge-onnx-example-1.op13")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines and all(line.startswith("ge-onnx-example-1.op13.") for line in lines)


def test_oracle_prints_output_or_violation():
    result = conformance("oracle", "ge-onnx-example-1.op13.float32.int64")
    assert result.returncode == 0 and "[[1., 1.]," in result.stdout
    result = conformance("oracle", "gather-index-beyond-int32")
    assert result.returncode == 0
    assert result.stdout.count("SpecViolation index-out-of-range") == 3  # one per opset
    result = conformance("oracle", "no-such-case")
    assert result.returncode == 2 and "no case with id" in result.stderr


def test_runs_from_another_folder_with_explicit_cases(tmp_path):
    result = conformance("cases", "validate", str(CASES / "gather"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
