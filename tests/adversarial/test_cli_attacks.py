"""Hostile input, third round (issue 32): adapters of other packages whose
entry-point names would become paths, a folder named ``shipped``, outputs
that cannot be written, a case file named twice.

In-process (``conformance.cli.main``) wherever the behaviour needs no process
of its own; the hostile adapter package is a real wheel installed with uv
(``--target``) and put on the path, as pip's site-packages would hold it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance import adapters, cli, shipped
from conformance.cases.loader import discover
from conformance.cli import inputs
from conformance.engine import files
from conformance.gate import baseline

REPO = Path(__file__).resolve().parents[2]
UV = shutil.which("uv")
PACKAGE = "hostile_adapters"
LONG = "y" * 300
# name -> why it must never be a baseline file's name
BAD_NAMES = {
    "../x": "a path out of the --known folder (known/../x.yaml)",
    LONG: "too long for a file name: every run of it exited 2 (File name too long)",
    "..": "the folder above",
    "a/b": "a folder below",
    "with:colon": "not a file-name character of the rule",
}
# Its import raises: what listing the installed adapters must never do (issue 32, 14).
INIT = "raise RuntimeError('hostile_adapters: importing me is a bug of the harness')\n"
# One ordinary case that ONNX Runtime refuses: a known family of the shipped baseline.
COMPLEX_CASE = """\
cases:
  - id: hostile-complex
    op: Gather
    opset: 13
    dtype: complex64
    data: [[1, 2], [3, 4]]
    indices: [1]
    expected: oracle
    description: ORT has no complex kernel (a known family of the shipped baseline)
    spec: data-dtype
"""


def _wheel(folder: Path) -> Path:
    """A wheel of a package whose import raises, registering adapters under
    the names of :data:`BAD_NAMES` and two good names (``hostile-ok``, ``boom``)."""
    info = f"{PACKAGE}-0.1.dist-info"
    points = "".join(
        f"{name} = {PACKAGE}.adapter:Evil\n" for name in [*BAD_NAMES, "hostile-ok", "boom"]
    )
    content = {
        f"{PACKAGE}/__init__.py": INIT,  # what finding {PACKAGE}.adapter would run
        f"{PACKAGE}/adapter.py": "class Evil:\n    name = 'evil'\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: 0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[{adapters.ENTRY_POINT_GROUP}]\n{points}",
    }
    wheel = folder / f"{PACKAGE}-0.1-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in content.items():
            data = text.encode()
            archive.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{name},sha256={digest.decode()},{len(data)}")
        archive.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return wheel


@pytest.fixture(scope="session")
def hostile_site(tmp_path_factory) -> Path:
    """A folder where the hostile package is installed (a real install: its
    dist-info, entry points and module), to put on the path: by uv where it is
    on PATH (a quarter of a second), else by pip (the test extra has it), so
    this security test never skips."""
    folder = tmp_path_factory.mktemp("hostile")
    site = folder / "site"
    wheel = str(_wheel(folder))
    if UV is not None:
        command = [UV, "pip", "install", "--quiet", "--no-deps", "--offline",
                   "--python", sys.executable, "--target", str(site), wheel]  # fmt: skip
    else:
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                   "--target", str(site), wheel]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return site


@pytest.fixture
def hostile(hostile_site, monkeypatch) -> Path:
    monkeypatch.syspath_prepend(str(hostile_site))
    yield hostile_site
    assert PACKAGE not in sys.modules, "the hostile package was imported in the main process"


def conformance(capsys, *args) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# -- 2. a registered name never becomes a path --------------------------------------------
def test_entry_points_whose_names_break_the_rule_are_refused_at_registration(hostile):
    known = adapters.registered()
    refused = adapters.refused_entry_points()
    assert "hostile-ok" in known and "boom" in known  # names that keep the rule stay
    for name, why in BAD_NAMES.items():
        assert name not in known, why
        assert name in refused and f"package '{PACKAGE}'" in refused[name], why
        assert "rename the entry point" in refused[name]
        with pytest.raises(adapters.UnknownRuntime, match="is refused"):
            adapters.parse(name)
        assert adapters.baseline_name(name, name) is None, why
    # one rule, documented: 1 to 64 of [A-Za-z0-9._-], not . or ..
    assert [adapters.is_baseline_name(n) for n in ("a" * 64, "a" * 65, ".", "..", "...")] == [
        True, False, False, False, True,
    ]  # fmt: skip
    assert adapters.is_baseline_name("-x.y_z") and not adapters.is_baseline_name("")
    assert adapters.baseline_name("hostile-ok", "hostile-ok") == "hostile-ok"


@pytest.mark.parametrize("name", ["../x", LONG])
def test_a_refused_entry_point_is_a_clear_error_not_a_false_pass(hostile, tmp_path, capsys, name):
    """Before: `known/../x.yaml` read (a baseline outside the folder given:
    a false PASS, exit 0), or "File name too long" on every run."""
    known = tmp_path / "known"
    known.mkdir()
    (tmp_path / "x.yaml").write_text("entries:\n  - signature: {}\n    reason: everything\n")
    out = tmp_path / "out"
    code, _, err = conformance(capsys, "run", "--gate", "--runtime", name, "--known", known,
                               "-k", "ge-onnx-example-1", "--out", out)  # fmt: skip
    assert code == 2, err
    assert "is refused" in err and adapters.BASELINE_RULE in err and PACKAGE in err
    assert "File name too long" not in err and not out.exists()


def test_listing_installed_adapters_imports_no_package(hostile):
    """Issue 32, 14: an installed adapter whose import raises is listed from
    its metadata; only its workers would import it."""
    assert "boom" in adapters.installed()
    assert adapters.parse("boom").target == f"{PACKAGE}.adapter:Evil"


# -- 3. only the bare word is the word ----------------------------------------------------
@pytest.fixture
def shipped_folder(tmp_path, monkeypatch) -> Path:
    """A folder named shipped in the working folder, with one case file."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "shipped"
    folder.mkdir()
    (folder / "mine.yaml").write_text(COMPLEX_CASE)
    return folder


