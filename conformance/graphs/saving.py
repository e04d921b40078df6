"""``--save-cases FILE.yaml``: node cases as a case file (cases/README.md), so
that ``conformance run --cases FILE.yaml`` judges the model's nodes for good.

Each case says where it came from (``description``, ``spec``: the model and
its nodes) and which nodes it stands for (``nodes``, read back into
:attr:`conformance.cases.case.Case.nodes`, so that ``run --cases`` records
them as ``conformance model`` did). A model's path is written relative to
the saved file (:func:`model_path`), never absolute and never through the
user's home, so the file can be committed. Tensors are written as exactly as
they were judged: drawn data as the ``random`` generator that drew it (same
seed, same values), small tensors as literals (floats as ``bits``: NaN
payloads kept), and a tensor over :data:`LITERAL_LIMIT` elements (a model's
embedding table) as an ``npy`` generator reading a ``.npy`` file written
beside the case file (its shape declared), a string tensor that large as a
``json`` generator reading a JSON list beside it (``.npy`` holds strings
only as a pickle). A case standing for more than :data:`NODES_INLINE` nodes
(alike nodes by the thousand) names a JSON list of them beside it
(``nodes: {file: NAME}``). Identical companions are written once. What is
written loads: a document over the loader's cap on the values of one file is
refused before anything is written (:func:`check_loadable`).

The file's first line is :data:`MARK`: how a later ``--save-cases`` knows
the file is one it wrote and may replace (:func:`check_replaceable`), with
the companions the file names; anything else is refused unless ``--force``.

This module makes the document and the arrays; the command writes them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np

from conformance.cases import loader, writing
from conformance.cases.check import verdict_of
from conformance.cases.loader import YamlFileReader
from conformance.errors import ConformanceError
from conformance.graphs import drawing
from conformance.graphs.nodes import AS_BUILT_TAG

LITERAL_LIMIT = 4096  # elements written inline; larger tensors go to a file beside
# nodes a case lists inline; more go to a JSON file beside, written once for the
# cases of a group: alike nodes by the thousand would otherwise be listed by every
# case, over the values the loader takes in one file (loader.MAX_NODES)
NODES_INLINE = 64
# The saved file's first line: a file that begins with it is one --save-cases wrote.
MARK = "# written by conformance model --save-cases, which replaces it and the files it names"
MARK_BYTES = 4096  # read of an existing file to find its first line


class SaveRefused(ConformanceError, ValueError):
    """``--save-cases`` would replace a file it did not write: ``error: FILE: REASON``."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"error: {path}: {reason}")


def model_path(model: str, folder: Path) -> str:
    """A model's path as a saved case file in ``folder`` writes it: relative
    to that folder (``/`` separated), or the model's file name alone where
    the relative path would climb to the file system's root or through the
    user's home (a path that names the machine or the user is not one to
    commit)."""
    target = Path(os.path.abspath(model))
    base = Path(os.path.abspath(folder))
    try:
        home: Path | None = Path(os.path.abspath(Path.home()))
    except (RuntimeError, KeyError):  # no home to keep out
        home = None
    common = Path(os.path.commonpath([target, base]))
    through_home = (
        home is not None and target.is_relative_to(home) and not common.is_relative_to(home)
    )
    if common == Path(common.anchor) or through_home:
        return target.name
    return Path(os.path.relpath(target, base)).as_posix()


def document(path: Path, groups, case_memory: int) -> tuple[dict, dict[str, bytes]]:
    """(the case file's content, {file name: bytes} of the companions to write beside it)."""

    def shown(model: str) -> str:
        return model_path(model, path.parent)

    arrays: dict[str, bytes] = {}
    written: dict[str, str] = {}  # sha256 of a companion's bytes -> its name
    entries = []
    for group in groups:
        for case in group.cases:
            made = group.made.get(case.id, {})
            said = case.description.rsplit("; ", 1)[-1]  # how its tensors came to be
            description, spec = drawing.texts(group, said, shown)
            entry = writing.entry(
                case.base_id, description, spec, case.op, case.opset, case.dtype,
                case.indices_dtype, case.axis,
            )  # fmt: skip
            for field, array in (("data", case.data), ("indices", case.indices)):
                recipe = made.get(field)
                if isinstance(recipe, dict) and "random" in recipe:
                    drawn = {"shape": list(array.shape), "seed": recipe["random"]}
                    if "low" in recipe:  # drawn within what the node can receive
                        drawn.update(low=recipe["low"], high=recipe["high"])
                    entry[field] = {"random": drawn}
                elif array.size > LITERAL_LIMIT:
                    name, companion, generator = _companion(path, case.base_id, field, array)
                    name = written.setdefault(hashlib.sha256(companion).hexdigest(), name)
                    arrays[name] = companion
                    entry[field] = {generator: {"file": name, "shape": list(array.shape)}}
                else:
                    entry[field] = writing.literal(array)
            entry.update(writing.expectation(verdict_of(case, case_memory)))
            entry["tags"] = list(case.tags)
            if case.id in group.as_built:  # `run --cases` judges the node as built again
                entry["tags"].append(f"{AS_BUILT_TAG}{group.variant}")
            listed = [
                {"model": shown(model), "graph": graph, "node": node}
                for model, graph, node in case.nodes
            ]
            entry["nodes"] = listed
            if len(listed) > NODES_INLINE:  # once beside, for every case of the group
                companion = json.dumps(listed, ensure_ascii=True).encode("ascii")
                name = f"{path.stem}.{case.base_id}.nodes.json"
                name = written.setdefault(hashlib.sha256(companion).hexdigest(), name)
                arrays[name] = companion
                entry["nodes"] = {"file": name}
            entries.append(entry)
    models = sorted({shown(site.model) for group in groups for site in group.sites})
    content = {
        "description": "node cases of " + ", ".join(models) + " (conformance model --save-cases)",
        "cases": entries,
    }
    check_loadable(path, content)
    return content, arrays


