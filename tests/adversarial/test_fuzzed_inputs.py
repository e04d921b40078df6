"""Fuzzed hostile inputs: Hypothesis mutates valid case files and a valid run
folder, and the commands that read them must answer with an exit code they
document, never a traceback (nor the top level's "internal error"), never a
false PASS, never a lost result, in bounded time and memory.

Two generators:

* **case files**: valid case documents mutated field by field (wrong types,
  huge, negative and float numbers, missing and unknown fields, odd strings
  with control characters and escaped lone surrogates, deep nesting, shared
  nodes and cycles as YAML anchors and aliases, lists for mappings), dumped as
  YAML or JSON, then maybe broken as text (cut, bytes spliced in, other
  encodings, a second document); plus hand-written hostile YAML. Each goes to
  ``cases validate --check-models`` and ``oracle`` in this process (the CLI's
  ``main``, output captured as a real process's would be encoded); at the end
  one real process reads them all at once, under a memory limit.
* **run folders**: one small real ONNX Runtime run (its gate passes with known
  discrepancies) whose results.jsonl lines, header.json, summary.json,
  groups.json and gate.json are mutated; ``gate``, ``report`` and ``diff`` read
  each mutant. A folder whose records do not add up to its summary, or whose
  files are not of one run, must be refused (2) by all three; one that did not
  finish must be refused by ``gate``: a mutant never passes the gate unless it
  is as consistent as a real run.

Reproducible: ``derandomize=True`` and no example database; the example
counts (ci, the default profile: 300 case files, 250 run folders) scale with
the Hypothesis profile (conftest.py). In-process calls run under an interval
timer and a lowered address-space limit, so a hang or a blow-up fails the
example instead of the worker.

The generators once left out three inputs that this suite found to fail:
a rank-0 ``arange`` of bool (a NumPy scalar the loader could not freeze), a
generator mapping with unknown keys of two types (they could not be sorted) and
full-range random strings at the element limit (a minute to build). They are
fixed in conformance/cases/values.py and generated again here.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import cli
from conformance.engine import records
from conformance.engine.groups import group_key
from conformance.engine.judge import DISCREPANCIES, KINDS
from conformance.tables import decisions, dtypes
from tests.conftest import REPO

# -- bounds ------------------------------------------------------------------------------
SECONDS = 60  # one in-process invocation (a valid case file takes well under a second)
PROCESS_SECONDS = 120  # one real process, reading every generated file at once
MEMORY = 3 << 30  # address space one in-process invocation may add
PROCESS_MEMORY = 4 << 30  # address space a real process may use
READER_MEMORY = 1 << 30  # resident memory gate, report or diff may take for a small folder


def _examples(ci: int) -> int:
    """``ci`` examples under the ci profile (the default), more under nightly, fewer under dev."""
    return max(5, ci * settings.default.max_examples // 300)


def _settings(ci: int) -> settings:
    return settings(
        max_examples=_examples(ci),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


class Hang(Exception):
    """An in-process invocation ran past :data:`SECONDS`."""


@contextlib.contextmanager
def _bounded(seconds: float = SECONDS, memory: int = MEMORY):
    """A hang raises :class:`Hang`, a blow-up MemoryError, instead of killing the
    worker: an interval timer (main thread only) and a soft address-space limit
    at what the process maps now plus ``memory``, both undone after."""
    timer = threading.current_thread() is threading.main_thread()
    if timer:

        def ring(signum, frame):
            raise Hang(f"no answer within {seconds} s")

        previous = signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _mapped() + memory
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _mapped() -> int:
    """Bytes of address space this process maps now (Linux: /proc/self/statm)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def _cli(*args: str) -> tuple[int, str, str]:
    """The CLI in this process: exit code, stdout, stderr. Output is encoded
    as a real process's is (stdout strict UTF-8, stderr backslashreplace), so
    text no terminal can show fails here as it would there. With
    CONFORMANCE_DEBUG set, an exception the top level would turn into
    "internal error" escapes, and Hypothesis shows (and shrinks) it."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    with (
        mock.patch.dict(os.environ, {cli.DEBUG: "1"}),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        _bounded(),
    ):
        code = cli.main(list(args))
    out.flush()
    err.flush()
    return code, _text(out), _text(err)


def _text(stream: io.TextIOWrapper) -> str:
    return stream.buffer.getvalue().decode("utf-8", errors="replace")


def _limit_memory() -> None:  # preexec_fn of the real processes
    resource.setrlimit(resource.RLIMIT_AS, (PROCESS_MEMORY, PROCESS_MEMORY))


def _process(*args: str) -> tuple[subprocess.CompletedProcess, float, int]:
    """The CLI as a real process under a memory limit: (result, seconds, its peak
    resident memory in bytes, from its own rusage). A hang past
    :data:`PROCESS_SECONDS` kills it and fails."""
    command = [sys.executable, "-m", "conformance", *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        child = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=err,
                                 preexec_fn=_limit_memory)  # fmt: skip
        while True:  # wait4, not wait: the rusage of this child alone
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > PROCESS_SECONDS:
                child.kill()
                os.wait4(child.pid, 0)
                child.returncode = -9
                raise AssertionError(f"no answer within {PROCESS_SECONDS} s: {command}")
            time.sleep(0.01)
        seconds = time.monotonic() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        texts = []
        for stream in (out, err):
            stream.seek(0)
            texts.append(stream.read().decode("utf-8", errors="backslashreplace"))
    done = subprocess.CompletedProcess(command, child.returncode, *texts)
    return done, seconds, usage.ru_maxrss * 1024


def _no_crash(code: int, err: str, allowed: set[int], what) -> None:
    assert code in allowed, (what, code, err[-2000:])
    assert "Traceback" not in err and "internal error" not in err, (what, err[-3000:])


# -- strategies shared by both generators ------------------------------------------------
ODD_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "\x07\x1b[31mred\x1b[0m",
        "\ud800",  # lone surrogates: dumped as escapes (YAML "\ud800", JSON "\\ud800")
        "a\udfffb",
        "\ud83d",
        "line\nbreak",
        "trailing\n",
        "\r",
        "\t",
        "\u2028\u2029",
        "\u202egnp.exe",
        "\ufeffbom",
        "\ufffe\uffff",
        "é中😀",
        "<script>alert(1)</script>",
        "../../etc/passwd",
        "javascript:alert(1)",
        "%s%n{0}",
        ".nan",
        "-.inf",
        "0x7fc00001",
        "1e400",
        "9" * 400,
        "null",
        "~",
        "yes",
        "NO",
        "on",
        "&anchor",
        "*alias",
        "!!python/object/apply:os.system",
        "{",
        "[",
        "- item",
        "'",
        '"',
        "\\",
        "---",
        "...",
        "#",
        "x" * 5000,
    ]
)
BIG_INTS = st.sampled_from(
    [
        -1,
        0,
        2**31 - 1,
        2**31,
        -(2**31) - 1,
        2**32,
        2**53 + 1,
        2**63 - 1,
        2**63,
        -(2**63),
        -(2**63) - 1,
        2**64,
        10**100,
        -(10**400),
        4194304,
        4194305,
    ]
)
ODD_FLOATS = st.sampled_from(
    [0.0, -0.0, 0.5, 1.5, 13.0, -1.0, 1e-320, 1e308, -1e308, float("inf"), float("-inf"),
     float("nan"), 2.0**63, 6.0e-8]
)  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | BIG_INTS
    | st.floats()
    | ODD_FLOATS
    | st.text(max_size=12)
    | ODD_TEXT
)
JUNK = st.recursive(
    SCALARS,
    # Keys of text, numbers or both ({random: {shape: [2], seed: 1, 7: 2, x: 1}}).
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        | st.dictionaries(st.integers(-3, 3), inner, max_size=3)
        | st.dictionaries(st.integers(-3, 3) | st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)
DEPTHS = st.sampled_from([2, 10, 33, 64, 65, 99, 100, 101, 1000, 20000])


def _nested(value, depth: int):
    for _ in range(depth):
        value = [value]
    return value


def _paths(node, here=()) -> list[tuple]:
    """Every path (keys and list positions) into a tree of dicts and lists,
    the root's () first; shared nodes and cycles are walked once."""
    found, seen, todo = [], set(), [(node, here)]
    while todo:
        value, path = todo.pop()
        found.append(path)
        if id(value) in seen or len(path) > 12:
            continue
        if isinstance(value, dict):
            seen.add(id(value))
            todo.extend((child, (*path, key)) for key, child in value.items())
        elif isinstance(value, list):
            seen.add(id(value))
            todo.extend((child, (*path, i)) for i, child in enumerate(value))
    return sorted(found, key=lambda p: (len(p), repr(p)))


