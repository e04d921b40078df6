"""What a fuzz campaign leaves on disk.

Every file here is written whole and atomically
(:func:`conformance.engine.files.write_text`, ``write_bytes``): a reader (or
a campaign killed mid-write) never leaves half a file.

``DIR/findings.json`` (a contract; written atomically after every change)::

    {"format": 1, "seed": N, "time_budget_s": S, "elapsed_s": E,
     "examples": N, "examples_per_s": R, "skipped": N, "runtimes": [...],
     "judged": {runtime: results judged},
     "classes": [
       {"signature": {"runtime", "op", "kind", "dtype", "variant", "opset",
                      "violation", "features"},
        "id": "<slug>", "first_found_s": 1.234, "hits": 17,
        "shrunk": true, "shrink": {"calls", "steps", "seconds"},
        "disputed": [decision ids],
        "case": {"op", "opset", "axis", "variant",
                 "data": {"dtype", "shape", "values"},
                 "indices": {"dtype", "shape", "values"}},
        "expected": {"dtype", "shape", "values"} or {"violation": clause},
        "outcomes": {runtime: {"kind", "message"}},
        "files": {"case", "model", "inputs", "expected", "repro"}}]}

``values`` are nested lists; floats JSON cannot hold (NaN, infinities) are
strings with their bit pattern, e.g. ``"nan (0x7fc00001)"``; complex elements
are ``[real, imaginary]`` pairs. Above :data:`conformance.engine.tensors.MAX_JSON_ELEMENTS` elements
``values`` is left out and ``npz`` names the file (and key) holding the tensor.

Each class also gets ``DIR/classes/<NNN>-<slug>/``: ``case.yaml`` (a case file
ready for ``cases/regressions/``), ``model.onnx``, ``inputs.npz`` (the inputs
the variant feeds, plus ``data`` and ``indices`` in full), ``expected.npz``
(the oracle's output, when the input is valid) and ``repro.py`` (runs the
model on that one runtime, without this package, and prints expected next to
actual).
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import math
import re
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from conformance.adapters import registry
from conformance.cases import writing
from conformance.engine import files, models, records, tensors
from conformance.tables import decisions, dtypes
from conformance.tables.features import FEATURES

if TYPE_CHECKING:
    from conformance.fuzz.findings import Bug, Findings

FORMAT = 2  # 2: bugs, coverage, replay and store; classes gained number and bug
FINDINGS = records.FINDINGS
CLASSES = "classes"


# -- values -------------------------------------------------------------------
# -- one class ----------------------------------------------------------------
def class_dir(found, out_dir: Path) -> Path:
    return out_dir / CLASSES / f"{found.number:03d}-{found.signature.slug}"


def write_class(found, out_dir: Path) -> None:
    """The class's files, for its current example (rewritten after shrinking).
    A file that cannot be written raises an ``OSError`` naming it."""
    folder = class_dir(found, out_dir)
    with _writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
    example, verdict = found.example, found.verdict
    model = models.build(
        example.op, example.opset, example.data, example.indices, example.axis, example.variant
    )
    files.write_bytes(folder / "model.onnx", model.SerializeToString())
    feeds = models.feeds(example.data, example.indices, example.variant)
    _savez(
        folder / "inputs.npz",
        {
            **{f"feed.{k}": v for k, v in feeds.items()},
            "data": example.data,
            "indices": example.indices,
        },
    )
    expected = folder / "expected.npz"
    if verdict.valid:
        _savez(expected, {"output": verdict.output})
    else:
        with _writing(expected):
            expected.unlink(missing_ok=True)
    files.write_text(folder / "case.yaml", case_yaml(found))
    files.write_text(folder / "repro.py", repro_py(found))
    found.described = None  # the findings.json entry is stale
    names = ["case.yaml", "model.onnx", "inputs.npz", "repro.py"]
    if verdict.valid:
        names.append("expected.npz")
    found.files = {name.split(".")[0]: str(folder.relative_to(out_dir) / name) for name in names}


# The template's lines that repro_py fills: the runners' table, each runtime's
# and the class's names.
RUNNERS_LINE = "RUNNERS: dict[str, Callable[[Path, dict[str, np.ndarray]], np.ndarray]] = {}"


def runners_source() -> str:
    """Every built-in runtime's runner, as its adapter file declares it
    (``Runtime.repro``: stand-alone functions), then the table naming them."""
    declared = [runtime for runtime in registry.RUNTIMES if runtime.repro is not None]
    functions = [inspect.getsource(runtime.repro) for runtime in declared if runtime.repro]
    table = [RUNNERS_LINE.removesuffix("{}") + "{"]
    table += [f"    {r.name!r}: {r.repro.__name__}," for r in declared if r.repro]
    return "\n\n".join(functions) + "\n\n" + "\n".join([*table, "}"])


def repro_py(found) -> str:
    """The stand-alone reproducer: the template with the runners of the
    built-in runtimes, and the class's runtime and slug as Python literals
    (``repr`` escapes every control character, so no name can end the string
    or the line)."""
    template = resources.files("conformance.fuzz").joinpath("repro_template.py").read_text()
    return (
        template.replace(RUNNERS_LINE, runners_source(), 1)
        .replace('RUNTIME = ""', f"RUNTIME = {found.signature.runtime!r}", 1)
        .replace('SIGNATURE = ""', f"SIGNATURE = {found.signature.slug!r}", 1)
    )


@contextmanager
def _writing(path: Path):
    """An ``OSError`` in the block names ``path`` (a full disk's write error
    names no file by itself)."""
    try:
        yield
    except OSError as error:
        if error.filename is not None:
            raise
        raise type(error)(error.errno, error.strerror or str(error), str(path)) from None


def _savez(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """np.savez, with bfloat16 stored as its uint16 bits under ``<name>.bfloat16``
    (npz has no bfloat16; a reader would get raw void bytes); made in memory
    and written atomically, as every file written whole."""
    stored: dict[str, np.ndarray] = {}
    for name, array in arrays.items():
        if dtypes.name_of(array) == "bfloat16":
            stored[f"{name}.bfloat16"] = array.view(np.uint16)
        else:
            stored[name] = array
    archive = io.BytesIO()
    # (numpy's stubs: a ** dict might hold allow_pickle; these are tensor names)
    np.savez(archive, **stored)  # type: ignore[arg-type]
    files.write_bytes(path, archive.getvalue())


def case_id(slug: str, limit: int = 120) -> str:
    """The class's case id: fuzz-<slug>, cut to ``limit`` characters with a
    hash of the whole slug, so that two long slugs never give the same id."""
    whole = f"fuzz-{slug}"
    if len(whole) <= limit:
        return whole
    digest = hashlib.sha1(slug.encode()).hexdigest()[:10]
    return f"{whole[: limit - 11]}-{digest}"


def case_yaml(found) -> str:
    example, verdict, signature = found.example, found.verdict, found.signature
    feature_words = ", ".join(signature.features) or "no index features"
    description = files.visible(
        f"found by conformance fuzz: {signature.runtime} {signature.kind} on "
        f"{example.op}-{example.opset} {example.dtype}, {example.variant} model "
        f"({feature_words})"
    )
    entry = writing.entry(
        case_id(signature.slug), description, _spec_clause(example.op, verdict), example.op,
        example.opset, example.dtype, example.indices_dtype, example.axis,
    )  # fmt: skip
    entry["data"] = writing.literal(example.data)
    entry["indices"] = writing.literal(example.indices)
    entry.update(writing.expectation(verdict))
    entry["tags"] = ["regression", "fuzz", f"variant-{example.variant.replace('_', '-')}"]
    # Comment lines: a name with a line break or a control character in it
    # must not end the comment (nor make the file unreadable), so each is
    # shown escaped, as on the terminal.
    header = (
        f"# {files.visible(f'{signature.runtime}: {signature.kind}')} ({signature.slug})\n"
        f"# Reproduces in the {example.variant} model variant; `conformance run` runs all five.\n"
        "# Copy into cases/regressions/ and check with `conformance cases validate`.\n"
    )
    document = {"description": "regression found by conformance fuzz", "cases": [entry]}
    text = writing.dump(document)
    return header + text


def _spec_clause(op: str, verdict) -> str:
    """The clause the case tests: a valid one, the operator's core sentence."""
    if verdict.valid:
        clause = decisions.CORE[op]
    else:
        clause = decisions.get(verdict.violation.clause).clauses[0]
    return f"{clause.document}: {clause.quote}"