def values_in(document) -> int:
    """The values of a document written as YAML, as the case loader counts
    them against :data:`conformance.cases.loader.MAX_NODES` (one a node of the
    YAML: each mapping, list, key and scalar; a list the dumper writes once
    and aliases after counted each time, as the loader expands aliases).
    Counted on the document, not its text: the loader's count of a large
    saved file's text takes longer than writing it."""
    count, todo = 0, [document]
    while todo:
        value = todo.pop()
        count += 1
        if isinstance(value, dict):
            count += len(value)  # the keys, scalars all
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)
    return count


def check_loadable(path: Path, content: dict) -> None:
    """SaveRefused, before anything is written, for a document over the case
    loader's cap on the values of one file (``run --cases`` would refuse what
    was saved): many nodes unlike each other make many cases."""
    count = values_in(content)
    if count > loader.MAX_NODES:
        raise SaveRefused(
            path,
            f"not written: its {len(content['cases']):,} cases would be {count:,} values, "
            f"over the {loader.MAX_NODES:,} a case file holds, so `run --cases` would refuse "
            "it; fewer --draws make fewer cases of each node, fewer models at a time fewer "
            "nodes",
        )


def text(content: dict) -> str:
    """The saved file's text: :data:`MARK`, then the case file."""
    return f"{MARK}\n{writing.dump(content)}"


def _companion(path: Path, case_id: str, field: str, array: np.ndarray) -> tuple[str, bytes, str]:
    """(file name, bytes, generator) of a tensor too large to write inline:
    an .npy file, or for strings (which .npy holds only as a pickle) a JSON
    list of them, flat and row-major."""
    stem = f"{path.stem}.{case_id}.{field}"
    if array.dtype == object:  # strings
        listed = json.dumps(array.ravel().tolist(), ensure_ascii=True)  # a lone surrogate kept
        return f"{stem}.json", listed.encode("ascii"), "json"
    if array.dtype.name == "bfloat16":  # .npy has no bfloat16: its bits
        array = array.view(np.uint16)
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return f"{stem}.npy", buffer.getvalue(), "npy"


def check_replaceable(path: Path, companions: list[str]) -> None:
    """SaveRefused unless every file ``--save-cases`` is about to write is new
    or its own: ``path`` a file that begins with :data:`MARK`, each companion
    one that file names (an ``npy`` or ``json`` generator's file)."""
    ours: set[str] = set()
    if path.exists() or path.is_symlink():
        if not _marked(path):
            raise SaveRefused(
                path,
                "exists and is not a case file conformance model --save-cases wrote (its first "
                "line is not the tool's mark); give --force to replace it",
            )
        ours = _named(path)
    for name in companions:
        beside = path.parent / name
        if (beside.exists() or beside.is_symlink()) and name not in ours:
            raise SaveRefused(
                beside,
                f"exists and --save-cases did not write it (no case file it wrote at {path} "
                "names it); give --force to replace it",
            )


def _marked(path: Path) -> bool:
    """Whether ``path`` is a regular file whose first line is :data:`MARK`."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with path.open("rb") as stream:
            head = stream.read(MARK_BYTES)
    except OSError:
        return False
    return head.split(b"\n", 1)[0].rstrip(b"\r") == MARK.encode()


def _named(path: Path) -> set[str]:
    """The files the case file at ``path`` names in its generators (none when
    it cannot be read as YAML, by the strict loader that reads every case file)."""
    reader = YamlFileReader(path)
    if not reader.load_yaml() or not isinstance(reader.root, dict):
        return set()
    found: set[str] = set()
    cases = reader.root.get("cases")
    for case in cases if isinstance(cases, list) else []:
        listed = case.get("nodes") if isinstance(case, dict) else None
        if isinstance(listed, dict) and isinstance(listed.get("file"), str):
            found.add(listed["file"])
        for field in ("data", "indices"):
            value = case.get(field) if isinstance(case, dict) else None
            if not isinstance(value, dict) or len(value) != 1:
                continue
            ((generator, spec),) = value.items()
            if generator not in ("npy", "json"):
                continue
            name = spec.get("file") if isinstance(spec, dict) else spec
            if isinstance(name, str):
                found.add(name)
    return found
