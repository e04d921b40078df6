"""Targets: NAME[:PROFILE], targets files, and what the header records of
each target (real runtimes, real worker processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conformance import adapters
from conformance.adapters.registry import PACKAGES, PROFILES, on_gpu
from conformance.cases.loader import CaseErrors
from conformance.engine import records, targets
from conformance.engine.pool import WorkerPool
from conformance.tables.profiles import property_problem
from tests.conftest import CASES, conformance_here


def test_a_bare_name_is_the_default_profile_which_sets_nothing():
    target = targets.parse("openvino")
    assert (target.name, target.adapter, target.profile, target.properties) == (
        "openvino", "openvino", "default", {},
    )  # fmt: skip
    one = targets.parse("openvino:1thread")
    assert one.name == "openvino:1thread" and one.properties == {"INFERENCE_NUM_THREADS": 1}
    assert targets.parse("onnxruntime:default").name == "onnxruntime"  # one name for one thing
    assert targets.parse("onnxruntime:no-opt").properties == {
        "graph_optimization_level": "ORT_DISABLE_ALL"
    }
    # module:Class is an adapter, named by itself once its worker reports
    faulty = targets.parse("tests.faulty_adapter:FaultyAdapter")
    assert faulty.name == "" and faulty.adapter == "tests.faulty_adapter:FaultyAdapter"


def test_unknown_profiles_and_runtimes_say_what_exists():
    with pytest.raises(targets.TargetError, match=r"openvino has no profile 'fast'.*1thread"):
        targets.parse("openvino:fast")
    with pytest.raises(targets.TargetError, match="unknown runtime 'openvina'"):
        targets.parse("openvina")
    with pytest.raises(targets.TargetError, match="given twice: openvino:1thread"):
        targets.parse_all(["openvino:1thread", "openvino:1thread"])


def test_every_profile_is_accepted_by_its_runtime():
    """Each profile's properties are names and values the runtime takes: the
    worker starts and reads them back as effective. (A profile of another
    package, the OpenVINO EP, starts in its own environment: test_openvino_ep;
    a GPU profile on a GPU: test_gpu, docs/gpu.md.)"""
    specs = [
        f"{name}:{profile}"
        for name, known in PROFILES.items()
        for profile, properties in known.items()
        if (name, profile) not in PACKAGES and not on_gpu(name, properties)
    ]
    # every profile's worker starts at once here (Chromium, the compilers...): a
    # generous start-up bound, so a loaded machine does not lose one (the test is
    # of the properties, not of start-up time)
    with WorkerPool(specs, timeout=120) as pool:
        info = pool.info
    assert sorted(info) == sorted(t.name for t in targets.parse_all(specs))
    assert not [about for about in info.values() if about.get("not_started")], info
    ov = info["openvino:1thread"]
    assert ov["requested"] == {"INFERENCE_NUM_THREADS": 1}
    assert ov["effective"]["INFERENCE_NUM_THREADS"] == "1"
    assert info["openvino:f32"]["effective"]["INFERENCE_PRECISION_HINT"] == "f32"
    assert info["openvino:accuracy"]["effective"]["EXECUTION_MODE_HINT"] == "ACCURACY"
    # The default sets nothing; what the runtime picked is recorded (it depends on the CPU).
    assert info["openvino"]["requested"] == {}
    assert info["openvino"]["effective"]["INFERENCE_PRECISION_HINT"] in ("f32", "bf16", "f16")
    assert info["onnxruntime:no-opt"]["effective"]["graph_optimization_level"] == "ORT_DISABLE_ALL"
    assert info["onnxruntime"]["effective"]["graph_optimization_level"] == "ORT_ENABLE_ALL"
    assert info["onnxruntime:1thread"]["effective"]["intra_op_num_threads"] == "1"
    for about in info.values():
        assert about["python"] and about["python_version"]


def _targets_file(tmp_path, text: str):
    path = tmp_path / "targets.yaml"
    path.write_text(text)
    return path


def test_a_targets_file_is_checked_like_a_case_file(tmp_path):
    path = _targets_file(
        tmp_path,
        "targets:\n"
        "  good:\n    adapter: openvino\n    profile: accuracy\n"
        "  nosuch:\n    adapter: openvina\n"
        "  both:\n    adapter: openvino\n    profile: f32\n    properties: {A: 1}\n"
        "  badprofile:\n    adapter: onnxruntime\n    profile: turbo\n"
        "  nopython:\n    adapter: onnxruntime\n    python: envs/none/bin/python\n"
        "  typo:\n    adapter: onnxruntime\n    profiel: no-opt\n"
        "  notits:\n    adapter: onnxruntime\n    profile: f32\n",
    )
    with pytest.raises(CaseErrors) as raised:
        targets.load_file(path)
    said = [str(e) for e in raised.value.errors]
    assert f"{path}:6: targets.nosuch.adapter: unknown runtime 'openvina'" in said[0]
    assert any(
        f"{path}:10: targets.both.properties: give a profile or properties" in s for s in said
    )
    assert any(
        f"{path}:13: targets.badprofile.profile: 'turbo' is not a profile name (1thread, " in s
        for s in said
    )
    assert any("targets.nopython.python: no interpreter at" in s for s in said)
    assert any(f"{path}:19: targets.typo.profiel: unknown" in s for s in said)
    assert any(  # a profile, but not this adapter's: the code's table says
        f"{path}:22: targets.notits.profile: onnxruntime has no profile 'f32'" in s for s in said
    )


def test_a_targets_file_runs_beside_runtime_targets_in_another_interpreter(tmp_path):
    """A target's worker runs in the interpreter the file names (here this
    one, by path): the header says which, results carry the file's name."""
    path = _targets_file(
        tmp_path,
        "targets:\n"
        "  ort-plain:\n    adapter: onnxruntime\n"
        "    properties: {graph_optimization_level: ORT_DISABLE_ALL}\n"
        f"    python: {sys.executable}\n",
    )  # fmt: skip
    out = tmp_path / "run"
    done = conformance_here(
        "run", "--runtime", "onnxruntime:1thread", "--targets", str(path),
        "-k", "gather-example-axis0",
        "--variants", "static", "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    header = json.loads((out / records.HEADER).read_text())
    plain = header["runtimes"]["ort-plain"]
    assert plain["adapter"] == "onnxruntime" and plain["profile"] is None
    assert plain["requested"] == {"graph_optimization_level": "ORT_DISABLE_ALL"}
    assert plain["effective"]["graph_optimization_level"] == "ORT_DISABLE_ALL"
    assert plain["python"] == sys.executable
    assert "cpu_flags" in header and isinstance(header["cpu_flags"], list)
    runtimes = {r["runtime"] for r in records.read_records(out / records.RESULTS)}
    assert runtimes == {"onnxruntime:1thread", "ort-plain"}
    # The report shows one column per target with what it asked for and got.
    html = (out / "report.html").read_text(encoding="utf-8")
    judged = html[html.index('id="targets"') : html.index("</table>", html.index('id="targets"'))]
    assert '<th data-runtime="ort-plain">ort-plain</th>' in judged
    assert "<code>graph_optimization_level=ORT_DISABLE_ALL</code>" in judged
    assert "<code>intra_op_num_threads=1</code>" in judged  # onnxruntime:1thread's effective
    # Both are ONNX Runtime: both are gated against cases/known/onnxruntime.yaml.
    gate = json.loads((out / records.GATE).read_text())
    assert gate["passed"] and "onnxruntime.yaml" in json.dumps(gate["entries"])


def test_a_bad_targets_file_exits_2_with_its_line(tmp_path):
    path = _targets_file(tmp_path, "targets:\n  x:\n    adapter: nothing\n")
    done = conformance_here("run", "--targets", str(path), "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert f"{path}:3: targets.x.adapter: unknown runtime 'nothing'" in done.stderr
    assert "Traceback" not in done.stderr


def test_auto_workers_leave_each_target_its_cores():
    """-j auto: a default-profile target computes on every core, so it gets one
    worker; one-thread targets share the cores between them."""
    parse = targets.parse_all
    assert targets.auto_workers(parse(["openvino"]), 2) == 1
    assert targets.auto_workers(parse(["openvino", "onnxruntime"]), 8) == 1
    assert targets.auto_workers(parse(["openvino:1thread"]), 4) == 4
    assert targets.auto_workers(parse(["openvino:1thread", "onnxruntime:1thread"]), 4) == 2
    assert targets.auto_workers(parse(["reference"]), 2) == 2  # pure Python: one thread
    assert targets.auto_workers(parse(["openvino:1thread", "onnxruntime"]), 2) == 1


def test_the_header_says_how_many_workers_and_why(tmp_path):
    out = tmp_path / "run"
    done = conformance_here("run", "--runtime", "openvino:1thread", "-k", "gather-example-axis0",
                            "--variants", "static", "--out", str(out), "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    budget = json.loads((out / records.HEADER).read_text())["cpu_budget"]
    cores = budget["cores"]
    assert budget["workers_chosen"] == "auto" and budget["workers_per_runtime"] == cores
    assert budget["threads_per_worker"] == {"openvino:1thread": 1}
    assert budget["threads_at_most"] == cores and not budget["oversubscribed"]
    bad = conformance_here("run", "-j", "0", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "'0': give a positive number of workers, or auto" in bad.stderr


# -- one reading of runtime names (issue 25 A) ------------------------------------------
# spec -> the adapter it names, or None where it is no runtime name at all
RUNTIME_NAMES = {
    "openvino": "openvino",
    "openvino:1thread": "openvino",
    "onnxruntime:openvino-ep": "onnxruntime",
    "tests.faulty_adapter:FaultyAdapter": "tests.faulty_adapter:FaultyAdapter",
    "mypkg.mod:Class": "mypkg.mod:Class",
    "foo:bar": None,
    "openvino:nosuchprofile": None,
    "openvino:": None,
    "reference:1thread": None,
    "": None,
    " ": None,
    " openvino": None,
    "openvino ": None,
    "open vino": None,
    "openvino\n": None,
    "a..b:Class": None,
    "mypkg.mod:Class.attr": None,
    "openvina": None,
}


def _reads(read, spec: str) -> bool:
    try:
        read(spec)
    except (targets.TargetError, adapters.UnknownRuntime):
        return False
    return True


@pytest.mark.parametrize("spec", list(RUNTIME_NAMES))
def test_the_former_three_readings_of_a_runtime_name_agree(spec):
    """targets.parse (--runtime), adapters.resolve (what the pytest plugin
    checked with) and targets.adapter_of (names in run headers) all read a
    name through adapters.parse: they accept and refuse the same names, and
    name the same adapter."""
    adapter = RUNTIME_NAMES[spec]
    assert _reads(targets.parse, spec) is (adapter is not None)
    assert _reads(adapters.resolve, spec) is (adapter is not None)
    assert _reads(adapters.parse, spec) is (adapter is not None)
    if adapter is None:
        assert targets.adapter_of(spec) == spec  # not a runtime name: its own (a file's name)
    else:
        assert targets.adapter_of(spec) == adapter == targets.parse(spec).adapter
        assert adapters.resolve(spec) == targets.parse(spec).adapter_class


def test_the_pytest_plugin_and_the_cli_refuse_the_same_runtime_names(tmp_path):
    """The plugin's start-up check is targets.parse_all: `--runtime foo:bar`
    and an unknown profile stop pytest (exit 4, a usage error) as they stop
    `conformance run` (exit 2), before anything runs; a good profile passes."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "one.yaml").write_text(
        (CASES / "gather" / "spec_examples.yaml").read_text()
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def pytest_with(spec: str):
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "conformance",
             "cases", "--collect-only", "-q", "--conformance-runtime", spec],
            cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env,
        )  # fmt: skip

    for spec, words in [
        ("foo:bar", "unknown runtime 'foo'"),
        ("openvino:nosuchprofile", "openvino has no profile 'nosuchprofile'"),
        (" openvino", "not a runtime name"),
    ]:
        plugin = pytest_with(spec)
        output = plugin.stdout + plugin.stderr
        assert plugin.returncode == 4 and words in output, (spec, output)
        assert "Traceback" not in output
        run = conformance_here("run", "--runtime", spec, "--out", str(tmp_path / "out"))
        assert run.returncode == 2 and words in run.stderr, (spec, run.stderr)
        assert not (tmp_path / "out").exists()
    good = pytest_with("openvino:1thread")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "[openvino:1thread-static]" in good.stdout


def test_every_profile_is_a_valid_target_name_with_valid_properties():
    """NAME:PROFILE of every built-in profile is a name a targets file may
    use, and its properties are values a targets file may give."""
    for name, known in PROFILES.items():
        for profile, properties in known.items():
            assert targets.NAME.fullmatch(f"{name}:{profile}"), (name, profile)
            for key, value in properties.items():
                assert property_problem(key, value) is None, (name, profile, key)


# -- what a targets file may say (issue 25 B, C) ------------------------------------------
def _refused(tmp_path, text: str, *expected: str, cwd=None):
    """`conformance run --targets` on the text: exit 2, nothing run, each
    expected message on its own line, no traceback or internal error."""
    path = _targets_file(tmp_path, text)
    out = tmp_path / "out"
    done = conformance_here("run", "--targets", str(path), "--out", str(out), "--no-progress",
                            **({"cwd": cwd} if cwd else {}))  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "internal error" not in said and "Traceback" not in said, said
    assert "runtimes" not in said, said  # refused before the run announces anything
    assert not out.exists()
    lines = done.stderr.splitlines()
    for message in expected:
        message = message.replace("FILE", str(path))
        assert any(line.startswith(message) for line in lines), (message, said)
    return said


def test_numbers_a_targets_file_cannot_mean_are_refused_at_their_line(tmp_path):
    digits = "9" * 5000
    _refused(tmp_path, f"targets:\n  x:\n    adapter: reference\n    properties: {{A: {digits}}}\n",
             "FILE:4: targets.x.properties.A: 999999999999...999999 (5000 characters): "
             "an integer of more than 4300 digits")  # fmt: skip
    hexadecimal = f"targets:\n  x:\n    adapter: reference\n    properties: {{A: 0x{digits}}}\n"
    _refused(tmp_path, hexadecimal, "FILE:4: targets.x.properties.A: 0x9999999999")
    _refused(tmp_path, f"targets:\n  ? {digits}\n  : {{adapter: reference}}\n",
             "FILE:2: targets: 999999999999...999999 (5000 characters)")  # fmt: skip
    _refused(tmp_path, "targets:\n  x:\n    adapter: reference\n    properties: {A: 1.0e+400}\n",
             "FILE:4: targets.x.properties.A: 1.0e+400 is out of range for a float")  # fmt: skip
    _refused(
        tmp_path,
        "targets:\n  x:\n    adapter: onnxruntime\n    properties:\n      A: .nan\n"
        "      B: -.inf\n  y:\n    adapter: onnxruntime\n"
        "    properties: {provider_options: [{device_type: CPU, x: .inf}]}\n"
        "  z:\n    adapter: openvino\n    properties: {INFERENCE_NUM_THREADS: true}\n"
        "  w:\n    adapter: openvino\n    properties: {INFERENCE_NUM_THREADS: 1.5, B: null}\n"
        "  v:\n    adapter: openvino\n    properties: {A: 9223372036854775808}\n",
        "FILE:5: targets.x.properties.A: nan is not a finite number",
        "FILE:9: targets.y.properties.provider_options[0].x: inf is not a finite number",
        "FILE:12: targets.z.properties.INFERENCE_NUM_THREADS: True: a thread count is a whole",
        "FILE:15: targets.w.properties.INFERENCE_NUM_THREADS: 1.5: a thread count",
        "FILE:18: targets.v.properties.A: 9223372036854775808 is outside int64",
    )


def test_a_targets_file_with_no_targets_is_refused(tmp_path):
    _refused(tmp_path, "targets: {}\n", "FILE:1: targets: {} is empty; give a mapping of target")
    _refused(tmp_path, "targets:\n", "FILE:1: targets: None is not a mapping of target name")
    _refused(tmp_path, "targets: {x: {adapter: reference}}\nextra: 1\n",
             "FILE:2: extra: unknown field")  # fmt: skip


NAME = "1 to 64 ASCII letters, digits, '_', '-', '.' and ':', starting with a letter or digit"


def test_target_names_that_cannot_be_used_are_refused(tmp_path):
    long = "a" * 300
    _refused(
        tmp_path,
        'targets:\n  "":\n    adapter: reference\n  y:\n    adapter: onnxruntime\n'
        f"  {long}:\n    adapter: reference\n"
        f"  {'b' * 65}:\n    adapter: reference\n"
        '  "a/b":\n    adapter: reference\n'
        '  "-x":\n    adapter: reference\n'
        '  "caf\\u00e9":\n    adapter: reference\n'
        '  "tab\\tname":\n    adapter: reference\n'
        "  2025:\n    adapter: reference\n"
        "  true:\n    adapter: reference\n"
        "  openvino:\n    adapter: onnxruntime\n"
        "  onnxruntime:no-opt:\n    adapter: onnxruntime\n    profile: default\n"
        "  openvino:default:\n    adapter: openvino\n",
        f"FILE:2: targets: '' is not a target's name: {NAME}",
        f"FILE:6: targets: 'aaaaaaaaaaa...aaaaa' (302 characters) is not a target's name: {NAME}",
        f"FILE:8: targets: 'bbbbbbbbbbb...bbbbb' (67 characters) is not a target's name: {NAME}",
        f"FILE:10: targets: 'a/b' is not a target's name: {NAME}",
        f"FILE:12: targets: '-x' is not a target's name: {NAME}",
        f"FILE:14: targets: 'café' is not a target's name: {NAME}",
        f"FILE:16: targets: 'tab\\tname' is not a target's name: {NAME}",
        f"FILE:18: targets: 2025 is not a target's name: {NAME}",
        f"FILE:20: targets: True is not a target's name: {NAME}",
        "FILE:22: targets: 'openvino' is the name of the target openvino in profile default",
        "FILE:24: targets: 'onnxruntime:no-opt' is the name of the target onnxruntime in "
        "profile no-opt",
        "FILE:27: targets: 'openvino:default' is the target openvino: call it 'openvino'",
    )


def test_a_64_character_name_runs_and_fuzz_can_write_its_classes(tmp_path):
    """The longest name allowed is used as far as fuzz writing class folders
    (a 300-character one died there with 'File name too long')."""
    name = "n" * targets.MAX_NAME
    path = _targets_file(tmp_path, f"targets:\n  {name}:\n    adapter: reference\n")
    out = tmp_path / "fuzz"
    # By examples (one round), not an 8 s budget that runs none on a loaded machine.
    done = conformance_here("fuzz", "--targets", str(path), "--seed", "1", "--max-examples", "64",
                            "--time-budget", "3600", "--out", str(out),
                            "--no-progress")  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode in (0, 1), said  # the reference's known families: a verdict
    assert "internal error" not in said and "File name too long" not in said, said
    classes = list((out / "classes").iterdir())
    assert classes and all(f"-{name}-" in folder.name for folder in classes)


def test_other_fields_are_refused_where_their_type_is_wrong(tmp_path):
    wrong = (
        "targets:\n"
        "  a:\n    adapter: openvino:1thread\n"
        "  b:\n    adapter: reference\n    profile: no\n"
        "  c:\n    adapter: foo:bar\n"
        "  d:\n    adapter: reference\n    python: 3\n"
        "  e:\n    adapter: reference\n    properties: {1: 2}\n"
    )
    _refused(
        tmp_path,
        wrong + "  f:\n    adapter: reference\n    properties: !!set {a}\n",
        "FILE:17: targets.f.properties: the YAML type !!set is not used",
    )
    said = _refused(
        tmp_path,
        wrong + "  f:\n    adapter: reference\n    properties: {A: 2026-04-01}\n",
        "FILE:3: targets.a.adapter: 'openvino:1thread': the adapter alone (openvino); give the "
        "profile as 'profile: 1thread'",
        "FILE:6: targets.b.profile: False is not a profile name (1thread, accuracy, ",
        "FILE:8: targets.c.adapter: unknown runtime 'foo'",
        "FILE:11: targets.d.python: 3 is not the path of a Python interpreter",
        "FILE:14: targets.e.properties: 1 is not a property name: a non-empty string",
    )
    assert "targets.f" not in said  # a plain date is the string it is written as


def _interpreter(path, body: str = 'exec "{python}" "$@"\n'):
    path.write_text("#!/bin/sh\n" + body.format(python=sys.executable))
    path.chmod(0o755)
    return path


def test_a_bare_python_is_beside_the_targets_file_never_on_path(tmp_path):
    """`python: venv-python` is the file beside the targets file, whatever the
    working folder and $PATH say: here a same-named decoy earlier on $PATH
    would exit 0 without running anything, and the working folder has none."""
    decoys = tmp_path / "decoys"
    decoys.mkdir()
    _interpreter(decoys / "venv-python", "exit 0\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PATH": f"{decoys}{os.pathsep}{os.environ['PATH']}"}
    folder = tmp_path / "envs"
    folder.mkdir()
    path = folder / "targets.yaml"
    path.write_text("targets:\n  beside:\n    adapter: reference\n    python: venv-python\n")

    def run(out, cwd=elsewhere, given="../envs/targets.yaml"):
        return subprocess.run(
            [sys.executable, "-m", "conformance", "run", "--targets", given,
             "--cases", str(CASES), "-k", "gather-example-axis0", "--variants", "static",
             "--out", str(out), "--no-progress"],
            cwd=cwd, capture_output=True, text=True, timeout=600, env=env,
        )  # fmt: skip

    missing = run(tmp_path / "missing")
    assert missing.returncode == 2, missing.stdout + missing.stderr
    folder = folder.resolve()
    assert missing.stderr.startswith(
        f"../envs/targets.yaml:4: targets.beside.python: no interpreter at {folder}/venv-python "
        f"(relative to {folder}, this file's folder)"
    ), missing.stderr
    assert not (tmp_path / "missing").exists()
    _interpreter(folder / "venv-python", 'touch "$(dirname "$0")/ran"\nexec "{python}" "$@"\n')
    # from another folder, and from the file's own (where `venv-python` alone was
    # looked up on $PATH, and the decoy ran)
    for out, cwd, given in [("beside", elsewhere, "../envs/targets.yaml"),
                            ("here", folder, "targets.yaml")]:  # fmt: skip
        (folder / "ran").unlink(missing_ok=True)
        done = run(tmp_path / out, cwd, given)
        assert done.returncode == 0, done.stdout + done.stderr
        assert (folder / "ran").exists()  # this one ran the worker, not the decoy
        header = json.loads((tmp_path / out / records.HEADER).read_text())
        assert header["runtimes"]["beside"]["python"] == sys.executable  # what it exec'd
        results = records.read_records(tmp_path / out / records.RESULTS)
        assert {r["runtime"] for r in results} == {"beside"}
    (folder / "venv-python").chmod(0o644)
    text = f"targets:\n  x:\n    adapter: reference\n    python: {folder}/venv-python\n"
    _refused(tmp_path, text, f"FILE:4: targets.x.python: {folder}/venv-python is not an executable")