# -- findings.json --------------------------------------------------------------
def class_json(found) -> dict:
    """The class's findings.json entry; built once per version of the class
    (a 10 000-element tensor costs milliseconds to nest and encode)."""
    if found.described is None:
        found.described = _describe(found)
    return {**found.described, "hits": found.hits}


def _describe(found) -> dict:
    example, verdict = found.example, found.verdict
    inputs = found.files.get("inputs", "")
    content = {
        "number": found.number,
        "bug": found.bug,
        "signature": found.signature.to_json(),
        "id": found.signature.slug,
        "first_found_s": found.first_found_s,
        "shrunk": found.shrunk,
        "shrink": found.shrink,
        "disputed": list(verdict.disputed),
        "case": {
            "op": example.op,
            "opset": example.opset,
            "axis": example.axis,
            "variant": example.variant,
            "data": tensors.to_json(example.data, f"{inputs}:data"),
            "indices": tensors.to_json(example.indices, f"{inputs}:indices"),
        },
        "expected": (
            tensors.to_json(verdict.output, found.files.get("expected", "") + ":output")
            if verdict.valid
            else {"violation": verdict.violation.clause, "detail": verdict.violation.detail}
        ),
        "outcomes": {
            runtime: {"kind": outcome.kind, "message": outcome.message}
            for runtime, outcome in found.outcomes.items()
        },
        "files": found.files,
    }
    return content


