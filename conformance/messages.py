"""How a message shows a thing: the first line of a text, a value cut short,
a path as typed at this terminal. One way each, for every package.

* :func:`first_line`: the first line of a message that is not blank,
  stripped, cut to ``limit`` with ``…``. A runtime's message, an exception's
  text or a bug's cause may hold several lines; a one-line display (a
  record's detail, a table cell, a terminal line) shows the first, since
  that is where each of them says what happened (``fuzz.bugs.normalised``
  makes a cause one line; a multi-line cause only comes from a hand-written
  or foreign store entry, and the rest of it is detail).
* :func:`cause`: a runtime's error on one line, as a deployer reads it: the
  lines that say where in the runtime's source it was raised
  (:data:`BOILERPLATE`) left out, the first line (what failed) and the last
  (why: tract's last ``Caused by``, OpenVINO's line after its ``Check ...
  failed``) always kept within :data:`CAUSE_CHARS`, the lines between as
  they fit; a line too long by itself keeps its start and its end (ONNX
  Runtime's one line ends with its ``Status Message``). A first line alone
  would drop the why ("Exception from ...core.cpp:117:" for an unknown
  OpenVINO property; "Infering facts" for tract's dims it cannot unify).
* :func:`shown`: a value from an input file in an error message, its
  ``repr`` cut to :data:`SHOWN_CHARS` as ``head...tail (N characters)``: a
  5000-digit number or a 300-character name is not printed whole, and the
  count says how long it was.
* :func:`relative`: a path relative to the working folder when below it,
  else as given (``cases/known/openvino.yaml:43``, as people and records say
  it; an installed wheel's site-packages stays absolute).

Where it sits: at the bottom of the layering with :mod:`conformance.errors`
(CONTRIBUTING.md). It imports nothing but the standard library, so every
package may use it, the adapters included (they also run in worker
processes of other environments).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

SHOWN_CHARS = 40  # of a value's repr in an error message; longer ones keep head and tail
_HEAD, _TAIL = 12, 6


def first_line(text: object, limit: int | None = None) -> str:
    """The first line of ``text`` that is not blank, stripped ("" for none),
    cut to ``limit`` characters with ``…`` when given."""
    for line in str(text or "").splitlines():
        if line.strip():
            return cut(line.strip(), limit)
    return ""


# A runtime error's lines that say only where in its source it was raised, or
# that its frontend failed, never why: OpenVINO's "Exception from
# src/...:117:" and "Check 'false' failed at ...", its frontend's wrappers,
# ONNX Runtime's status prefix on a line of its own. A "Check '<condition>'
# failed" line names a condition, and stays.
BOILERPLATE = (
    "Exception from",
    "Check 'false' failed",
    "FrontEnd API failed with",
    "Model wasn't fully converted",
    "Failed operations detailed log",
    "Summary:",
    "[ONNXRuntimeError]",
)
# The longest :func:`cause`: a terminal line and a table cell hold it, and it
# holds tract's context, its chain and its last cause (about 170 characters).
CAUSE_CHARS = 300
_CHAIN = re.compile(r"^\d+: ")  # anyhow's numbering of a cause chain (tract): "0: Infering facts"
_LEFT_OUT = "…"


def _informative(text: str) -> list[str]:
    """The lines of ``text`` that say something, stripped, chain numbers
    dropped; a line ending in a colon joined to the one it introduces
    ("Caused by: Infering facts", "Conv-16 with a message: While ...")."""
    lines = (_CHAIN.sub("", line.strip(" -\t")) for line in text.splitlines())
    units: list[str] = []
    for line in lines:
        if not line or line.startswith(BOILERPLATE):
            continue
        if units and units[-1].endswith(":"):
            units[-1] += " " + line
        else:
            units.append(line)
    return units


def cause(text: object, limit: int = CAUSE_CHARS) -> str:
    """A runtime's error on one line of at most ``limit`` characters: its
    informative lines parted by "; ", the first and the last always (the
    module's docstring); lines between left out from the end (``…``) where
    they do not fit, then the first line cut."""
    lines = _informative(str(text or ""))
    if not lines:  # ONNX Runtime's one line ("[ONNXRuntimeError] : 2 : ... Status Message: why")
        return _ends(first_line(text), limit)
    if len(lines) == 1 or len("; ".join(lines)) <= limit:
        return _ends("; ".join(lines), limit)
    first, middle, last = lines[0], lines[1:-1], _ends(lines[-1], limit)
    while middle and len("; ".join([first, *middle, _LEFT_OUT, last])) > limit:
        middle.pop()
    rest = [*middle, _LEFT_OUT, last] if len(middle) < len(lines) - 2 else [*middle, last]
    room = limit - len("; ".join(["", *rest]))  # what the first line may take
    if room < 1:
        return last  # the why alone fills the line
    return "; ".join([cut(first, room), *rest])


def _ends(line: str, limit: int) -> str:
    """``line`` within ``limit`` characters: whole, or its start and its end
    with ``…`` between, since a runtime's one line says why at its end."""
    if len(line) <= limit:
        return line
    head = limit // 3
    return line[:head] + _LEFT_OUT + line[len(line) - (limit - head - 1) :]


def cut(line: str, limit: int | None) -> str:
    """``line`` cut to ``limit`` characters, its last one ``…`` when cut
    (None: whole). For text laid out to a width; a value in an error message
    is :func:`shown`."""
    if limit is None or len(line) <= limit:
        return line
    return line[: max(0, limit - 1)] + "…"


def shortened(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` whole when it fits in ``limit``, else its head and tail with
    its length: ``999999999999...999999 (5000 characters)``."""
    if len(text) <= limit:
        return text
    return f"{text[:_HEAD]}...{text[-_TAIL:]} ({len(text)} characters)"


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """A value for an error message: its ``repr``, :func:`shortened` (an
    integer Python will not convert to text, over 4300 digits, by its size)."""
    try:
        text = repr(value)
    except ValueError:  # sys.get_int_max_str_digits()
        if isinstance(value, int):
            return f"an integer of {value.bit_length()} bits"
        raise
    return shortened(text, limit)


def relative(path: os.PathLike | str) -> Path:
    """``path`` relative to the working folder when it is absolute and below
    it (compared as written: a path is not resolved, so a symbolic link the
    user typed stays as typed), else as given."""
    path = Path(path)
    try:
        if path.is_absolute() and path.is_relative_to(Path.cwd()):
            return path.relative_to(Path.cwd())
    except OSError:  # the working folder is gone
        pass
    return path
