"""The fuzz campaigns' regression store: every bug's smallest reproducer, kept
across campaigns and shared by the shards of one campaign so that each bug is
shrunk by exactly one shard.

A bug is known by its id (``[a-z0-9-]``, at most 64 characters); its
:class:`Entry` holds the reproducer (a case file's text), the variant it
reproduces in, the shard that shrank it and what the campaign says about it
(opaque JSON). A shard calls :meth:`Store.claim` before shrinking a bug:
``True`` means "shrink it", ``False`` that it is kept already or another
shard is on it. :func:`open_store` opens one of two layouts.

**A folder** (:class:`DirectoryStore`, also the Redis store's spool)::

    store.json            {"format": 1, "kind": "conformance fuzz store"}
    entries/<id>.json     an Entry (Entry.to_json)
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

    entry:<id>    an Entry as a JSON string
    claim:<id>    the owner, SET with PX ttl (the server expires it)

- put: one ``SET`` of the whole JSON: atomic on the server.
- claim: one Lua script (atomic on the server): ``False`` if ``entry:<id>``
  exists, ``True`` if the claim is free (then ``SET claim owner PX ttl``) or
  already this owner's. An expired claim is gone, so taking it over is the
  same script; the server's clock alone decides expiry.
- entries: ``SCAN`` (never ``KEYS``, which blocks the server), then ``MGET``.

A killed shard leaves no half entry (a rename, a single SET) and its claim
expires after ``ttl_s``, when another shard may take the bug.

**When Redis goes away** (a restart, a network cut) every operation is retried
(``attempts`` times, the wait doubling from ``backoff_s``: by default 5
attempts over about 4 s when the server refuses, some 14 s when each
connection times out after ``timeout_s``); then ``put`` keeps the entry in the
local spool (a folder store) and ``claim`` answers ``True`` (shrinking a bug
twice is better than losing it), each adding a line to
:attr:`Store.warnings`; ``holder`` answers None (with a warning); ``get``,
``entries`` and the first connection raise :class:`StoreError` naming the
server (a replay cannot go on without the store). The next operation that
reaches the server first pushes every spooled entry to it, removing each from
the spool only once its SET succeeded; a spool a killed campaign left is
pushed the same way by the next store opened with it. Redis keeps what it
holds across a restart only if the server persists (``appendonly yes`` or RDB
snapshots): that is the server's configuration, not the store's.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from conformance.engine.files import write_json, write_text
from conformance.errors import ConformanceError

FORMAT = 1  # of store.json and of each entry
KIND = "conformance fuzz store"
MARKER = "store.json"
PREFIX = "conformance:fuzz:"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
INSTALL_HINT = "pip install 'onnx-gather-conformance[redis]'"
_BUG_ID = re.compile(r"[a-z0-9-]{1,64}")
_MARKER_PARTIAL = "." + MARKER + "."  # prefix of the marker's unique temporary names
_SCAN_COUNT = 500


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


@dataclass(frozen=True)
class Entry:
    """One bug's smallest reproducer and what the campaign says about it."""

    bug_id: str
    bug: dict  # runtime, kind, op, cause...: the campaign's, opaque here
    case_yaml: str  # the reproducer as a case file's text
    variant: str  # the model variant it reproduces in
    shrunk_by: str  # the shard that shrank it, e.g. "1/2"
    found: dict  # runtime versions, seed, time: the campaign's, opaque here

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
    def from_json(cls, content: dict, where: str) -> Entry:
        """The entry ``content`` holds; :class:`StoreError` naming ``where``
        (a file, a key) if it is not one."""
        if not isinstance(content, dict):
            raise StoreError(f"{where}: not a store entry (a JSON object was expected)")
        if content.get("format") != FORMAT:
            raise StoreError(
                f"{where}: entry format {content.get('format')!r}, this version reads {FORMAT}"
            )
        types = {"bug_id": str, "bug": dict, "case_yaml": str, "variant": str,
                 "shrunk_by": str, "found": dict}  # fmt: skip
        for name, kind in types.items():
            if not isinstance(content.get(name), kind):
                raise StoreError(f"{where}: entry field {name!r} missing or not a {kind.__name__}")
        check_bug_id(content["bug_id"], where)
        return cls(**{name: content[name] for name in types})


def _parsed(data: bytes, where: str, bug_id: str) -> Entry:
    """The entry of ``bug_id`` that ``data`` (read from ``where``) holds."""
    try:
        content = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise StoreError(f"{where}: not a whole store entry ({error})") from None
    entry = Entry.from_json(content, where)
    if entry.bug_id != bug_id:  # a file renamed or a key set by hand
        raise StoreError(f"{where}: holds the entry of {entry.bug_id}, not of {bug_id}")
    return entry


def check_owner(owner: object, where: str) -> str:
    if not isinstance(owner, str) or not owner:
        raise StoreError(f"{where}: bad claim owner {owner!r}: a non-empty string")
    return owner


