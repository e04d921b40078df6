"""Writing files so that a reader never sees half of one, and text that
stays on its line.

Every file the project writes whole (header.json, summary.json, gate.json,
findings.json, report.html, junit.xml, report.json, diff.html, a fuzz class's
case.yaml, repro.py, model.onnx and .npz files) goes through :func:`write_text`
(or :func:`write_bytes`): it is written beside the target and renamed over
it, which POSIX makes atomic. The files of a folder renamed into place whole
(an export's test folders) go through :func:`write_new`. results.jsonl is the
exception: it is appended to in whole lines (:class:`LineAppender`, for
:class:`conformance.engine.run_writer.ResultsWriter`). A write that fails
(a read-only folder, a full disk, a file size limit) raises an ``OSError``
naming the file the user asked for, and leaves nothing half-written.

:func:`visible` is the one rule for untrusted text (runtime names, case ids,
messages, file names) that goes into a line of a file or of the terminal.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import fcntl
import json
import math
import os
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

from conformance.engine import credentials
from conformance.errors import ConformanceError

LOCK = ".lock"  # in a run folder while a run writes it
ENCODING_ERRORS = "conformance-escaped"  # see _escaped


def _escaped(error: UnicodeError) -> tuple[str, int]:
    """What UTF-8 cannot encode (a lone surrogate, from a runtime message
    decoded with surrogateescape) is written as the text ``\\udXXX``: in a
    JSON or YAML string an escaped backslash, so the file reads back as text
    and our readers (which refuse a lone surrogate) take it; never a traceback."""
    if not isinstance(error, UnicodeEncodeError):  # only ever named for writing
        raise error
    bad = error.object[error.start : error.end]
    return "".join(f"\\\\u{ord(char):04x}" for char in bad), error.end


codecs.register_error(ENCODING_ERRORS, _escaped)

# What must never reach a terminal or a comment line raw: C0 and C1 control
# characters (ESC starts terminal sequences, CR and backspace overwrite what
# was shown, NEL \x85 ends a YAML line), DEL, the Unicode line and paragraph
# separators (line ends for YAML and some editors), the bidirectional
# overrides and isolates that reorder what is shown, and lone surrogates
# (which cannot be encoded at all).
_HIDDEN = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


class FolderBusy(ConformanceError, RuntimeError):
    """Another process holds the folder's lock; the message names it."""


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text: str, keep: str = "") -> str:
    """``text`` with every character of :data:`_HIDDEN` but those in ``keep``
    shown as an escape: ``\\n``, ``\\r``, ``\\t``, ``\\x1b``, ``\\u2028``.
    Printable text (any script, backslashes included) is left as it is, so a
    clean text comes back unchanged and escaping twice changes nothing."""
    text = str(text)
    if _HIDDEN.search(text) is None:
        return text
    if not keep:
        return _HIDDEN.sub(_escape, text)
    return _HIDDEN.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)


def _naming(error: OSError, path: Path, internal: Path | None = None) -> OSError:
    """The error as the user should read it: about ``path`` (the file they
    asked for), unless it names another file already (the folder that could
    not be made); an error about our own ``internal`` file names ``path``."""
    named = error.filename
    if named is not None and (internal is None or Path(named) != internal):
        return error
    return type(error)(error.errno, error.strerror or str(error), str(path))


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, creating its folder. Neither the
    partial file nor the target is followed if it is a symlink: the partial
    is created anew and renamed over the link itself. On failure the partial
    file goes and the target is as it was."""
    write_bytes(path, text.encode("utf-8", ENCODING_ERRORS))


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, as :func:`write_text` does (a
    fuzz class's model.onnx and .npz files)."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    try:
        _make_folder(path)
        partial.unlink(missing_ok=True)  # a symlink planted there goes, its target is untouched
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            partial.replace(path)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    except OSError as error:
        raise _naming(error, path, partial) from None


def _not_a_folder(path: Path) -> NotADirectoryError:
    """What writing ``path`` below a file is: "Not a directory", naming ``path``
    (as the shell says it), not mkdir's "File exists" about the file."""
    return NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))


def _make_folder(path: Path) -> None:
    """The folder of ``path``, made when missing; a file in its place (or in
    the place of a folder above it) is :func:`_not_a_folder`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # a file where a folder must be
        raise _not_a_folder(path) from None


def check_writable(path: Path) -> None:
    """Raise the ``OSError`` that writing ``path`` whole (:func:`write_bytes`)
    would raise for where it is, naming ``path``, before anything is written:
    a folder ("Is a directory"), below a file ("Not a directory"), a folder
    that takes no new file ("Permission denied", "Read-only file system").
    Nothing is left behind: the nearest existing folder is probed with the
    partial file a write would make, removed at once; no folder is made."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():  # a link is replaced, not followed
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # False below a file, too
        folder = folder.parent
    if not folder.is_dir():
        raise _not_a_folder(path)
    probe = folder / (path.name + ".partial")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return  # a partial file of an earlier write: the folder takes files
    except OSError as error:
        raise type(error)(error.errno, error.strerror or str(error), str(path)) from None
    os.close(fd)
    probe.unlink(missing_ok=True)


