"""Case files: loading, expansion and checking against the oracle."""

from conformance.cases.case import Case, Expectation, Source
from conformance.cases.loader import CaseErrors, CaseFileError, default_case_paths, discover, load

__all__ = [
    "Case",
    "CaseErrors",
    "CaseFileError",
    "Expectation",
    "Source",
    "default_case_paths",
    "discover",
    "load",
]