def _get(root, path):
    for step in path:
        root = root[step]
    return root


@st.composite
def _mutated_tree(draw, root, plausible):
    """``root`` (a deep copy) with 1 to 3 mutations at paths Hypothesis picks;
    ``plausible(field)`` gives a strategy of believable values for a field name.
    Half the trees get only believable values of named fields: those get past
    the schema, into the values, the oracle and the models."""
    root = copy.deepcopy(root)
    typed = draw(st.booleans())
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        paths = _paths(root)
        if typed:
            paths = [p for p in paths if p and isinstance(p[-1], str)] or paths
        path = draw(st.sampled_from(paths))
        node = _get(root, path)
        op = "plausible" if typed else draw(
            st.sampled_from(
                ["plausible"] * 3 + ["junk", "delete", "unknown", "wrap", "unwrap", "nest",
                                     "alias", "cycle"]
            )
        )  # fmt: skip
        field = next((step for step in reversed(path) if isinstance(step, str)), "")
        if op == "plausible":  # a copy: sampled values are shared between examples
            new = copy.deepcopy(draw(plausible(field)))
        elif op == "junk":
            new = draw(JUNK)
        elif op == "delete":
            if path:
                parent = _get(root, path[:-1])
                del parent[path[-1]]
                continue
            new = {}
        elif op == "unknown":
            target = node if isinstance(node, dict) else root
            if isinstance(target, dict) and all(isinstance(key, str) for key in target):
                target[draw(st.sampled_from(["extra", "Id", "id ", "cases2", "", "\x00"]))] = draw(
                    JUNK
                )
                continue
            new = [node, draw(JUNK)]
        elif op == "wrap":
            new = [node]
        elif op == "unwrap":
            if isinstance(node, dict):
                new = [[key, value] for key, value in node.items()]
            elif isinstance(node, list) and node:
                new = node[0]
            else:
                new = draw(JUNK)
        elif op == "nest":
            new = _nested(node, draw(DEPTHS))
        elif op == "alias":  # the same object twice: YAML writes an anchor and an alias
            new = _get(root, draw(st.sampled_from(paths)))
        else:  # cycle: a list or mapping that holds itself (or an ancestor)
            if isinstance(node, list):
                node.append(root if draw(st.booleans()) else node)
                continue
            if isinstance(node, dict):
                node["self"] = node
                continue
            new = draw(JUNK)
        if not path:
            root = new
        else:
            _get(root, path[:-1])[path[-1]] = new
    return root


