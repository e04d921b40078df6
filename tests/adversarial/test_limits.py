"""Limits of the machine, met by real processes: an output folder that cannot
be written (read-only) or fills up (a full disk, or a file size limit) ends a
command with exit 2 and one line naming the file and the system's reason,
never a traceback, never a verdict printed as if it stood, and every result
recorded before the failure stays a whole line of results.jsonl; and -j has
an upper bound, refused by argparse before anything starts."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import options
from conformance.engine import records
from tests.conftest import REPO, conformance, conformance_here

SMALL = ["--runtime", "onnxruntime", "-k", "gather-example-axis0", "--variants", "static",
         "--no-progress"]  # fmt: skip
# About 460 results of some 550 bytes each: more than the limits below let through.
MANY = ["--runtime", "onnxruntime", "-k", "gather-every-dtype*", "--no-progress"]
ROOT = os.geteuid() == 0
UNSHARE = shutil.which("unshare")


# -- -j ---------------------------------------------------------------------------------------
def test_jobs_has_an_upper_bound_refused_by_argparse(tmp_path):
    most = options.max_jobs()
    assert most == options.JOBS_PER_CORE * (os.cpu_count() or 1)
    assert options.jobs(str(most)) == most and options.jobs("auto") == "auto"
    for text in (str(most + 1), "100000", "9" * 40, "0", "-1", "１"):
        with pytest.raises(argparse.ArgumentTypeError):
            options.jobs(text)
    # Were -j taken, these would still exit 2 (no such runtime) before starting workers.
    fuzz = ["fuzz", "--time-budget", "1", "--seed", "1"]
    for command in (["run"], fuzz):
        command = [*command, "--runtime", "no-such-runtime"]
        out = tmp_path / command[0]
        done = conformance(*command, "-j", "100000", "--out", str(out))
        assert done.returncode == 2, done.stdout + done.stderr
        assert (
            f"error: argument -j/--jobs: '100000': at most {most} workers per runtime"
            in done.stderr
        ), done.stderr
        assert "Traceback" not in done.stderr and not out.exists()


# -- a read-only folder -------------------------------------------------------------------------
def _probe_read_only_mount(folder: Path) -> bool:
    """Whether this root can mount a read-only tmpfs in a mount namespace of its own."""
    if not UNSHARE:
        return False
    done = subprocess.run(
        [*_read_only_prefix(folder), "sh", "-c", 'touch "$1/x"', "sh", str(folder)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done.returncode != 0 and "Read-only file system" in done.stderr


def _read_only_prefix(folder: Path) -> list[str]:
    # Root ignores permissions: the folder becomes a read-only tmpfs for this
    # command only (a private mount namespace, gone with the process).
    script = 'mount -t tmpfs -o ro,size=64k tmpfs "$1" && shift && exec "$@"'
    return [UNSHARE, "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(folder)]


@pytest.fixture
def read_only(tmp_path):
    """(folder, how to run a conformance command so that the folder is read-only to it,
    the system's reason)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    base = [sys.executable, "-m", "conformance"]
    if not ROOT:
        folder.chmod(0o555)
        yield folder, base, "Permission denied"
        folder.chmod(0o755)
        return
    if not _probe_read_only_mount(folder):
        # Environment only: root ignores permissions, so without a private mount
        # there is no folder root cannot write to (ran here and in CI: unshare works).
        pytest.skip("running as root without unshare and mount: no read-only folder to test")
    yield folder, [*_read_only_prefix(folder), *base], "Read-only file system"


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("limits") / "run"
    done = conformance_here("run", *SMALL, "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _last_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    return done.stderr.strip().splitlines()[-1]


def test_outputs_in_a_read_only_folder_exit_2_naming_the_file(read_only, finished, tmp_path):
    folder, command, reason = read_only
    cases = [  # (arguments, the file the error names)
        (["run", *SMALL, "--out", str(folder / "run")], folder / "run"),
        (["fuzz", "--runtime", "onnxruntime", "--time-budget", "2", "--seed", "1",
          "--no-progress", "--out", str(folder / "fz")], folder / "fz"),
        (["report", str(finished), "-o", str(folder / "r.html")], folder / "r.html"),
        (["report", str(finished), "-o", str(tmp_path / "r.html"), "--junit",
          str(folder / "j.xml")], folder / "j.xml"),
        (["gate", str(finished), "--out", str(folder / "g")], folder / "g"),
        (["diff", str(finished), str(finished), "-o", str(folder / "d.html")], folder / "d.html"),
    ]  # fmt: skip
    for arguments, named in cases:
        done = subprocess.run([*command, *arguments], cwd=REPO, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert _last_line(done) == f"error: {named}: {reason}", (arguments, done.stderr)
        # A verdict that could not be written is not printed as one.
        assert "gate PASSED" not in done.stdout and "results in both runs" not in done.stdout


# -- a full disk --------------------------------------------------------------------------------
def _file_size_limit(limit: int):
    def limited() -> None:  # in the child, before exec: writes past `limit` fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return limited


def _limited(limit: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance", *args], cwd=REPO,
                          preexec_fn=_file_size_limit(limit), capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def _whole_lines(results: Path) -> list[dict]:
    """Every record of results.jsonl, each a whole line (the file ends with one)."""
    data = results.read_bytes()
    assert data and data.endswith(b"\n"), data[-200:]
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def test_a_full_disk_in_the_middle_of_a_run_keeps_whole_lines(tmp_path):
    out = tmp_path / "run"
    done = _limited(20_000, "run", *MANY, "--out", str(out))
    assert _last_line(done) == f"error: {out / records.RESULTS}: File too large"
    assert _whole_lines(out / records.RESULTS)  # what was recorded before the failure
    assert (out / records.RESULTS).stat().st_size <= 20_000
    summary = json.loads((out / records.SUMMARY).read_text())
    assert "File too large" in summary["error"], summary  # the folder says it is not whole
    gated = conformance_here("gate", str(out))  # never a verdict on part of a run
    assert gated.returncode == 2 and "gate PASSED" not in gated.stdout, gated.stdout


def test_a_full_disk_during_a_fuzz_campaign_exits_2_naming_the_file(tmp_path):
    out = tmp_path / "fz"
    # Bounded by examples far past what fills 30 000 bytes of results, not by a
    # 6 s budget that a loaded machine spends before it writes that much.
    done = _limited(30_000, "fuzz", "--runtime", "onnxruntime", "--max-examples", "100000",
                    "--time-budget", "3600", "--seed", "1", "--no-progress",
                    "--out", str(out))  # fmt: skip
    line = _last_line(done)
    assert line.startswith(f"error: {out}/") and line.endswith(": File too large"), line
    _whole_lines(out / records.RESULTS)
    assert not list(out.rglob("*.partial"))  # nothing half-written is left


def test_a_report_too_large_for_the_disk_leaves_nothing_half_written(finished, tmp_path):
    page = tmp_path / "report.html"
    done = _limited(10_000, "report", str(finished), "-o", str(page))
    assert _last_line(done) == f"error: {page}: File too large"
    assert not page.exists() and not list(tmp_path.glob("*.partial"))


@pytest.mark.skipif(not (ROOT and UNSHARE), reason="a small tmpfs needs root and unshare")
def test_no_space_left_on_a_real_small_disk_keeps_whole_lines(tmp_path):
    disk, kept = tmp_path / "disk", tmp_path / "kept.jsonl"
    disk.mkdir()
    out = disk / "run"
    # A 48 KiB disk for this command only; what it held is copied out before it goes.
    script = (
        'mount -t tmpfs -o size=48k tmpfs "$1" || exit 99; shift; "$@"; code=$?; '
        f'cp "{out / records.RESULTS}" "{kept}"; exit $code'
    )
    done = subprocess.run(
        [UNSHARE, "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(disk),
         sys.executable, "-m", "conformance", "run", *MANY, "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode == 99:
        # Environment only (no mount namespace); the same failure is provoked
        # everywhere by RLIMIT_FSIZE in test_a_full_disk_in_the_middle_of_a_run_keeps_whole_lines.
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    line = _last_line(done)
    assert line.startswith(f"error: {out}/") and line.endswith(": No space left on device"), line
    assert len(_whole_lines(kept)) > 10


def test_results_stay_whole_when_an_append_fails(tmp_path):
    """The writer itself: a failed append cuts the file back to its last whole
    line; the whole lines of the failed append that fit stay (a run's first
    flush may hold a whole pack's results)."""
    path = tmp_path / "results.jsonl"
    code = (
        "import resource, signal\n"
        "from conformance.engine import files\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        f"out = files.open_append({str(path)!r})\n"
        "for batch in range(100):\n"
        "    for n in range(3):\n"
        '        out.write(\'{"n": %d, "pad": "%s"}\\n\' % (batch * 3 + n, \'x\' * 40))\n'
        "    try:\n"
        "        out.flush()\n"
        "    except OSError as error:\n"
        "        print(error.filename, error.strerror)\n"
        "        break\n"
        "out.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{path} File too large"
    kept = _whole_lines(path)
    assert [r["n"] for r in kept] == list(range(len(kept)))
    assert 1000 - 60 < path.stat().st_size <= 1000  # every whole line that fit (~57 bytes each)
