"""The name of an exported test: ``test_<name>``, from the case id and the variant.

Runners put the name into identifiers and patterns: tract makes it a Rust
function name, the Python series a method name, OpenVINO splits it on ``.``,
and their lists match it with regular expressions. So a name holds only
``[a-z0-9_]``, never ends in ``_cpu``, ``_cuda`` or ``_expanded``, and within
an export no name is another's prefix. The rule (docs/export.md), stable
across releases because it reads nothing but the two:

* a concrete id of the corpus form ``<base>.op<opset>.<dtype>.<indices dtype>``
  whose base is a case-file id without ``_`` (``[a-z0-9][a-z0-9-]*``) becomes
  ``<base>_op<opset>_<dtype>_<indices dtype>`` with each ``-`` of the base an
  ``_``. No dtype name holds an underscore and an opset is digits, so reading
  the fields from the right gives the id back: two such ids never share a name;
* then ``_<variant>``: no variant name ends another after an underscore, so
  the variant is read back from the right as well;
* any other id (an ``_`` in its base, characters outside ``[a-z0-9-]``, upper
  case, which a case-insensitive file system would fold) keeps its runs of
  ``[a-z0-9]`` joined by ``_`` and ends in ``_x<10 hex digits of the id's
  sha256>``: it cannot take the name of another (no dtype name is ``x<hex>``);
* a name longer than :data:`LIMIT` keeps its first characters and ends in
  ``_x<10 hex digits>`` of the case id and variant.

Every character of a name is safe in a file name on any file system, in a
Python or Rust identifier, in a C string, and literal in a regular expression.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterable

from conformance.tables import dtypes

PREFIX = "test_"
LIMIT = 160  # characters of <name>: with test_, a device suffix and a variant well under 255
_DTYPE = "|".join(dtypes.NAMES)  # no dtype name holds an underscore, none is x<hex>
_CONCRETE = re.compile(rf"([a-z0-9][a-z0-9-]*)\.op(\d+)\.({_DTYPE})\.({_DTYPE})")
_KEPT = re.compile(r"[a-z0-9]+")
RUNNER_SUFFIXES = ("_cpu", "_cuda", "_expanded")  # what runners add to, or strip from, a name


def _hashed(text: str) -> str:
    return "x" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def case_part(case_id: str) -> str:
    """The part of a test name that names the case."""
    match = _CONCRETE.fullmatch(case_id)
    if match:
        base = match.group(1).replace("-", "_")
        return "_".join((base, f"op{match.group(2)}", match.group(3), match.group(4)))
    kept = "_".join(_KEPT.findall(case_id.lower())) or "case"
    return f"{kept}_{_hashed(case_id)}"


def test_name(case_id: str, variant: str) -> str:
    """``test_<name>`` for the case and variant (the folder, and the name each
    runner gives the test)."""
    name = f"{case_part(case_id)}_{variant}"
    if len(name) > LIMIT:
        whole = case_id + "\0" + variant
        name = f"{name[: LIMIT - 12]}_{_hashed(whole)}"
    return PREFIX + name


def prefix_clash(names: Iterable[str]) -> tuple[str, str] | None:
    """Two names of which the first is a prefix of the second (a runner that
    matches ``^test_x`` without an end would take both), or None."""
    ordered = sorted(names)
    for shorter, longer in itertools.pairwise(ordered):
        if longer.startswith(shorter):
            return shorter, longer
    return None