# -- 1. case files -----------------------------------------------------------------------
SPEC = "004_d4766443270c2fb5.txt Inputs"
BASES = [
    {
        "description": "fuzz base: a literal Gather",
        "cases": [
            {
                "id": "fz-literal",
                "op": "Gather",
                "opset": 13,
                "dtype": "float32",
                "attributes": {"axis": 0},
                "data": [[1.0, 2.0], [3.0, 4.0]],
                "indices": [1, 0],
                "expected": [[3.0, 4.0], [1.0, 2.0]],
                "description": "rows swapped",
                "spec": SPEC,
                "tags": ["values"],
            }
        ],
    },
    {
        "cases": [
            {
                "id": "fz-elements",
                "op": "GatherElements",
                "opset": [11, 13],
                "dtype": ["int32", "float16"],
                "indices_dtype": ["int32", "int64"],
                "attributes": {"axis": 1},
                "data": {"arange": {"shape": [2, 3], "start": -2}},
                "indices": {"random": {"shape": [2, 2], "seed": 7, "low": -3, "high": 2}},
                "expected": "oracle",
                "description": "generators, negative indices",
                "spec": "000_2a6c56bbed5bfbf5.txt Inputs",
                "decisions": ["ge-negative-indices"],
            }
        ],
    },
    {
        "defaults": {"op": "Gather", "opset": 13, "dtype": "int8", "tags": ["indices"]},
        "cases": [
            {
                "id": "fz-error",
                "data": [1, 2],
                "indices": [2],
                "expect_error": "index-out-of-range",
                "description": "one past the end",
                "spec": SPEC,
            },
            {
                "id": "fz-full",
                "attributes": {"axis": 1},
                "data": {"full": {"shape": [0, 3], "value": 5}},
                "indices": {"full": {"shape": [2], "value": 0}},
                "expected": "oracle",
                "expected_shape": [0, 2],
                "description": "a zero-size tensor",
                "spec": SPEC,
            },
        ],
    },
    {
        "cases": [
            {
                "id": "fz-bits",
                "op": "Gather",
                "opset": 13,
                "dtype": "float32",
                "data": {"bits": [2143289345, 2139095040, 0, 2147483648]},
                "indices": [[3, 0]],
                "expected": "oracle",
                "description": "a NaN payload, inf, 0 and -0",
                "spec": SPEC,
            },
            {
                "id": "fz-complex",
                "op": "Gather",
                "opset": 13,
                "dtype": "complex64",
                "indices_dtype": "int32",
                "data": ["1-2j", 3, "inf+nanj"],
                "indices": -1,
                "expected": "oracle",
                "description": "complex, scalar indices",
                "spec": SPEC,
            },
        ],
    },
    {
        "cases": [
            {
                "id": "fz-string",
                "op": "Gather",
                "opset": "all",
                "dtype": "string",
                "data": ["a", "", "é中"],
                "indices": [2, 2],
                "expected": ["é中", "é中"],
                "description": "strings",
                "spec": SPEC,
                "decisions": ["gather1-negative-indices"],
            }
        ],
    },
]

GENERATORS = st.one_of(
    st.fixed_dictionaries({"arange": st.fixed_dictionaries(
        {"shape": st.lists(st.integers(0, 5) | BIG_INTS, max_size=4)},
        optional={"start": st.integers(-5, 5) | BIG_INTS | ODD_FLOATS})}),
    st.fixed_dictionaries({"random": st.fixed_dictionaries(
        {"shape": st.lists(st.integers(0, 4), max_size=4), "seed": st.integers(0, 9) | BIG_INTS},
        optional={"low": st.integers(-5, 5) | BIG_INTS | ODD_FLOATS,
                  "high": st.integers(-5, 5) | BIG_INTS | ODD_FLOATS})}),
    st.fixed_dictionaries({"full": st.fixed_dictionaries(
        {"shape": st.lists(st.integers(0, 4), max_size=33),
         "value": SCALARS | st.lists(st.integers(-2, 2), max_size=3)})}),
    st.fixed_dictionaries({"bits": st.lists(st.integers(0, 2**64) | BIG_INTS
                                            | st.lists(st.integers(0, 2**32), max_size=2),
                                            max_size=4)}),
    # The element limit (full-range random strings there built in ~1.5 s).
    st.sampled_from([{"random": {"shape": [2048, 2048], "seed": 1, "low": 0, "high": 9}},
                     {"random": {"shape": [2048, 2048], "seed": 1}},
                     {"arange": {"shape": [4194305]}},
                     {"full": {"shape": [0, 2**62], "value": 1}},
                     {"full": {"shape": [1] * 33, "value": 1}},
                     {"arange": {"shape": [3]}, "random": {"shape": [3], "seed": 1}}]),
)  # fmt: skip
LITERALS = st.recursive(
    st.integers(-4, 4) | ODD_FLOATS | st.booleans() | ODD_TEXT,
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=12,
)
DTYPE_NAMES = st.sampled_from([*dtypes.NAMES, "all", "float", "Float32", "int4", "float8e4m3fn"])


def _plausible(field: str):
    """Values a person might write for ``field``: right type, wrong value, and near misses."""
    named = {
        "op": st.sampled_from(["Gather", "GatherElements", "gather", "Gather ", "GatherND", ""]),
        "opset": st.sampled_from(
            [1, 11, 13, 12, 0, -1, 23, "all", [1, 13], [13, 13], [], 13.0, "13", 2**63]
        ),
        "dtype": DTYPE_NAMES | st.lists(DTYPE_NAMES, max_size=3),
        "indices_dtype": DTYPE_NAMES | st.lists(DTYPE_NAMES, max_size=3),
        "axis": st.integers(-4, 4) | BIG_INTS | ODD_FLOATS,
        "attributes": st.sampled_from([{}, {"axis": -1}, {"axis": 5}, {"axes": 0}, {"axis": None}]),
        "data": GENERATORS | LITERALS,
        "indices": GENERATORS | LITERALS,
        "expected": st.just("oracle") | LITERALS | st.sampled_from(["Oracle", None]),
        "expected_shape": st.lists(st.integers(0, 4) | BIG_INTS, max_size=5),
        "expect_error": st.sampled_from([*decisions.IDS, "none", "Index-Out-Of-Range"]),
        "decisions": st.lists(st.sampled_from([*decisions.IDS, "made-up"]), max_size=3),
        "id": st.sampled_from(
            ["fz-literal", "a", "A", "-a", "a.b", "a b", "é", "a\n", "", "fz-elements", "x" * 300]
        ),
        "tags": st.lists(st.sampled_from(["values", "Bad Tag", "a\n", ""]), max_size=3),
        "shape": st.lists(st.integers(0, 5) | BIG_INTS | ODD_FLOATS, max_size=5),
        "seed": st.integers(0, 9) | BIG_INTS | ODD_FLOATS,
        "cases": st.lists(
            st.sampled_from(BASES[0]["cases"] + BASES[2]["cases"]), min_size=1, max_size=3
        ),
        "defaults": st.sampled_from([{}, {"op": "GatherElements"}, {"id": "dup"}, BASES[2]]),
    }
    return named.get(field, JUNK)


