"""The page's verdict of `conformance model` ("Your model, as built and as run")
is a table a deployer scans (issue 49, "What to build" 8): a row per target
with its verdict word as a badge, nodes exact as built and in situ, the
outputs' difference and the precise profile's, what to do; the inputs that
break the spec and the what-ifs as rows of their own. Checked on a real run
and, in a real browser, at a laptop's width."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html import unescape
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance.cli import main
from conformance.engine import run_folder
from conformance.report import node_verdicts
from conformance.report.views import model as model_view
from tests.test_model_as_built import LOW32

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TARGETS = ["reference", "onnxruntime", "openvino", LOW32]
# A node named as exporters name them: a path longer than any column (each part breaks
# after its slash, never inside a name).
NODE = "/".join(["encoder_embeddings_word"] * 10) + "/Gather"


def embedding(folder: Path) -> Path:
    """An embedding table (4 rows) indexed by a graph input, ``ids``."""
    table = nh.from_array(np.arange(12, dtype=np.int64).reshape(4, 3) << 33, "table")
    graph = h.make_graph(
        [h.make_node("Gather", ["table", "ids"], ["y"], name=NODE, axis=0)],
        "g",
        [h.make_tensor_value_info("ids", T.INT64, [2])],
        [h.make_tensor_value_info("y", T.INT64, [2, 3])],
        initializer=[table],
    )
    path = folder / "m.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 15)], ir_version=8), path)
    return path


@pytest.fixture(scope="module")
def oov_run(tmp_path_factory) -> Path:
    """An embedding fed an id equal to its vocabulary size (4 rows, id 4): the
    spec forbids it; ONNX Runtime and onnx.reference refuse, OpenVINO reads on."""
    folder = tmp_path_factory.mktemp("page")
    model = embedding(folder)
    np.savez(folder / "oov.npz", ids=np.array([3, 4], np.int64))
    out = folder / "run"
    code = main(["model", str(model), "--inputs", str(folder / "oov.npz"), "--runtime",
                 *TARGETS, "--variants", "static", "--out", str(out), "--no-progress"])  # fmt: skip
    assert code == 1  # OpenVINO accepts the forbidden index as built
    return out


def _page(out: Path) -> str:
    return (out / "report.html").read_text(encoding="utf-8")


def _verdicts(out: Path) -> list[node_verdicts.ModelVerdict]:
    folder = run_folder.read_folder(out)
    document = json.loads((out / node_verdicts.NODES).read_text())
    return node_verdicts.verdicts(document, folder.records)


def _box(page: str) -> str:
    start = page.index('<section id="model-verdict"')
    return page[start : page.index("</section>", start)]


def _text(html: str) -> str:
    spaced = re.sub(r"<(?:br|/?li|/?td|/?ul)\b[^>]*>", " ", html)  # block edges part words
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", spaced))).strip()


def test_a_row_per_target_with_its_verdict_word_as_a_badge(oov_run):
    box = _box(_page(oov_run))
    assert "<pre" not in box  # the terminal's lines are not the page's verdict
    (verdict,) = _verdicts(oov_run)
    rows = re.findall(r'<tr class="target" data-runtime="([^"]+)">(.*?)</tr>', box, re.S)
    assert [name for name, _ in rows] == [t.runtime for t in verdict.targets]
    assert len(rows) == len(TARGETS)
    for (name, row), target in zip(rows, verdict.targets, strict=True):
        badges = re.findall(r'<span class="badge badge-(\w+)">([^<]*)</span>', row)
        assert badges == [(model_view.badge_of(target.status).tone, target.status)], name
        cells = [_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        assert len(cells) == 6, cells  # target, verdict, as built, in situ, outputs, to do
        wrong = len(set(target.differing))
        assert cells[2] == f"{verdict.judged - wrong} of {verdict.judged} exact"
    said = {name: _text(row) for name, row in rows}
    # The whole model ran on OpenVINO only: its outputs are compared with nothing,
    # and the others, refused on the fed input, are not judged in situ.
    assert "the only target that ran: nothing to compare" in said["openvino"]
    assert "not judged in situ: no output of the whole model came back" in said["onnxruntime"]
    assert "int64-low32: keep int64 data within int32's range" in said["low32"]


def test_an_input_that_breaks_the_spec_is_a_row_of_its_own(oov_run):
    box = _box(_page(oov_run))
    (row,) = re.findall(r'<tr class="spec-input">(.*?)</tr>', box, re.S)
    said = _text(row)
    assert said.startswith("ids (graph input) indices[1] = 4 breaks the spec")
    assert f"node {NODE}, clause index-out-of-range" in said
    assert "onnxruntime: refused it, as the spec requires" in said
    assert "openvino: accepted it and returned an output" in said
    assert "validate ids within [-4, 3] (axis 0 of size 4) before inference" in said
    # first: the verdict says the input's property before any target's word
    assert box.index('class="spec-input"') < box.index('class="target"')


def test_what_ifs_are_rows_apart_after_the_targets(oov_run):
    box = _box(_page(oov_run))
    (verdict,) = _verdicts(oov_run)
    apart = [m for m in verdict.mechanisms if not m.as_built]
    rows = re.findall(r'<tr class="what-if" data-runtime="([^"]+)" data-kind="(\w+)">', box)
    assert rows == [(m.runtime, m.kind) for m in apart] and rows
    assert box.rindex('class="target"') < box.index('class="what-if"')
    assert box.count("badge-whatif") == len(apart)


# A nodes.json as conformance model writes it, with fields a later format may add
# (the view reads what it knows and leaves the rest).
DOCUMENT = {
    "format": 3,
    "nodes": [
        {
            "model": "enc.onnx", "graph": "", "node": "embed", "op": "Gather", "cases": [],
            "not_judged": "no case", "as_built": None, "sources": None, "in_situ": {},
            "evidence": {"later": "field"},
        }
    ],
    "whole_model": {
        "enc.onnx": {
            "fed": True,
            "targets": {"reference": {"status": "ran", "message": ""},
                        "openvino": {"status": "ran", "message": "", "elapsed": 3.2},
                        "tract": {"status": "cannot load", "message": "Infering facts\n"
                                  "Caused by: Impossible to unify Sym(a) with Sym(b)"}},
            "outputs": ["y"],
            "compared_with": "reference",
            "differences": [
                {"target": "openvino",
                 "outputs": [{"output": "y", "differs": True, "max_abs": 0.0511,
                              "max_ulp": 805870362, "note": "", "max_rel": 0.01}],
                 "reruns": [{"target": "openvino:f32", "status": "ran",
                             "outputs": [{"output": "y", "differs": True, "max_abs": 2.7e-6,
                                          "max_ulp": 40, "note": ""}]},
                            {"target": "openvino:no-opt", "status": "ran",
                             "outputs": [{"output": "y", "differs": False, "max_abs": 0.0,
                                          "max_ulp": 0, "note": ""}]}]},
            ],
        }
    },
}  # fmt: skip


def test_outputs_show_the_difference_and_each_precise_profiles():
    made = node_verdicts.verdicts(DOCUMENT, [])
    (table,) = model_view.tables(DOCUMENT, [], made)
    rows = {row.target: row for row in table.targets}
    assert rows["openvino"].outputs == "0.0511 from reference"
    assert rows["openvino"].precise == ["openvino:f32: 2.7e-06", "openvino:no-opt: bit for bit"]
    assert rows["reference"].outputs == "the reference of the comparison"
    assert rows["tract"].badge == model_view.Badge("cannot load", "bad")
    assert rows["tract"].outputs == "none: cannot load"
    assert rows["tract"].message == "Infering facts"  # first line in the cell...
    assert "Impossible to unify" in rows["tract"].message_whole  # ... the whole on hover
    assert table.compared == "outputs of reference, openvino compared with reference's"


def test_saved_node_cases_run_alone_say_no_whole_model():
    alone = {**DOCUMENT, "whole_model": {}}  # run --cases of a model's saved node cases
    (table,) = model_view.tables(alone, [], node_verdicts.verdicts(alone, []))
    assert table.compared == "" and not table.targets  # no runtime ran a record here


def test_a_long_message_is_cut_between_words():
    said = " ".join(f"word{i}" for i in range(100))
    cut = model_view.words_cut(said, 60)
    assert len(cut) <= 60 and cut.endswith(" …")
    assert set(cut[:-2].split()) <= set(said.split())  # no half word
    assert model_view.words_cut(said, 1000) == said


def test_a_verdict_word_the_table_does_not_list_still_gets_a_badge():
    assert model_view.badge_of("safe as built; not judged in situ").tone == "good"
    assert model_view.badge_of("refused the input").tone == "note"


# -- in a real browser, at a laptop's width ----------------------------------------------
MEASURE = """<script>
const box = document.getElementById('model-verdict');
const width = document.documentElement.clientWidth;
const cells = [...box.querySelectorAll('table.model-verdict td, table.model-verdict th')];
const badges = [...box.querySelectorAll('.badge')].map(b => {
  const line = parseFloat(getComputedStyle(b).lineHeight);
  return {word: b.textContent, lines: Math.round(b.getBoundingClientRect().height / line)};
});
document.body.dataset.measured = JSON.stringify({
  width, page: document.documentElement.scrollWidth,
  box_scroll: box.scrollWidth, box_client: box.clientWidth,
  tables: [...box.querySelectorAll('table')].map(t => t.getBoundingClientRect().right),
  broken: cells.filter(c => ['break-all', 'break-word'].includes(getComputedStyle(c).wordBreak)
                        || getComputedStyle(c).whiteSpace.startsWith('pre')).length,
  badges,
});
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here "
                    "(.ci/run installs it: apt-get install chromium)")  # fmt: skip
def test_in_a_browser_the_table_fits_a_laptop_and_words_stay_whole(oov_run, tmp_path):
    # The page as written, with a script that measures it appended (a copy: the
    # report itself carries no test hooks).
    page = tmp_path / "measured.html"
    page.write_text(_page(oov_run).replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    assert CHROMIUM is not None
    shown = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1366,900",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr[-2000:]
    found = re.search(r'data-measured="([^"]*)"', shown.stdout)
    assert found, shown.stdout[-2000:]
    measured = json.loads(unescape(found[1]))
    assert 1300 <= measured["width"] <= 1366  # the laptop's width, less a scroll bar
    assert measured["box_scroll"] <= measured["box_client"]  # nothing overflows the box
    assert measured["page"] <= measured["width"]  # nor the page: no horizontal scroll bar
    assert measured["tables"] and all(right <= measured["width"] for right in measured["tables"])
    assert measured["broken"] == 0  # no cell breaks words anywhere or keeps the terminal's lines
    assert {b["word"] for b in measured["badges"]} >= {"breaks the spec", "differs", "what if"}
    assert all(b["lines"] == 1 for b in measured["badges"]), measured["badges"]
