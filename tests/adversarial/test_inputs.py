"""Adversarial inputs: case files and numeric options that once validated and
then broke a run, were silently misread, or ended in a traceback.

Each must be refused up front -- a case file as ``file:line: field: message``,
an option by argparse naming the option and the value -- with exit 2.
"""

from __future__ import annotations

import argparse
import re

import pytest

from conformance.cli import options
from tests.conftest import conformance_here

CASE = """\
cases:
  - id: ok
    op: Gather
    opset: 13
    dtype: float32
    attributes: {axis: 0}
    data: [1.0, 2.0]
    indices: [1]
    expected: oracle
    description: an adversarial case
    spec: 004_d4766443270c2fb5.txt
"""


SEG = "float32\n    attributes: {axis: 0}\n    data: [1.0, 2.0]"


def _typed(dtype: str, data: str) -> str:
    """The data dtype and the data literal or generator, replacing SEG."""
    return f"{dtype}\n    attributes: {{axis: 0}}\n    data: {data}"


RANDOM_TO_99999 = "{random: {shape: [9], seed: 1, low: 0, high: 99999}}"


# ~600 bytes that expand to 10**7 values: a "billion laughs" (once accepted after
# 59 s and 320 MB at 1.3 KB; 2.4 KB never finished).
LAUGHS = (
    "[&a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "
    + ", ".join(f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 8))
    + "]"
)


