"""The regression store in a folder (:class:`DirectoryStore`), also the Redis
store's spool::

    store.json            {"format": 1, "kind": "conformance fuzz store"}
    entries/<id>.json     a StoreEntry (StoreEntry.to_json; docs/schemas/store-entry.schema.json)
    claims/<id>           {"owner": ..., "at": time.time(), "ttl_s": ...}

- put: :func:`conformance.engine.files.write_json` writes beside the file and
  renames over it, so a reader (or a shard killed mid-write) leaves the old
  entry or the new one, never half of one; a stray ``.partial`` is ignored.
- claim: ``os.open(O_CREAT | O_EXCL)`` on ``claims/<id>``: of shards racing
  for a free bug, exactly one creates the file. A claim whose ``at + ttl_s``
  has passed (a killed shard's) may be taken over: under an exclusive
  ``flock`` of ``claims/.takeover``, the taker checks that the same file is
  still stale and removes it, then creates its own with ``O_EXCL`` like any
  claimer. Only takers remove claim files, so a claim checked stale under
  the lock stays the one removed (a bare rename-away races: a taker that
  judged the stale file could rename away the fresh claim another taker had
  just made). Expiry compares clocks: shards on several machines need theirs
  in step (to well within ``ttl_s``).
- A folder entry that is not a regular file (a FIFO, a symbolic link) is not
  opened for reading.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import time
import uuid
from pathlib import Path

from conformance.engine.files import write_json, write_text
from conformance.fuzz.store.base import Store
from conformance.fuzz.store.entry import (
    BUG_ID,
    FORMAT,
    MAX_ENTRY_BYTES,
    BadEntry,
    StoreEntry,
    check_bug_id,
    parsed,
)
from conformance.fuzz.store.errors import StoreError, check_owner, os_reason

KIND = "conformance fuzz store"
MARKER = "store.json"
_MARKER_PARTIAL = "." + MARKER + "."  # prefix of the marker's unique temporary names


class DirectoryStore(Store):
    """A store in a folder (the module docstring has the layout)."""

    def __init__(self, path: str | os.PathLike, create: bool = True) -> None:
        super().__init__()
        self.path = Path(path)
        self.location = str(self.path)
        self._entries = self.path / "entries"
        self._claims = self.path / "claims"
        self._open(create)

    # -- opening ---------------------------------------------------------------

    def _open(self, create: bool) -> None:
        marker = self.path / MARKER
        try:
            if self.path.exists() and not self.path.is_dir():
                raise StoreError(f"{self.path}: not a fuzz store: not a folder")
            if not create and not self.path.exists():
                raise StoreError(f"{self.path}: no fuzz store here: no such folder")
            if not create and not marker.exists():
                raise StoreError(f"{self.path}: not a fuzz store: no {MARKER} in this folder")
            self.path.mkdir(parents=True, exist_ok=True)
            if not marker.exists():
                # Ours being written by another shard opening the same new folder
                # (its unique temporaries) do not make the folder somebody else's.
                foreign = [n for n in os.listdir(self.path) if not n.startswith(_MARKER_PARTIAL)]
                if foreign:
                    raise StoreError(
                        f"{self.path}: not a fuzz store: a folder with other files and no "
                        f"{MARKER}; give an empty or new folder"
                    )
                # A unique temporary renamed over the marker: shards creating the
                # same store at once each write their own; the last rename wins,
                # with the same content.
                partial = self.path / f"{_MARKER_PARTIAL}{os.getpid()}-{uuid.uuid4().hex}"
                write_text(partial, json.dumps({"format": FORMAT, "kind": KIND}) + "\n")
                partial.replace(marker)
            self._entries.mkdir(exist_ok=True)
            self._claims.mkdir(exist_ok=True)
            text = marker.read_bytes()
        except OSError as error:
            raise StoreError(f"{self.path}: cannot open the store: {os_reason(error)}") from None
        try:
            content = json.loads(text.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            content = None
        if not isinstance(content, dict) or content.get("kind") != KIND:
            raise StoreError(f"{marker}: not a fuzz store: this {MARKER} is not a store's")
        if content.get("format") != FORMAT:
            raise StoreError(
                f"{marker}: store format {content.get('format')!r}, this version reads {FORMAT}"
            )

    # -- entries ---------------------------------------------------------------

    def _entry_path(self, bug_id: str) -> Path:
        return self._entries / f"{check_bug_id(bug_id, self.location)}.json"

    def put(self, entry: StoreEntry) -> None:
        path = self._entry_path(entry.bug_id)
        try:
            write_json(path, entry.to_json())
        except OSError as error:
            raise StoreError(f"{path}: cannot write the entry: {os_reason(error)}") from None

    def _read(self, path: Path) -> StoreEntry | None:
        """The entry in ``path``, None if there is none; :class:`BadEntry` if
        it cannot be used. Neither a symlink nor anything but a regular file
        (a FIFO would block, /dev/zero never end) is read."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise BadEntry(f"{path}: cannot read the entry: {os_reason(error)}") from None
        try:
            with os.fdopen(fd, "rb") as file:
                status = os.fstat(file.fileno())
                if not stat.S_ISREG(status.st_mode):
                    raise BadEntry(f"{path}: not a regular file")
                data = file.read(MAX_ENTRY_BYTES + 1)
        except OSError as error:
            raise BadEntry(f"{path}: cannot read the entry: {os_reason(error)}") from None
        return parsed(data, str(path), path.name.removesuffix(".json"))

    def get(self, bug_id: str) -> StoreEntry | None:
        try:
            return self._read(self._entry_path(bug_id))
        except BadEntry as error:
            self._skip(error)
            return None

    def remove(self, bug_id: str) -> None:
        """Forget the bug's entry (the Redis store empties its spool so)."""
        path = self._entry_path(bug_id)
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            raise StoreError(f"{path}: cannot remove the entry: {os_reason(error)}") from None

    def ids(self) -> list[str]:
        """The bug ids with an entry, sorted; temporaries (``.partial``) and
        names that are not ``<id>.json`` are not entries."""
        try:
            names = os.listdir(self._entries)
        except FileNotFoundError:
            return []
        except OSError as error:
            raise StoreError(
                f"{self._entries}: cannot list the entries: {os_reason(error)}"
            ) from None
        ids = (name[: -len(".json")] for name in names if name.endswith(".json"))
        return sorted(bug_id for bug_id in ids if BUG_ID.fullmatch(bug_id))

    def entries(self) -> list[StoreEntry]:
        found = []
        for bug_id in self.ids():
            try:
                entry = self._read(self._entries / f"{bug_id}.json")
            except BadEntry as error:
                self._skip(error)
                continue
            if entry is not None:  # None: removed meanwhile
                found.append(entry)
        return found

    # -- claims ----------------------------------------------------------------

    def _claim_of(self, path: Path, ttl_s: float) -> tuple[str | None, bool, int] | None:
        """(owner, live, inode) of the claim file, None if there is none. A
        file without a whole claim (its creator was killed between creating
        and writing it, or is writing it now) has no owner and lives
        ``ttl_s`` from its modification time."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO: no wait
        except FileNotFoundError:
            return None
        except OSError as error:
            raise StoreError(f"{path}: cannot read the claim: {os_reason(error)}") from None
        with os.fdopen(fd, "rb") as file:
            status = os.fstat(fd)
            try:
                data = file.read(65536) if stat.S_ISREG(status.st_mode) else b""
            except OSError:
                data = b""
        try:
            content = json.loads(data.decode("utf-8"))
            owner, at = content["owner"], float(content["at"])
            ttl_s = float(content.get("ttl_s", ttl_s))
            if not isinstance(owner, str) or not owner.isprintable() or at != at or ttl_s != ttl_s:
                raise ValueError(owner)
        except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError,
                RecursionError, OverflowError):  # fmt: skip
            owner, at = None, status.st_mtime
        return owner, time.time() < at + ttl_s, status.st_ino

    def _create_claim(self, path: Path, owner: str, ttl_s: float) -> bool:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except FileExistsError:
            return False
        except OSError as error:
            raise StoreError(f"{path}: cannot create the claim: {os_reason(error)}") from None
        content = {"owner": owner, "at": time.time(), "ttl_s": ttl_s}
        try:
            os.write(fd, json.dumps(content).encode())  # one small write
        except OSError as error:
            raise StoreError(f"{path}: cannot write the claim: {os_reason(error)}") from None
        finally:
            os.close(fd)
        return True

    def _take_over(self, path: Path, inode: int, ttl_s: float) -> None:
        """Remove the stale claim file ``inode`` at ``path`` if it is still
        there and still stale: under the takeover lock, so that no other
        taker can have replaced it between this check and the removal."""
        lock = self._claims / ".takeover"
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as error:
            raise StoreError(f"{lock}: cannot open the takeover lock: {os_reason(error)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released if this process dies
            now = self._claim_of(path, ttl_s)
            if now is not None and now[2] == inode and not now[1]:
                path.unlink(missing_ok=True)
        except OSError as error:
            raise StoreError(f"{path}: cannot take over the claim: {os_reason(error)}") from None
        finally:
            os.close(fd)

    def claim(self, bug_id: str, owner: str, ttl_s: float = 900.0) -> bool:
        path = self._claims / check_bug_id(bug_id, self.location)
        check_owner(owner, self.location)
        entry = self._entry_path(bug_id)
        while True:  # each turn ends, or removes a stale claim that stood in the way
            if entry.exists():
                return False
            if self._create_claim(path, owner, ttl_s):
                # A shard whose claim expired may have put the entry meanwhile.
                if entry.exists():
                    with contextlib.suppress(OSError):
                        path.unlink()
                    return False
                return True
            current = self._claim_of(path, ttl_s)
            if current is None:
                continue  # taken over meanwhile: try again
            holder, live, inode = current
            if live:
                return holder == owner
            self._take_over(path, inode, ttl_s)

    def holder(self, bug_id: str) -> str | None:
        current = self._claim_of(self._claims / check_bug_id(bug_id, self.location), 0.0)
        if current is not None and current[1] and current[0] is not None:
            return current[0]
        entry = self.get(bug_id)
        return entry.shrunk_by if entry is not None else None
