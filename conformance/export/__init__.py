"""``conformance export``: the corpus as ONNX backend test data (docs/export.md).

For every (case, variant) whose oracle verdict is an output, a test folder
in the layout every backend test runner reads::

    OUT_DIR/node/test_<name>/model.onnx
    OUT_DIR/node/test_<name>/test_data_set_0/input_<j>.pb   (j from 0, graph-input order)
    OUT_DIR/node/test_<name>/test_data_set_0/output_0.pb

``OUT_DIR/manifest.json`` (docs/schemas/manifest.schema.json) says
what each test is, and lists the cases whose verdict is an error (the
layout has no "must fail"); ``OUT_DIR/expected-failures/<runtime>/`` holds
each baselined runtime's known discrepancies in its runners' own forms
(:mod:`.runners`), decided from the baselines as the gate matches them
(:mod:`.failures`). Names: :mod:`.names`; the folder's writing: :mod:`.folder`.

Where it sits: above the engine (the ONNX models, :mod:`conformance.engine.models`)
and the gate (the baseline matching), beside the report; only the command
line and tests import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from onnx import numpy_helper

from conformance import __version__, shipped
from conformance.cases.case import Case
from conformance.cases.check import DEFAULT_CASE_MEMORY
from conformance.engine import files, models
from conformance.export import failures, folder, pipelines, runners
from conformance.export.selection import ExportError, NotExported, Test, select
from conformance.gate import baseline

__all__ = ["ExportError", "ExportSummary", "export"]

FORMAT = 1  # the manifest's format: bump when a field changes meaning or goes away
DATA_SET = "test_data_set_0"
_ByConfig = dict[
    failures.Configuration, list[failures.ExpectedFailure]
]  # a runtime's known failures


@dataclass
class ExportSummary:
    """What an export wrote."""

    out: Path
    tests: int
    cases: int  # cases with at least one test
    refused: list[NotExported]
    bytes: int  # of every file of OUT_DIR
    failure_files: dict[str, list[str]] = field(default_factory=dict)  # runtime -> files
    known: dict[str, dict[str, int]] = field(default_factory=dict)  # runtime -> status -> tests


def _baselines(known: baseline.BaselineFolders) -> dict[str, tuple[list[Path], list, list]]:
    """Baseline name -> (its files, entries, observed), over every folder."""
    found: dict[str, tuple[list[Path], list, list]] = {}
    for path in sorted({p for f in known if f.is_dir() for p in f.glob("*.yaml")}):
        paths, entries, observed = found.setdefault(path.stem, ([], [], []))
        paths.append(path)
        read, seen = baseline.load_observed(path)
        entries.extend(read)
        observed.extend(seen)
    return found


def _shown(path: Path) -> str:
    """A baseline or case file as the export names it: ``shipped/<name>.yaml``
    for the shipped baselines, ``shipped/<folder>/<name>.yaml`` for the shipped
    corpus (the same on every machine), else the path as given."""
    for root in (shipped.baselines(), shipped.corpus()):
        try:
            return f"{shipped.WORD}/{Path(path).resolve().relative_to(root.resolve()).as_posix()}"
        except (OSError, ValueError):
            continue
    return Path(path).as_posix()


def _where(path: Path, line: int) -> str:
    return f"{_shown(path)}:{line}"


def _write_test(root: Path, test: Test) -> int:
    """The test's folder; the bytes written."""
    case = test.case
    model = models.build_for_case(case, test.variant)
    fed = models.feeds(case.data, case.indices, test.variant)
    inputs = [value.name for value in model.graph.input]
    assert inputs == list(fed), (inputs, list(fed))  # graph-input order is the feeds' order
    folder_path = root / "node" / test.name
    written = [(folder_path / "model.onnx", model.SerializeToString())]
    for j, name in enumerate(inputs):
        tensor = numpy_helper.from_array(fed[name], name)
        written.append((folder_path / DATA_SET / f"input_{j}.pb", tensor.SerializeToString()))
    output = numpy_helper.from_array(test.output, model.graph.output[0].name)
    written.append((folder_path / DATA_SET / "output_0.pb", output.SerializeToString()))
    folder_path.mkdir()  # node/ is made once, before the first test
    (folder_path / DATA_SET).mkdir()
    for path, data in written:
        files.write_new(path, data)  # the temporary folder's rename is the atomic step
    return sum(len(data) for _, data in written)


def _test_entry(test: Test, inputs: list[str], known: list[dict], marks: tuple[str, ...]) -> dict:
    """``marks``: the tolerance_blind marks of the runners' importers that
    change its values (:mod:`.pipelines`)."""
    case, blind = test.case, test.blind + marks
    return {
        "name": test.name,
        "case_id": case.id,
        "base_id": case.base_id,
        "variant": test.variant,
        "op": case.op,
        "opset": case.opset,
        "axis": case.axis,
        "dtype": case.dtype,
        "indices_dtype": case.indices_dtype,
        "inputs": inputs,
        "output": {"dtype": case.dtype, "shape": list(test.output.shape)},
        "clause": case.spec or None,
        "decisions": list(case.decisions),
        "disputed": list(test.verdict.disputed),
        "source": _where(case.source.path, case.source.line),
        "tolerance_blind": list(blind),
        "needs_bit_exactness": bool(blind),
        "known": known,
    }