# Every malformed file below goes to one `cases validate --check-models` (all
# problems of all files are reported, each as its file's line): one process.
# name: (replace in CASE, by, line, field, words the message must contain)
BAD: dict[str, tuple[str, str, int, str, tuple[str, ...]]] = {
    # 1. a case that validates must not destroy a run: int64 attributes, int opsets
    "axis-over-int64": ("axis: 0", "axis: 9223372036854775808", 6, "attributes.axis", ("int64",)),
    "axis-under-int64": ("axis: 0", "axis: -9223372036854775809", 6, "attributes.axis", ("int64",)),
    "axis-float": ("axis: 0", "axis: 0.0", 6, "attributes.axis", ("0.0", "integer")),
    "axis-bool": ("axis: 0", "axis: true", 6, "attributes.axis", ("True", "integer")),
    "opset-float": ("opset: 13", "opset: 13.0", 4, "opset", ("13.0", "opset number")),
    "opset-float-list": ("opset: 13", "opset: [11, 13.0]", 4, "opset", ("opset number",)),
    # 2. nothing silently wrong: ids, values a dtype cannot hold, generator fields
    "id-newline": ("id: ok", 'id: "ok\\n"', 2, "id", ("'ok\\n'", "lowercase letters")),
    "tag-newline": ("    spec:", '    tags: ["a\\n"]\n    spec:', 11, "tags[0]", ("'a\\n'",)),
    "float16-overflow": (SEG, _typed("float16", "[70000, 1]"), 7, "data[0]",
                         ("70000", "float16", "out of range", "inf")),
    "bfloat16-overflow": (SEG, _typed("bfloat16", "[1, 1.0e+39]"), 7, "data[1]",
                          ("1e+39", "bfloat16", "out of range")),
    "float32-overflow": (SEG, _typed("float32", "[1, 1.0e+39]"), 7, "data[1]",
                         ("1e+39", "float32", "out of range")),
    "float16-inexact-int": (SEG, _typed("float16", "[1, 1, 2049]"), 7, "data[2]",
                            ("2049", "float16", "not exactly representable", "2048")),
    "float32-inexact-int": (SEG, _typed("float32", "[1, 1, 16777217]"), 7, "data[2]",
                            ("16777217", "float32", "not exactly representable")),
    "float16-underflow": (SEG, _typed("float16", "[1, 1, 1, 1.0e-10]"), 7, "data[3]",
                          ("1e-10", "float16", "underflows to 0")),
    "complex-string-overflow": (SEG, _typed("complex64", "[1, 1, 1, 1, '1e400+1j']"), 7, "data[4]",
                                ("1e400+1j", "complex64", "out of range")),
    "complex-overflow": (SEG, _typed("complex64", "[1, 1.0e+39]"), 7, "data[1]",
                         ("1e+39", "complex64", "out of range")),
    "random-low-half": ("[1.0, 2.0]", "{random: {shape: [3], seed: 1, low: 0.5, high: 3}}",
                        7, "data.random.low", ("0.5", "integer")),
    "random-high-half": ("[1.0, 2.0]", "{random: {shape: [3], seed: 1, low: 0, high: 2.5}}",
                         7, "data.random.high", ("2.5", "integer")),
    "arange-start-half": ("[1.0, 2.0]", "{arange: {shape: [3], start: 0.5}}",
                          7, "data.arange.start", ("0.5", "integer")),
    "arange-start-bool": ("[1.0, 2.0]", "{arange: {shape: [3], start: true}}",
                          7, "data.arange.start", ("True", "integer")),
    "random-float16-overflow": (SEG, _typed("float16", RANDOM_TO_99999),
                                7, "data", ("float16", "not exactly representable")),
    "arange-float16-inexact": (SEG, _typed("float16", "{arange: {shape: [3000]}}"),
                               7, "data", ("2049", "float16")),
    # a string with no UTF-8 (ONNX strings are UTF-8): validated, then `run` died
    # building the model ("internal error: UnicodeEncodeError")
    "lone-surrogate": (SEG, _typed("string", '["a", "\\ud800"]'), 7, "data[1]",
                       ("not UTF-8 text", "surrogates")),
    # 4. malformed: file:line: field: message, never a traceback
    "full-no-broadcast": ("[1.0, 2.0]", "{full: {shape: [3], value: [1, 2]}}",
                          7, "data.full.value", ("[2]", "[3]", "broadcast")),
    "key-list": ("[1.0, 2.0]", "{? [a] : 1}", 7, "data", ("mapping key",)),
    "key-alias-list": ("[1.0, 2.0]", "{x: &k [1], ? *k : 2}", 7, "data", ("mapping key",)),
    "seed-negative": ("[1.0, 2.0]", "{random: {shape: [3], seed: -1}}",
                      7, "data.random.seed", ("-1",)),
    "seed-word": ("[1.0, 2.0]", "{random: {shape: [3], seed: abc}}",
                  7, "data.random.seed", ("'abc'", "integer")),
    "seed-half": ("[1.0, 2.0]", "{random: {shape: [3], seed: 1.5}}",
                  7, "data.random.seed", ("1.5", "integer")),
    "low-word": ("[1.0, 2.0]", "{random: {shape: [3], seed: 1, low: a, high: 3}}",
                 7, "data.random.low", ("'a'", "integer")),
    "start-overflow": ("[1.0, 2.0]", "{arange: {shape: [3], start: 9223372036854775807}}",
                       7, "data.arange.start", ("9223372036854775807", "int64")),
    "dim-over-int64": ("[1.0, 2.0]", "{arange: {shape: [0, 9223372036854775808]}}",
                       7, "data.arange.shape[1]", ("over the limit",)),
    "rank-40-generator": ("[1.0, 2.0]", "{arange: {shape: [" + ", ".join(["1"] * 40) + "]}}",
                          7, "data.arange.shape", ("40 dimensions",)),
    "400-digits": ("[1.0, 2.0]", "[" + "9" * 400 + ", 1]",
                   7, "data[0]", ("float32", "out of range", "400 characters")),
    "nested-5000": ("[1.0, 2.0]", "[" * 5000 + "1" + "]" * 5000, 7, "data", ("nested deeper",)),
    "nested-90": ("[1.0, 2.0]", "[" * 90 + "1" + "]" * 90, 7, "data", ("dimension",)),
    # 6. numbers and types YAML allows that no case file means: the strict loader
    # refuses them at their line and field (a 5000-digit integer was "internal
    # error: ValueError" with no line; 1.0e+400 silently became inf)
    "int-5000-digits": ("[1.0, 2.0]", "[" + "9" * 5000 + ", 1]", 7, "data[0]",
                        ("5000 characters", "more than 4300 digits")),
    "axis-5000-digits": ("axis: 0", "axis: -" + "9" * 5000, 6, "attributes.axis",
                         ("4300 digits",)),
    "opset-5000-digits": ("opset: 13", "opset: [13, " + "1" * 5000 + "]", 4, "opset[1]",
                          ("4300 digits",)),
    "hex-5000-digits": ("indices: [1]", "indices: [0x" + "f" * 5000 + "]", 8, "indices[0]",
                        ("0xffffffffff", "4300 digits")),
    "float-beyond-float64": ("[1.0, 2.0]", "[1.0e+400, 2.0]", 7, "data[0]",
                             ("1.0e+400", "out of range", ".inf")),
    "negative-beyond-float64": ("[1.0, 2.0]", "[1.0, -1.5e+999]", 7, "data[1]",
                                ("-1.5e+999", "out of range")),
    "yaml-set": ("indices: [1]", "indices: !!set {1}", 8, "indices", ("!!set",)),
    "yaml-binary": ("[1.0, 2.0]", "!!binary AAAA", 7, "data", ("!!binary",)),
    "yaml-timestamp": ("indices: [1]", "indices: [!!timestamp 2024-01-01]", 8, "indices[0]",
                       ("!!timestamp",)),
    "opset-bool": ("opset: 13", "opset: true", 4, "opset", ("True", "opset number")),
    "start-5000-digits": ("[1.0, 2.0]", "{arange: {shape: [3], start: " + "9" * 5000 + "}}",
                          7, "data.arange.start", ("4300 digits",)),
    # 5. unbounded work from small inputs: aliases counted as what they expand to
    "billion-laughs": ("[1.0, 2.0]", LAUGHS, 7, "data", ("262144 values", "aliases expanded")),
    "alias-cycle": ("[1.0, 2.0]", "&c [1.0, *c]", 7, "data", ("*c", "cycle")),
    "literal-too-large": ("[1.0, 2.0]", "[" + "1, " * 300_000 + "1]", 7, "data",
                          ("262144 values", "generator")),
}  # fmt: skip


