"""Writing files so that a reader never sees half of one.

Every file the project writes whole (header.json, summary.json, gate.json,
findings.json, report.html, junit.xml, report.json, diff.html) goes through
:func:`write_text`: the text is written beside the target and renamed over
it, which POSIX makes atomic. results.jsonl is the exception: it is appended
to line by line (:class:`conformance.engine.records.ResultsWriter`).
"""

from __future__ import annotations

import json
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, creating its folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def write_json(path: Path, content: dict) -> None:
    """``content`` as indented JSON, atomically."""
    write_text(path, json.dumps(content, indent=2, ensure_ascii=False) + "\n")
