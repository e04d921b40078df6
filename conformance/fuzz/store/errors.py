"""The one error a store raises to users, :class:`StoreError`, and the
checks and words both layouts and the entry format share. The lowest module
of the store: the entry format, :class:`~conformance.fuzz.store.base.Store`
and both layouts import it, it imports none of them."""

from __future__ import annotations

from conformance.errors import ConformanceError


class StoreError(ConformanceError):
    """The store cannot be opened, read or written; the message (one line)
    names the store or the file and what failed."""

    exit_code = 2


def check_owner(owner: object, where: str) -> str:
    if not isinstance(owner, str) or not owner:
        raise StoreError(f"{where}: bad claim owner {owner!r}: a non-empty string")
    return owner


def os_reason(error: BaseException) -> str:
    """The operating system's words for ``error`` ("Connection refused")
    when it has them (also as the cause of a Redis error), else its text."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    return str(error).rstrip(".") or type(error).__name__
