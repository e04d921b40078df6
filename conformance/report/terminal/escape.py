"""Untrusted text as the terminal may show it, and the user-facing errors.

Runtime names, case ids, messages, file names and baseline globs come from
files and runtimes the harness does not control: every line the modules of
:mod:`conformance.report.terminal` make goes through :func:`safe`, and the
front-ends print their own untrusted text with it (or :func:`say`), so no
escape sequence, carriage return or backspace reaches the terminal.
:func:`error_lines` is how ``conformance.cli.main`` prints a
:class:`~conformance.errors.ConformanceError`.
"""

from __future__ import annotations

from conformance.engine import credentials, files
from conformance.messages import cut


def safe(text, lines: bool = False) -> str:
    """Untrusted text as the terminal may show it: control characters (ESC,
    CR, BEL, backspace...), line separators, bidi overrides and lone
    surrogates escaped (``\\x1b``, ``\\r``, ``\\u2028``), tabs kept, and newlines
    kept only for text meant to span ``lines`` (:func:`conformance.engine.files.visible`)."""
    return files.visible(text, "\t\n" if lines else "\t")


def say(text: str, file=None) -> None:
    """Print text from case files or runs (ids, descriptions, paths, string
    data) with control characters escaped, newlines kept: an input must not
    drive the terminal."""
    print(safe(text, lines=True), file=file)


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def safe_cut(line: str, width: int) -> str:
    """``line`` made :func:`safe`, then cut to ``width`` (``…``): escaped first,
    since the width is what the terminal shows."""
    return cut(safe(line), width)


def error_lines(error) -> list[str]:
    """A user-facing error (:class:`conformance.errors.ConformanceError`) as
    stderr shows it: its message (the problems of a file each on its line,
    ``file:line: field: message``, then the notes callers added), escaped,
    and a URL's credentials masked wherever the message repeats one."""
    return [safe(credentials.mask_text(line)) for line in error.message.splitlines()]
