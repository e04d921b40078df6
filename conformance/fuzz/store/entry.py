"""A regression store's entry: one bug's smallest reproducer, the same JSON in
a folder's ``entries/<id>.json`` and under a Redis key.

The format is ``docs/schemas/store-entry.schema.json`` (docs/formats.md).
**Entries are input** (any machine of a fleet writes them), so an entry is
read as the run folders' files are, by the one strict reader of our schemas
(:mod:`conformance.strict_json`): strict JSON (UTF-8, no ``NaN`` or
``Infinity`` anywhere, at most :data:`MAX_ENTRY_BYTES` and
:data:`~conformance.strict_json.MAX_DEPTH` less :data:`COPIED_DEEPER`
levels deep: what is accepted is written and read back), then every field
held to the schema (the bug's runtime a target's name, its kind a
discrepancy kind, its op and the variant ours...). What no schema can say is
checked here: a newer format is named as such, ``shrunk_by`` is printable
text, the file or key is the entry's own bug's, and the reproducer is one
case the case loader reads. An entry that fails is :class:`BadEntry`, whose
message names its file or key and what is wrong.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.fuzz.store.errors import StoreError
from conformance.messages import shown

if TYPE_CHECKING:
    from conformance import strict_json

FORMAT = 1  # of store.json and of each entry
SCHEMA = "store-entry"  # docs/schemas/store-entry.schema.json
BUG_ID = re.compile(r"[a-z0-9-]{1,64}")
MAX_ENTRY_BYTES = 64 << 20  # an entry larger is not read (a file planted to exhaust memory)
# How much deeper than in the entry the tool writes an entry's values: a
# replay copies ``found`` (free-form JSON) into findings.json's ``replay[]``
# and replay.json's ``bugs[]``, two levels below where the entry holds it. An
# entry is read that much less deep than strict_json.MAX_DEPTH, so that what
# the store accepts is written and read back by the tool's own readers (an
# entry at the limit made every campaign's findings.json unreadable: exit 2).
COPIED_DEEPER = 2


def check_bug_id(bug_id: object, where: str = "") -> str:
    """``bug_id`` if it is a bug id (it becomes a file name and a key), else
    :class:`StoreError`."""
    if not isinstance(bug_id, str) or BUG_ID.fullmatch(bug_id) is None:
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
    def from_json(cls, content: object, where: str, whole_floats: bool = True) -> StoreEntry:
        """The entry ``content`` (parsed by :func:`parsed`'s strict reader)
        holds, every field checked; :class:`BadEntry` naming ``where`` (a
        file, a key) and the field if it is not one. ``whole_floats``:
        whether it may hold a float of whole value
        (:func:`conformance.strict_json.parse_noting`)."""

        def bad(message: str) -> BadEntry:
            return BadEntry(f"{where}: {message}")

        if not isinstance(content, dict):
            raise bad("not a store entry (a JSON object was expected)")
        # Before the schema: an entry of another version is said to be one.
        if type(content.get("format")) is not int or content["format"] != FORMAT:
            raise bad(f"entry format {shown(content.get('format'))}, this version reads {FORMAT}")
        from conformance import strict_json  # when first needed (_compiled says why)

        problem = strict_json.problem(_compiled(), content, whole_floats, strict=True)
        if problem is not None:
            raise bad(f"{problem} (docs/schemas/{SCHEMA}.schema.json)")
        shrunk_by = content["shrunk_by"]
        if not shrunk_by.isprintable():  # what a pattern cannot say: Python's printable
            raise bad(f"shrunk_by {shown(shrunk_by)}: 1 to 200 printable characters")
        case = _case_of(content["case_yaml"])
        if isinstance(case, str):
            raise bad(case)
        names = ("bug_id", "bug", "case_yaml", "variant", "shrunk_by", "found")
        return cls(**{name: content[name] for name in names}, where=where, case=case)


@functools.cache
def _compiled() -> strict_json.Compiled:
    """The entry's schema, compiled when first needed: importing the store
    stays cheap (each shard's claimers import it; jsonschema does not)."""
    from conformance import strict_json

    return strict_json.Compiled(strict_json.schema(SCHEMA))


def parsed(data: bytes, where: str, bug_id: str) -> StoreEntry:
    """The entry of ``bug_id`` that ``data`` (read from ``where``, a file or
    a key) holds; :class:`BadEntry` naming ``where`` and what is wrong."""
    from conformance import strict_json  # when first needed (_compiled says why)

    if len(data) > MAX_ENTRY_BYTES:
        raise BadEntry(f"{where}: {len(data)} bytes, more than an entry may hold")
    try:
        content, whole_floats = strict_json.parse_noting(
            data, finite=True, max_depth=strict_json.MAX_DEPTH - COPIED_DEEPER
        )
    except strict_json.NotUtf8 as error:
        raise BadEntry(f"{where}: {error.detail}") from None
    except strict_json.NotJsonText as error:
        raise BadEntry(f"{where}: not a whole store entry ({error.detail})") from None
    except strict_json.NotText as error:
        raise BadEntry(f"{where}: {error}") from None
    except ValueError as error:  # nested too deeply, NaN, an integer of 5000 digits
        raise BadEntry(f"{where}: not a whole store entry ({error})") from None
    entry = StoreEntry.from_json(content, where, whole_floats)
    if entry.bug_id != bug_id:  # a file renamed or a key set by hand
        raise BadEntry(f"{where}: holds the entry of {entry.bug_id}, not of {bug_id}")
    return entry


def dumps(entry: StoreEntry) -> str:
    """The entry as one line of JSON (a Redis value; a folder's file is
    written by :func:`conformance.engine.files.write_json`)."""
    return json.dumps(entry.to_json(), ensure_ascii=False, allow_nan=False)


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
