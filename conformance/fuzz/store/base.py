"""What both layouts of the regression store do: :class:`Store`, the
operations a campaign and a replay call (the package docstring,
:mod:`conformance.fuzz.store`, says what each does on each layout)."""

from __future__ import annotations

from conformance.fuzz.store.entry import BadEntry, StoreEntry


class Store:
    """What both layouts do (:mod:`conformance.fuzz.store` says how)."""

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
