"""What the commands print stays text: a runtime's name or message, a case
file's name or fields, a target's name and a baseline folder's name may hold
escape sequences, carriage returns, backspaces or bells; none of them reaches
the terminal raw (each is shown escaped, ``\\x1b``), and none is read as Rich
markup. Real processes, a real runtime, and an adapter that says hostile
things (below, loaded by the workers as ``module:Class``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.adapters import Adapter, LoadError
from conformance.report.terminal import safe
from tests.conftest import REPO

ESC = "\x1b[2J"  # clear the screen
# What must not reach the terminal raw: C0 (but newline and tab) and C1 controls,
# DEL, line and paragraph separators, bidi overrides.
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
ADAPTER = "tests.adversarial.test_terminal:HostileAdapter"


class HostileAdapter(Adapter):
    """Refuses every model, with a message and a name full of control characters."""

    name = f"hostile{ESC}"

    def info(self) -> dict:
        return {"name": self.name, "version": "1.0\x1b]0;pwned\x07", "device": "CPU"}

    def load(self, model: bytes):
        raise LoadError("refused \x1b[31mred\x1b[0m\x08\x07 \u202eevil\u2028[/] [bold]x \udcff")

    def execute(self, session, feeds):
        raise AssertionError("load always refuses")


def _conformance(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    return subprocess.run([sys.executable, "-m", "conformance", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def _clean(done: subprocess.CompletedProcess) -> str:
    """stdout and stderr, once no raw control character is found in them."""
    both = done.stdout + done.stderr
    raw = RAW.search(both)
    assert raw is None, f"raw {raw.group()!r} at {both[max(0, raw.start() - 80) : raw.end()]!r}"
    assert "Traceback" not in both and "internal error" not in both, both
    return both


CASE = """\
cases:
  - id: hostile-case
    description: "clears \\e[2J the screen\\r\\a\\b"
    op: Gather
    opset: 13
    dtype: float32
    data: [1.0, 2.0]
    indices: [1]
    expected: oracle
    spec: "004_d4766443270c2fb5.txt \\e[5m"
"""
TARGETS = """\
targets:
  ref:
    adapter: reference
"""
# Target names a targets file may not use (ASCII letters, digits, _ - . : only):
# refused at their line, and the refusal prints them escaped.
HOSTILE_TARGETS = """\
targets:
  "ref\\e[2J\\r":
    adapter: reference
  "[/]":
    adapter: reference
