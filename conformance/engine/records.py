"""A run folder's files, writing and reading, by the names the rest of the package uses.

Three modules hold them; this one gathers their public names so that
``from conformance.engine import records`` reads as it always has
(``records.RESULTS``, ``records.read_folder``, ``records.RunFolder``...):

- :mod:`conformance.engine.run_writer`: what a run writes (records, header, the files' names);
- :mod:`conformance.engine.run_folder`: reading a run folder back (``RunFolder``, ``read_folder``);
- :mod:`conformance.engine.run_schemas`: holding each file to its JSON Schema
  (docs/schemas/, shipped as conformance/schemas), with errors naming file, line and field.
"""

from __future__ import annotations

from conformance.engine.run_folder import (
    REQUIRED_TEXT,
    SCHEMA_OF,
    RunFolder,
    check_together,
    check_whole_lines,
    counted,
    locate,
    read_folder,
    read_folders,
    read_json,
    read_records,
    runtime_targets,
    runtime_versions,
)
from conformance.engine.run_schemas import MAX_DEPTH, READ_REQUIRES, RecordsError
from conformance.engine.run_writer import (
    CPU_FLAGS,
    FINDINGS,
    FORMAT,
    GATE,
    GROUPS,
    HEADER,
    RESULTS,
    SUMMARY,
    ResultsWriter,
    about,
    cpu_flags,
    header,
    now,
    record,
)

__all__ = [
    "CPU_FLAGS", "FINDINGS", "FORMAT", "GATE", "GROUPS", "HEADER", "MAX_DEPTH", "READ_REQUIRES",
    "REQUIRED_TEXT", "RESULTS", "SCHEMA_OF", "SUMMARY", "RecordsError", "ResultsWriter",
    "RunFolder", "about", "check_together", "check_whole_lines", "counted", "cpu_flags",
    "header", "locate", "now", "read_folder", "read_folders", "read_json", "read_records",
    "record", "runtime_targets", "runtime_versions",
]  # fmt: skip
