"""Writing files so that a reader never sees half of one.

Every file the project writes whole (header.json, summary.json, gate.json,
findings.json, report.html, junit.xml, report.json, diff.html) goes through
:func:`write_text`: the text is written beside the target and renamed over
it, which POSIX makes atomic. results.jsonl is the exception: it is appended
to line by line (:class:`conformance.engine.records.ResultsWriter`).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

LOCK = ".lock"  # in a run folder while a run writes it


class FolderBusy(RuntimeError):
    """Another process holds the folder's lock; the message names it."""


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, creating its folder. Neither the
    partial file nor the target is followed if it is a symlink: the partial
    is created anew and renamed over the link itself."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)  # a symlink planted there goes, its target is untouched
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    partial.replace(path)


def open_append(path: Path):
    """``path`` opened for appending text, refusing to follow a symlink."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    return os.fdopen(fd, "a", encoding="utf-8")


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
        os.write(fd, f"pid {os.getpid()}, started {started}: {' '.join(sys.argv)}"[:4000].encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the lock
            self._fd = None


def write_json(path: Path, content: dict) -> None:
    """``content`` as indented JSON, atomically."""
    write_text(path, json.dumps(content, indent=2, ensure_ascii=False) + "\n")
