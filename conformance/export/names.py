"""The name of an exported test: ``test_<name>``, from the case id and the variant.

The rule (docs/export.md), stable across releases because it reads nothing
but the two:

* a concrete id of the corpus form ``<base>.op<opset>.<dtype>.<indices dtype>``
  whose base is a case-file id (``[a-z0-9][a-z0-9_-]*``) becomes
  ``<base>_op<opset>_<dtype>_<indices dtype>``: the dots become underscores.
  No dtype name holds an underscore and an opset is digits, so reading the
  last three fields from the right gives the id back: two ids never share a
  name;
* then ``_<variant>``: no variant name ends another after an underscore, so
  the variant is read back from the right as well;
* any other id (characters a file name or a regex would not take, upper case,
  which a case-insensitive file system would fold) keeps its runs of
  ``[a-z0-9_-]`` joined by ``_`` and ends in ``_x<10 hex digits of the
  id's sha256>``, so it cannot take the name of another;
* a name longer than :data:`LIMIT` keeps its first characters and ends in
  ``_x<10 hex digits>`` of the whole (file systems take 255 bytes a name).

Every character of a name is one of ``a-z0-9_-``: safe in a file name on any
file system, in a Python attribute looked up by name, in a C string, and
literal in a regular expression.
"""

from __future__ import annotations

import hashlib
import re

from conformance.tables import dtypes

PREFIX = "test_"
LIMIT = 160  # characters of <name>: with test_, a device suffix and a variant well under 255
_DTYPE = "|".join(dtypes.NAMES)  # no dtype name holds an underscore, none is x<hex>
_CONCRETE = re.compile(rf"([a-z0-9][a-z0-9_-]*)\.op(\d+)\.({_DTYPE})\.({_DTYPE})")
_SAFE = re.compile(r"[a-z0-9_-]+")


def _hashed(text: str) -> str:
    return "x" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def case_part(case_id: str) -> str:
    """The part of a test name that names the case."""
    match = _CONCRETE.fullmatch(case_id)
    if match:
        return "_".join((match.group(1), f"op{match.group(2)}", match.group(3), match.group(4)))
    kept = "_".join(_SAFE.findall(case_id)) or "case"
    return f"{kept}_{_hashed(case_id)}"


def test_name(case_id: str, variant: str) -> str:
    """``test_<name>`` for the case and variant (the folder, and the name each
    runner gives the test)."""
    name = f"{case_part(case_id)}_{variant}"
    if len(name) > LIMIT:
        whole = case_id + "\0" + variant
        name = f"{name[: LIMIT - 12]}_{_hashed(whole)}"
    return PREFIX + name