class Store:
    """What both layouts do (the module docstring says how)."""

    location: str  # what users are shown: a folder, or the server's URL without password

    def __init__(self) -> None:
        self.warnings: list[str] = []  # what went wrong but was worked around, a line each

    def claim(self, bug_id: str, owner: str, ttl_s: float = 900.0) -> bool:
        """Atomically: ``True`` if ``owner`` now holds the claim on the bug
        (it shrinks it) or held it already (the claim is not extended),
        ``False`` if the bug has an entry or another owner holds a live
        claim. An expired claim is taken over by one claimer alone."""
        raise NotImplementedError

    def holder(self, bug_id: str) -> str | None:
        """The owner of the live claim, else the entry's ``shrunk_by``, else None."""
        raise NotImplementedError

    def put(self, entry: Entry) -> None:
        """Keep ``entry`` (atomically), replacing the bug's older one."""
        raise NotImplementedError

    def get(self, bug_id: str) -> Entry | None:
        raise NotImplementedError

    def entries(self) -> list[Entry]:
        """Every entry, sorted by bug id."""
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

    def __init__(self, path: str | os.PathLike) -> None:
        super().__init__()
        self.path = Path(path)
        self.location = str(self.path)
        self._entries = self.path / "entries"
        self._claims = self.path / "claims"
        self._open()

    # -- opening ---------------------------------------------------------------

    def _open(self) -> None:
        marker = self.path / MARKER
        try:
            if self.path.exists() and not self.path.is_dir():
                raise StoreError(f"{self.path}: not a fuzz store: not a folder")
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

    def put(self, entry: Entry) -> None:
        path = self._entry_path(entry.bug_id)
        try:
            write_json(path, entry.to_json())
        except OSError as error:
            raise StoreError(f"{path}: cannot write the entry: {_reason(error)}") from None

    def _read(self, path: Path) -> Entry | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise StoreError(f"{path}: cannot read the entry: {_reason(error)}") from None
        return _parsed(data, str(path), path.name.removesuffix(".json"))

    def get(self, bug_id: str) -> Entry | None:
        return self._read(self._entry_path(bug_id))

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

    def entries(self) -> list[Entry]:
        found = (self._read(self._entries / f"{bug_id}.json") for bug_id in self.ids())
        return [entry for entry in found if entry is not None]  # None: removed meanwhile

    # -- claims ----------------------------------------------------------------

    def _claim_of(self, path: Path, ttl_s: float) -> tuple[str | None, bool, int] | None:
        """(owner, live, inode) of the claim file, None if there is none. A
        file without a whole claim (its creator was killed between creating
        and writing it, or is writing it now) has no owner and lives
        ``ttl_s`` from its modification time."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise StoreError(f"{path}: cannot read the claim: {_reason(error)}") from None
        with os.fdopen(fd, "rb") as file:
            stat = os.fstat(fd)
            data = file.read(65536)
        try:
            content = json.loads(data.decode("utf-8"))
            owner, at = str(content["owner"]), float(content["at"])
            ttl_s = float(content.get("ttl_s", ttl_s))
        except (UnicodeDecodeError, ValueError, TypeError, KeyError):
            owner, at = None, stat.st_mtime
        return owner, time.time() < at + ttl_s, stat.st_ino

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
# (a WATCH fails for all but one, each retry a round trip more).
_CLAIM_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local holder = redis.call('GET', KEYS[2])
if holder == false then
    redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
    return 1
end
if holder == ARGV[1] then return 1 end
return 0
"""