def _refused_entry(item: NotExported) -> dict:
    case = item.case
    return {
        "case_id": case.id,
        "op": case.op,
        "opset": case.opset,
        "dtype": case.dtype,
        "indices_dtype": case.indices_dtype,
        "clause": item.clause,
        "spec": case.spec or None,
        "decisions": list(case.decisions),
        "source": _where(case.source.path, case.source.line),
        "reason": item.reason,
    }


def export(
    out: Path,
    cases: list[Case],
    corpus: dict,
    variants: tuple[str, ...] = models.VARIANTS,
    known: baseline.BaselineFolders | None = None,
    force: bool = False,
    pattern: str | None = None,
    case_memory: int | None = None,
) -> ExportSummary:
    """Write the export of ``cases`` to ``out`` (see the module docstring).
    ExportError (exit 2) when it cannot: an OUT_DIR it may not replace, no
    test to write, fewer tests written than selected."""
    out = Path(out)
    known = baseline.default_folder() if known is None else known
    tests, refused = select(cases, tuple(variants), case_memory or DEFAULT_CASE_MEMORY)
    if not tests:
        raise ExportError(
            f"{out}: nothing to export: none of the {len(cases)} cases selected has an output "
            "as its verdict (an export without tests would pass any runner silently)"
        )
    baselines = _baselines(known)
    known_of: dict[str, list[dict]] = {test.name: [] for test in tests}
    by_runtime: dict[str, tuple[list[Path], _ByConfig]] = {}
    for runtime, (paths, entries, observed) in baselines.items():
        by_config: _ByConfig = {}
        for config in failures.configurations(runtime, observed):
            by_config[config] = failures.classify(tests, entries, config)
            for item in by_config[config]:
                known_of[item.test.name].append(
                    {
                        "runtime": runtime,
                        "profile": config.profile,
                        "status": item.status,
                        "outcomes": list(item.outcomes),
                        "entries": [_where(entry.path, entry.line) for entry in item.entries],
                    }
                )
        by_runtime[runtime] = (paths, by_config)
    summary = ExportSummary(out, 0, len({t.case.id for t in tests}), refused, 0)

    def fill(root: Path) -> None:
        (root / "node").mkdir()
        for test in tests:
            _write_test(root, test)
        summary.tests = sum(1 for p in (root / "node").iterdir() if (p / "model.onnx").is_file())
        if summary.tests < len(tests):
            raise ExportError(
                f"{out}: {summary.tests} test folders written, {len(tests)} selected: "
                "nothing was put in place"
            )
        # what each runner's pipeline makes of the folders as written (docs/export.md)
        names = [test.name for test in tests]
        seen = {r: pipelines.observe(p, root, names) for r, p in pipelines.PIPELINES.items()}
        entries = []
        for test in tests:
            fed = models.feeds(test.case.data, test.case.indices, test.variant)
            marks = tuple(
                pipelines.PIPELINES[runtime].importer.bits_spot
                for runtime, of_test in seen.items()
                if of_test[test.name].changed
            )
            entries.append(_test_entry(test, list(fed), known_of[test.name], marks))
        failure_section = {}
        for runtime, (paths, by_config) in by_runtime.items():
            sources = ", ".join(_shown(p) for p in paths)
            written = runners.files(runtime, tests, by_config, sources, seen.get(runtime))
            relative = []
            for name, text in written.items():
                path = root / "expected-failures" / runtime / name
                files.write_text(path, text)
                relative.append(path.relative_to(root).as_posix())
            statuses = {failures.FAILS: 0, failures.MAY_FAIL: 0}
            for known_list in by_config.values():
                for item in known_list:
                    statuses[item.status] += 1
            summary.failure_files[runtime] = relative
            summary.known[runtime] = statuses
            failure_section[runtime] = {
                "baselines": [_shown(p) for p in paths],
                "configurations": [
                    {
                        "profile": config.profile,
                        "targets": [
                            {"version": t.version, "cpu_flags": sorted(t.cpu_flags or ())}
                            for t in config.targets
                        ],
                        "fails": sum(k.status == failures.FAILS for k in known_list),
                        "may_fail": sum(k.status == failures.MAY_FAIL for k in known_list),
                    }
                    for config, known_list in by_config.items()
                ],
                "files": relative,
            }
        manifest = {
            "tool": folder.TOOL,
            "format": FORMAT,
            "version": __version__,
            "corpus": corpus,
            "selection": {"pattern": pattern, "variants": list(variants)},
            "counts": {"tests": len(tests), "cases": summary.cases, "not_exported": len(refused)},
            "tests": entries,
            "not_exported": [_refused_entry(item) for item in refused],
            "expected_failures": failure_section,
        }
        files.write_json(root / folder.MANIFEST, manifest)
        summary.bytes = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())

    folder.write_into(out, force, fill)
    return summary
