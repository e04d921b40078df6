"""Issue 22: a gate that judges only what a run could show (subsets), its
verdict first, the bookkeeping condensed (-v in full), progress lines for CI
logs, and the verdict in Markdown (--summary-md, $GITHUB_STEP_SUMMARY).
Through the real CLI (in this process: its output and files are what is checked), on
the reference runtime (fast) and the shipped baselines."""

from __future__ import annotations

import json
from pathlib import Path

from conformance import gate
from conformance.gate import baseline
from conformance.report.terminal import gate_lines, md, summary_markdown, verdict_line
from tests.conftest import conformance_here

# The reference runtime conforms on these cases but for accepting index dtypes
# Tind forbids: a baseline that says so of both ops, and pretends it got every
# dtype of GatherElements wrong once (a case entry: each result must reproduce).
KNOWN = """\
entries:
  - signature: {op: Gather, violation: indices-dtype}
    outcome: accepted_invalid
    reason: the reference accepts Gather's index dtypes outside Tind
    clause: indices-dtype
  - signature: {op: GatherElements, violation: indices-dtype}
    outcome: accepted_invalid
    reason: the reference accepts GatherElements' index dtypes outside Tind
    clause: indices-dtype
  - case: ge-every-dtype
    outcome: value_mismatch
    reason: pretend the reference got every dtype wrong once
    clause: bitwise-exact
"""
GE_INDICES = "ge-indices-dtype-outside-tind*"  # GatherElements only: 60 accepted_invalid


def known(tmp_path: Path, text: str = KNOWN) -> Path:
    folder = tmp_path / "known"
    folder.mkdir(exist_ok=True)
    (folder / "reference.yaml").write_text(text)
    return folder


def run(tmp_path: Path, name: str, *args: str, env: dict | None = None):
    """``conformance run`` on the reference runtime, stdout and stderr captured
    (not a terminal, as in CI), with extra environment variables; in this
    process (what is checked is its output and files, not its process)."""
    command = ["run", "--runtime", "reference", "--out", str(tmp_path / name), *args]
    return conformance_here(*command, env={"GITHUB_STEP_SUMMARY": None, **(env or {})})


