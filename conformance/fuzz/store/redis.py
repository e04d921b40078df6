"""The regression store on a Redis server (:class:`RedisStore`,
``redis://host:port/db``, ``rediss://``, ``unix://``), shared by shards on
several machines; keys under ``conformance:fuzz:``::

    entry:<id>    a StoreEntry as a JSON string (docs/schemas/store-entry.schema.json)
    claim:<id>    the owner, SET with PX ttl (the server expires it)

- put: one ``SET`` of the whole JSON: atomic on the server.
- claim: one Lua script (atomic on the server): ``False`` if ``entry:<id>``
  exists, ``True`` if the claim is free (then ``SET claim owner PX ttl``) or
  already this owner's. An expired claim is gone, so taking it over is the
  same script; the server's clock alone decides expiry.
- entries: ``SCAN`` (never ``KEYS``, which blocks the server), then ``MGET``.

**When Redis goes away** (a restart, a network cut): opening the store is
retried (``attempts`` times, the wait doubling from ``backoff_s``: by default
5 attempts over about 4 s when the server refuses, some 14 s when each
connection times out after ``timeout_s``), then :class:`StoreError`. Once
open, an operation that cannot reach the server is tried again at once on a
fresh connection (a restart leaves a dead one in the pool; not after a
timeout), so finding the server away costs at most ``timeout_s``, once: the
server is then *away*, and a thread pings it in the background (the wait
doubling from ``backoff_s`` up to 5 s) until it answers. While it is away,
``put`` keeps the entry in the local spool (a folder store,
:mod:`conformance.fuzz.store.folder`) and ``claim`` answers ``True``
(shrinking a bug twice is better than losing it) at once, without trying the
server, each adding a line to :attr:`Store.warnings`; ``holder`` and ``get``
answer None (with a warning); ``entries`` (what a replay reads, which cannot
go on without the store) tries the server and raises :class:`StoreError`
naming it. The next operation that reaches the server first pushes every
spooled entry to it, removing each from the spool only once its SET
succeeded, and so does :meth:`RedisStore.close` when the background ping
found the server back; a spool a killed campaign left is pushed the same way
by the next store opened with it. Redis keeps what it holds across a restart
only if the server persists (``appendonly yes`` or RDB snapshots): that is
the server's configuration, not the store's.

**Credentials**: :attr:`Store.location` is the URL with its user, password and
secret query keys masked (:mod:`conformance.engine.credentials`), and every
message names the store by it. :func:`check_url` refuses a URL the store would
misread (a database that is not a number, an unknown option...).

The client library is imported when a store is opened (the ``[redis]``
extra): ``import redis`` below is the library, not this module.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from conformance.engine.credentials import mask_url
from conformance.fuzz.store.base import Store
from conformance.fuzz.store.entry import (
    BUG_ID,
    BadEntry,
    StoreEntry,
    check_bug_id,
    dumps,
    parsed,
)
from conformance.fuzz.store.errors import StoreError, check_owner, os_reason
from conformance.fuzz.store.folder import MARKER, DirectoryStore
from conformance.messages import shown

SCHEMES = ("redis", "rediss", "unix")  # of a store URL (open_store: a folder otherwise)
PREFIX = "conformance:fuzz:"
INSTALL_HINT = "pip install 'onnx-gather-conformance[redis]'"
_SCAN_COUNT = 500
_WATCH_MAX_S = 5.0  # longest wait between two pings of a server out of reach

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
    location = mask_url(url)

    def bad(what: str) -> StoreError:
        return StoreError(f"{location}: not a Redis URL: {what}")

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:  # a port that is not a number, a bad IPv6 host
        raise bad(str(error)) from None
    if parts.scheme not in SCHEMES:
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
                reason = os_reason(error)
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
            self._client.set(self._key("entry", entry.bug_id), dumps(entry))
            spool.remove(entry.bug_id)
        for line in spool.skipped:
            if line not in self.skipped:
                self.skipped.append(line)
                self.warnings.append(line)
        self._spool_pending = len(spool.ids()) > len(spool.skipped)

    # -- operations ------------------------------------------------------------

    def put(self, entry: StoreEntry) -> None:
        key = self._key("entry", entry.bug_id)
        text = dumps(entry)
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
        return parsed(value, f"{self.location} {key}", bug_id)

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
                if BUG_ID.fullmatch(bug_id) is None:
                    raise BadEntry(f"{where}: not an entry's key: bad bug id {shown(bug_id)}")
                entries.append(parsed(value, where, bug_id))
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
