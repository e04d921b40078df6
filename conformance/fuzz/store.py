"""The fuzz campaigns' regression store: every bug's smallest reproducer, kept
across campaigns and shared by the shards of one campaign so that each bug is
shrunk by exactly one shard.

A bug is named by its id (``[a-z0-9-]``, at most 64 characters); its
:class:`StoreEntry` holds the reproducer (a case file's text), the variant it
reproduces in, the shard that shrank it and what the campaign says about it
(opaque JSON). A shard calls :meth:`Store.claim` before shrinking a bug:
``True`` means "shrink it", ``False`` that it is kept already or another
shard is on it. :func:`open_store` opens one of two layouts.

**A folder** (:class:`DirectoryStore`, also the Redis store's spool)::

    store.json            {"format": 1, "kind": "conformance fuzz store"}
    entries/<id>.json     an StoreEntry (StoreEntry.to_json)
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

**Redis** (:class:`RedisStore`, ``redis://host:port/db``, ``rediss://``,
``unix://``), keys under ``conformance:fuzz:``::

    entry:<id>    an StoreEntry as a JSON string
    claim:<id>    the owner, SET with PX ttl (the server expires it)

- put: one ``SET`` of the whole JSON: atomic on the server.
- claim: one Lua script (atomic on the server): ``False`` if ``entry:<id>``
  exists, ``True`` if the claim is free (then ``SET claim owner PX ttl``) or
  already this owner's. An expired claim is gone, so taking it over is the
  same script; the server's clock alone decides expiry.
- entries: ``SCAN`` (never ``KEYS``, which blocks the server), then ``MGET``.

A killed shard leaves no half entry (a rename, a single SET) and its claim
expires after ``ttl_s``, when another shard may take the bug.

**When Redis goes away** (a restart, a network cut): opening the store is
retried (``attempts`` times, the wait doubling from ``backoff_s``: by default
5 attempts over about 4 s when the server refuses, some 14 s when each
connection times out after ``timeout_s``), then :class:`StoreError`. Once
open, an operation that cannot reach the server is tried again at once on a
fresh connection (a restart leaves a dead one in the pool; not after a
timeout), so finding the server away costs at most ``timeout_s``, once: the
server is then *away*, and a thread pings it in the background (the wait
doubling from ``backoff_s`` up to 5 s) until it answers. While it is away,
``put`` keeps the entry in the local spool (a folder store) and ``claim``
answers ``True`` (shrinking a bug twice is better than losing it) at once,
without trying the server, each adding a line to :attr:`Store.warnings`;
``holder`` and ``get`` answer None (with a warning); ``entries`` (what a
replay reads, which cannot go on without the store) tries the server and
raises :class:`StoreError` naming it. The next operation that reaches the
server first pushes every spooled entry to it, removing each from the spool
only once its SET succeeded, and so does :meth:`RedisStore.close` when the
background ping found the server back; a spool a killed campaign left is
pushed the same way by the next store opened with it. Redis keeps what it
holds across a restart only if the server persists (``appendonly yes`` or
RDB snapshots): that is the server's configuration, not the store's.

**Entries are input** (any machine of a fleet writes them): every field is
checked on reading (:meth:`StoreEntry.from_json`: strict JSON without NaN or
Infinity, bounded in size and depth; the fields replay and campaigns read of
the types they must be; the reproducer one case the case loader reads). An
entry that fails is skipped with one line naming its file or key and what is
wrong (:attr:`Store.skipped`, also in :attr:`Store.warnings`); the others are
read. A folder entry that is not a regular file is not opened for reading.

**Credentials**: :attr:`Store.location` is the URL with its user, password and
secret query keys masked (:mod:`conformance.engine.credentials`), and every
message names the store by it. :func:`check_url` refuses a URL the store would
misread (a database that is not a number, an unknown option...).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import stat
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from conformance.engine.credentials import mask_url
from conformance.engine.files import write_json, write_text
from conformance.errors import ConformanceError
from conformance.messages import shown

FORMAT = 1  # of store.json and of each entry
KIND = "conformance fuzz store"
MARKER = "store.json"
PREFIX = "conformance:fuzz:"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
INSTALL_HINT = "pip install 'onnx-gather-conformance[redis]'"
_BUG_ID = re.compile(r"[a-z0-9-]{1,64}")
_MARKER_PARTIAL = "." + MARKER + "."  # prefix of the marker's unique temporary names
_SCAN_COUNT = 500
MAX_ENTRY_BYTES = 64 << 20  # an entry larger is not read (a file planted to exhaust memory)
MAX_DEPTH = 32  # nesting of an entry's JSON at most (a campaign's is 4 deep)
_RUNTIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")  # a target's name
_WATCH_MAX_S = 5.0  # longest wait between two pings of a server out of reach


class StoreError(ConformanceError):
    """The store cannot be opened, read or written; the message (one line)
    names the store or the file and what failed."""

    exit_code = 2


def check_bug_id(bug_id: object, where: str = "") -> str:
    """``bug_id`` if it is a bug id (it becomes a file name and a key), else
    :class:`StoreError`."""
    if not isinstance(bug_id, str) or _BUG_ID.fullmatch(bug_id) is None:
        prefix = f"{where}: " if where else ""
        raise StoreError(f"{prefix}bad bug id {bug_id!r}: 1 to 64 characters of a-z, 0-9 and '-'")
    return bug_id


class BadEntry(StoreError):
    """One entry that cannot be used (the message says where and what):
    :meth:`Store.entries` skips it with a warning line, the others are read."""


@dataclass(frozen=True)
class StoreEntry:
    """One bug's smallest reproducer and what the campaign says about it."""

    bug_id: str
    bug: dict  # runtime, kind, op, cause (checked on reading), and the campaign's others
    case_yaml: str  # the reproducer as a case file's text (one case)
    variant: str  # the model variant it reproduces in
    shrunk_by: str  # the shard that shrank it, e.g. "1/2"
    found: dict  # runtime versions, seed, time: the campaign's, plain JSON
    where: str = field(default="", compare=False, repr=False)  # the file or key it was read from
    case: Any = field(default=None, compare=False, repr=False)  # case_yaml's case, once read

    def __post_init__(self) -> None:
        check_bug_id(self.bug_id)

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "bug_id": self.bug_id,
            "bug": self.bug,
            "case_yaml": self.case_yaml,
            "variant": self.variant,
            "shrunk_by": self.shrunk_by,
            "found": self.found,
        }

    @classmethod
    def from_json(cls, content: object, where: str) -> StoreEntry:
        """The entry ``content`` holds, every field checked (what replay and
        campaigns read of it, and plain JSON everywhere); :class:`BadEntry`
        naming ``where`` (a file, a key) and the field if it is not one."""

        def bad(message: str) -> BadEntry:
            return BadEntry(f"{where}: {message}")

        discrepancies, variants, ops = _accepted()

        if not isinstance(content, dict):
            raise bad("not a store entry (a JSON object was expected)")
        problem = _plain_problem(content, "", 0)
        if problem:
            raise bad(problem)
        if type(content.get("format")) is not int or content["format"] != FORMAT:
            raise bad(f"entry format {shown(content.get('format'))}, this version reads {FORMAT}")
        types = {"bug_id": str, "bug": dict, "case_yaml": str, "variant": str,
                 "shrunk_by": str, "found": dict}  # fmt: skip
        for name, kind in types.items():
            if not isinstance(content.get(name), kind):
                raise bad(f"entry field {name!r} missing or not a {kind.__name__}")
        bug_id = content["bug_id"]
        if _BUG_ID.fullmatch(bug_id) is None:
            raise bad(f"bad bug id {shown(bug_id)}: 1 to 64 characters of a-z, 0-9 and '-'")
        if content["variant"] not in variants:
            raise bad(f"variant {shown(content['variant'])} is not one of {', '.join(variants)}")
        shrunk_by = content["shrunk_by"]
        if not 0 < len(shrunk_by) <= 200 or not shrunk_by.isprintable():
            raise bad(f"shrunk_by {shown(shrunk_by)}: 1 to 200 printable characters")
        bug = content["bug"]
        runtime, kind, op = bug.get("runtime"), bug.get("kind"), bug.get("op")
        if not isinstance(runtime, str) or _RUNTIME.fullmatch(runtime) is None:
            raise bad(f"bug.runtime {shown(runtime)} is not a target's name")
        if not isinstance(kind, str) or kind not in discrepancies:
            raise bad(f"bug.kind {shown(kind)} is not a discrepancy kind")
        if not isinstance(op, str) or op not in ops:
            raise bad(f"bug.op {shown(op)} is not one of {', '.join(ops)}")
        if not isinstance(bug.get("cause", ""), str):
            raise bad(f"bug.cause {shown(bug.get('cause'))} is not text")
        case = _case_of(content["case_yaml"])
        if isinstance(case, str):
            raise bad(case)
        return cls(**{name: content[name] for name in types}, where=where, case=case)


