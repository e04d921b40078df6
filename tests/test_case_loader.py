"""Malformed case files fail with file, line and field -- never a traceback."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from conformance.cases import CaseErrors, load

GOOD = """\
cases:
  - id: ok
    op: Gather
    opset: 13
    dtype: float32
    data: [1.0, 2.0]
    indices: [1]
    expected: [2.0]
    description: a valid case
    spec: 004_d4766443270c2fb5.txt
"""


def _errors(tmp_path, text: str, name: str = "bad.yaml") -> list[str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    with pytest.raises(CaseErrors) as raised:
        load([path])
    return [str(e) for e in raised.value.errors]


def test_a_good_file_loads(tmp_path):
    (tmp_path / "good.yaml").write_text(GOOD)
    (case,) = load([tmp_path])
    assert case.id == "ok.op13.float32.int64"
    assert case.data.dtype == np.float32 and case.indices.dtype == np.int64
    assert case.source.line == 2


@pytest.mark.parametrize(
    ("change", "line", "expected"),
    [
        (("op: Gather", "op: Gatherr"), 3, "cases[0].op: 'Gatherr' is not one of"),
        (("opset: 13", "opset: 12"), 4, "Gather has no opset 12"),
        (("opset: 13", "opset: thirteen"), 4, "must be an opset number"),
        (("dtype: float32", "dtype: float"), 5, "unknown dtype 'float'"),
        (("indices: [1]", "indices: [1.5]"), 7, "1.5 is not a valid int64 value"),
        (("data: [1.0, 2.0]", "data: [[1.0], [2.0, 3.0]]"), 6, "ragged nested list"),
        (("data: [1.0, 2.0]", "data: {random: {shape: [2]}}"), 6, "random needs field 'seed'"),
        (("data: [1.0, 2.0]", "data: {randm: {shape: [2]}}"), 6, "exactly one of: arange"),
        (("data: [1.0, 2.0]", "data: {arange: {shape: [100000, 100000]}}"), 6, "over the limit"),
        (
            ("expected: [2.0]", "expected: [2.0]\n    expect_error: index-out-of-range"),
            8,
            "exactly one of 'expected'",
        ),
        (
            ("expected: [2.0]", "expect_error: out-of-range"),
            8,
            "unknown decision id 'out-of-range'",
        ),
        (
            ("spec: 004_d4766443270c2fb5.txt", "spec: 004\n    colour: red"),
            11,
            "cases[0].colour: unknown field",
        ),
        (("    description: a valid case\n", ""), 2, "missing field(s): description"),
        (("indices: [1]", "indices: [1]\n    indices: [0]"), 8, "duplicate key 'indices'"),
        (("data: [1.0, 2.0]", "data: [1.0, 2.0"), 7, "YAML"),
        (("dtype: float32", "dtype: int8\n    indices_dtype: int8"), 7, "300 does not fit"),
    ],
)
def test_errors_name_file_line_and_field(tmp_path, change, line, expected):
    old, new = change
    text = GOOD.replace(old, new)
    if "int8" in new:
        text = text.replace("[1.0, 2.0]", "[1, 300]").replace("[2.0]", "[300]")
    errors = _errors(tmp_path, text)
    assert any(expected in e for e in errors), errors
    assert any(e.startswith(f"{tmp_path / 'bad.yaml'}:{line}:") for e in errors), errors


def test_duplicate_ids_are_refused_across_files(tmp_path):
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD)
    with pytest.raises(CaseErrors) as raised:
        load([tmp_path])
    (error,) = raised.value.errors
    assert "duplicate id 'ok'" in str(error) and "a.yaml:2" in str(error)
    assert str(error).startswith(str(tmp_path / "b.yaml") + ":2:")


def test_errors_of_all_files_are_collected(tmp_path):
    (tmp_path / "a.yaml").write_text(GOOD.replace("op: Gather", "op: X"))
    (tmp_path / "b.yaml").write_text("cases: 5\n")
    with pytest.raises(CaseErrors) as raised:
        load([tmp_path])
    assert {e.path.name for e in raised.value.errors} == {"a.yaml", "b.yaml"}


def test_defaults_merge_and_errors_in_defaults_point_at_them(tmp_path):
    text = """\
    defaults:
      op: Gather
      opset: [1, 13]
      dtype: [float32, int8]
      spec: 004_d4766443270c2fb5.txt
    cases:
      - {id: a, data: [1, 2], indices: [0], expected: [1], description: d}
    """
    (tmp_path / "d.yaml").write_text(textwrap.dedent(text))
    assert len(load([tmp_path / "d.yaml"])) == 4
    errors = _errors(tmp_path, text.replace("int8]", "int9]"))
    assert any(":4:" in e and "unknown dtype 'int9'" in e for e in errors), errors


def test_generators_build_what_they_say():
    from conformance.cases import values
    from conformance.tables import dtypes

    f32 = dtypes.by_name("float32")
    assert values.build({"arange": {"shape": [2, 2], "start": 3}}, f32).tolist() == [[3, 4], [5, 6]]
    assert values.build({"full": {"shape": [0, 3], "value": 1}}, f32).shape == (0, 3)
    bits = values.build({"bits": [0x7FC00001]}, f32)
    assert bits.view(np.uint32)[0] == 0x7FC00001
    ints = values.build(
        {"random": {"shape": [1000], "seed": 1, "low": -3, "high": 2}}, dtypes.by_name("int32")
    )
    assert ints.min() == -3 and ints.max() == 2
    strings = values.build({"random": {"shape": [50], "seed": 2}}, dtypes.by_name("string"))
    assert strings.dtype == object and all(isinstance(s, str) for s in strings)
    wide = values.build({"random": {"shape": [4096], "seed": 3}}, f32)
    finite = wide[np.isfinite(wide)]
    assert np.isnan(wide).any() and (np.abs(finite) > 1e30).any()  # full range, not small numbers


def test_generators_of_rank_0_build_arrays_for_every_dtype(tmp_path):
    """A NumPy scalar is not an array (it cannot be frozen); % on a 0-d array
    gives one, which a rank-0 bool arange once returned."""
    from conformance.cases import values
    from conformance.tables import dtypes

    generators = [
        {"arange": {"shape": []}},
        {"random": {"shape": [], "seed": 1}},
        {"random": {"shape": [], "seed": 1, "low": 0, "high": 1}},
        {"full": {"shape": [], "value": 1}},
    ]
    for name in dtypes.NAMES:
        dtype = dtypes.by_name(name)
        for generator in generators:
            if "full" in generator and dtype.kind in ("bool", "string"):
                continue  # 1 is not a bool or a string literal
            built = values.build(generator, dtype)
            assert type(built) is np.ndarray and built.shape == (), (name, generator)
    text = """\
    cases:
      - {id: z, op: Gather, opset: 13, dtype: bool, description: d,
         spec: 004_d4766443270c2fb5.txt, data: {arange: {shape: [2]}},
         indices: {arange: {shape: []}}, indices_dtype: int64, expected: oracle}
    """
    (tmp_path / "z.yaml").write_text(textwrap.dedent(text))
    (case,) = load([tmp_path / "z.yaml"])
    assert case.data.tolist() == [False, True]


def test_generator_fields_of_mixed_key_types_are_named_not_sorted():
    from conformance.cases import values
    from conformance.tables import dtypes

    with pytest.raises(values.ValueProblem, match="random has no field '7'"):
        values.build({"random": {"shape": [2], "seed": 1, 7: 2, "x": 1}}, dtypes.by_name("int8"))


def test_random_strings_keep_their_values():
    """Seeds are part of case files: the same seed gives the same strings in
    every version (these were drawn letter by letter before the draws became
    one; NumPy's <U1 letters cannot hold NUL, so none appears)."""
    from conformance.cases import values
    from conformance.tables import dtypes

    built = values.build({"random": {"shape": [7], "seed": 0}}, dtypes.by_name("string"))
    assert built.tolist() == ["a<ß\n中", " \n😀", "\n\t", "\t", "😀", "", ""]


# -- issue 25: the strict loader shared by every YAML input --------------------------------
def test_what_yaml_allows_but_no_case_means_is_refused_with_its_field(tmp_path):
    """Each at its line and field, never a bare ValueError: integers over
    Python's 4300-digit limit (in any base, in defaults too), numbers beyond
    float64 written finite, YAML types no case file has."""
    big = "9" * 4301
    for old, new, where in [
        ("indices: [1]", f"indices: [{big}]", f":7: cases[0].indices[0]: {big[:12]}"),
        ("indices: [1]", f"indices: [0{'7' * 5000}]", ":7: cases[0].indices[0]: 07777777777"),
        ("indices: [1]", "indices: [1:30:" + "1" * 4400 + "]", ":7: cases[0].indices[0]: "),
        ("data: [1.0, 2.0]", "data: [1.0, 1.0e+308, 3.0e+308]", ":6: cases[0].data[2]: 3.0e+308"),
        ("expected: [2.0]", "expected: [.5e+1000]", ":8: cases[0].expected[0]: .5e+1000"),
        ("indices: [1]", "indices: !!omap [{a: 1}]", ":7: cases[0].indices: the YAML type !!omap"),
        ("indices: [1]", "indices: !!pairs [{a: 1}]", ":7: cases[0].indices: the YAML type"),
    ]:
        errors = _errors(tmp_path, GOOD.replace(old, new))
        assert len(errors) == 1 and errors[0].startswith(f"{tmp_path / 'bad.yaml'}{where}"), (
            new[:40],
            errors,
        )
    text = f"defaults:\n  opset: {big}\n" + GOOD
    (error,) = _errors(tmp_path, text)
    assert error.startswith(f"{tmp_path / 'bad.yaml'}:2: defaults.opset: "), error


def test_special_floats_stay_and_a_plain_date_is_a_string(tmp_path):
    """.inf, -.inf, .nan (any case) are written as such and stay; a float at
    float64's edge is not an overflow; 2026-04-01 is the text it is written as."""
    text = GOOD.replace("dtype: float32", "dtype: float64")
    text = text.replace("[1.0, 2.0]", "[.inf, -.Inf, .NaN, 1.7976931348623157e+308]")
    text = text.replace("[2.0]", "[-.inf]").replace("a valid case", "2026-04-01")
    (tmp_path / "ok.yaml").write_text(text)
    (case,) = load([tmp_path / "ok.yaml"])
    assert case.description == "2026-04-01"
    assert np.isposinf(case.data[0]) and np.isneginf(case.data[1]) and np.isnan(case.data[2])
    assert case.data[3] == np.finfo(np.float64).max
