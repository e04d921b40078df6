"""A fuzz campaign's bugs and coverage (findings.json format 2) as the
terminal and the HTML report show them: bugs first, their classes under them,
the coverage as a line and as a heat map; format 1 as before."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

from conformance.cases.case import GENERATED
from conformance.engine.groups import Signature
from conformance.engine.records import RunFolder
from conformance.fuzz.coverage import Coverage, next_key, round_strategy
from conformance.gate.check import Gate
from conformance.report import render, terminal
from conformance.report.views import coverage as heat_map
from conformance.report.views import fuzz
from conformance.report.views import report as view

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _class(number, runtime, kind, dtype, bug, shape=(0,), message="m"):
    signature = {"runtime": runtime, "op": "Gather", "kind": kind, "dtype": dtype,
                 "variant": "static", "opset": 13, "violation": None,
                 "features": ["empty_data"]}  # fmt: skip
    folder = f"classes/{number:03d}-{runtime}-{kind}"
    return {
        "number": number, "bug": bug, "signature": signature, "id": f"{runtime}-{kind}",
        "hits": 3, "first_found_s": 0.5 * number, "shrunk": number != 2,
        "shrink": {"calls": 4, "steps": 2, "seconds": 1.5},
        "case": {"op": "Gather", "opset": 13, "axis": 0, "variant": "static",
                 "data": {"dtype": dtype, "shape": list(shape), "values": []},
                 "indices": {"dtype": "int64", "shape": [1], "values": [0]}},
        "outcomes": {runtime: {"kind": kind, "message": message}},
        "files": {"repro": f"{folder}/repro.py", "case": f"{folder}/case.yaml"},
    }  # fmt: skip


def _bug(id_, runtime, kind, cause, mechanism, classes, hits, first, store=None):
    return {"id": id_, "runtime": runtime, "kind": kind, "op": "Gather", "cause": cause,
            "mechanism": mechanism, "classes": classes, "hits": hits, "first_found_s": first,
            "reproducer": classes[0], "dtypes": ["float16", "uint16"],
            "variants": ["dynamic", "static"], "shrunk_by": "1/1" if store else None,
            "store": store}  # fmt: skip


def _coverage(rounds: int = 2) -> Coverage:
    """A real coverage: rounds drawn as a campaign draws them."""
    coverage = Coverage(256)
    rng = random.Random(0)
    for number in range(rounds):

        @seed(number)
        @settings(database=None, max_examples=32, phases=[Phase.generate], deadline=None,
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)  # fmt: skip
        @given(round_strategy(coverage, next_key(coverage, rng), 256))
        def count(example):
            coverage.add(example)

        count()
    return coverage


@pytest.fixture(scope="module")
def findings() -> dict:
    classes = [
        _class(1, "openvino", "crash", "float16", "b-1"),
        _class(2, "openvino", "crash", "uint16", "b-1"),
        _class(3, "onnxruntime", "value_mismatch", "float32", "b-2", message="<b>boom</b>"),
        _class(4, "onnxruntime", "rejected", "float32", None),
    ]
    signal = {"by": "signal", "signal": "SIGFPE", "trigger": "empty_data"}
    narrowed = {"by": "explanations", "models": ["int64-low32"]}
    bugs = [
        _bug("b-1", "openvino", "crash", "SIGFPE on empty_data", signal, [1, 2], 6, 0.5, "new"),
        _bug("b-2", "onnxruntime", "value_mismatch", "<script>x</script>", narrowed, [3], 3, 1.5),
    ]
    return {"format": 2, "examples": 64, "elapsed_s": 12.0, "examples_per_s": 5.3,
            "skipped": 0, "classes": classes, "bugs": bugs,
            "coverage": _coverage().to_json()}  # fmt: skip


def _run(folder: Path, findings: dict) -> RunFolder:
    for found in findings["classes"]:
        for relative in found["files"].values():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_text("# a file of the class\n")
    # a result of each runtime, so that the report's filters offer both
    records = [
        {"runtime": runtime, "op": "Gather", "opset": 13, "dtype": "float32", "variant": "static",
         "kind": "pass", "case_id": "fuzz-1", "base_id": "fuzz-1", "data_shape": [1],
         "indices_shape": [1]}
        for runtime in ("onnxruntime", "openvino")
    ]  # fmt: skip
    return RunFolder(folder, {}, records, findings=findings)


# -- the model --------------------------------------------------------------------------
def test_bugs_come_with_their_classes_and_smallest_reproducer(tmp_path, findings):
    report = view.from_runs([_run(tmp_path, findings)], tmp_path / "report.html")
    assert [b.id for b in report.bugs] == ["b-2", "b-1"]  # by runtime: onnxruntime first
    ov = report.bugs[1]
    assert [c["number"] for c in ov.classes] == [1, 2]
    assert ov.reproducer["number"] == 1
    assert ov.reproducer["links"]["repro"] == "./classes/001-openvino-crash/repro.py"
    assert ov.mechanism == "killed by SIGFPE on inputs with empty_data"
    assert (ov.hits, ov.store, ov.shrunk_by) == (6, "new", "1/1")
    assert [c["number"] for c in report.unassigned] == [4]


def test_the_same_bug_on_two_shards_is_one(tmp_path, findings):
    other = json.loads(json.dumps(findings))
    other["bugs"] = [dict(other["bugs"][0], hits=4, first_found_s=0.2, dtypes=["int8"],
                          classes=[2], reproducer=2, shrunk_by=None, store=None)]  # fmt: skip
    other["classes"][1]["case"]["data"]["shape"] = [0]  # a smaller reproducer: no element
    other["classes"][1]["case"]["indices"]["shape"] = [0]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    runs = [_run(tmp_path / "a", findings), _run(tmp_path / "b", other)]
    bugs = view.from_runs(runs, tmp_path / "report.html").bugs
    (ov,) = [b for b in bugs if b.id == "b-1"]
    assert (ov.hits, ov.first_found_s) == (10, 0.2)
    assert ov.dtypes == ["float16", "int8", "uint16"]
    assert len(ov.classes) == 3 and ov.reproducer["links"]["repro"].startswith("./b/")
    assert (ov.store, ov.shrunk_by) == ("new", "1/1")


def test_a_gated_report_puts_the_bugs_with_new_results_first_and_badges_them(tmp_path, findings):
    run = _run(tmp_path, findings)
    for number in (1, 3):  # a result of the crash and of the value mismatch
        found = findings["classes"][number - 1]
        run.records.append({**found["signature"], "case_id": f"fuzz-{number}",
                            "base_id": f"fuzz-{number}", "source": GENERATED,
                            "data_shape": [0], "indices_shape": [1], "message": ""})  # fmt: skip
    marks = [
        {**Signature.from_json(findings["classes"][number - 1]["signature"]).key._asdict(),
         "count": 1, "new": new, "known": [] if new else [{"where": "known/x.yaml:3"}]}
        for number, new in ((1, 1), (3, 0))
    ]  # fmt: skip
    run.gate = {"groups": marks, "baseline": "known", "entries": [], "passed": False,
                "allow_fixed": False, "fixed": [], "new": [{**marks[0], "count": 1}]}  # fmt: skip
    report = view.from_runs([run], tmp_path / "report.html")
    assert [(b.id, b.new) for b in report.bugs] == [("b-1", 1), ("b-2", 0)]  # new first
    html = render.render(report)
    assert "NEW: 1 result not in the baseline" in html and "in the baseline</span>" in html
    ungated = view.from_runs([_run(tmp_path, findings)], tmp_path / "report.html")
    assert [(b.id, b.new) for b in ungated.bugs] == [("b-2", None), ("b-1", None)]


@pytest.mark.parametrize(
    "mechanism,text",
    [
        ({"by": "signal", "signal": "SIGSEGV", "trigger": "no degenerate feature"},
         "killed by SIGSEGV on inputs with no degenerate feature"),
        ({"by": "explanations", "models": ["float64-as-float32"]},
         "outputs explained exactly by the explanation (or its family) float64-as-float32"),
        ({"by": "signal", "signal": "SIGABRT", "trigger": "panic in core/gather.rs"},
         "killed by SIGABRT after a Rust panic in core/gather.rs"),
        ({"by": "dtype", "dtype": "complex64"},
         "refuses valid inputs of data type complex64"),
        ({"by": "unexplained", "features": ["negative", "block_copy"]},
         "wrong values no explanation fits, on inputs with negative, block_copy"),
        ({"by": "message", "message": "Unsupported data type COMPLEXN"},
         "refused with: Unsupported data type COMPLEXN"),
        ({"by": "clause", "clause": "index-out-of-range"},
         "accepts inputs that break index-out-of-range"),
        ({"by": "trigger", "trigger": "zero_size_axis"}, "on inputs with zero_size_axis"),
        ({"by": "later", "what": 1}, "by: later, what: 1"),
    ],
)  # fmt: skip
def test_each_mechanism_reads_as_a_sentence(mechanism, text):
    assert fuzz.mechanism_text(mechanism) == text


def test_the_heat_map_sums_runs_and_marks_cold_and_meaningless_cells():
    coverage = _coverage(rounds=1)
    content = coverage.to_json()
    heat = heat_map.coverage_view([content, None, content])  # two shards, one without coverage
    assert heat.examples == 2 * coverage.examples
    assert (heat.reached, heat.meaningful) == (content["reached"], content["meaningful"])
    gather = next(part for part in heat.ops if part.op == "Gather")
    assert gather.variants == ["static", "dynamic", "indices_initializer", "data_initializer",
                               "both_initializers"]  # fmt: skip
    grid = {cell.key: cell for _, cells in gather.dtype_rows for cell in cells}
    assert len(grid) == 5 * 16
    for key, cell in grid.items():
        assert cell.count == 2 * coverage.count("dtypes", key)
        assert cell.cold == (cell.count == 0) and cell.meaningful
        assert (cell.level == 0) == (cell.count == 0) and 0 <= cell.level <= heat_map.HEAT_LEVELS
    rows = dict(gather.rows)
    features = dict(rows["features"])
    assert not features["smaller_off_axis"].meaningful  # GatherElements only
    assert features["block_copy"].meaningful
    assert not features["batched"].meaningful and not features["tuple_slices"].meaningful
    tuples = next(part for part in heat.ops if part.op == "GatherND")  # its own features
    nd_features = dict(dict(tuples.rows)["features"])
    assert nd_features["batched"].meaningful and nd_features["tuple_slices"].meaningful
    assert not nd_features["block_copy"].meaningful
    assert len({cell.key for _, cells in tuples.dtype_rows for cell in cells}) == 5 * 16
    assert [name for name, _ in rows["axis length"]] == ["0", "1", "2-63", "64-255", ">=256"]
    assert len(heat.cold) == heat.meaningful - heat.reached
    every = [cell for part in heat.ops for _, cells in part.dtype_rows for cell in cells]
    most = max(cell.count for cell in every)
    assert {cell.level for cell in every if cell.count == most} == {heat_map.HEAT_LEVELS}


def test_format_1_findings_render_as_before(tmp_path, findings):
    old = {"format": 1, "classes": [
        {k: v for k, v in found.items() if k not in ("number", "bug")}
        for found in findings["classes"]
    ]}  # fmt: skip
    report = view.from_runs([_run(tmp_path, old)], tmp_path / "report.html")
    assert report.bugs == [] and report.coverage is None
    html = render.render(report)
    assert 'Fuzz classes (<span class="count" data-count="fuzz">4</span>)' in html
    assert 'class="bug"' not in html and 'id="coverage"' not in html
    assert 'href="./classes/001-openvino-crash/repro.py"' in html


# -- the terminal ------------------------------------------------------------------------
def test_the_campaign_summary_lists_bugs_first_two_lines_each(tmp_path, findings):
    lines = terminal.campaign_lines(findings, 12, tmp_path)
    assert lines[0] == (
        "64 examples in 12 s (5.3 examples/s while fuzzing; 6 s shrinking), 12 results, "
        "2 bugs in 4 discrepancy classes"
    )
    assert lines[1].startswith("bugs by runtime and kind")
    assert re.fullmatch(
        r"  onnxruntime  value_mismatch    Gather          <script>x</script> "
        r"\(1 class, 3 hits, 1\.5 s; float16 uint16\)",
        lines[2],
    )
    assert (
        lines[3]
        == f"      {tmp_path}/classes/003-onnxruntime-value_mismatch/ (case.yaml, repro.py; shrunk)"
    )
    assert lines[4].startswith(
        "  openvino     crash             Gather          SIGFPE on empty_data"
    )
    assert lines[4].endswith("(2 classes, 6 hits, 0.5 s; float16 uint16; new to the store)")
    cover = findings["coverage"]
    reached = f"{cover['reached']} of {cover['meaningful']} cells reached"
    assert lines[6].startswith(f"coverage: {reached} in 64 examples; cold: ")
    assert len(lines) == 7  # no line per class


def test_forty_bugs_fit_a_screen_and_a_hostile_cause_stays_on_its_line(findings):
    many = dict(findings, coverage=None, bugs=[
        dict(findings["bugs"][0], id=f"b-{n}", cause="x" * 400 + "\n\x1b[2J" if n == 7 else "c")
        for n in range(40)
    ])  # fmt: skip
    lines = terminal.campaign_lines(many, 1)
    assert len(lines) == 2 + 2 * 40
    assert all("\n" not in line and "\x1b" not in line for line in lines)
    cut = [line for line in lines if "xxx" in line]
    assert len(cut) == 1 and len(cut[0]) <= terminal.BUG_WIDTH
    assert cut[0].endswith("(2 classes, 6 hits, 0.5 s; float16 uint16; new to the store)")
    assert lines[3] == "      classes/001-openvino-crash/ (case.yaml, repro.py; shrunk)"


def test_a_gated_campaign_lists_its_new_bugs_and_counts_the_known_ones(tmp_path, findings):
    crash = findings["classes"][0]
    record = {**crash["signature"], "case_id": "fuzz-9", "base_id": "fuzz-9",
              "source": GENERATED, "data_shape": [0], "indices_shape": [1]}  # fmt: skip
    gate = Gate(1, [record], [record], [], {})
    new = terminal.new_bugs(findings, gate)
    assert new == {"b-1"}  # the crash's group is new; the value mismatch's is covered
    lines = terminal.campaign_lines(findings, 12, tmp_path, new)
    assert lines[1] == "1 bug not in the baseline (classes, hits, first found; dtypes):"
    assert lines[2].startswith("  openvino     crash             Gather          SIGFPE")
    assert lines[3].endswith("/classes/001-openvino-crash/ (case.yaml, repro.py; shrunk)")
    assert lines[4] == (
        "1 bug the baseline knows already (onnxruntime 1): "
        "-v lists them; findings.json and report.html have each"
    )
    assert lines[5].startswith("coverage: ") and len(lines) == 6
    shown = terminal.campaign_lines(findings, 12, tmp_path, new, verbose=True)
    assert shown[5].startswith("  onnxruntime  value_mismatch    Gather          <script>")
    assert shown[6].startswith("coverage: ")  # a known bug's reproducer is not shown
    none_new = terminal.campaign_lines(findings, 12, tmp_path, set())
    assert none_new[1].startswith("2 bugs the baseline knows already (onnxruntime 1, openvino 1)")


def test_format_1_findings_list_families(tmp_path, findings):
    old = {k: v for k, v in findings.items() if k not in ("bugs", "coverage")}
    lines = terminal.campaign_lines(old, 12, tmp_path)
    assert lines[0].endswith("12 results, 4 discrepancy classes")
    assert lines[1] == "discrepancy classes by runtime, kind and op:"
    family = [line for line in lines if line.startswith("  openvino     crash")]
    assert len(family) == 1 and "2 classes     6 hits" in family[0]
    assert family[0].endswith(
        f"smallest: {tmp_path}/classes/001-openvino-crash/ (case.yaml, repro.py)"
    )


# -- in a real browser ------------------------------------------------------------------------
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here")
def test_in_a_browser_bugs_come_before_their_classes_and_the_heat_map_counts(tmp_path, findings):
    out = tmp_path / "report.html"
    render.write([_run(tmp_path, findings)], out)

    def dom(address: str) -> str:
        shown = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
             "--v=0", "--dump-dom", address],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert shown.returncode == 0 and "Uncaught" not in shown.stderr, shown.stderr[-2000:]
        return shown.stdout

    page = dom(out.as_uri())
    bugs = [page.index(f'id="bug-{b}"') for b in ("b-2", "b-1")]
    first_class = page.index('<tr class="fuzz"')
    assert bugs[0] < first_class  # the bug list leads; classes sit under their bug...
    for bug in re.findall(r'<div class="bug" id="bug-[^"]+".*?</details>', page, re.S):
        assert bug.index("<h3>") < bug.index("<details") < bug.index('<tr class="fuzz"')
        assert "<details open" not in bug  # ... collapsed
    assert page.index('id="fuzz-unassigned"') > bugs[1] < page.index('id="coverage"')
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "<script>x</script>" not in page
    assert 'data-count="bug">2<' in page  # the report's script counted them
    # The heat map: every dtype cell holds the count the coverage has.
    coverage = Coverage.from_json(findings["coverage"])
    cells = re.findall(
        r'<td class="heat h(\d)( cold)?" data-cell="(Gather(?:Elements)?)\|(\w+)\|(\w+)"[^>]*>'
        r'<span class="heat-count">(\d+)</span></td>',
        page,
    )
    assert len(cells) == 2 * 5 * 16
    for level, cold, op, variant, dtype, count in cells:
        assert int(count) == coverage.count("dtypes", (op, variant, dtype))
        assert bool(cold) == (int(count) == 0) == (level == "0")
    assert re.search(r'<td class="heat h0 na" data-cell="GatherElements\|block_copy"[^>]*>'
                     r'<span class="heat-name">block_copy</span> </td>', page)  # fmt: skip
    assert f"Fuzz coverage: {coverage.reached()} of " in page
    # The filters reach bugs too.
    filtered = dom(out.as_uri() + "#runtime=openvino")
    assert 'data-count="bug">1 of 2 shown<' in filtered
    assert '<div class="bug hidden" id="bug-b-2"' in filtered
