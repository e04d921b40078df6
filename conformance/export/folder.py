"""The export folder: written whole beside it, then renamed into place.

An export never leaves half a folder: it writes into a temporary folder
beside ``OUT_DIR`` (same file system) and renames it into place at the end;
a failure or an interrupt removes the temporary folder, which it alone wrote.
An ``OUT_DIR`` that exists and is not empty is refused, unless ``--force``
and it is a previous export: its ``manifest.json`` is one this command
wrote, and every file in it is one that manifest lists (a file someone put
there stops it, named). Only then is it replaced; a manifest that is not
what its schema says (docs/schemas/manifest.schema.json, read as the run
folders' readers read theirs) stops it, named, before anything is deleted.

A killed export (SIGKILL, a power cut) cannot remove its temporary folder:
it holds a mark file (:data:`MARK`, naming the tool and the host) for as long
as it is being made, and the next export of the same ``OUT_DIR`` removes each
marked ``.OUT_DIR.export-<pid>`` and ``.OUT_DIR.replaced-<pid>`` beside it
whose process no longer runs. A folder without the mark is never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
from collections.abc import Callable
from pathlib import Path

from conformance.engine import run_schemas
from conformance.engine.run_schemas import RecordsError
from conformance.export import reading
from conformance.export.selection import ExportError

MANIFEST = "manifest.json"
TOOL = "onnx-gather-conformance export"  # the manifest's `tool`: how a previous export is known
MARK = ".conformance-export"  # in a temporary folder while it is made: how a leftover is known


def previous_files(manifest: dict) -> set[str]:
    """Every file (relative path) a previous export's manifest says it wrote."""
    found = {MANIFEST}
    for test in manifest.get("tests", []):
        folder = f"node/{test['name']}"
        found.add(f"{folder}/model.onnx")
        found.add(f"{folder}/test_data_set_0/output_0.pb")
        found.update(f"{folder}/test_data_set_0/input_{j}.pb" for j in range(len(test["inputs"])))
    for about in manifest.get("expected_failures", {}).values():
        found.update(about.get("files", []))
    return found


ONLY_OURS = "--force replaces only a folder conformance export wrote"