# Whole hostile documents, written as text: what a dump of a tree cannot produce.
CASE = """\
cases:
  - id: fz-text
    op: Gather
    opset: 13
    dtype: float32
    data: [1.0, 2.0]
    indices: [1]
    expected: oracle
    description: hostile text
    spec: 004_d4766443270c2fb5.txt
"""
LAUGHS = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
    f"*a{i - 1}, *a{i - 1}]\n"
    for i in range(1, 10)
)
SNIPPETS = [
    "",
    "\n\n   \n",
    "# only a comment\n",
    "~\n",
    "[]\n",
    "- cases: []\n",
    "cases:\n",
    "cases: []\n",
    "cases: {}\n",
    "cases: [null]\n",
    "cases: [[]]\n",
    "42\n",
    '"a string"\n',
    LAUGHS,
    LAUGHS + CASE,
    CASE.replace("[1.0, 2.0]", "*a9") + LAUGHS.replace("a0: ", "x0: ", 1),
    "cases:\n  - &c {id: fz-a, op: Gather}\n  - *c\n",
    "cases: &c [*c]\n",
    "base: &b {op: Gather, opset: 13}\n" + CASE,
    CASE.replace("    op: Gather\n", "    <<: {op: Gather}\n"),
    CASE.replace("    op: Gather\n", "    <<: [*nope]\n"),
    CASE.replace("[1.0, 2.0]", "!!binary aGVsbG8="),
    CASE.replace("opset: 13", "opset: 2001-12-14"),
    CASE.replace("opset: 13", "opset: !!float 13"),
    CASE.replace("opset: 13", "opset: !!set {13}"),
    CASE.replace("[1.0, 2.0]", "!!omap [a: 1, b: 2]"),
    CASE.replace("[1.0, 2.0]", "!!python/object/apply:os.system [echo pwned]"),
    CASE.replace("[1.0, 2.0]", "!custom [1.0, 2.0]"),
    CASE.replace("indices: [1]", "indices: {? [1] : 2}"),
    CASE.replace("indices: [1]", "indices: [1]\n    indices: [0]"),
    CASE.replace("id: fz-text", "id: fz-text\n    id: fz-text"),
    "%YAML 1.1\n%TAG ! tag:example.com,2000:\n---\n" + CASE,
    "%YAML 9.9\n---\n" + CASE,
    CASE + "---\n" + CASE,
    CASE + "...\n",
    CASE.replace("  - id", "\t- id"),
    CASE.replace("\n", "\r\n"),
    CASE.replace("\n", "\r"),
    CASE.replace("hostile text", '"' + "\\ud800" + '"'),
    CASE.replace("hostile text", '"\\x00\\e\\N\\L"'),
    CASE.replace("hostile text", "x" * 200_000),
    CASE.replace("[1.0, 2.0]", "[" + "1.0, " * 100_000 + "2.0]"),
    CASE.replace("[1.0, 2.0]", "[" * 100 + "1" + "]" * 100),
    CASE.replace("[1.0, 2.0]", "{" + "a: {" * 200 + "}" * 201),
    CASE.replace("[1.0, 2.0]", "- " * 150 + "1"),
    CASE.replace("[1.0, 2.0]", "[1.0, 2.0"),
    CASE.replace("    ", "   ", 1),
    CASE.replace("cases:", "cases: &x"),
    CASE.replace("cases:", "? cases"),
]


@st.composite
def _case_file(draw) -> bytes:
    """A hostile case file's bytes."""
    if draw(st.integers(0, 9)) == 0:
        text = draw(st.sampled_from(SNIPPETS))
    else:
        document = draw(_mutated_tree(draw(st.sampled_from(BASES)), _plausible))
        style = draw(st.sampled_from(["block", "flow", "json"]))
        try:
            if style == "json":
                text = json.dumps(document, ensure_ascii=draw(st.booleans()))
            else:
                text = yaml.safe_dump(
                    document,
                    allow_unicode=draw(st.booleans()),
                    default_flow_style=style == "flow",
                    sort_keys=False,
                    width=draw(st.sampled_from([80, 10**6])),
                )
        except (RecursionError, ValueError):  # a cycle JSON refuses, a depth neither writes
            try:
                text = yaml.safe_dump(document, default_flow_style=True)
            except RecursionError:
                text = CASE.replace("[1.0, 2.0]", "[" * 5000 + "1" + "]" * 5000)
    content = text.encode("utf-8", errors="surrogatepass")  # raw surrogates: not UTF-8
    broken = draw(st.sampled_from(["none"] * 6 + ["cut", "splice", "encoding", "bom", "binary"]))
    if broken == "cut":
        content = content[: draw(st.integers(0, len(content)))]
    elif broken == "splice":
        at = draw(st.integers(0, len(content)))
        content = content[:at] + draw(st.binary(min_size=1, max_size=8)) + content[at:]
    elif broken == "encoding":
        content = text.encode(draw(st.sampled_from(["utf-16", "utf-32", "latin-1", "cp1252"])),
                              errors="replace")  # fmt: skip
    elif broken == "bom":
        content = b"\xef\xbb\xbf" + content
    elif broken == "binary":
        content = draw(st.binary(max_size=64))
    return content


def _first_id(content: bytes) -> str:
    """The case-file id an ``oracle`` command asks for (the first case's, if it reads)."""
    try:
        return str(yaml.safe_load(content)["cases"][0]["id"])
    except Exception:
        return "fz-literal"


@pytest.mark.parametrize("base", range(len(BASES)))
def test_the_unmutated_bases_are_valid(tmp_path, base):
    path = tmp_path / "base.yaml"
    path.write_text(yaml.safe_dump(BASES[base], sort_keys=False), encoding="utf-8")
    code, out, err = _cli("cases", "validate", "--check-models", str(path))
    assert code == 0, err
    assert "all cases agree with the oracle" in out


MALFORMED = -2  # seen: exit 2 for a file that does not load (not one whose case disagrees)


