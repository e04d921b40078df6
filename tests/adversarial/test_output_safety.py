"""What the harness writes stays safe to open: links never carry a URL
scheme, JUnit stays parseable whatever the names hold, the report's script
survives any address, and a fuzz class's case.yaml and repro.py stay a case
file and a Python program whatever a runtime's name holds."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from conformance import oracle
from conformance.cases import loader
from conformance.engine.records import RunFolder
from conformance.fuzz import artifacts
from conformance.fuzz.campaign import FoundClass
from conformance.fuzz.signature import signature_of
from conformance.report import machine, render
from conformance.report.views import report as view
from conformance.strategies import Example

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
    report = view.from_runs([run], tmp_path / "report.html")
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


# Names that end a YAML comment (newline, CR, NEL, U+2028/9), make YAML unreadable
# (NUL, ESC, BEL, backspace, DEL), end a Python string, or cannot be encoded at all.
HOSTILE = [
    "ov\nentries: []\n#",
    "ov\r\x1b[2Jcleared",
    "ov\u2028cases: 1",
    "ov\x85next: line",
    "ov\u2029\x00\x07\x08\x7f",
    'ov\'"\\ """',
    "ov\ud800",
    "\u202eov",
]
RAW = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\ud800-\udfff]")


def _hostile_class(number: int, runtime: str) -> FoundClass:
    made = Example("Gather", 13, 0, np.arange(6, dtype=np.float32).reshape(2, 3),
                   np.array([-1], np.int64), "static")  # fmt: skip
    verdict = oracle.verdict(made.op, made.opset, made.data, made.indices, made.axis)
    signature = signature_of(made, runtime, "value_mismatch\n# " + runtime, None)
    return FoundClass(number, signature, "b-000000000000", 0.5, made, verdict)


@pytest.mark.parametrize("runtime", HOSTILE, ids=[ascii(name) for name in HOSTILE])
def test_a_hostile_runtime_name_stays_inside_comments_and_strings(tmp_path, runtime):
    found = _hostile_class(1, runtime)
    artifacts.write_class(found, tmp_path)
    folder = artifacts.class_dir(found, tmp_path)
    text = (folder / "case.yaml").read_text(encoding="utf-8")
    assert not RAW.search(text), ascii(text[:300])  # every line of it is one line
    header = text.splitlines()[:3]
    assert all(line.startswith("# ") for line in header), header
    assert "value_mismatch\\n# " in header[0]  # shown escaped, not broken
    (case,) = loader.load_file(folder / "case.yaml")  # still a case file, the same case
    assert case.base_id == artifacts.case_id(found.signature.slug)
    assert case.indices.tolist() == [-1] and not RAW.search(case.description)
    source = (folder / "repro.py").read_text(encoding="utf-8")
    tree = ast.parse(source)  # still a Python program...
    assigned = {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
    }
    assert assigned["RUNTIME"] == runtime  # ...that names the runtime exactly
    assert assigned["SIGNATURE"] == found.signature.slug
    compile(source, str(folder / "repro.py"), "exec")


def test_repro_py_prints_a_hostile_name_escaped_and_runs_a_profile_target(tmp_path):
    found = _hostile_class(1, "ov\x1b[2J\u2028")
    artifacts.write_class(found, tmp_path)
    repro = artifacts.class_dir(found, tmp_path) / "repro.py"
    unknown = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True,
                             timeout=120)  # fmt: skip
    assert unknown.returncode == 2, unknown.stdout + unknown.stderr
    assert "Traceback" not in unknown.stderr and not RAW.search(unknown.stdout)
    assert "unknown runtime 'ov\\x1b[2J\\u2028'" in unknown.stdout
    # A target's name with a profile runs on its runtime.
    done = subprocess.run([sys.executable, str(repro), "onnxruntime:1thread"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr  # ORT conforms here: "same as expected"
    assert "running model.onnx on onnxruntime:1thread" in done.stdout