@pytest.mark.parametrize("spelling", ["./shipped", "shipped/", "ABSOLUTE"])
def test_a_folder_named_shipped_is_that_folder_in_cases_list(shipped_folder, capsys, spelling):
    spelling = str(shipped_folder) if spelling == "ABSOLUTE" else spelling
    code, out, err = conformance(capsys, "cases", "list", spelling)
    assert code == 0, err
    assert {line.split("\t")[0] for line in out.splitlines()} == {
        "hostile-complex.op13.complex64.int64"
    }


# every option that takes the word: (argv before the value, argv after, the attribute)
TAKES_THE_WORD = [
    (["run", "--cases"], [], "cases"),
    (["run", "--gate", "--known"], [], "known"),
    (["fuzz", "--known"], [], "known"),
    (["fuzz", "replay", "--store", "s", "--known"], [], "known"),
    (["gate", "run-folder", "--known"], [], "known"),
    (["report", "run-folder", "-o", "x.html", "--known"], [], "known"),
    (["scoreboard", "run-folder", "-o", "x.html", "--known"], [], "known"),
    (["cases", "validate"], [], "paths"),
    (["oracle", "some-id", "--cases"], [], "cases"),
]


@pytest.mark.parametrize("before, after, attribute", TAKES_THE_WORD)
def test_every_command_reads_the_word_from_the_text_as_typed(before, after, attribute):
    """argparse's Path made ./shipped the word; the options now keep the text."""
    for typed, word in [("shipped", True), ("./shipped", False), ("shipped/", False)]:
        args = cli.parser().parse_args([*before, typed, *after])
        (value,) = getattr(args, attribute)
        assert shipped.is_word(value) is word, (before, typed)
        expanded = shipped.expand([value], Path("/the/shipped/set"))
        assert (expanded == [Path("/the/shipped/set")]) is word


@pytest.fixture(scope="module")
def complex_run(tmp_path_factory) -> Path:
    """A real ONNX Runtime run of one case with a known discrepancy (complex
    refused: a family of the shipped baseline), static variant only."""
    folder = tmp_path_factory.mktemp("complex-run")
    (folder / "complex.yaml").write_text(COMPLEX_CASE)
    code = cli.main(["run", "--runtime", "onnxruntime", "--cases", str(folder / "complex.yaml"),
                     "--variants", "static", "--no-progress",
                     "--out", str(folder / "run")])  # fmt: skip
    assert code == 1  # the discrepancy, ungated
    return folder / "run"


def test_gate_known_dot_slash_shipped_is_the_empty_folder(complex_run, tmp_path, capsys,
                                                         monkeypatch):  # fmt: skip
    """Before: held against the shipped baselines, passed (exit 0)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shipped").mkdir()
    code, out, err = conformance(capsys, "gate", complex_run, "--known", "shipped")
    assert code == 0, out + err  # the word: the shipped baseline knows the family
    code, out, err = conformance(capsys, "gate", complex_run, "--known", "./shipped")
    assert code == 1, out + err  # the empty folder: the discrepancy is new
    assert "NEW:" in out


# -- 11. an output that cannot be written is said first -----------------------------------
def _unwritable(tmp_path: Path) -> Path:
    """A place no new file can be made in, even by root (Linux: /sys)."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        return locked / "summary.md"
    if not Path("/sys/kernel").is_dir():
        pytest.skip("needs /sys to have a folder root cannot write to")
    return Path("/sys") / "conformance-summary.md"