def test_fuzzed_case_files(tmp_path):
    """Every hostile case file: ``cases validate --check-models`` exits 0 (all
    agree, or are not checked: over the memory guard) or 2 (a malformed file,
    named with its line; or FAILED: a case whose written expectation disagrees
    with the oracle, which a mutated ``expected`` or ``expect_error`` makes:
    MEANING[2] of exits.py), and ``oracle``
    0 or 2 (its documented codes); never a traceback, in bounded time and memory.
    Then one real process reads every file at once (all problems of all files)."""
    folder = tmp_path / "cases"
    folder.mkdir()
    seen: dict[Path, int] = {}
    outcomes: Counter = Counter()
    slowest: list = [0.0, ""]  # seconds, file

    @_settings(ci=300)
    @given(_case_file())
    def check(content: bytes) -> None:
        path = folder / f"case-{len(seen):04d}.yaml"
        path.write_bytes(content)
        started = time.monotonic()
        code, out, err = _cli("cases", "validate", "--check-models", str(path))
        slowest[:] = max(slowest, [time.monotonic() - started, path.name])
        _no_crash(code, err, {0, 2}, content[:300])
        loaded = "nothing was run" not in err
        if code == 2:
            assert err.startswith(str(path)), err[:500]  # file:line: field: message
            assert not loaded or "FAILED:" in err, err[:500]  # a case disagrees
        else:  # every case agrees, or is not checked (over the memory guard)
            assert "cases agree with the oracle" in out
        seen[path] = code if loaded else MALFORMED
        outcomes[f"validate {code}{'' if loaded else ' (malformed)'}"] += 1
        if loaded:
            shown, _, err = _cli("oracle", _first_id(content), "--cases", str(path))
            _no_crash(shown, err, {0, 2}, content[:300])
            outcomes[f"oracle {shown}"] += 1

    check()
    print(f"\ncase files: {len(seen)} generated; {dict(sorted(outcomes.items()))}; slowest "
          f"validate {slowest[0]:.1f} s ({slowest[1]})")  # fmt: skip
    # One real process, every file: exit 2 (some are malformed), each malformed
    # file named, within the process's time and memory limits.
    done, seconds, peak = _process("cases", "validate", "--check-models", str(folder))
    _no_crash(done.returncode, done.stderr, {2}, "every generated file at once")
    for path, code in seen.items():
        if code == MALFORMED:
            assert f"{path}:" in done.stderr or f"{path} " in done.stderr, path
    assert peak < PROCESS_MEMORY // 2, f"{peak >> 20} MiB"
    print(f"one process over all: {seconds:.1f} s, peak RSS {peak >> 20} MiB")


# -- 2. run folders ----------------------------------------------------------------------
SMALL = """\
cases:
  - id: fz-float
    op: Gather
    opset: 13
    dtype: float32
    attributes: {axis: 0}
    data: [1.0, 2.0, 3.0]
    indices: [2, 0]
    expected: [3.0, 1.0]
    description: conforms everywhere
    spec: 004_d4766443270c2fb5.txt Inputs
  - id: fz-complex
    op: Gather
    opset: 13
    dtype: complex64
    data: [1, 2]
    indices: [1]
    expected: oracle
    description: ONNX Runtime refuses complex (a known discrepancy)
    spec: 004_d4766443270c2fb5.txt Inputs
  - id: fz-index
    op: Gather
    opset: 13
    dtype: int32
    data: [1, 2]
    indices: [5]
    expect_error: index-out-of-range
    description: both refuse
    spec: 004_d4766443270c2fb5.txt Inputs
  - id: fz-strings
    op: Gather
    opset: 13
    dtype: string
    attributes: {axis: 1}
    data: {random: {shape: [2, 3, 2], seed: 101}}
    indices: {random: {shape: [2, 2], seed: 102, low: 0, high: 2}}
    expected: oracle
    description: ONNX Runtime empties strings (a known family, with a reproducer)
    spec: 004_d4766443270c2fb5.txt Inputs
"""


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> Path:
    """A real ONNX Runtime run of four small cases in every variant: pass,
    rejected (known), both_rejected and value_mismatch (known); its gate passes."""
    root = tmp_path_factory.mktemp("fuzz-run")
    (root / "small.yaml").write_text(SMALL, encoding="utf-8")
    out = root / "run"
    done, _, _ = _process("run", "--runtime", "onnxruntime", "--cases", str(root / "small.yaml"),
                          "--out", str(out), "--no-progress", "-j", "1", "--gate")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return out


FILES = (records.RESULTS, records.HEADER, records.SUMMARY, records.GROUPS, records.GATE)
RECORD_FIELDS = st.sampled_from(
    ["case_id", "base_id", "run_id", "op", "opset", "runtime", "variant", "kind", "message",
     "dtype", "indices_dtype", "axis", "data_shape", "indices_shape", "source", "expected",
     "disputed", "features", "load_ms", "run_ms", "cached", "stage", "differing", "elements",
     "positions", "expected_values", "actual_values", "explained_by", "harness_error", "note"]
)  # fmt: skip


ODD_NAMES = ODD_TEXT.filter(bool) | st.text(min_size=1, max_size=8)
SHAPES = st.lists(st.integers(0, 5) | BIG_INTS.filter(lambda n: n >= 0), max_size=5)
TENSORS = st.fixed_dictionaries(
    {"dtype": DTYPE_NAMES, "shape": SHAPES},
    optional={"values": LITERALS | st.lists(st.lists(ODD_TEXT | ODD_FLOATS, max_size=3),
                                             max_size=3),
              "npz": ODD_TEXT},
)  # fmt: skip