def read_manifest(out: Path) -> dict:
    """A previous export's manifest, held to its schema as the run folders'
    readers hold theirs (:mod:`conformance.engine.run_schemas`: bounded
    nesting, every field there of the schema's type); ExportError naming
    ``OUT/manifest.json`` and what is wrong, before anything is deleted."""
    manifest_path = out / MANIFEST
    try:  # a regular file, bounded: a FIFO or /dev/zero there is named, not read
        raw = reading.read_bytes(manifest_path)
    except FileNotFoundError:
        raise ExportError(
            f"{out}: not empty and not a previous export (no {MANIFEST}); {ONLY_OURS}"
        ) from None
    try:
        manifest, whole_floats = run_schemas.parse_noting(raw)
    except ValueError as error:
        raise ExportError(
            f"{manifest_path}: not the manifest of a previous export (not JSON: {error}); "
            f"{ONLY_OURS}"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("tool") != TOOL:
        raise ExportError(
            f"{manifest_path}: not the manifest of a previous export (not written by "
            f"conformance export); {ONLY_OURS}"
        )
    try:
        run_schemas.check(manifest, "manifest", str(manifest_path), whole_floats)
    except RecordsError as error:
        said = str(error).removeprefix(f"{manifest_path}: ")
        raise ExportError(
            f"{manifest_path}: not the manifest of a previous export: {said}; {ONLY_OURS}"
        ) from None
    return manifest


def _check_replaceable(out: Path) -> None:
    """Refuse to replace ``out`` unless it is all a previous export's."""
    listed = previous_files(read_manifest(out))
    for root, folders, names in os.walk(out):
        for name in names + [f for f in folders if Path(root, f).is_symlink()]:
            relative = Path(root, name).relative_to(out).as_posix()
            if relative not in listed:
                raise ExportError(
                    f"{out / relative}: not written by the previous export "
                    f"({MANIFEST} does not list it); --force never deletes it: move it away"
                )


def check_target(out: Path, force: bool) -> None:
    """Refuse an OUT_DIR that is a file, or not empty (unless force and a previous export)."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ExportError(f"{out}: not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise ExportError(f"{out}: not empty (give --force to replace a previous export)")
        _check_replaceable(out)


def _alive(pid: int) -> bool:
    """Whether a process of this id runs here (signal 0 asks without sending)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process (or no id a process has): never ours to clean
    return True


def _ours(folder: Path) -> bool:
    """Whether ``folder`` holds this machine's mark of an export in progress."""
    mark = folder / MARK
    try:
        if mark.is_symlink() or not mark.is_file() or mark.stat().st_size > 4096:
            return False
        return mark.read_text(encoding="utf-8") == _mark_text()
    except (OSError, UnicodeDecodeError):
        return False


def _mark_text() -> str:
    # the host: a folder on a shared file system may be another machine's export in progress
    return f"{TOOL}: a folder in the making\nhost {socket.gethostname()}\n"


def _mark(folder: Path) -> None:
    (folder / MARK).write_text(_mark_text(), encoding="utf-8")


def _remove_ours(folder: Path) -> None:
    """Remove a marked folder, its mark last: a kill midway leaves it marked."""
    for child in folder.iterdir():
        if child.name == MARK:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    (folder / MARK).unlink()
    folder.rmdir()


def leftovers(out: Path) -> list[Path]:
    """The folders a killed export of ``out`` left beside it that are provably
    ours: named ``.OUT.export-<pid>`` or ``.OUT.replaced-<pid>``, a folder (not
    a link), holding this machine's mark, of a process id that no longer runs
    (or is this process's own: the one before it with that id is gone)."""
    named = re.compile(rf"\.{re.escape(out.name)}\.(?:export|replaced)-([0-9]{{1,9}})")
    found = []
    try:
        beside = list(out.parent.iterdir())
    except OSError:
        return []
    for path in beside:
        match = named.fullmatch(path.name)
        if match is None or path.is_symlink() or not path.is_dir():
            continue
        pid = int(match.group(1))
        if pid > 0 and (pid == os.getpid() or not _alive(pid)) and _ours(path):
            found.append(path)
    return sorted(found)


def write_into(out: Path, force: bool, fill: Callable[[Path], None]) -> None:
    """Run ``fill(folder)`` on a fresh temporary folder beside ``out``, then
    put that folder in ``out``'s place (the previous export, checked again,
    goes only once the new one is whole). The temporary folder holds a mark
    (:data:`MARK`) until it is renamed, and a replaced export gets one before
    it is removed, so that what a killed export leaves beside ``out`` is
    known as ours and removed by the next export of ``out``
    (:func:`leftovers`)."""
    out = Path(out)
    check_target(out, force)
    parent = out.parent
    for left in leftovers(out):
        with contextlib.suppress(OSError):  # left for the next export, still marked
            _remove_ours(left)
    temporary = parent / f".{out.name}.export-{os.getpid()}"
    try:
        parent.mkdir(parents=True, exist_ok=True)  # as --out of run does
        temporary.mkdir(parents=False)
        _mark(temporary)
    except OSError as error:
        where = temporary if temporary.exists() or temporary.is_symlink() else parent
        raise ExportError(
            f"{out}: cannot write its folder ({error.strerror or error}: {where})"
        ) from None
    try:
        try:
            fill(temporary)
        except OSError as error:  # a full disk, a file size limit: named in OUT_DIR's terms
            where = Path(error.filename or temporary)
            if where.is_relative_to(temporary):
                where = out / where.relative_to(temporary)
            raise ExportError(f"{where}: {error.strerror or error}; nothing was written") from None
        check_target(out, force)  # again: nothing appeared there meanwhile
        if out.is_dir() and any(out.iterdir()):
            old = parent / f".{out.name}.replaced-{os.getpid()}"
            out.rename(old)
            _mark(old)
            (temporary / MARK).unlink()
            temporary.rename(out)
            _remove_ours(old)
        else:
            if out.is_dir():
                out.rmdir()
            (temporary / MARK).unlink()
            temporary.rename(out)
    except BaseException:
        if temporary.is_dir() and not temporary.is_symlink():
            try:
                _remove_ours(temporary)
            except OSError:
                shutil.rmtree(temporary, ignore_errors=True)
        raise