def gate_section(stdout: str) -> list[str]:
    """The gate's lines of a run's stdout: from the verdict to the report's path."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(("gate ", "not gated:")))
    end = next(i for i, line in enumerate(lines) if line.startswith("report:"))
    return lines[start:end]


# -- 1. the subset-safe gate -------------------------------------------------------------
def test_a_subset_without_an_entrys_op_passes_and_says_not_judged(tmp_path):
    folder = known(tmp_path)
    done = run(tmp_path, "ge", "-k", GE_INDICES, "--gate", "--known", str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    section = gate_section(done.stdout)
    assert section[0] == "gate PASSED: 60 discrepancies in 60 results, 60 known, 0 new"
    assert section[1:] == [
        "2 entries not judged: this run held no result in their scope: reference.yaml:2, "
        "reference.yaml:10 (-v: in full)"
    ]
    decided = json.loads((tmp_path / "ge" / "gate.json").read_text())
    assert decided["version"] == 2 and decided["decides"] and decided["passed"]
    assert [e["where"] for e in decided["unmatched"]] == [
        f"{folder / 'reference.yaml'}:2",
        f"{folder / 'reference.yaml'}:10",
    ]
    assert decided["fixed"] == []


def test_an_entry_whose_scope_was_run_and_conforms_still_fails(tmp_path):
    folder = known(tmp_path)
    done = run(tmp_path, "ge", "-k", "ge-*dtype*", "--gate", "--known", str(folder))
    assert done.returncode == 1, done.stdout + done.stderr
    section = gate_section(done.stdout)
    assert section[0].startswith("gate FAILED: 1 entry fixed upstream?; 60 discrepancies in ")
    assert section[1].startswith(f"FIXED UPSTREAM? {folder / 'reference.yaml'}:10 (reference)")
    assert section[-1] == (
        "1 entry not judged: this run held no result in their scope: reference.yaml:2 (-v: in full)"
    )


def test_the_shipped_openvino_baseline_gates_a_gatherelements_subset(tmp_path):
    """The issue's run: OpenVINO refuses GatherElements' index dtypes outside
    Tind (it accepts Gather's); a GatherElements-only gate once failed on the
    Gather entry, "fixed upstream?" without a single Gather result."""
    out = tmp_path / "ov"
    done = conformance_here("run", "--runtime", "openvino", "-k", GE_INDICES, "--gate",
                            "--out", str(out), "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert gate_section(done.stdout)[0].startswith("gate PASSED: ")
    assert "not judged: this run held no result in their scope" in done.stdout


def record(kind, violation=None, **extra):
    return {
        "runtime": "openvino", "case_id": "fuzz-1", "base_id": "fuzz-1", "op": "Gather",
        "opset": 13, "dtype": "complex64", "indices_dtype": "int64", "variant": "static",
        "kind": kind, "features": [], "source": "<generated>:0", "message": "",
        "expected": {"violation": violation} if violation else {"dtype": "complex64"},
        **extra,
    }  # fmt: skip


def test_only_results_that_could_show_the_outcome_judge_an_entry(tmp_path):
    """A refusal of a valid input: invalid inputs (rightly refused) and results
    the harness could not run are no evidence that it is fixed."""
    path = tmp_path / "openvino.yaml"
    path.write_text(
        "entries:\n  - signature: {dtype: complex64}\n    outcome: rejected\n"
        "    reason: r\n    clause: data-dtype\n"
    )
    entries = {"openvino": baseline.load_file(path)}
    invalid = [record("both_rejected", "index-out-of-range") for _ in range(40)]
    unsupported = [record("harness_unsupported") for _ in range(40)]
    decided = gate.check(invalid + unsupported, entries, {})
    assert decided.passed() and not decided.fixed and len(decided.not_judged) == 1
    valid = [record("pass") for _ in range(gate.FIXED_EVIDENCE)]
    decided = gate.check(invalid + valid, entries, {})
    assert len(decided.fixed) == 1 and decided.fixed[0].scope == {"pass": gate.FIXED_EVIDENCE}


# -- 2. the verdict first ----------------------------------------------------------------
def test_without_gate_the_first_line_says_not_gated_and_why_it_exits_1(tmp_path):
    done = run(tmp_path, "plain", "-k", GE_INDICES, "--no-progress")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "PASSED" not in done.stdout + done.stderr
    assert gate_section(done.stdout) == [
        "not gated: 60 discrepancies in 60 results, 60 known, 0 new; exit 1 because a run "
        "without --gate fails on any discrepancy (with --gate the baseline would pass it)"
    ]
    decided = json.loads((tmp_path / "plain" / "gate.json").read_text())
    assert decided["passed"] and not decided["decides"]
    # The report says the same: not gated, no PASSED, the reason first.
    html = (tmp_path / "plain" / "report.html").read_text(encoding="utf-8")
    box = html[html.index('id="verdict"') : html.index('id="families"')]
    assert "PASSED" not in box and "Not gated" in box
    assert "exit 1 because a run without --gate fails on any discrepancy" in box


def test_without_gate_and_no_discrepancy_it_exits_0(tmp_path):
    done = run(tmp_path, "clean", "-k", "gather-example-axis0*", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = gate_section(done.stdout)
    assert line.startswith("not gated: 0 discrepancies in ") and line.endswith("; exit 0")


def test_a_failing_verdict_names_its_new_groups_first(tmp_path):
    folder = known(tmp_path, "entries: []\n")
    done = run(tmp_path, "new", "-k", GE_INDICES, "--gate", "--known", str(folder))
    assert done.returncode == 1
    section = gate_section(done.stdout)
    assert section[0] == (
        "gate FAILED: 1 new discrepancy group (reference accepted_invalid GatherElements "
        "ge-indices-dtype-outside-tind (60)); 60 discrepancies in 60 results, 0 known, 60 new"
    )
    assert section[1].startswith("NEW: 60 discrepancies not in the baseline")


def test_verbose_shows_every_entry(tmp_path):
    folder = known(tmp_path)
    done = run(tmp_path, "v", "-k", GE_INDICES, "--gate", "--known", str(folder), "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    section = gate_section(done.stdout)
    assert section[1] == "2 entries not judged: this run held no result in their scope"
    assert section[2] == (
        f"  {folder / 'reference.yaml'}:2 (reference): op Gather, violation indices-dtype "
        "-> accepted_invalid"
    )
    assert section[3].startswith(f"  {folder / 'reference.yaml'}:10 (reference): case ge-every")
    # conformance gate has the same flag, and its first line is the verdict too
    gated = conformance_here("gate", str(tmp_path / "v"), "--known", str(folder), "--verbose")
    assert gated.returncode == 0
    assert gated.stdout.splitlines()[:2] == section[:2]
    condensed = conformance_here("gate", str(tmp_path / "v"), "--known", str(folder))
    assert condensed.stdout.splitlines()[1].endswith("(-v: in full)")


def test_passed_is_never_said_of_a_run_exiting_non_zero(tmp_path):
    """A harness error makes a run exit 2 whatever the gate says: its verdict
    line says FAILED with that reason, with or without --gate."""
    fake = gate.Gate(results=10, discrepant=[], unexpected=[], entries=[])
    troubles = ["3 harness error(s) (exit 2)"]
    assert verdict_line(fake, False, troubles=troubles) == (
        "gate FAILED: 3 harness error(s) (exit 2); 0 discrepancies in 10 results, 0 known, 0 new"
    )
    assert verdict_line(fake, False, decides=False, troubles=troubles, code=2) == (
        "not gated: 0 discrepancies in 10 results, 0 known, 0 new; exit 2: 3 harness error(s) "
        "(exit 2)"
    )
    lines = gate_lines(fake, False, "k", decides=False, troubles=["interrupted (exit 130)"],
                       code=130)  # fmt: skip
    assert lines == [
        "not gated: 0 discrepancies in 10 results, 0 known, 0 new; exit 130: interrupted (exit 130)"
    ]


# -- 3. output for CI --------------------------------------------------------------------
def test_outside_a_terminal_a_run_prints_progress_lines(tmp_path):
    slow = "tests.faulty_adapter:SlowAdapter"
    # One variant: a few seconds of 10 ms jobs, a dozen lines at one every 0.3 s.
    command = ["run", "--runtime", slow, "-k", "gather-*", "--variants", "static",
               "--batch-size", "1", "--out", str(tmp_path / "slow")]  # fmt: skip
    env = {"CONFORMANCE_PROGRESS_EVERY": "0.3"}
    done = conformance_here(*command, env=env)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("running: ")]
    assert len(lines) >= 2, done.stderr
    total = int(lines[0].split("/")[1].split()[0])
    assert total > 100
    for line in lines:
        assert " discrepancies so far, " in line and " elapsed, " in line
        assert line.endswith(" left"), line
    done_counts = [int(line.split()[1].split("/")[0]) for line in lines]
    assert done_counts == sorted(done_counts) and done_counts[-1] < total
    quiet = conformance_here(*command[:-1], str(tmp_path / "quiet"), "--no-progress", env=env)
    assert "running: " not in quiet.stderr


def test_summary_md_and_github_step_summary(tmp_path):
    folder = known(tmp_path, "entries: []\n")
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    md_file = tmp_path / "summary.md"
    done = run(tmp_path, "md", "-k", GE_INDICES, "--gate", "--known", str(folder),
               "--summary-md", str(md_file), env={"GITHUB_STEP_SUMMARY": str(step)})  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    text = md_file.read_text()
    lines = text.splitlines()
    assert lines[0] == "### conformance run"
    assert lines[2] == "**" + md(gate_section(done.stdout)[0]) + "**"
    assert "| runtime | kind | op | case id | count | example message |" in lines
    (row,) = [line for line in lines if line.startswith("| reference ")]
    cells = [cell.strip() for cell in row.strip("|").split(" | ")]
    assert cells[:5] == ["reference", "accepted\\_invalid", "GatherElements",
                         "ge-indices-dtype-outside-tind", "60"]  # fmt: skip
    assert "cases/gather\\_elements/dtypes.yaml:" in cells[5]
    assert "returned an output although the input violates indices-dtype" in cells[5]
    assert step.read_text() == "earlier step\n" + text + "\n"  # appended, not replaced
    # conformance gate appends the same verdict
    gated = conformance_here("gate", str(tmp_path / "md"), "--known", str(folder),
                             "--summary-md", str(tmp_path / "gate.md"))  # fmt: skip
    assert gated.returncode == 1
    assert (tmp_path / "gate.md").read_text() == text.replace("conformance run", "conformance gate")


def test_markdown_escapes_what_a_runtime_says():
    hostile = record("crash", message="a | b <img src=x> *bold* [link](x) \x1b[2J\nsecond line")
    decided = gate.check([hostile], {}, {})
    text = summary_markdown("t", decided, verdict_line(decided, False), [])
    (row,) = [line for line in text.splitlines() if line.startswith("| openvino ")]
    assert row.count(" | ") == 5  # the message's pipe is escaped: six cells
    assert "\\<img src=x\\>" in row and "\\*bold\\*" in row and "\\[link\\](x)" in row
    assert "\x1b" not in text and "\\\\x1b" in row and "second line" in row