def _plausible_run_value(field: str):
    """Values for a field of a run folder's files: mostly of the right type and
    odd (markup, control characters, huge numbers, names no run writes), some
    of another type."""
    texts = ODD_TEXT | st.text(max_size=20)
    named = {
        "kind": st.sampled_from([*KINDS, "PASS", "", "sort_of"]),
        "runtime": st.sampled_from(["onnxruntime", "openvino", "reference", "onnxruntime:1thread",
                                    "", "ONNXRUNTIME"]) | ODD_NAMES,
        "variant": st.sampled_from(["static", "dynamic", "both_initializers", "other"]) | ODD_NAMES,
        "op": st.sampled_from(["Gather", "GatherElements", "Sort"]) | ODD_NAMES,
        "case_id": ODD_NAMES, "base_id": ODD_NAMES, "group": ODD_NAMES, "where": texts,
        "source": st.sampled_from(["<generated> fuzz", "<generated>", "small.yaml:1"]) | texts,
        "message": texts, "reason": texts, "note": texts, "signal": texts | st.none(),
        "stage": st.sampled_from(["load", "run", ""]) | texts,
        "upstream": st.sampled_from(["javascript:alert(1)", "https://example.org/1"]) | texts,
        "dtype": DTYPE_NAMES, "indices_dtype": DTYPE_NAMES | st.none(),
        "opset": st.sampled_from([1, 11, 13, 0, -1, 2**63, 13.0, "13", True]),
        "axis": st.integers(-3, 3) | BIG_INTS | st.none(),
        "run_id": st.sampled_from(["0123456789abcdef", "", None, 5]),
        "records": BIG_INTS | st.sampled_from([20, 19, 21, 20.0, "20", True]),
        "count": BIG_INTS, "new": BIG_INTS, "differing": BIG_INTS, "elements": BIG_INTS,
        "runs": BIG_INTS, "harness_errors": st.sampled_from([0, 1, -1, True, "0"]),
        "load_ms": ODD_FLOATS | st.none(), "run_ms": ODD_FLOATS | st.none(),
        "cached": st.booleans() | st.none(), "harness_error": st.booleans(),
        "interrupted": st.booleans(), "error": texts | st.none(),
        "counts": st.sampled_from([{}, {"onnxruntime": {"pass": 20}},
                                   {"onnxruntime": {"pass": 5, "rejected": 5, "both_rejected": 5,
                                                    "value_mismatch": 5}, "openvino": {}},
                                   {"onnxruntime": []}, []]),
        "features": st.lists(st.sampled_from(["negative", "block_copy", "made_up"]) | ODD_TEXT,
                             max_size=3),
        "disputed": st.lists(st.sampled_from(list(decisions.IDS)) | ODD_TEXT, max_size=3),
        "explained_by": st.lists(st.sampled_from(["strings-emptied", "int64-low32"]) | ODD_TEXT,
                                 max_size=2),
        "expected": st.none() | st.fixed_dictionaries({"dtype": DTYPE_NAMES, "shape": SHAPES})
                    | st.fixed_dictionaries({"violation": ODD_NAMES}),
        "positions": st.lists(st.lists(st.integers(0, 3) | BIG_INTS.filter(lambda n: n >= 0),
                                       max_size=4), max_size=12),
        "expected_values": st.lists(texts, max_size=12),
        "actual_values": st.lists(texts, max_size=12),
        "actual": st.fixed_dictionaries({"dtype": DTYPE_NAMES, "shape": SHAPES,
                                         "values": st.lists(texts, max_size=20),
                                         "elements": BIG_INTS.filter(lambda n: n >= 0)}),
        "data": TENSORS, "indices": TENSORS, "values": LITERALS,
        "new_results": st.lists(st.lists(ODD_NAMES, min_size=2, max_size=2), max_size=3),
        "conforming_now": st.lists(texts, max_size=3),
        "unobserved": st.lists(texts, max_size=2),
        "cpu_flags": st.lists(st.sampled_from(["avx2", "avx512_bf16"]) | ODD_TEXT, max_size=3),
        "version": st.sampled_from(["1.31.1", "1.32.0", "", "not a version", "9" * 30, "1.x"])
                   | texts | st.none(),
        "profile": st.sampled_from(["default", "1thread", "made-up"]) | st.none(),
        "adapter": st.sampled_from(["onnxruntime", "openvino", "reference", "os:system",
                                    "no_such.module:Class"]) | st.none(),
    }  # fmt: skip
    if field.endswith("shape"):
        return SHAPES
    return named.get(field, JUNK)


@st.composite
def _json_mutant(draw, content):
    """A JSON file's content mutated (1-3 changes), or other bytes altogether."""
    how = draw(st.sampled_from(["tree"] * 14 + ["gone", "folder", "garbage", "list", "cut", "deep",
                                                 "huge-int"]))  # fmt: skip
    if how == "gone":
        return None
    if how == "folder":
        return "folder"
    text = json.dumps(content)
    if how == "garbage":
        return draw(st.binary(max_size=40))
    if how == "list":
        return json.dumps([content]).encode()
    if how == "cut":
        return text.encode()[: draw(st.integers(0, len(text) - 1))]
    if how == "deep":
        return text.replace("{", "{" + '"deep": ' + "[" * 5000 + "]" * 5000 + ", ", 1).encode()
    if how == "huge-int":
        return text.replace("{", '{"n": ' + "9" * 5000 + ", ", 1).encode()
    mutant = draw(_mutated_tree(content, _plausible_run_value))
    return _dumps(mutant, draw(st.booleans()))


def _dumps(value, ascii_only: bool) -> bytes:
    """JSON as a writer might leave it: NaN and Infinity allowed, raw surrogates
    (not UTF-8) unless ``ascii_only`` escapes them; a cycle or depth JSON cannot
    write gives a placeholder."""
    try:
        text = json.dumps(value, ensure_ascii=ascii_only)
    except (ValueError, RecursionError):
        text = '{"unwritable": true}'
    return text.encode("utf-8", errors="surrogatepass")


