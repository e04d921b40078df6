"""The fuzz campaigns' regression store: every bug's smallest reproducer, kept
across campaigns and shared by the shards of one campaign so that each bug is
shrunk by exactly one shard.

A bug is named by its id (``[a-z0-9-]``, at most 64 characters); its
:class:`StoreEntry` holds the reproducer (a case file's text), the variant it
reproduces in, the shard that shrank it and what the campaign says about it
(opaque JSON). A shard calls :meth:`Store.claim` before shrinking a bug:
``True`` means "shrink it", ``False`` that it is kept already or another
shard is on it. :func:`open_store` opens one of two layouts. One module each:

* :mod:`~conformance.fuzz.store.errors`: :class:`StoreError`, the one error
  a store raises to users, and the checks the others share;
* :mod:`~conformance.fuzz.store.base`: :class:`Store`, what both layouts do;
* :mod:`~conformance.fuzz.store.entry`: the entry, its format
  (``docs/schemas/store-entry.schema.json``) and its strict reading: an
  entry is input, and one that cannot be used is skipped with one line
  naming its file or key and what is wrong (:attr:`Store.skipped`, also in
  :attr:`Store.warnings`), the others read;
* :mod:`~conformance.fuzz.store.folder`: :class:`DirectoryStore`, a folder
  (atomic renames, ``O_EXCL`` claims);
* :mod:`~conformance.fuzz.store.redis`: :class:`RedisStore`, a Redis server
  a fleet shares (one ``SET``, a Lua claim; a local spool while the server
  is away).

A killed shard leaves no half entry (a rename, a single SET) and its claim
expires after ``ttl_s``, when another shard may take the bug.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from conformance.engine.credentials import mask_url
from conformance.fuzz.store.base import Store
from conformance.fuzz.store.entry import FORMAT, BadEntry, StoreEntry, check_bug_id
from conformance.fuzz.store.errors import StoreError
from conformance.fuzz.store.folder import DirectoryStore
from conformance.fuzz.store.redis import SCHEMES, RedisStore, check_url

__all__ = [
    "FORMAT", "BadEntry", "DirectoryStore", "RedisStore", "Store", "StoreEntry", "StoreError",
    "check_bug_id", "check_url", "open_store",
]  # fmt: skip


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
        if scheme.group(1).lower() not in SCHEMES:
            raise StoreError(
                f"{mask_url(text)}: not a store: a folder, or a redis://, rediss:// or unix:// URL"
            )
        text = scheme.group(1).lower() + text[scheme.end(1) :]
        return RedisStore(text, spool, attempts=attempts, backoff_s=backoff_s, timeout_s=timeout_s)
    return DirectoryStore(Path(text), create=create)
