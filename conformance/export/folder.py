"""The export folder: written whole beside it, then renamed into place.

An export never leaves half a folder: it writes into a temporary folder
beside ``OUT_DIR`` (same file system) and renames it into place at the end;
a failure or an interrupt removes the temporary folder, which it alone wrote.
An ``OUT_DIR`` that exists and is not empty is refused, unless ``--force``
and it is a previous export: its ``manifest.json`` is one this command
wrote, and every file in it is one that manifest lists (a file someone put
there stops it, named). Only then is it replaced.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from conformance.export.selection import ExportError

MANIFEST = "manifest.json"
TOOL = "onnx-gather-conformance export"  # the manifest's `tool`: how a previous export is known


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


def _check_replaceable(out: Path) -> None:
    """Refuse to replace ``out`` unless it is all a previous export's."""
    manifest_path = out / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or manifest.get("tool") != TOOL:
            raise ValueError("not written by conformance export")
        listed = previous_files(manifest)
    except FileNotFoundError:
        raise ExportError(
            f"{out}: not empty and not a previous export (no {MANIFEST}); "
            "--force replaces only a folder conformance export wrote"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ExportError(
            f"{manifest_path}: not the manifest of a previous export ({error}); "
            "--force replaces only a folder conformance export wrote"
        ) from None
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


def write_into(out: Path, force: bool, fill: Callable[[Path], None]) -> None:
    """Run ``fill(folder)`` on a fresh temporary folder beside ``out``, then
    put that folder in ``out``'s place (the previous export, checked again,
    goes only once the new one is whole)."""
    out = Path(out)
    check_target(out, force)
    parent = out.parent
    temporary = parent / f".{out.name}.export-{os.getpid()}"
    if temporary.exists():  # ours, from a run of this process id that was killed
        shutil.rmtree(temporary)
    try:
        temporary.mkdir(parents=False)
    except OSError as error:
        raise ExportError(
            f"{out}: cannot write its folder ({error.strerror or error}: {parent})"
        ) from None
    try:
        fill(temporary)
        check_target(out, force)  # again: nothing appeared there meanwhile
        if out.is_dir() and any(out.iterdir()):
            old = parent / f".{out.name}.replaced-{os.getpid()}"
            out.rename(old)
            temporary.rename(out)
            shutil.rmtree(old)
        else:
            if out.is_dir():
                out.rmdir()
            temporary.rename(out)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