@st.composite
def _results_mutant(draw, lines: list[bytes]) -> bytes:
    """results.jsonl with 1-3 line-level changes."""
    lines = list(lines)
    for _ in range(draw(st.sampled_from([1, 1, 2, 3]))):
        if not lines:
            lines.append(draw(st.binary(max_size=20)))
            continue
        at = draw(st.integers(0, len(lines) - 1))
        how = draw(
            st.sampled_from(
                ["field"] * 12 + ["drop", "duplicate", "swap", "cut", "garbage", "blank", "splice",
                                 "crlf", "json-junk", "deep", "huge-int", "nan", "delete-field",
                                 "surrogate", "bom"]
            )
        )  # fmt: skip
        line = lines[at]
        if how == "drop":
            del lines[at]
        elif how == "duplicate":
            lines.insert(at, line)
        elif how == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], lines[at]
        elif how == "cut":
            lines[at] = line[: draw(st.integers(0, max(0, len(line) - 1)))]
        elif how == "garbage":
            lines[at] = draw(st.binary(min_size=1, max_size=40)).replace(b"\n", b"")
        elif how == "blank":
            lines.insert(at, draw(st.sampled_from([b"", b"   ", b"\t", b"\r"])))
        elif how == "splice":
            cut = draw(st.integers(0, len(line)))
            lines[at] = (
                line[:cut]
                + draw(st.binary(min_size=1, max_size=6)).replace(b"\n", b"")
                + (line[cut:])
            )
        elif how == "crlf":
            lines[at] = line + b"\r"
        elif how == "json-junk":
            lines[at] = _dumps(draw(JUNK), draw(st.booleans()))
        elif how == "deep":
            lines[at] = line.replace(b'"message": ', b'"message": ' + b"[" * 5000 + b"]" * 5000
                                     + b', "m": ', 1)  # fmt: skip
        elif how == "huge-int":
            lines[at] = line.replace(b'"opset": 13', b'"opset": ' + b"1" * 5000, 1)
        elif how == "nan":
            lines[at] = line.replace(b'"opset": 13', b'"opset": NaN', 1).replace(
                b'"load_ms": ', b'"load_ms": -Infinity, "x": ', 1
            )
        elif how == "surrogate":
            lines[at] = line.replace(b'"message": "', b'"message": "\\udc80', 1)
        elif how == "bom":
            lines[at] = b"\xef\xbb\xbf" + line
        else:
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):  # an earlier change broke the line
                continue
            if not isinstance(record, dict):
                continue
            name = draw(RECORD_FIELDS)
            if how == "delete-field":
                record.pop(name, None)
            else:
                typed = draw(st.integers(0, 3)) > 0  # mostly the right type: past the checks
                record[name] = draw(_plausible_run_value(name) if typed else JUNK)
            lines[at] = _dumps(record, draw(st.booleans()))
    ending = draw(st.sampled_from([b"\n", b"\n", b""]))  # no newline: a run killed mid-write
    return b"\n".join(lines) + ending


# -- what a reader must do with a folder, read independently of conformance.engine.records
def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json_object(path: Path) -> tuple[bool, dict | None]:
    """(readable, content): content None when absent; readable False when the
    file is there but not a UTF-8 JSON object (or is a folder)."""
    if not path.exists():
        return True, None
    if path.is_dir():
        return False, None
    try:
        content = json.loads(path.read_bytes().decode("utf-8"))
    except (ValueError, RecursionError):
        return False, None
    return isinstance(content, dict), content if isinstance(content, dict) else None