@pytest.mark.parametrize("where, reason", [
    ("adir", "Is a directory"),
    ("afile/x.md", "Not a directory"),
    ("afile/deeper/x.md", "Not a directory"),
    ("UNWRITABLE", "Permission denied"),
])  # fmt: skip
def test_summary_md_that_cannot_be_written_is_an_error_before_any_verdict(
    complex_run, tmp_path, capsys, monkeypatch, where, reason
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("a file\n")
    target = str(_unwritable(tmp_path)) if where == "UNWRITABLE" else where
    code, out, err = conformance(capsys, "gate", complex_run, "--summary-md", target)
    assert code == 2
    assert err.splitlines()[0] == f"error: {target}: {reason}", err
    assert out == ""  # no verdict printed before (or at all)
    # run: refused before anything runs (no output folder made)
    code, out, err = conformance(capsys, "run", "--runtime", "reference", "-k",
                                 "ge-onnx-example-1", "--summary-md", target,
                                 "--out", "run")  # fmt: skip
    assert (code, err.splitlines()[0]) == (2, f"error: {target}: {reason}"), err
    assert not (tmp_path / "run").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile"] + (
        ["locked"] if (tmp_path / "locked").exists() else []
    )  # nothing left behind by the check


def test_a_file_where_a_folder_must_be_is_not_a_directory(complex_run, tmp_path, capsys):
    """The shared writer's reason (report -o showed "File exists" about the file)."""
    afile = tmp_path / "afile"
    afile.write_text("a file\n")
    for target in (afile / "x.html", afile / "deeper" / "x.html"):
        with pytest.raises(NotADirectoryError) as raised:
            files.write_text(target, "text")
        assert raised.value.filename == str(target)
        code, _, err = conformance(capsys, "report", complex_run, "-o", target)
        assert (code, err.strip()) == (2, f"error: {target}: Not a directory")
    assert afile.read_text() == "a file\n"


def test_a_file_named_as_the_run_folder_is_said_so_and_kept(tmp_path, capsys):
    """Before: ``run --out afile`` ended in "error: afile: File exists"."""
    afile = tmp_path / "afile"
    afile.write_text("a file\n")
    code, _, err = conformance(capsys, "run", "--runtime", "reference", "-k",
                               "ge-onnx-example-1", "--out", afile)  # fmt: skip
    assert code == 2
    assert err.splitlines()[-1] == f"error: {afile}: a file is where the run's folder would go"
    assert afile.read_text() == "a file\n"


def test_an_oracle_id_swallowed_by_cases_is_said_so(capsys):
    """Before: ``oracle --cases DIR ID`` read ID as a path and said only that
    case_id is required."""
    cases = str(shipped.corpus())
    code, _, err = conformance(capsys, "oracle", "--cases", cases, "ge-onnx-example-1")
    assert code == 2
    assert "give a case id (ge-onnx-example-1 was read as a case path)" in err
    assert "--cases PATH... -- ID" in err
    code, out, _ = conformance(capsys, "oracle", "--cases", cases, "--", "ge-onnx-example-1")
    assert code == 0 and out.startswith("ge-onnx-example-1.op11.float32.int32")


def test_a_summary_md_that_can_be_written_still_is(complex_run, tmp_path, capsys):
    target = tmp_path / "new" / "folder" / "summary.md"
    code, out, _ = conformance(capsys, "gate", complex_run, "--summary-md", target)
    assert code == 0 and "gate PASSED" in out  # the shipped baseline knows the family
    assert "gate PASSED" in target.read_text()


# -- 12. a file named twice is counted once -------------------------------------------------
def test_header_corpus_counts_a_file_named_twice_once():
    corpus = shipped.corpus()
    alone = inputs.corpus(None)
    twice = inputs.corpus(["shipped", corpus / "gather", corpus / "gather" / "shapes.yaml"])
    assert twice["files"] == alone["files"] == len(discover([corpus]))
    assert twice["digest"] == alone["digest"]
    listed = discover([corpus, corpus / "gather", Path(str(corpus) + "/./gather/shapes.yaml")])
    assert len(listed) == len({p.resolve() for p in listed}) == alone["files"]
    assert json.dumps(twice)  # what the header records


def test_the_word_in_known_still_adds_to_the_shipped_baselines(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    assert list(baseline.folders(["shipped", mine])) == [shipped.baselines(), mine]
    assert list(baseline.folders([Path("shipped")])) == [Path("shipped")]  # a Path: a folder


def test_the_header_records_a_folder_named_shipped_as_a_folder(shipped_folder):
    args = cli.parser().parse_args(["run", "--cases", "./shipped", "shipped"])
    recorded = inputs.corpus(args.cases)
    assert recorded["paths"] == ["./shipped", "shipped"]  # the folder, then the word
    assert recorded["shipped"] is False
    assert recorded["files"] == inputs.corpus(None)["files"] + 1
