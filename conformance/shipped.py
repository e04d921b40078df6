"""Where the files this package ships are: the corpus, the spec documents, the schemas.

They are edited at the top of the repository (``cases/``, ``specs/``,
``docs/schemas/``). A wheel carries them inside the package, as
``conformance/corpus``, ``conformance/specs`` and ``conformance/schemas``
(pyproject.toml's ``package-dir``); a clone, and an editable install of one,
reads them where they are edited. Either way the corpus found here is the
one the package was built with: never a folder named ``cases`` that happens
to be in the working directory.

The schemas refer to ``defs.schema.json`` for the enums they share; a
validator resolves those references through :func:`schema_registry` (or
:func:`fast_schema_registry`).

Imports nothing of ours, so that every layer may ask it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.messages import relative

if TYPE_CHECKING:
    import jsonschema_rs
    import referencing

_PACKAGE = Path(__file__).resolve().parent
# The word that stands for the shipped set in --cases and --known lists
# (``--cases shipped my/cases``): a folder of that name is ./shipped. Only
# the bare word, the string itself, is the word (:func:`word_or_path`).
WORD = "shipped"
# name inside the wheel -> where it is edited, relative to the repository
_EDITED = {"corpus": "cases", "specs": "specs", "schemas": "docs/schemas"}


class NotShipped(LookupError):
    """The installation lacks a folder it should carry (a broken install)."""


def _folder(name: str) -> Path:
    for candidate in (_PACKAGE / name, _PACKAGE.parent / _EDITED[name]):
        if candidate.is_dir():
            return relative(candidate)
    raise NotShipped(
        f"this installation of onnx-gather-conformance has no {name} "
        f"(looked in {_PACKAGE / name} and {_PACKAGE.parent / _EDITED[name]}): reinstall it"
    )


def corpus() -> Path:
    """The shipped case files: gather/, gather_elements/, regressions/, and known/ (baselines)."""
    return _folder("corpus")


def baselines() -> Path:
    """The shipped known-discrepancy baselines, ``<target name>.yaml`` each."""
    return corpus() / "known"


def specs() -> Path:
    """The spec documents the oracle's decisions quote."""
    return _folder("specs")


def schemas() -> Path:
    """The JSON schemas of the files a run writes (docs/formats.md)."""
    return _folder("schemas")


# The schemas the others refer to ($ref), by file name: defs.schema.json holds
# the enums they share (the outcome kinds, the operators).
SHARED_SCHEMAS = ("defs.schema.json",)


def _shared() -> list[tuple[str, dict]]:
    """(its $id, its content) of each schema of :data:`SHARED_SCHEMAS`."""
    found = []
    for name in SHARED_SCHEMAS:
        document = json.loads((schemas() / name).read_text(encoding="utf-8"))
        found.append((document["$id"], document))
    return found


@cache
def schema_registry() -> referencing.Registry:
    """What a ``jsonschema`` validator of a shipped schema resolves the
    references to other files with (``registry=``)."""
    import referencing.jsonschema  # here: only validators need it, not every importer

    return referencing.Registry().with_contents(
        _shared(), default_specification=referencing.jsonschema.DRAFT202012
    )


@cache
def fast_schema_registry() -> jsonschema_rs.Registry:
    """The same for a ``jsonschema_rs`` validator (``registry=``)."""
    import jsonschema_rs

    return jsonschema_rs.Registry(_shared())


def digest(files: Iterable[Path], root: Path | None = None) -> str:
    """sha256 over the case files judged: each file's path (relative to
    ``root`` when it is below it, so a clone and a wheel agree) and bytes, in
    sorted order. The header records it, so two runs say whether they judged
    the same corpus. A file named twice (a folder and the file itself) counts
    once, as the loader reads it once."""
    hashed = hashlib.sha256()
    named: dict[Path, tuple[str, Path]] = {}  # resolved path -> (name, path)
    for path in files:
        path = Path(path)
        try:
            name = path.resolve().relative_to(root.resolve()) if root else path
        except ValueError:
            name = path
        named.setdefault(path.resolve(), (name.as_posix(), path))
    for shown, path in sorted(named.values()):
        data = path.read_bytes()
        hashed.update(f"{shown}\0{len(data)}\0".encode())
        hashed.update(data)
    return hashed.hexdigest()


def word_or_path(text: str) -> str | Path:
    """A ``--cases`` or ``--known`` argument as typed: the bare word
    :data:`WORD` (the string), or a path. ``./shipped``, ``shipped/`` and an
    absolute path to a folder named shipped are paths: read here, from the
    text as typed, since ``Path("./shipped")`` is ``Path("shipped")``
    (the argparse type of those options, and of the pytest plugin's)."""
    return WORD if text == WORD else Path(text)


def is_word(path: object) -> bool:
    """Whether ``path`` is the word :data:`WORD`: the string, never a ``Path``."""
    return isinstance(path, str) and path == WORD


def expand(paths: Iterable[Path | str], shipped: Path) -> list[Path]:
    """``paths`` with the word :data:`WORD` (the string; a ``Path`` named
    shipped is a folder: :func:`word_or_path`) replaced by ``shipped`` (each
    path once, in the order first given)."""
    found: list[Path] = []
    for path in paths:
        path = shipped if is_word(path) else Path(path)
        if path not in found:
            found.append(path)
    return found


def is_corpus(path: Path) -> bool:
    """Whether ``path`` is the shipped corpus folder itself."""
    try:
        return Path(path).resolve() == corpus().resolve()
    except OSError:
        return False


def _recorded(path: Path) -> str:
    """A path as the header records it: a folder named shipped is
    ``./shipped``, never the word (which is the shipped corpus)."""
    text = path.as_posix()
    return f"./{text}" if text == WORD else text


def describe(paths: Iterable[Path], files: Iterable[Path]) -> dict:
    """What the run header records of the corpus judged (docs/formats.md):
    whether it is exactly the shipped one, the folders and files given, and the
    :func:`digest` of the case files (relative to the shipped corpus where
    they are in it)."""
    paths, files = [Path(p) for p in paths], [Path(f) for f in files]
    root = corpus()
    return {
        "shipped": bool(paths) and all(is_corpus(p) for p in paths),
        "paths": [WORD if is_corpus(p) else _recorded(p) for p in paths],
        "files": len(files),
        "digest": digest(files, root),
    }