def _bad_text(name: str) -> str:
    old, new, *_ = BAD[name]
    assert old in CASE
    return CASE.replace(old, new)


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """(folder, exit code, stderr) of one `cases validate --check-models` of every BAD file."""
    folder = tmp_path_factory.mktemp("bad-cases")
    for name in BAD:
        (folder / f"{name}.yaml").write_text(_bad_text(name), encoding="utf-8")
    result = conformance_here("cases", "validate", "--check-models", str(folder))
    return folder, result.returncode, result.stderr


@pytest.mark.parametrize("name", list(BAD))
def test_bad_case_files_say_file_line_field_and_exit_2(validated, name):
    folder, code, stderr = validated
    assert code == 2 and "Traceback" not in stderr, stderr
    _, _, line, field, words = BAD[name]
    lines = [x for x in stderr.splitlines() if x.startswith(f"{folder / name}.yaml:")]
    assert len(lines) == 1, (name, lines)
    assert lines[0].startswith(f"{folder / name}.yaml:{line}: cases[0].{field}: "), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_run_refuses_an_axis_beyond_int64_before_writing_anything(tmp_path):
    path = tmp_path / "case.yaml"
    path.write_text(CASE.replace("axis: 0", "axis: 9223372036854775808"), encoding="utf-8")
    out = tmp_path / "run"
    result = conformance_here(
        "run", "--runtime", "reference", "--cases", str(path), "--out", str(out)
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith(f"{path}:6: cases[0].attributes.axis: "), result.stderr
    assert "nothing was run" in result.stderr
    assert not out.exists()


def test_explicit_special_floats_and_the_same_file_twice(tmp_path):
    """.inf/.nan/-0.0 and subnormals stay allowed; a file named twice (or by
    its folder too) is read once."""
    path = tmp_path / "special.yaml"
    text = CASE.replace("dtype: float32", "dtype: [float16, bfloat16, float32, complex64]")
    path.write_text(text.replace("[1.0, 2.0]", "[.inf, -.inf, .nan, -0.0, 1.5, 6.0e-8]"))
    cplx = tmp_path / "complex.yaml"
    text = CASE.replace("id: ok", "id: ok-complex").replace("dtype: float32", "dtype: complex64")
    cplx.write_text(text.replace("[1.0, 2.0]", "['inf+nanj', '-inf-1j']"))
    again = tmp_path / "." / path.name
    result = conformance_here(
        "cases", "list", str(path), str(cplx), str(path), str(again), str(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ok.op13.") == 4, result.stdout  # 4 dtypes, each once
    assert result.stdout.count("ok-complex.op13.") == 1, result.stdout


# -- 3. numeric options: argparse refuses them, naming option and value -----------------
RUN = ("run", "--runtime", "reference")
FUZZ = ("fuzz", "--runtime", "reference", "--seed", "1", "--time-budget", "2")


@pytest.mark.parametrize(
    ("command", "option", "value"),
    [
        (RUN, "--timeout", "nan"),
        (RUN, "--batch-size", "0"),
        (RUN, "--case-memory", "0"),
        (RUN, "--worker-memory", "0"),
        (FUZZ, "--time-budget", "nan"),
        (FUZZ, "--timeout", "nan"),
        (FUZZ, "--max-elements", "0"),
        (RUN, "--pack", "0"),
        (RUN, "--pack", "2000"),
        (FUZZ, "--pack", "-3"),
    ],
)
def test_numeric_options_are_checked_by_argparse(tmp_path, command, option, value):
    out = tmp_path / "out"
    if command is RUN:  # one small case: were the value taken, the run would be short
        (tmp_path / "case.yaml").write_text(CASE, encoding="utf-8")
        command = (*command, "--cases", str(tmp_path / "case.yaml"))
    result = conformance_here(*command, "--out", str(out), f"{option}={value}")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    assert re.search(rf"error: argument {option}: .*{re.escape(value)}", result.stderr), (
        result.stderr
    )
    assert not out.exists()


def test_the_option_parsers_take_good_values():
    assert options.positive_seconds("0.5") == 0.5
    assert options.positive_seconds("2592000") == 2592000.0
    assert options.positive_int("32") == 32
    assert options.element_cap("4194304") == 4194304
    assert options.positive_size("1GiB") == 1 << 30
    assert options.positive_size("1") == 1
    for parse, text in [
        (options.positive_seconds, "nan"),
        (options.positive_seconds, "inf"),
        (options.positive_seconds, "1e400"),
        (options.positive_seconds, "0"),
        (options.positive_seconds, "-1"),
        (options.positive_seconds, "2592001"),
        (options.positive_seconds, "soon"),
        (options.positive_int, "0"),
        (options.positive_int, "-3"),
        (options.positive_int, "1.5"),
        (options.positive_int, "x"),
        (options.element_cap, "0"),
        (options.element_cap, "4194305"),
        (options.positive_size, "0"),
        (options.positive_size, "0.1"),
        (options.positive_size, "0b"),
        (options.positive_size, "lots"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)
