"""The export's reads of files it did not write this time: a previous export's
``manifest.json`` (``--force``), and what ``--check`` holds to it (the runner's
configs and lists, the runner's results).

Each is read once, whole, through :func:`read_bytes`: only a regular file is
opened (the case files' check, :func:`conformance.cases.npy.open_regular`: a
FIFO would block the export for ever, a symbolic link to ``/dev/zero`` never
end) and at most :data:`MAX_BYTES` of it is read (more is refused, named,
before it is parsed). What the bytes must be is the caller's to say.
"""

from __future__ import annotations

from pathlib import Path

from conformance.cases import npy
from conformance.export.selection import ExportError

# The largest file these reads take. A whole-corpus export's manifest and an
# IREE op-suite JUnit file of every config are a small part of it; a file this
# large is not one the export or the suite wrote, and parsing it (an XML tree
# is several times its text) would take memory no check needs.
MAX_BYTES = 64 << 20


def read_bytes(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them;
    ExportError naming ``path`` and why not (FileNotFoundError passes, for the
    caller to say what a missing file means)."""
    try:
        with npy.open_regular(path) as stream:
            data = stream.read(limit + 1)
    except FileNotFoundError:
        raise
    except npy.NpyProblem as problem:
        raise ExportError(f"{path}: {problem}") from None
    except OSError as error:
        raise ExportError(f"{path}: cannot be read ({error.strerror or error})") from None
    if len(data) > limit:
        raise ExportError(f"{path}: larger than {limit:,} bytes: not a file the export reads")
    return data