def _lines(data: bytes) -> list[dict] | None:
    """The records as docs/formats.md defines them, or None when a line is not one
    (a last line without its newline that does not parse is a killed run's: dropped)."""
    raw = data.split(b"\n")
    found = []
    for number, line in enumerate(raw, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            if number == len(raw):
                break
            return None
        if not isinstance(record, dict) or record.get("kind") not in KINDS:
            return None
        if not all(isinstance(record.get(k), str) and record.get(k) for k in records.REQUIRED_TEXT):
            return None
        try:
            json.dumps(record, ensure_ascii=False).encode("utf-8")
        except (UnicodeEncodeError, RecursionError):
            return None
        found.append(record)
    return found


def _counted(found: list[dict]) -> dict:
    """What a summary counts of these records."""
    counts: dict[str, Counter] = {}
    for record in found:
        counts.setdefault(record["runtime"], Counter())[record["kind"]] += 1
    return {
        "records": len(found),
        "counts": {rt: dict(c) for rt, c in counts.items()},
        "discrepancies": sum(r["kind"] in DISCREPANCIES for r in found),
        "harness_errors": sum(bool(r.get("harness_error")) for r in found),
        "groups": Counter(tuple(group_key(r)) for r in found if r["kind"] in DISCREPANCIES),
    }


def _summarised(summary: dict) -> dict | None:
    """What the summary says it counts (None: a field of the wrong shape)."""
    try:
        counts = {
            rt: {kind: n for kind, n in kinds.items() if n != 0}
            for rt, kinds in summary["counts"].items()
        }
        groups = Counter()
        for g in summary["groups"]:
            groups[(g["runtime"], g["kind"], g["op"], g["group"])] += g["records"]
        said = {
            "records": summary["records"],
            "counts": {rt: kinds for rt, kinds in counts.items() if kinds},
            "discrepancies": summary["discrepancies"],
            "harness_errors": summary["harness_errors"],
            "groups": +groups,
        }
    except (KeyError, TypeError, AttributeError):
        return None
    numbers = [said["records"], said["discrepancies"], said["harness_errors"]]
    numbers += [n for kinds in said["counts"].values() for n in kinds.values()]
    numbers += list(said["groups"].values())
    return said if all(map(_whole, numbers)) else None


def _must_refuse(folder: Path) -> tuple[str | None, str | None]:
    """(why every reader must refuse the folder, why the gate must), each None when not.
    A reader: files that are not of one run, or records that are not what the
    summary counts. The gate, besides: a run that did not finish (docs/formats.md)."""
    readable = {name: _json_object(folder / name) for name in (records.HEADER, records.SUMMARY)}
    bad = [name for name, (ok, _) in readable.items() if not ok]
    if bad:
        return f"{bad[0]} is not a JSON object", None
    header, summary = readable[records.HEADER][1] or {}, readable[records.SUMMARY][1]
    results = folder / records.RESULTS
    if not results.is_file():
        return "no results file", None
    found = _lines(results.read_bytes())
    if found is None:
        return "a line that is not a record", None
    said = [header.get("run_id"), *(r.get("run_id") for r in found)]
    if summary is not None:
        said.append(summary.get("run_id"))
    run_ids = {json.dumps(run_id, sort_keys=True) for run_id in said}
    if len(run_ids) > 1 and not (summary is None and header.get("run_id") is None):
        return f"run ids {sorted(run_ids)}", None
    if summary is None:
        return None, "no summary: the run did not finish"
    said = _summarised(summary)
    if said is None:
        return "summary.json counts nothing readable", None
    try:
        actual = _counted(found)
    except (TypeError, ValueError):  # a field the group of a record is made of is not text
        return "a record without a group", None
    actual["groups"] = +actual["groups"]
    if said != actual:
        return f"summary says {said}, records are {actual}", None
    for flag in ("interrupted", "harness_errors", "case_problems", "error"):
        if summary.get(flag):
            return None, f"summary: {flag}"
    return None, None


@st.composite
def _run_mutant(draw, contents: dict[str, bytes]) -> dict[str, bytes | str | None]:
    """New contents for some of the run's files (None: delete it; "folder": a folder there)."""
    changed: dict[str, bytes | str | None] = {}
    files = draw(st.sampled_from([1, 1, 1, 2, 3]))
    for name in draw(st.lists(st.sampled_from(FILES), min_size=files, max_size=files, unique=True)):
        if name == records.RESULTS:
            changed[name] = draw(_results_mutant(contents[name].split(b"\n")[:-1]))
        else:
            changed[name] = draw(_json_mutant(json.loads(contents[name])))
    if records.RESULTS in changed and records.SUMMARY not in changed and draw(st.booleans()):
        # Another run, as it would have been written: odd records, a summary that
        # counts them. It must be read (not refused for its counts): gate 0 or 1.
        changed[records.SUMMARY] = _summary_of(contents[records.SUMMARY],
                                               changed[records.RESULTS])  # fmt: skip
    return changed


def _summary_of(summary: bytes, results: bytes) -> bytes:
    """``summary`` counting the records of ``results`` (unchanged if they do not read)."""
    found = _lines(results)
    if found is None:
        return summary
    try:
        count = _counted(found)
    except (TypeError, ValueError):  # a field group_key cannot read: refused anyway
        return summary
    groups = [dict(zip(("runtime", "kind", "op", "group"), key, strict=True), records=n)
              for key, n in sorted(count.pop("groups").items(), key=repr)]  # fmt: skip
    return _dumps({**json.loads(summary), **count, "groups": groups}, True)


def _write(folder: Path, changed: dict) -> None:
    for name, content in changed.items():
        path = folder / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        if content == "folder":
            path.mkdir()
        elif content is not None:
            path.write_bytes(content)


# A link a run folder's text could make live: only http(s) and relative links are ours.
LIVE_LINK = re.compile(r"""href\s*=\s*["']?\s*(?!https?:|\.\.?/|#)[a-z][a-z0-9+.-]*:""", re.I)


def test_fuzzed_run_folders(real_run, tmp_path):
    """Every mutant of a real run folder: ``gate`` 0/1/2, ``report`` 0/2, ``diff``
    0/1/2 (exits.MEANING), never a traceback; 2 from all three when its files are
    not of one run or its records are not what its summary counts, and 2 from
    the gate when the run did not finish: never a false PASS. A report that
    succeeds counts every record there is (no result lost)."""
    contents = {name: (real_run / name).read_bytes() for name in FILES}
    original = _lines(contents[records.RESULTS])
    assert _must_refuse(real_run) == (None, None) and len(original) == 20
    outcomes: Counter = Counter()

    @_settings(ci=250)
    @given(_run_mutant(contents))
    def check(changed) -> None:
        folder = Path(tempfile.mkdtemp(dir=tmp_path))
        try:
            run = folder / "run"
            shutil.copytree(real_run, run)
            _write(run, changed)
            refuse, gate_refuses = _must_refuse(run)
            what = (sorted(changed), refuse or gate_refuses)
            code, out, err = _cli("gate", str(run))
            _no_crash(code, err, {0, 1, 2}, what)
            if refuse or gate_refuses:
                assert code == 2, ("false verdict", what, out[-1000:])
            shown, out, err = _cli("report", str(run), "-o", str(folder / "r.html"),
                                   "--junit", str(folder / "j.xml"),
                                   "--json", str(folder / "r.json"))  # fmt: skip
            _no_crash(shown, err, {0, 2}, what)
            if refuse:
                assert shown == 2, ("read a folder it must refuse", what, out[-500:])
            if shown == 0:
                read = _lines((run / records.RESULTS).read_bytes())
                assert f": {len(read)} results" in out, (out, len(read))
                page = (folder / "r.html").read_text(encoding="utf-8")
                assert not LIVE_LINK.search(page), LIVE_LINK.search(page).group()
            differs, out, err = _cli("diff", str(real_run), str(run), "-o", str(folder / "d.html"))
            _no_crash(differs, err, {0, 1, 2}, what)
            if refuse:
                assert differs == 2, ("compared a folder it must refuse", what, out[-500:])
            outcomes[f"gate {code} report {shown} diff {differs}"] += 1
            outcomes[
                "must refuse" if refuse else "gate must refuse" if gate_refuses else "may"
            ] += 1
        finally:
            shutil.rmtree(folder)

    check()  # the pages' templates are compiled once per process (render._environment)
    print(f"\nrun folders: {dict(sorted(outcomes.items()))}")


def test_a_few_mutants_end_to_end(real_run, tmp_path):
    """The same readers as real processes under a memory limit, on mutants each
    of which was once read (a hidden discrepancy passed the gate, a deep line or a
    summary of 100 000 digits was "internal error", a folder without its header
    was held to nothing): exit 2 from each, no traceback, bounded time and memory."""
    lines = (real_run / records.RESULTS).read_bytes().split(b"\n")[:-1]
    at = next(i for i, line in enumerate(lines) if b'"kind": "rejected"' in line)
    hidden = lines[at].replace(b'"kind": "rejected"', b'"kind": "pass"')  # a known discrepancy
    mutants = {
        "kind hidden": {records.RESULTS: b"\n".join([*lines[:at], hidden, *lines[at + 1 :]])
                        + b"\n"},
        "deep line": {records.RESULTS: b"\n".join(lines) + b'\n{"a": ' + b"[" * 100_000 + b"\n"},
        "huge number": {records.SUMMARY: b'{"records": ' + b"9" * 100_000 + b"}"},
        "no header": {records.HEADER: None},
    }  # fmt: skip
    for name, changed in mutants.items():
        run = tmp_path / name.replace(" ", "-")
        shutil.copytree(real_run, run)
        _write(run, changed)
        assert _must_refuse(run)[0], name  # each must be refused by every reader
        for args in (
            ("gate", str(run)),
            ("report", str(run), "-o", str(tmp_path / "r.html")),
            ("diff", str(real_run), str(run), "-o", str(tmp_path / "d.html")),
        ):
            done, _, peak = _process(*args)
            _no_crash(done.returncode, done.stderr, {2}, (name, args[0]))
            assert peak < READER_MEMORY, (name, args[0], peak >> 20, "MiB")