def bug_json(bug: Bug) -> dict:
    """A bug's findings.json entry (and its description in the store)."""
    cause = bug.cause
    return {
        "id": bug.id,
        "runtime": cause.runtime,
        "kind": cause.kind,
        "op": cause.op,
        "cause": cause.text,
        "mechanism": cause.to_json(),
        "classes": list(bug.classes),
        "hits": bug.hits,
        "first_found_s": bug.first_found_s,
        "reproducer": bug.reproducer,
        "dtypes": sorted(bug.dtypes),
        "variants": sorted(bug.variants),
        "shrunk_by": bug.shrunk_by,
        "store": bug.store,
    }


def write_findings(findings: Findings) -> dict:
    """``findings.json``: what a campaign found (:class:`conformance.fuzz.findings.Findings`);
    returns what was written."""
    options = findings.options
    store = options.store
    content = {
        "format": FORMAT,
        "seed": options.seed,
        "time_budget_s": options.time_budget,
        "elapsed_s": round(findings.elapsed(), 3),
        "examples": findings.examples,
        "examples_per_s": round(findings.examples / findings.fuzz_s, 1) if findings.fuzz_s else 0,
        "skipped": findings.skipped,
        "max_elements": options.max_elements,
        "runtimes": findings.runtimes,
        "judged": {rt: findings.judged[rt] for rt in findings.runtimes},
        "features": FEATURES,
        "shard": list(options.shard),
        "store": None if store is None else {
            "location": store.location, "warnings": list(findings.store_warnings),
        },
        "replay": [replayed.to_json() for replayed in findings.replayed],
        "bugs": [bug_json(bug) for bug in findings.bugs.values()],
        "coverage": findings.coverage.to_json(),
        "classes": [class_json(found) for found in findings.classes.values()],
    }  # fmt: skip
    _write_json(options.out_dir / FINDINGS, content)
    return content


def _write_json(path: Path, content: dict) -> None:
    """Indented JSON with each tensor's values, and each coverage table's
    cells, on one line (indenting a 10 000-element list would put each element
    on a line of its own; the 197 cells of a campaign's coverage took 37 kB);
    written atomically, like every JSON file of a run."""
    compact: list[str] = []

    def hide(node):
        if isinstance(node, dict):
            return {
                k: (_placeholder(compact, v) if k in _ONE_LINE else hide(v))
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [hide(v) for v in node]
        return _finite(node)

    text = json.dumps(hide(content), indent=2, ensure_ascii=False, allow_nan=False)
    # One pass over the text (a replace per tensor rescanned it from the start:
    # quadratic, seconds for a campaign's hundreds of classes).
    text = _TOKEN.sub(lambda match: compact[int(match.group(1))], text)
    files.write_text(path, text + "\n")


def _finite(node):
    """A float JSON cannot hold (NaN, an infinity) as the string JavaScript
    writes for it: the campaign computes none (its options are checked, its
    rates never divide by zero), tensors carry theirs as bit patterns, and a
    store entry that holds one is the store's to refuse; the file stays JSON
    whatever comes through."""
    if isinstance(node, float) and not math.isfinite(node):
        return "NaN" if node != node else ("Infinity" if node > 0 else "-Infinity")
    if isinstance(node, list):
        return [_finite(v) for v in node]
    if isinstance(node, dict):
        return {k: _finite(v) for k, v in node.items()}
    return node


def _placeholder(compact: list[str], values) -> str:
    try:  # tensors hold no such float (they write its bits): the list is walked only if one is
        text = json.dumps(values, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(values), ensure_ascii=False, separators=(", ", ": "))
    compact.append(text)
    return _token(len(compact) - 1)


_ONE_LINE = frozenset({"values", "cells"})  # keys whose lists findings.json keeps on one line
_TOKEN = re.compile(r'"\\u0000values(\d+)\\u0000"')  # a token as json.dumps writes it


def _token(number: int) -> str:
    # NUL characters: JSON escapes them, so no message or string value can
    # produce the same text by accident.
    return f"\x00values{number}\x00"
