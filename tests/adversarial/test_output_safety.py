"""What the harness writes stays safe to open: links never carry a URL
scheme, JUnit stays parseable whatever the names hold, and the report's
script survives any address."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ElementTree

import pytest

from conformance.engine.records import RunFolder
from conformance.report import machine, model, render

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _finding(files: dict) -> dict:
    signature = {"runtime": "openvino", "op": "Gather", "kind": "crash", "dtype": "float32",
                 "variant": "static", "opset": 13, "violation": None, "features": []}  # fmt: skip
    tensor = {"dtype": "float32", "shape": [1], "values": [1.0]}
    return {
        "signature": signature, "id": "x", "hits": 1, "first_found_s": 0.1, "shrunk": True,
        "case": {"data": tensor, "indices": {"dtype": "int64", "shape": [1], "values": [0]},
                 "axis": 0},
        "outcomes": {"openvino": {"message": "m"}}, "files": files,
    }  # fmt: skip


def test_a_url_scheme_in_findings_json_never_becomes_a_live_link(tmp_path):
    run = RunFolder(tmp_path, {}, [], findings={"classes": [_finding(
        {"repro": "javascript:alert(1)", "case": "classes/001-x/case.yaml",
         "escape": "../../etc/passwd"}
    )]})  # fmt: skip
    report = model.from_runs([run], tmp_path / "report.html")
    html = render.render(report)
    assert 'href="javascript:' not in html
    assert 'href="./javascript:alert(1)"' in html  # a file name in the folder, inert
    assert 'href="./classes/001-x/case.yaml"' in html
    assert "passwd" not in html  # outside the run folder: not linked at all


def test_control_characters_in_names_keep_junit_parseable(tmp_path):
    record = {"runtime": "rt\x01\x1b", "op": "Gather", "case_id": "c\x00\x07", "variant": "static",
              "kind": "value_mismatch", "message": "m", "load_ms": 1.0, "run_ms": None}  # fmt: skip
    machine.write_junit([record], tmp_path / "j.xml")
    root = ElementTree.parse(tmp_path / "j.xml").getroot()  # raises if unparseable
    case = root.find("./testsuite/testcase")
    assert case.get("name") == "c\\x00\\x07[static]"
    assert root.find("testsuite").get("name") == "rt\\x01\\x1b"


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed here")
def test_a_malformed_address_does_not_stop_the_filters(tmp_path):
    run = RunFolder(tmp_path, {}, [{"runtime": "onnxruntime", "op": "Gather", "opset": 13,
                                    "dtype": "int32", "variant": "static", "kind": "pass",
                                    "case_id": "a", "base_id": "a", "data_shape": [1],
                                    "indices_shape": [1]}])  # fmt: skip
    out = tmp_path / "report.html"
    render.write([run], out)
    url = out.as_uri() + "#%E0%A4%A=1&runtime=%E0%A4%A"
    shown = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", "--dump-dom", url],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert 'id="shown">0 discrepancy groups shown<' in shown.stdout  # the script ran to the end
    assert "Uncaught" not in shown.stderr
