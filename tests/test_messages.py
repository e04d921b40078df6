"""conformance.messages: the one way each of showing a message's first line,
a value cut short and a path relative to the working folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance.messages import cut, first_line, relative, shortened, shown


def test_the_first_line_is_the_first_that_is_not_blank_stripped():
    assert first_line("\n  \n  Gather: index out of range \nat frame 3\n") == (
        "Gather: index out of range"
    )
    assert first_line(None) == first_line("") == first_line(" \n\t\n") == ""
    assert first_line(ValueError("bad\nworse")) == "bad"
    # Every line separator Python knows ends a line: none reaches a one-line display.
    assert first_line("a\u2028b") == first_line("a\x0bb") == first_line("a\rb") == "a"


def test_a_first_line_cut_to_a_width_ends_with_an_ellipsis():
    assert first_line("x" * 10, 10) == "x" * 10
    assert first_line("x" * 11, 10) == "x" * 9 + "…"
    assert cut("abc", None) == "abc" and cut("abcdef", 4) == "abc…"


def test_a_long_value_keeps_its_head_and_tail_and_says_its_length():
    assert shown("ab") == "'ab'"
    assert shown("9" * 5000) == "'99999999999...99999' (5002 characters)"
    assert shown(int("9" * 4000)) == "999999999999...999999 (4000 characters)"
    assert shown(-(2**20000)) == "an integer of 20001 bits"  # no text Python will make
    assert shortened("a" * 40) == "a" * 40
    assert shortened("a" * 41) == "aaaaaaaaaaaa...aaaaaa (41 characters)"


def test_a_path_below_the_working_folder_is_shown_relative_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert relative(tmp_path / "cases" / "a.yaml") == Path("cases/a.yaml")
    assert relative("cases/a.yaml") == Path("cases/a.yaml")  # relative: as given
    assert relative(tmp_path.parent / "b.yaml") == tmp_path.parent / "b.yaml"
    # Compared as written, never resolved: what it gives still names the same file.
    assert relative(tmp_path / ".." / tmp_path.name / "c.yaml") == Path(
        "..", tmp_path.name, "c.yaml"
    )


def test_messages_imports_nothing_of_ours():
    """Below tables, used by the adapters in workers of other environments."""
    code = (
        "import sys; import conformance.messages; "
        "print(sorted(m for m in sys.modules if m.startswith('conformance')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['conformance', 'conformance.messages']", done.stdout