class _Unreachable(Exception):
    """Every attempt failed to reach the server (private: callers decide)."""

    def __init__(self, reason: str, attempts: int, seconds: float) -> None:
        super().__init__(reason)
        self.reason, self.attempts, self.seconds = reason, attempts, seconds

    def line(self, location: str) -> str:
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
        self.location = _without_password(url)
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
        try:
            # The client's own retries are off: ours (bounded, with backoff)
            # are the only ones, so the time an outage costs is what we say.
            self._client = redis.Redis.from_url(
                url,
                socket_connect_timeout=timeout_s,
                socket_timeout=timeout_s,
                decode_responses=True,
                retry=Retry(NoBackoff(), 0),
            )
        except ValueError as error:
            raise StoreError(f"{self.location}: not a Redis URL: {error}") from None
        self._claim_script = self._client.register_script(_CLAIM_SCRIPT)
        self._spool_pending = bool(self.spool and _spooled(self.spool))
        try:
            self._call(lambda client: client.ping())
        except _Unreachable as error:
            self._client.close()
            raise StoreError(error.line(self.location)) from None
        except StoreError:
            self._client.close()
            raise

    def _key(self, kind: str, bug_id: str) -> str:
        return f"{self.prefix}{kind}:{check_bug_id(bug_id, self.location)}"

    # -- reaching the server ---------------------------------------------------

    def _call(self, operation: Callable[[Any], Any]) -> Any:
        """``operation(client)`` once the spool is pushed, retried while the
        server cannot be reached; :class:`_Unreachable` after the last attempt.
        Errors that a retry would not mend (authentication, a wrong type)
        are :class:`StoreError`."""
        errors = self._errors
        started, delay = time.monotonic(), self.backoff_s
        for attempt in range(1, self.attempts + 1):
            try:
                if self._spool_pending:
                    self._push_spool()
                return operation(self._client)
            except self._refusals as error:
                raise StoreError(f"{self.location}: refused: {error}") from None
            except (errors.ConnectionError, errors.TimeoutError, TimeoutError) as error:
                reason = _reason(error)
            except errors.RedisError as error:
                raise StoreError(f"{self.location}: {error}") from None
            if attempt < self.attempts:
                time.sleep(delay)
                delay *= 2
        raise _Unreachable(reason, self.attempts, time.monotonic() - started)

    def _push_spool(self) -> None:
        """Every spooled entry to the server, each removed from the spool
        once its SET succeeded (a failure leaves the rest spooled)."""
        assert self.spool is not None
        spool = DirectoryStore(self.spool)
        for entry in spool.entries():
            self._client.set(self._key("entry", entry.bug_id), _dumps(entry))
            spool.remove(entry.bug_id)
        self._spool_pending = bool(spool.ids())

    # -- operations ------------------------------------------------------------

    def put(self, entry: Entry) -> None:
        key = self._key("entry", entry.bug_id)
        text = _dumps(entry)
        try:
            self._call(lambda client: client.set(key, text))
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

    def get(self, bug_id: str) -> Entry | None:
        key = self._key("entry", bug_id)
        try:
            text = self._call(lambda client: client.get(key))
        except _Unreachable as error:
            raise StoreError(error.line(self.location)) from None
        return None if text is None else _parsed(text.encode(), f"{self.location} {key}", bug_id)

    def entries(self) -> list[Entry]:
        def every(client: Any) -> list[tuple[str, str]]:
            keys = sorted(set(client.scan_iter(match=f"{self.prefix}entry:*", count=_SCAN_COUNT)))
            found = []
            for start in range(0, len(keys), _SCAN_COUNT):
                chunk = keys[start : start + _SCAN_COUNT]
                found += [(k, v) for k, v in zip(chunk, client.mget(chunk), strict=True) if v]
            return found  # a key deleted between SCAN and MGET is not an entry

        try:
            found = self._call(every)
        except _Unreachable as error:
            raise StoreError(error.line(self.location)) from None
        start = len(f"{self.prefix}entry:")
        entries = [
            _parsed(text.encode(), f"{self.location} {key}", key[start:]) for key, text in found
        ]
        return sorted(entries, key=lambda entry: entry.bug_id)

    def claim(self, bug_id: str, owner: str, ttl_s: float = 900.0) -> bool:
        keys = [self._key("entry", bug_id), self._key("claim", bug_id)]
        check_owner(owner, self.location)
        ttl_ms = max(1, round(ttl_s * 1000))
        try:
            return bool(self._call(lambda _: self._claim_script(keys=keys, args=[owner, ttl_ms])))
        except _Unreachable as error:
            self.warnings.append(
                f"{error.line(self.location)}; {owner} shrinks {bug_id} without a claim "
                "(another shard may shrink it too)"
            )
            return True

    def holder(self, bug_id: str) -> str | None:
        keys = [self._key("claim", bug_id), self._key("entry", bug_id)]
        try:
            owner, text = self._call(lambda client: client.mget(keys))
        except _Unreachable as error:
            self.warnings.append(f"{error.line(self.location)}; the holder of {bug_id} is unknown")
            return None
        if owner is not None:
            return owner
        if text is None:
            return None
        return _parsed(text.encode(), f"{self.location} {keys[1]}", bug_id).shrunk_by

    def close(self) -> None:
        self._client.close()


def _spooled(path: Path) -> list[str]:
    """The ids of the entries kept in the spool folder ``path``, without creating it."""
    if not (Path(path) / MARKER).exists():
        return []
    return DirectoryStore(path).ids()


def _dumps(entry: Entry) -> str:
    return json.dumps(entry.to_json(), ensure_ascii=False)


def _reason(error: BaseException) -> str:
    """The operating system's words for ``error`` ("Connection refused")
    when it has them (also as the cause of a Redis error), else its text."""
    seen = error
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    return str(error).rstrip(".") or type(error).__name__


def _without_password(url: str) -> str:
    """``url`` as users may be shown it: a password becomes ``***``."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        netloc = f"{parts.username or ''}:***@{parts.hostname or ''}"
        if parts.port is not None:
            netloc += f":{parts.port}"
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return url


def open_store(
    spec: str | os.PathLike,
    spool: Path | None = None,
    *,
    attempts: int = 5,
    backoff_s: float = 0.25,
    timeout_s: float = 2.0,
) -> Store:
    """The store ``spec`` names: a Redis URL (``redis://``, ``rediss://``,
    ``unix://``; ``spool``, the retry bounds and the socket timeout apply)
    or a folder."""
    text = os.fspath(spec)
    if isinstance(text, str) and text.startswith(REDIS_SCHEMES):
        return RedisStore(text, spool, attempts=attempts, backoff_s=backoff_s, timeout_s=timeout_s)
    return DirectoryStore(Path(text))
