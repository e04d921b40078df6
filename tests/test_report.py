"""The HTML report: built from real runs, hostile content kept as text, and
checked in a real headless browser (Debian's chromium) when it is installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import conformance_here

LONG = "y" * 500
# Gather on strings along a non-last axis: ONNX Runtime 1.31 gets it wrong, so
# this case is a discrepancy whose inputs and message carry the hostile text.
HOSTILE_CASES = f"""
cases:
  - id: hostile-strings
    op: Gather
    opset: 13
    dtype: string
    attributes: {{axis: 0}}
    data: [["<script>document.title='pwned'</script>",
            "<img src=x onerror=\\"document.body.setAttribute('data-pwned','1')\\">"],
           ["ctl\\u0001\\u001b[31m", "{LONG}"]]
    indices: [1, 0]
    expected: oracle
    description: hostile strings in a string tensor
    spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension of data"
  - id: plain-numbers
    op: Gather
    opset: 13
    dtype: int32
    data: [1, 2, 3]
    indices: [2, 0]
    expected: [3, 1]
    description: a case every runtime passes, so the filters have a second choice
    spec: "004_d4766443270c2fb5.txt: gather entries of the axis dimension of data"
"""


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "hostile.yaml").write_text(HOSTILE_CASES)
    out = folder / "run"
    # Relative paths, as a user types them: records name the case file relative
    # to the run's folder, and a report written from elsewhere must still find it.
    done = conformance_here(
        "run", "--runtime", "onnxruntime", "--cases", "hostile.yaml",
        "--variants", "static", "dynamic", "--out", "run", cwd=folder,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # the ORT string discrepancy
    assert "report:  run/report.html" in done.stdout
    return out


def test_run_writes_a_self_contained_report(hostile_run):
    html = (hostile_run / "report.html").read_text(encoding="utf-8")
    # Offline: no network asset of any kind.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html
    assert html.count("<script") == 1  # the report's own filter script, nothing else
    for section in ("Discrepancy families", "Discrepancy groups", "Conformance matrix"):
        assert section in html
    assert "Spec decisions" in html
    assert "onnxruntime 1.31" in html or "onnxruntime 1." in html  # the run header


def test_hostile_strings_are_text(hostile_run):
    html = (hostile_run / "report.html").read_text(encoding="utf-8")
    assert "<script>document.title" not in html
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=" in html
    assert "\x1b" not in html and "\\x1b" in html  # control characters shown escaped
    assert LONG not in html and "(502 characters)" in html  # repr adds two quotes


def test_the_matrix_counts_every_result(hostile_run):
    html = (hostile_run / "report.html").read_text(encoding="utf-8")
    records = (hostile_run / "results.jsonl").read_text().splitlines()
    assert f"{len(records)} results from 1 run(s)" in html
    # A cell shows its discrepancies and its results; hovering gives every count.
    assert re.search(
        r'class="cell k-value_mismatch"[^>]*title="onnxruntime static: 1 value_mismatch">'
        r"<b>1</b>/1<",
        html,
    )
    assert re.search(r'class="cell k-pass"[^>]*title="onnxruntime static: 1 pass">1<', html)


def test_the_first_screen_is_the_verdict_then_the_families(hostile_run):
    html = (hostile_run / "report.html").read_text(encoding="utf-8")
    order = [html.index(f'id="{name}"') for name in ("verdict", "families", "discrepancies")]
    assert order == sorted(order)
    assert html.index('id="discrepancies"') < html.index('id="matrix"') < html.index('id="runs"')
    verdict = html[order[0] : order[1]]
    # ORT's string Gather is known (cases/known/onnxruntime.yaml), but the run
    # had no --gate and exited 1: not gated, never PASSED, and why it exits 1.
    assert "PASSED" not in verdict and "<h2>Not gated</h2>" in verdict
    assert (
        "<strong>0 new</strong>" in verdict and "with --gate the baseline would pass it" in verdict
    )
    families = html[order[1] : order[2]]
    row = re.search(r'<tr class="family"[^>]*data-family="f1">(.*?)</tr>', families, re.S)
    assert row, families
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
    assert cells[:4] == ["onnxruntime", "value_mismatch", "Gather", "2"]
    assert "known" in cells[4] and "string" in cells[4]  # the baseline entry's reason
    assert '<a href="#family=f1">1 group</a>' in cells[5]
    # The matrix is collapsed until asked for.
    assert '<details id="matrix-section">' in html


def test_a_value_mismatch_shows_its_smallest_reproducer(hostile_run):
    """ORT returns '' for the second string of a row: the run cuts the 2x2
    case to the one index that shows it, and confirms it on ORT."""
    groups = json.loads((hostile_run / "groups.json").read_text())["groups"]
    (held,) = [g for g in groups if g["group"] == "hostile-strings"]
    cut = held["reproducer"]
    assert held["indices"]["shape"] == [2] and cut["indices"]["shape"] == [1]
    assert cut["data"]["shape"] == [2, 2]  # Gather keeps the axis whole
    assert cut["actual_values"] == ["''"] and cut["runs"] >= 1
    html = (hostile_run / "report.html").read_text(encoding="utf-8")
    assert "<strong>Smallest reproducer</strong>: data [2, 2] → [2, 2], indices [2] → [1]" in html


def test_report_merges_runs_and_says_what_it_cannot_read(hostile_run, tmp_path):
    out = tmp_path / "merged.html"
    done = conformance_here(
        "report", str(hostile_run), str(hostile_run / "results.jsonl"), "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert "8 results, 1 discrepancy groups" in done.stdout
    # Written from the repository, not the run's folder: the inputs are still shown.
    assert "ctl\\x01\\x1b[31m" in out.read_text(encoding="utf-8")
    broken = tmp_path / "broken"
    broken.mkdir()
    lines = (hostile_run / "results.jsonl").read_text().splitlines()
    (broken / "results.jsonl").write_text(lines[0] + "\n" + lines[1][:30] + "\n")
    done = conformance_here("report", str(broken), "-o", str(tmp_path / "x.html"))
    assert done.returncode == 2
    assert f"{broken / 'results.jsonl'}:2: not a JSON record" in done.stderr
    done = conformance_here("report", str(tmp_path / "nothing"), "-o", str(tmp_path / "x.html"))
    assert done.returncode == 2 and "no such file or folder" in done.stderr


def test_fuzz_classes_link_their_files(ov_campaign):
    out, done = ov_campaign  # OpenVINO, seed 1, gated against the shipped baselines
    assert done.returncode == 0, done.stdout + done.stderr  # all of them known ones
    html = (out / "report.html").read_text(encoding="utf-8")
    findings = json.loads((out / "findings.json").read_text())
    count = len(findings["classes"])
    if findings.get("bugs"):  # format 2: the bugs lead, their classes under them
        bugs = len(findings["bugs"])
        assert (
            f'Fuzz bugs (<span class="count" data-count="bug">{bugs}</span>) and their classes '
            f'(<span class="count" data-count="fuzz">{count}</span>)'
        ) in html
        assert html.count('<div class="bug" id="bug-b-') == bugs
    else:
        assert f'Fuzz classes (<span class="count" data-count="fuzz">{count}</span>)' in html
    assert 'class="known-badge"' in html and "Known (cases/known/openvino.yaml:" in html
    first = findings["classes"][0]
    assert f'href="./{first["files"]["repro"]}"' in html
    assert (out / first["files"]["repro"]).is_file()


# -- in a real browser ----------------------------------------------------------------
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed here "
    "(.ci/run installs it: apt-get install chromium)",
)


def _browse(url: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", *extra, url],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@needs_chromium
def test_in_a_browser_the_page_loads_filters_work_and_no_injected_script_runs(hostile_run):
    url = (hostile_run / "report.html").as_uri()
    shown = _browse(url, "--dump-dom")
    assert shown.returncode == 0, shown.stderr[-2000:]
    dom = shown.stdout
    assert "<title>Gather conformance report</title>" in dom  # not 'pwned'
    assert not re.search(r"<body[^>]*data-pwned", dom)
    assert 'id="shown">1 discrepancy groups shown<' in dom  # the report's script ran
    assert "Uncaught" not in shown.stderr and "CONSOLE" not in shown.stderr.upper()
    # Filters, set through the address: a kind with no group hides the group.
    hidden = _browse(url + "#runtime=onnxruntime&dtype=int32", "--dump-dom").stdout
    assert 'class="group hidden"' in hidden and 'id="shown">0 discrepancy groups shown<' in hidden
    kept = _browse(url + "#kind=value_mismatch&dtype=string", "--dump-dom").stdout
    assert 'id="shown">1 discrepancy groups shown<' in kept
    # ORT's string Gather is a known family of cases/known/onnxruntime.yaml.
    known = _browse(url + "#baseline=known", "--dump-dom").stdout
    assert 'id="shown">1 discrepancy groups shown<' in known
    assert "cases/known/onnxruntime.yaml:" in known and "known-badge" in known
    new = _browse(url + "#baseline=new", "--dump-dom").stdout
    assert 'id="shown">0 discrepancy groups shown<' in new
    # Headings count what is shown; the matrix keeps only rows with the outcome.
    assert 'data-count="group">0 of 1 shown<' in new
    mismatch = _browse(url + "#kind=value_mismatch", "--dump-dom").stdout
    assert '<tr class="row hidden" data-op="Gather" data-dtype="int32">' in mismatch
    assert '<tr class="row" data-op="Gather" data-dtype="string">' in mismatch
    assert 'data-count="row">1 of 2 shown<' in mismatch
    # A family's link is a filter: its groups only.
    family = _browse(url + "#family=f1", "--dump-dom").stdout
    assert 'id="shown">1 discrepancy groups shown<' in family


@needs_chromium
def test_in_a_browser_a_screenshot_is_taken(hostile_run, tmp_path):
    shot = tmp_path / "report.png"
    done = _browse(
        (hostile_run / "report.html").as_uri(), f"--screenshot={shot}", "--window-size=1280,2000"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


# -- machine-readable ---------------------------------------------------------------
def test_run_writes_junit_with_a_test_case_per_result(hostile_run, tmp_path):
    import xml.etree.ElementTree as ElementTree

    records = [
        json.loads(line) for line in (hostile_run / "results.jsonl").read_text().splitlines()
    ]
    root = ElementTree.parse(hostile_run / "junit.xml").getroot()
    cases = root.findall("./testsuite[@name='onnxruntime']/testcase")
    assert len(cases) == len(records) == 4
    # the gate's verdict is a suite of its own: it passed (ORT's string bug is known)
    (verdict,) = root.findall("./testsuite[@name='gate']/testcase")
    assert verdict.get("name") == "verdict" and not list(verdict)
    names = {(c.get("classname"), c.get("name")) for c in cases}
    assert ("onnxruntime.Gather", "hostile-strings.op13.string.int64[static]") in names
    # ORT's string Gather is a known family: skipped with the entry, as an xfail is.
    skipped = root.findall("./testsuite/testcase/skipped")
    assert len(skipped) == 2 and not root.findall("./testsuite/testcase/failure")
    assert skipped[0].get("message").startswith("known value_mismatch (")
    assert "cases/known/onnxruntime.yaml:" in skipped[0].get("message")
    # Against an empty baseline the same results are failures.
    empty = tmp_path / "empty"
    empty.mkdir()
    junit = tmp_path / "junit.xml"
    done = conformance_here("report", str(hostile_run), "-o", str(tmp_path / "r.html"),
                       "--junit", str(junit), "--known", str(empty))  # fmt: skip
    assert done.returncode == 0, done.stderr
    root = ElementTree.parse(junit).getroot()
    failures = root.findall("./testsuite[@name='onnxruntime']/testcase/failure")
    assert [f.get("type") for f in failures] == ["value_mismatch", "value_mismatch"]
    # ... and the gate suite fails on the new group, named as CI shows it
    (new,) = root.findall("./testsuite[@name='gate']/testcase")
    assert new.get("name") == "new: onnxruntime value_mismatch Gather hostile-strings"
    assert new.find("failure").get("type") == "value_mismatch"
    suite = root.find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == (
        "onnxruntime",
        "4",
        "2",
    )


def test_junit_shows_control_characters_xml_cannot_hold(tmp_path):
    import xml.etree.ElementTree as ElementTree

    from conformance.report import machine

    record = {"runtime": "rt", "op": "Gather", "case_id": "c", "variant": "static",
             "kind": "value_mismatch", "message": "got '\x1b[31m\x00'", "load_ms": 1.0,
             "run_ms": None}  # fmt: skip
    machine.write_junit([record], tmp_path / "j.xml")
    failure = ElementTree.parse(tmp_path / "j.xml").getroot().find("./testsuite/testcase/failure")
    assert failure.text == "got '\\x1b[31m\\x00'"


def test_run_writes_the_versioned_json_summary(hostile_run):
    summary = json.loads((hostile_run / "report.json").read_text())
    assert (summary["schema"], summary["version"]) == ("onnx-gather-conformance/report", 2)
    assert summary["results"] == 4
    assert summary["runtimes"]["onnxruntime"]["outcomes"] == {"pass": 2, "value_mismatch": 2}
    assert summary["runtimes"]["onnxruntime"]["version"].startswith("1.")
    (group,) = summary["discrepancies"]
    assert (group["kind"], group["group"], group["count"]) == (
        "value_mismatch",
        "hostile-strings",
        2,
    )
    cells = {(c["dtype"], c["variant"]): c["outcomes"] for c in summary["matrix"]}
    assert cells["int32", "static"] == {"pass": 1}


def test_a_kept_tensor_is_shown_element_by_element_whatever_its_values():
    """groups.json keeps a complex element as a [real, imaginary] pair: one element,
    not two; values that do not fit the shape (a hand-edited file) are shown as they
    are, never an exception (found by tests/adversarial/test_fuzzed_inputs.py)."""
    from conformance.report.views.tensors import tensor as _tensor

    pairs = {"dtype": "complex64", "shape": [2], "values": [[1.0, 0.0], [2.0, -1.0]]}
    assert _tensor(pairs).text == "[(1.0, 0.0j), (2.0, -1.0j)]"
    grid = {"dtype": "complex64", "shape": [1, 2], "values": [[[1.0, 0.0], [2.0, -1.0]]]}
    assert _tensor(grid).text == "[(1.0, 0.0j), (2.0, -1.0j)]"
    ragged = {"dtype": "float32", "shape": [2, 2], "values": [[1.0], [2.0, 0.0, []], 5]}
    assert _tensor(ragged).text == "[1.0, 2.0]\n[0.0, []]\n[5]"
    odd = {"dtype": "complex64", "shape": [2], "values": [[1.0], [1.0, 2.0, 3.0]]}
    assert _tensor(odd).text == "[[1.0], [1.0, 2.0, 3.0]]"
    assert _tensor({"dtype": "int8", "shape": [10**9], "values": [1]}).summarised


def test_an_upstream_that_is_not_a_web_address_is_shown_not_linked(tmp_path):
    """gate.json (or a baseline) names an entry's upstream issue; only http(s)
    becomes a link, a javascript: one is inert text (found by
    tests/adversarial/test_fuzzed_inputs.py)."""
    from conformance.engine.records import RunFolder
    from conformance.report import render
    from conformance.report.views import report as view

    record = {"runtime": "onnxruntime", "op": "Gather", "opset": 13, "dtype": "int32",
              "variant": "static", "kind": "rejected", "case_id": "a.op13.int32.int64",
              "base_id": "a", "data_shape": [1], "indices_shape": [1], "message": "m"}  # fmt: skip
    known = [{"where": "k.yaml:1", "reason": "r", "upstream": "javascript:alert(1)"},
             {"where": "k.yaml:2", "reason": "r", "upstream": "https://example.org/1"}]  # fmt: skip
    group = {"runtime": "onnxruntime", "kind": "rejected", "op": "Gather", "group": "a",
             "count": 1, "new": 0, "known": known}  # fmt: skip
    gate = {"passed": True, "new": [], "fixed": [], "not_used": [], "groups": [group]}
    run = RunFolder(tmp_path, {}, [record], gate=gate)
    html = render.render(view.from_runs([run], tmp_path / "report.html"))
    assert 'href="javascript:' not in html and "<code>javascript:alert(1)</code>" in html
    assert '<a href="https://example.org/1">' in html