def _accepted() -> tuple[frozenset, tuple, tuple]:
    """(discrepancy kinds, model variants, operators): imported when first
    needed, so that importing the store (each shard's claimers) stays cheap
    (the models and the spec tables import onnx)."""
    from conformance.engine.judge import DISCREPANCIES
    from conformance.engine.models import VARIANTS
    from conformance.tables.spec import OPS

    return DISCREPANCIES, VARIANTS, OPS


def _plain_problem(value: object, path: str, depth: int) -> str | None:
    """What is not plain JSON in ``value`` (a number JSON cannot hold, a key
    that is not text, nesting deeper than :data:`MAX_DEPTH`), else None."""
    if depth > MAX_DEPTH:
        return f"{path or 'the entry'}: nested deeper than {MAX_DEPTH} levels"
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path or 'the entry'}: a key that is not text"
            found = _plain_problem(item, f"{path}.{key}" if path else key, depth + 1)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _plain_problem(item, f"{path}[{index}]", depth + 1)
            if found:
                return found
    elif isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"{path}: {value!r} is not a JSON number"
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"{path}: text that is not UTF-8 (a lone surrogate)"
    elif value is not None and not isinstance(value, (bool, int, float)):
        return f"{path}: {type(value).__name__} is not JSON"
    return None


def _not_json_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _decoded(data: bytes, where: str) -> object:
    """The JSON ``data`` holds: strict (no NaN or Infinity, bounded nesting
    and size); :class:`BadEntry` naming ``where`` otherwise."""
    if len(data) > MAX_ENTRY_BYTES:
        raise BadEntry(f"{where}: {len(data)} bytes, more than an entry may hold")
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_not_json_constant)
    except UnicodeDecodeError as error:
        raise BadEntry(f"{where}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except RecursionError:
        raise BadEntry(f"{where}: nested too deeply to be an entry") from None
    except ValueError as error:  # JSONDecodeError, NaN, an integer of 5000 digits
        raise BadEntry(f"{where}: not a whole store entry ({error})") from None


def _parsed(data: bytes, where: str, bug_id: str) -> StoreEntry:
    """The entry of ``bug_id`` that ``data`` (read from ``where``) holds."""
    entry = StoreEntry.from_json(_decoded(data, where), where)
    if entry.bug_id != bug_id:  # a file renamed or a key set by hand
        raise BadEntry(f"{where}: holds the entry of {entry.bug_id}, not of {bug_id}")
    return entry


def _case_of(text: str):
    """The one case ``text`` (an entry's case_yaml) holds, read by the case
    loader; else what is wrong with it (a line, as ``case_yaml line N:
    field: message``). A small reproducer (all but a few) is read once per
    process: a campaign's store is read again by each replay."""
    return _small_case_of(text) if len(text) <= _CACHED_CASE_CHARS else _read_case(text)


_CACHED_CASE_CHARS = 1 << 16


@functools.lru_cache(maxsize=1024)
def _small_case_of(text: str):
    return _read_case(text)


def _read_case(text: str):
    from conformance.cases import loader  # when first needed: it imports onnx

    if len(text.encode("utf-8")) > MAX_ENTRY_BYTES:
        return "case_yaml: larger than an entry may hold"
    with tempfile.TemporaryDirectory(prefix="conformance-entry-") as folder:
        path = Path(folder) / "case.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            cases = loader.load_file(path)
        except loader.CaseErrors as error:
            first = error.errors[0]
            where = f"case_yaml line {first.line}" if first.line else "case_yaml"
            field_name = f"{first.field}: " if first.field else ""
            return f"{where}: {field_name}{first.message}"
        except RecursionError:
            return "case_yaml: nested too deeply"
    if len(cases) != 1:
        return f"case_yaml holds {len(cases)} cases, not one"
    return cases[0]


def check_owner(owner: object, where: str) -> str:
    if not isinstance(owner, str) or not owner:
        raise StoreError(f"{where}: bad claim owner {owner!r}: a non-empty string")
    return owner


class Store:
    """What both layouts do (the module docstring says how)."""

    location: str  # what users are shown: a folder, or the server's URL, credentials masked

    def __init__(self) -> None:
        self.warnings: list[str] = []  # what went wrong but was worked around, a line each
        self.skipped: list[str] = []  # the entries that could not be used, a line each

    def _skip(self, error: BadEntry) -> None:
        """A bad entry: one line (in :attr:`skipped` and :attr:`warnings`); the others are read."""
        line = f"skipped {error}"
        if line not in self.skipped:
            self.skipped.append(line)
            self.warnings.append(line)

    def claim(self, bug_id: str, owner: str, ttl_s: float = 900.0) -> bool:
        """Atomically: ``True`` if ``owner`` now holds the claim on the bug
        (it shrinks it) or held it already (the claim is not extended),
        ``False`` if the bug has an entry or another owner holds a live
        claim. An expired claim is taken over by one claimer alone."""
        raise NotImplementedError

    def holder(self, bug_id: str) -> str | None:
        """The owner of the live claim, else the entry's ``shrunk_by``, else None."""
        raise NotImplementedError

    def put(self, entry: StoreEntry) -> None:
        """Keep ``entry`` (atomically), replacing the bug's older one."""
        raise NotImplementedError

    def get(self, bug_id: str) -> StoreEntry | None:
        """The bug's entry; None if there is none, or if it cannot be used
        (then a line in :attr:`skipped`)."""
        raise NotImplementedError

    def entries(self) -> list[StoreEntry]:
        """Every usable entry, sorted by bug id; each one that cannot be used
        (torn, hostile, of another version) is skipped with a line in
        :attr:`skipped` naming its file or key and what is wrong."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"


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
            raise StoreError(f"{self.path}: cannot open the store: {_reason(error)}") from None
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
            raise StoreError(f"{path}: cannot write the entry: {_reason(error)}") from None

    def _read(self, path: Path) -> StoreEntry | None:
        """The entry in ``path``, None if there is none; :class:`BadEntry` if
        it cannot be used. Neither a symlink nor anything but a regular file
        (a FIFO would block, /dev/zero never end) is read."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise BadEntry(f"{path}: cannot read the entry: {_reason(error)}") from None
        try:
            with os.fdopen(fd, "rb") as file:
                status = os.fstat(file.fileno())
                if not stat.S_ISREG(status.st_mode):
                    raise BadEntry(f"{path}: not a regular file")
                data = file.read(MAX_ENTRY_BYTES + 1)
        except OSError as error:
            raise BadEntry(f"{path}: cannot read the entry: {_reason(error)}") from None
        return _parsed(data, str(path), path.name.removesuffix(".json"))

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
            raise StoreError(f"{path}: cannot remove the entry: {_reason(error)}") from None

    def ids(self) -> list[str]:
        """The bug ids with an entry, sorted; temporaries (``.partial``) and
        names that are not ``<id>.json`` are not entries."""
        try:
            names = os.listdir(self._entries)
        except FileNotFoundError:
            return []
        except OSError as error:
            raise StoreError(
                f"{self._entries}: cannot list the entries: {_reason(error)}"
            ) from None
        ids = (name[: -len(".json")] for name in names if name.endswith(".json"))
        return sorted(bug_id for bug_id in ids if _BUG_ID.fullmatch(bug_id))

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
            raise StoreError(f"{path}: cannot read the claim: {_reason(error)}") from None
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
            raise StoreError(f"{path}: cannot create the claim: {_reason(error)}") from None
        content = {"owner": owner, "at": time.time(), "ttl_s": ttl_s}
        try:
            os.write(fd, json.dumps(content).encode())  # one small write
        except OSError as error:
            raise StoreError(f"{path}: cannot write the claim: {_reason(error)}") from None
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
            raise StoreError(f"{lock}: cannot open the takeover lock: {_reason(error)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released if this process dies
            now = self._claim_of(path, ttl_s)
            if now is not None and now[2] == inode and not now[1]:
                path.unlink(missing_ok=True)
        except OSError as error:
            raise StoreError(f"{path}: cannot take over the claim: {_reason(error)}") from None
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


# The claim, in one step on the server. A script rather than WATCH/MULTI: one
# round trip, and no transaction to retry when eight shards race for a bug
# (a WATCH fails for all but one, each retry a round trip more). A claim key
# holding something else than a string (set by hand) answers 2: not ours to
# judge, the shard shrinks the bug (as when the server is away).
_CLAIM_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local kind = redis.call('TYPE', KEYS[2])['ok']
if kind ~= 'none' and kind ~= 'string' then return 2 end
local holder = redis.call('GET', KEYS[2])
if holder == false then
    redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
    return 1
end
if holder == ARGV[1] then return 1 end
return 0
"""

# What a store URL's query may set (each a keyword of the Redis client): others
# are refused, since the client would take any as a keyword and fail later.
URL_OPTIONS = frozenset({
    "db", "username", "password", "client_name", "socket_timeout", "socket_connect_timeout",
    "socket_keepalive", "health_check_interval",
})  # fmt: skip
URL_TLS_OPTIONS = frozenset({
    "ssl_cert_reqs", "ssl_ca_certs", "ssl_ca_path", "ssl_certfile", "ssl_keyfile",
    "ssl_password", "ssl_check_hostname", "ssl_ciphers",
})  # fmt: skip
_DB = re.compile(r"[0-9]{1,5}")


def check_url(url: str) -> None:
    """Refuse (:class:`StoreError`, the URL's credentials masked) a store URL
    that is not ``redis://[USER:PASSWORD@]HOST[:PORT][/DB][?OPTION=VALUE...]``,
    ``rediss://`` the same, or ``unix://[USER:PASSWORD@]/PATH[?db=DB...]``:
    a database that is not a number, a port that is not one, no host, an
    unknown option, a fragment. The Redis client would read some of these as
    database 0 or fail later with an exception that repeats the URL."""
    shown = mask_url(url)

    def bad(what: str) -> StoreError:
        return StoreError(f"{shown}: not a Redis URL: {what}")

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:  # a port that is not a number, a bad IPv6 host
        raise bad(str(error)) from None
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise bad("the scheme is not redis://, rediss:// or unix://")
    if parts.fragment or url.endswith("#"):
        raise bad("a fragment (#...) means nothing in a store URL")
    if any(char.isspace() or not char.isprintable() for char in url):
        raise bad("white space or a control character in it")
    try:
        options = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError:
        raise bad("the query is not OPTION=VALUE&...") from None
    allowed = URL_OPTIONS | (URL_TLS_OPTIONS if parts.scheme == "rediss" else frozenset())
    seen = set()
    for name, value in options:
        if name not in allowed:
            raise bad(f"unknown option {name!r} (accepted: {', '.join(sorted(allowed))})")
        if name in seen:
            raise bad(f"option {name!r} given twice")
        seen.add(name)
        if name == "db" and _DB.fullmatch(value) is None:
            raise bad(f"the database {value!r} is not a number")
    if parts.scheme == "unix":
        if not parts.path:
            raise bad("no socket path (unix:///PATH)")
        return
    if not parts.hostname:
        raise bad("no host (redis://HOST:PORT/DB)")
    if port == 0:
        raise bad("port 0")
    database = parts.path[1:] if parts.path.startswith("/") else parts.path
    if database and _DB.fullmatch(database) is None:
        raise bad(f"the database {database!r} is not a number (redis://HOST:PORT/DB)")


class _Unreachable(Exception):
    """The server could not be reached (private: callers decide). ``attempts``
    0: not tried, the server is away."""

    def __init__(self, reason: str, attempts: int, seconds: float) -> None:
        super().__init__(reason)
        self.reason, self.attempts, self.seconds = reason, attempts, seconds

    def line(self, location: str) -> str:
        if not self.attempts:
            return (
                f"cannot reach {location}: {self.reason} (out of reach since "
                f"{self.seconds:.1f} s; not tried again until a ping in the background answers)"
            )
        return (
            f"cannot reach {location}: {self.reason} "
            f"({self.attempts} attempt{'s' if self.attempts != 1 else ''} "
            f"over {self.seconds:.1f} s)"
        )


class RedisStore(Store):
    """A store on a Redis server, shared by shards on several machines; when
    the server is away, entries wait in the ``spool`` folder (the module
    docstring says what each operation does)."""

    def __init__(
        self,
        url: str,
        spool: Path | None = None,
        *,
        attempts: int = 5,
        backoff_s: float = 0.25,
        timeout_s: float = 2.0,
        prefix: str = PREFIX,
    ) -> None:
        super().__init__()
        self.url = url
        self.location = mask_url(url)
        check_url(url)
        self.spool = Path(spool) if spool is not None else None
        self.attempts, self.backoff_s, self.prefix = max(1, attempts), backoff_s, prefix
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:
            raise StoreError(
                f"{self.location}: a Redis store needs the redis package: {INSTALL_HINT}"
            ) from None
        self._errors = redis.exceptions
        # Errors of the connection that a retry does not mend (AuthorizationError
        # is not in every redis>=5).
        self._refusals = tuple(
            getattr(redis.exceptions, name)
            for name in ("AuthenticationError", "AuthorizationError")
            if hasattr(redis.exceptions, name)
        )
        # Known away: set when an operation found the server out of reach,
        # cleared by the watcher thread's first answered ping.
        self._away_since: float | None = None
        self._away_reason = ""
        self._watcher: threading.Thread | None = None
        self._closed = threading.Event()
        self._lock = threading.Lock()
        try:
            # The client's own retries are off: ours (bounded, with backoff)
            # are the only ones, so the time an outage costs is what we say.
            # Values are bytes: an entry that is not UTF-8 is named, not an error.
            self._client = redis.Redis.from_url(
                url,
                socket_connect_timeout=timeout_s,
                socket_timeout=timeout_s,
                decode_responses=False,
                retry=Retry(NoBackoff(), 0),
            )
        except ValueError as error:
            raise StoreError(f"{self.location}: not a Redis URL: {error}") from None
        self._claim_script = self._client.register_script(_CLAIM_SCRIPT)
        self._spool_pending = bool(self.spool and _spooled(self.spool))
        try:
            self._call(lambda client: client.ping(), patient=True)
        except _Unreachable as error:
            self._client.close()
            raise StoreError(error.line(self.location)) from None
        except StoreError:
            self._client.close()
            raise

    def _key(self, kind: str, bug_id: str) -> str:
        return f"{self.prefix}{kind}:{check_bug_id(bug_id, self.location)}"

    # -- reaching the server ---------------------------------------------------

    def _call(
        self, operation: Callable[[Any], Any], patient: bool = False, skip_if_away: bool = False
    ) -> Any:
        """``operation(client)`` once the spool is pushed.

        ``patient`` (opening the store): retried ``attempts`` times, the wait
        doubling from ``backoff_s``. Otherwise: tried at once, and again at
        once on a fresh connection unless the first timed out (a server
        restart leaves a dead connection in the pool); ``skip_if_away`` (a write,
        a claim) on a server found away: not tried at all. Either way,
        :class:`_Unreachable` when it fails; a server found away is pinged
        in the background until it answers. Errors that a retry would not
        mend (authentication, a wrong type) are :class:`StoreError`."""
        errors = self._errors
        with self._lock:
            away_since = self._away_since
        if skip_if_away and away_since is not None:
            raise _Unreachable(self._away_reason, 0, time.monotonic() - away_since)
        started, delay = time.monotonic(), self.backoff_s
        attempts = self.attempts if patient else 2
        attempt = 0
        while True:
            attempt += 1
            try:
                if self._spool_pending:
                    self._push_spool()
                result = operation(self._client)
            except self._refusals as error:
                raise StoreError(f"{self.location}: refused: {error}") from None
            except (errors.ConnectionError, errors.TimeoutError, TimeoutError) as error:
                reason = _reason(error)
                timed_out = isinstance(error, (errors.TimeoutError, TimeoutError))
            except errors.RedisError as error:
                raise StoreError(f"{self.location}: {error}") from None
            else:
                with self._lock:
                    self._away_since = None
                return result
            if attempt >= attempts or (not patient and timed_out):
                break
            if patient:
                time.sleep(delay)
                delay *= 2
        if not patient:
            self._went_away(reason)
        raise _Unreachable(reason, attempt, time.monotonic() - started)

    def _went_away(self, reason: str) -> None:
        """The server is out of reach: later writes go to the spool at once,
        and a thread pings the server until it answers."""
        with self._lock:
            if self._away_since is None:
                self._away_since, self._away_reason = time.monotonic(), reason
            if self._watcher is not None:  # pinging already (it clears both under this lock)
                return
            self._watcher = threading.Thread(
                target=self._watch, name="conformance-redis-watch", daemon=True
            )
            self._watcher.start()

    def _watch(self) -> None:
        delay = max(self.backoff_s, 0.01)
        while not self._closed.wait(delay):
            try:
                self._client.ping()
            except Exception:  # any failure: still away (a closed client included)
                delay = min(delay * 2, _WATCH_MAX_S)
                continue
            break
        with self._lock:  # back (or closed): the next outage starts another watcher
            if not self._closed.is_set():
                self._away_since = None
            self._watcher = None

    def _push_spool(self) -> None:
        """Every spooled entry to the server, each removed from the spool
        once its SET succeeded (a failure leaves the rest spooled; an entry
        that cannot be used stays in the spool, named in :attr:`skipped`)."""
        assert self.spool is not None
        spool = DirectoryStore(self.spool)
        for entry in spool.entries():
            self._client.set(self._key("entry", entry.bug_id), _dumps(entry))
            spool.remove(entry.bug_id)
        for line in spool.skipped:
            if line not in self.skipped:
                self.skipped.append(line)
                self.warnings.append(line)
        self._spool_pending = len(spool.ids()) > len(spool.skipped)

    # -- operations ------------------------------------------------------------

    def put(self, entry: StoreEntry) -> None:
        key = self._key("entry", entry.bug_id)
        text = _dumps(entry)
        try:
            self._call(lambda client: client.set(key, text), skip_if_away=True)
        except _Unreachable as error:
            if self.spool is None:
                raise StoreError(
                    f"{error.line(self.location)}; the entry of {entry.bug_id} is not kept "
                    "(no spool folder)"
                ) from None
            try:
                DirectoryStore(self.spool).put(entry)
            except StoreError as spool_error:
                raise StoreError(
                    f"{error.line(self.location)}; the entry of {entry.bug_id} could not be "
                    f"spooled either: {spool_error}"
                ) from None
            self._spool_pending = True
            self.warnings.append(
                f"{error.line(self.location)}; the entry of {entry.bug_id} is kept in "
                f"{self.spool} until the server is back"
            )

    def _entry_of(self, key: str, value: bytes | None, bug_id: str) -> StoreEntry | None:
        if value is None:
            return None
        return _parsed(value, f"{self.location} {key}", bug_id)

    def get(self, bug_id: str) -> StoreEntry | None:
        key = self._key("entry", bug_id)

        def read(client: Any) -> bytes | Exception | None:
            try:
                return client.get(key)
            except self._errors.ResponseError as error:  # WRONGTYPE: a list set by hand there
                return error

        try:
            value = self._call(read)
        except _Unreachable as error:
            self.warnings.append(f"{error.line(self.location)}; the entry of {bug_id} is unknown")
            return None
        try:
            if isinstance(value, Exception):
                raise BadEntry(f"{self.location} {key}: not an entry's string: {value}")
            return self._entry_of(key, value, bug_id)
        except BadEntry as error:
            self._skip(error)
            return None

    def entries(self) -> list[StoreEntry]:
        pattern = f"{self.prefix}entry:*".encode()

        def every(client: Any) -> list[tuple[bytes, bytes | None, bytes]]:
            keys = sorted(set(client.scan_iter(match=pattern, count=_SCAN_COUNT)))
            found = []
            for start in range(0, len(keys), _SCAN_COUNT):
                chunk = keys[start : start + _SCAN_COUNT]
                values = client.mget(chunk)
                for key, value in zip(chunk, values, strict=True):
                    # None: deleted between SCAN and MGET, or not a string (named below)
                    kind = client.type(key) if value is None else b"string"
                    found.append((key, value, kind))
            return found

        try:
            found = self._call(every)
        except _Unreachable as error:
            raise StoreError(error.line(self.location)) from None
        start = len(f"{self.prefix}entry:")
        entries = []
        for raw_key, value, kind in found:
            key = raw_key.decode("utf-8", "backslashreplace")
            where = f"{self.location} {key}"
            try:
                if value is None:
                    if kind not in (b"none", "none"):
                        kind = kind.decode() if isinstance(kind, bytes) else str(kind)
                        raise BadEntry(f"{where}: holds a Redis {kind}, not an entry's string")
                    continue
                bug_id = key[start:]
                if _BUG_ID.fullmatch(bug_id) is None:
                    raise BadEntry(f"{where}: not an entry's key: bad bug id {shown(bug_id)}")
                entries.append(_parsed(value, where, bug_id))
            except BadEntry as error:
                self._skip(error)
        return sorted(entries, key=lambda entry: entry.bug_id)

    def claim(self, bug_id: str, owner: str, ttl_s: float = 900.0) -> bool:
        keys = [self._key("entry", bug_id), self._key("claim", bug_id)]
        check_owner(owner, self.location)
        ttl_ms = max(1, round(ttl_s * 1000))
        try:
            won = self._call(
                lambda _: self._claim_script(keys=keys, args=[owner, ttl_ms]), skip_if_away=True
            )
        except _Unreachable as error:
            self.warnings.append(
                f"{error.line(self.location)}; {owner} shrinks {bug_id} without a claim "
                "(another shard may shrink it too)"
            )
            return True
        if won == 2:
            self.warnings.append(
                f"{self.location} {keys[1]}: not a claim (set by hand?); {owner} shrinks "
                f"{bug_id} without a claim"
            )
        return bool(won)

    def holder(self, bug_id: str) -> str | None:
        keys = [self._key("claim", bug_id), self._key("entry", bug_id)]
        try:
            owner, value = self._call(lambda client: client.mget(keys), skip_if_away=True)
        except _Unreachable as error:
            self.warnings.append(f"{error.line(self.location)}; the holder of {bug_id} is unknown")
            return None
        if owner is not None:
            return owner.decode("utf-8", "backslashreplace")
        try:
            entry = self._entry_of(keys[1], value, bug_id)
        except BadEntry as error:
            self._skip(error)
            return None
        return entry.shrunk_by if entry is not None else None

    def close(self) -> None:
        """Push what the spool holds if the server answers again (the
        watcher's ping said so: no wait for a server still away), then close."""
        self._closed.set()
        if self._spool_pending:
            with contextlib.suppress(_Unreachable, StoreError):
                self._call(lambda client: None, skip_if_away=True)
        self._client.close()


def _spooled(path: Path) -> list[str]:
    """The ids of the entries kept in the spool folder ``path``, without creating it."""
    if not (Path(path) / MARKER).exists():
        return []
    return DirectoryStore(path).ids()


def _dumps(entry: StoreEntry) -> str:
    return json.dumps(entry.to_json(), ensure_ascii=False, allow_nan=False)


def _reason(error: BaseException) -> str:
    """The operating system's words for ``error`` ("Connection refused")
    when it has them (also as the cause of a Redis error), else its text."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    return str(error).rstrip(".") or type(error).__name__


def open_store(
    spec: str | os.PathLike,
    spool: Path | None = None,
    *,
    create: bool = True,
    attempts: int = 5,
    backoff_s: float = 0.25,
    timeout_s: float = 2.0,
) -> Store:
    """The store ``spec`` names: a Redis URL (``redis://``, ``rediss://``,
    ``unix://``, the scheme in any case; ``spool``, the retry bounds and the
    socket timeout apply) or a folder (created unless ``create`` is False:
    a replay never creates a store). Another ``scheme://`` is refused."""
    text = os.fspath(spec)
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", text)
    if scheme is not None:
        if scheme.group(1).lower() not in ("redis", "rediss", "unix"):
            raise StoreError(
                f"{mask_url(text)}: not a store: a folder, or a redis://, rediss:// or unix:// URL"
            )
        text = scheme.group(1).lower() + text[scheme.end(1) :]
        return RedisStore(text, spool, attempts=attempts, backoff_s=backoff_s, timeout_s=timeout_s)
    return DirectoryStore(Path(text), create=create)