def write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (its folder exists) and write ``data``, refusing a file
    or symlink already there: for a folder being built that no reader sees
    until it is renamed into place whole (``conformance export``'s temporary
    folder), where that rename is the atomic step and a rename per file would
    only double the file system's work."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    except OSError as error:
        raise _naming(error, path) from None


class LineAppender:
    """A file appended to in whole lines: what :meth:`write` is given (whole
    lines) waits in memory until :meth:`flush` (or until 64 KiB wait), which
    appends it. If the append fails (disk full, file size limit, I/O error),
    the file is cut back to the end of the last whole line that reached it,
    so that it holds only whole lines (those written before the failure stay),
    the rest of the waiting lines are dropped, and the ``OSError`` names the file."""

    FLUSH_AT = 1 << 16

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self._fd: int | None = os.open(
                self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644
            )
        except OSError as error:
            raise _naming(error, self.path) from None
        self._waiting: list[str] = []
        self._size = 0

    def write(self, lines: str) -> None:
        self._waiting.append(lines)
        self._size += len(lines)
        if self._size >= self.FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        if not self._waiting or self._fd is None:
            return
        whole = "".join(self._waiting).encode("utf-8", ENCODING_ERRORS)
        self._waiting, self._size = [], 0
        start = os.fstat(self._fd).st_size  # the folder lock makes this process the only writer
        data, written = memoryview(whole), 0
        try:
            while data:
                count = os.write(self._fd, data)
                data, written = data[count:], written + count
        except BaseException as error:  # a full disk, or Ctrl-C between two writes
            with contextlib.suppress(OSError):
                if os.fstat(self._fd).st_size != start + len(whole):
                    kept = whole.rfind(b"\n", 0, written) + 1  # 0: not one whole line
                    os.ftruncate(self._fd, start + kept)  # no half line is left behind
            if isinstance(error, OSError):
                raise _naming(error, self.path) from None
            raise

    def close(self) -> None:
        if self._fd is None:
            return
        try:
            self.flush()
        finally:
            os.close(self._fd)
            self._fd = None


def open_append(path: Path) -> LineAppender:
    """``path`` opened for appending whole lines, refusing to follow a symlink."""
    return LineAppender(path)


class FolderLock:
    """An exclusive lock on a run folder for as long as a run writes it: a
    second run with the same ``--out`` is refused (its deleting and
    appending would mix two runs' results), naming the holder."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / LOCK
        self._fd: int | None = None

    def acquire(self) -> FolderLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 4096).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise FolderBusy(
                f"{self.path.parent}: another run is writing this folder ({holder}); "
                "give another --out, or wait for it"
            ) from None
        os.ftruncate(fd, 0)
        started = datetime.now(UTC).isoformat(timespec="seconds")
        command = " ".join(credentials.mask_command(sys.argv))  # a store URL's password: never
        os.write(fd, f"pid {os.getpid()}, started {started}: {command}"[:4000].encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the lock
            self._fd = None


class NotJson(ConformanceError, ValueError):
    """Content a JSON file cannot hold (NaN, an infinity): the file is not
    written, and the message names it and the field."""


def _not_json(value, path: str = "") -> str | None:
    """Where in ``value`` a number JSON cannot hold is (``bugs[2].found.at``), else None."""
    if isinstance(value, float) and (value != value or value in (math.inf, -math.inf)):
        return path or "the content"
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, (list, tuple)) else ()  # fmt: skip
    for key, item in items:
        found = _not_json(item, f"{path}[{key}]" if isinstance(key, int) else
                          f"{path}.{key}" if path else str(key))  # fmt: skip
        if found:
            return found
    return None


def write_json(path: Path, content: dict) -> None:
    """``content`` as indented JSON, atomically. A number JSON cannot hold
    (NaN, Infinity, which ``json`` would write as such) is refused:
    :class:`NotJson` naming the file and the field, and nothing is written."""
    try:
        text = json.dumps(content, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError:
        where = _not_json(content) or "a value"
        raise NotJson(
            f"{path}: not written: {visible(where)} is not a number JSON can hold (NaN or "
            "an infinity)"
        ) from None
    write_text(path, text + "\n")