"""


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A gated run whose case file, target names, runtime messages and baseline
    folder all hold escape sequences; every result of the hostile adapter is new."""
    root = tmp_path_factory.mktemp("hostile")
    cases = root / "cases"
    cases.mkdir()
    (cases / f"evil{ESC}name.yaml").write_text(CASE, encoding="utf-8")
    (root / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    known = root / f"known{ESC}"
    known.mkdir()
    out = root / f"run{ESC}"
    done = _conformance("run", "--runtime", ADAPTER, "--targets", str(root / "targets.yaml"),
                        "--cases", str(cases), "--out", str(out), "--gate", "--known", str(known),
                        "--no-progress")  # fmt: skip
    return out, done


def test_a_run_prints_hostile_names_messages_and_files_escaped(hostile_run):
    out, done = hostile_run
    assert done.returncode == 1, done.stdout + done.stderr  # the hostile refusals are new
    shown = _clean(done)
    for text in ("hostile\\x1b[2J", "[/]", "evil\\x1b[2Jname.yaml:2",
                 "refused \\x1b[31mred\\x1b[0m\\x08\\x07 \\u202eevil; [/] [bold]x \\udcff",
                 "known\\x1b[2J/<runtime>.yaml", "run\\x1b[2J/results.jsonl"):  # fmt: skip
        assert text in shown, (text, shown)
    assert "gate FAILED" in done.stdout
    assert (out / "report.html").exists()  # "[/]" in a message is not Rich markup


def test_hostile_target_names_are_refused_and_printed_escaped(tmp_path):
    path = tmp_path / f"targets{ESC}.yaml"
    path.write_text(HOSTILE_TARGETS, encoding="utf-8")
    done = _conformance("run", "--targets", str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    shown = _clean(done)
    where = f"{tmp_path}/targets\\x1b[2J.yaml"
    assert f"{where}:2: targets: 'ref\\x1b[2J\\r' is not a target's name" in shown, shown
    assert f"{where}:4: targets: '[/]' is not a target's name" in shown, shown
    assert not (tmp_path / "out").exists()


def test_gate_report_and_diff_print_a_hostile_run_escaped(hostile_run, tmp_path):
    out, _ = hostile_run
    known = tmp_path / f"k{ESC}"
    known.mkdir()
    gated = _conformance("gate", str(out), "--known", str(known))
    assert gated.returncode == 1 and "hostile\\x1b[2J" in _clean(gated)
    page = tmp_path / f"r{ESC}.html"
    reported = _conformance("report", str(out), "-o", str(page))
    assert reported.returncode == 0 and "r\\x1b[2J.html: " in _clean(reported)
    diffed = _conformance("diff", str(out), str(out), "-o", str(tmp_path / f"d{ESC}.html"))
    shown = _clean(diffed)
    assert diffed.returncode == 0, shown
    assert "hostile\\x1b[2J: 1.0\\x1b]0;pwned\\x07 (both)" in shown
    assert "d\\x1b[2J.html" in shown
    # Unreadable input: the error names it, escaped.
    missing = _conformance("gate", str(tmp_path / f"none{ESC}"))
    assert missing.returncode == 2 and "none\\x1b[2J" in _clean(missing)


def test_case_file_errors_print_escaped(tmp_path):
    bad = tmp_path / f"bad{ESC}.yaml"
    bad.write_text(CASE.replace("    op: Gather\n", '    op: Gather\n    "\\e]0;x\\a": 1\n'),
                   encoding="utf-8")  # fmt: skip
    done = _conformance("run", "--runtime", "reference", "--cases", str(bad),
                        "--out", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 2
    shown = _clean(done)
    assert f"{tmp_path}/bad\\x1b[2J.yaml:" in shown and "\\x1b]0;x\\x07" in shown, shown
    assert not (tmp_path / "out").exists()


def test_safe_escapes_what_a_terminal_would_act_on():
    assert safe("plain é中😀 C:\\path\ttab") == "plain é中😀 C:\\path\ttab"  # unchanged
    assert safe("a\x1b[2Jb\rc\x07\x08\x7f\x9b\x85") == "a\\x1b[2Jb\\rc\\x07\\x08\\x7f\\x9b\\x85"
    assert safe("one\ntwo") == "one\\ntwo"
    assert safe("one\ntwo\x1b", lines=True) == "one\ntwo\\x1b"
    assert safe("\u2028\u2029\u202e\u2066\ud800") == "\\u2028\\u2029\\u202e\\u2066\\ud800"
    assert safe(safe("\x1b\n")) == safe("\x1b\n")  # twice is once


HUGE = CASE.replace(
    "    data: [1.0, 2.0]\n    indices: [1]\n",
    "    data: {full: {shape: [1, 1000000], value: 1}}\n"
    "    indices: {full: {shape: [100000], value: 0}}\n",
)  # 4 MB of inputs, a 400 GB output: over the memory guard, not checked


def test_cases_not_checked_print_their_file_escaped(tmp_path):
    """validate and run name a case over the memory guard by its file: escaped."""
    huge = tmp_path / f"huge{ESC}.yaml"
    huge.write_text(HUGE, encoding="utf-8")
    where = f"not checked: {tmp_path}/huge\\x1b[2J.yaml:2: hostile-case.op13.float32.int64: "
    validated = _conformance("cases", "validate", str(huge))
    assert validated.returncode == 0 and f"{where}memory guard: " in _clean(validated)
    ran = _conformance("run", "--runtime", "reference", "--variants", "static",
                       "--cases", str(huge), "--out", str(tmp_path / "run"))  # fmt: skip
    assert ran.returncode == 0 and f"{where}memory guard: " in _clean(ran)


def test_user_facing_errors_print_escaped(tmp_path):
    """A ConformanceError reaches the terminal through cli.main's one mapping:
    a case over the guard that `oracle` refuses, named by a hostile file."""
    huge = tmp_path / f"huge{ESC}.yaml"
    huge.write_text(HUGE, encoding="utf-8")
    refused = _conformance("oracle", "hostile-case", "--cases", str(huge))
    assert refused.returncode == 2
    assert _clean(refused).startswith(f"{tmp_path}/huge\\x1b[2J.yaml:2: hostile-case.")
