"""What several commands share: their common options, each defined once with
its argparse type, and what turns the parsed options into what the engine
takes (targets, workers, the baseline folder). Reading case files, run
folders and baselines is :mod:`.inputs`; the end of a run (gate, report,
exit code) :mod:`.finish`.

The options the pytest plugin shares with the commands (``--variants``,
``--known``) are defined here too, by functions that take the ``add``
callable (``parser.add_argument``, or pytest's ``group.addoption``), so
each has one definition.
"""

from __future__ import annotations

import argparse
import os
import re
from datetime import datetime
from pathlib import Path

from rich.console import Console

from conformance import adapters, shipped
from conformance.cases.check import DEFAULT_CASE_MEMORY
from conformance.cases.values import MAX_ELEMENTS
from conformance.engine import models, targets
from conformance.engine.pool import Timeouts
from conformance.engine.targets import Target
from conformance.gate import baseline
from conformance.report.terminal.escape import safe
from conformance.tables.profiles import PROFILES

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


class _Screen(Console):
    """A console whose printed strings go through :func:`conformance.report.terminal.escape.safe`
    (newlines kept): file names, runtime names and messages in them reach the
    terminal escaped, whichever command prints them."""

    def print(self, *objects, **kwargs) -> None:
        shown = (safe(o, lines=True) if isinstance(o, str) else o for o in objects)
        super().print(*shown, **kwargs)


def stderr() -> Console:
    # soft_wrap: long paths must not be broken; emoji: a name's :cat: stays text
    return _Screen(stderr=True, soft_wrap=True, emoji=False)


# -- case files, variants -------------------------------------------------------------
def add_case_paths(parser, flag: str | None = None) -> None:
    help_text = (
        "case files or folders (default: the shipped corpus); given ones replace it, "
        "and the word 'shipped' stands for it: shipped my/cases (a folder named shipped: "
        "./shipped)"
    )
    if flag:
        parser.add_argument(flag, nargs="+", action="extend", type=shipped.word_or_path,
                            metavar="PATH", help=help_text)  # fmt: skip
    else:
        parser.add_argument("paths", nargs="*", type=shipped.word_or_path, help=help_text)


def add_variants(add, **extra) -> None:
    """``--variants``: the model variants to run (``run``, the pytest plugin)."""
    add(
        "--variants",
        nargs="+",
        action="extend",
        choices=models.VARIANTS,
        metavar="VARIANT",
        help="model variants (default all five: " + ", ".join(models.VARIANTS) + ")",
        **extra,
    )


# -- runtimes, shards, sizes ----------------------------------------------------------
def add_runtime(parser) -> None:
    parser.add_argument(
        "--runtime",
        dest="runtimes",
        nargs="+",
        action="extend",
        metavar="NAME[:PROFILE]",
        help="targets to run (default: every installed built-in runtime: "
        + ", ".join(adapters.installed_builtins())
        + "; the compilers "
        + ", ".join(sorted(adapters.OPT_IN))
        + " only when named), each in its default profile unless one is named: "
        + "; ".join(f"{name}: {', '.join(known)}" for name, known in PROFILES.items())
        + "; an adapter registered in the conformance.adapters entry-point group by its "
        + "name; a module:Class adapter; a target of the --targets file by its name",
    )
    parser.add_argument(
        "--targets",
        type=Path,
        metavar="FILE",
        help="a YAML file of named targets (adapter, profile or properties, python: "
        "another environment's interpreter): all of them run beside those of --runtime, "
        "unless --runtime names some of them: then only those",
    )


def chosen_runtimes(args, err: Console | None = None) -> list[Target]:
    """The targets asked for; a TargetError (or the targets file's CaseErrors)
    says what is wrong.

    Without ``--runtime`` (and ``--targets``): every installed built-in
    runtime, default profile; those not installed are said in one line on
    ``err`` (stderr), each with its extra. ``--runtime`` names may name
    targets of the ``--targets`` file: then only the named ones of the file run;
    otherwise all of the file's run beside the ``--runtime`` ones. A built-in
    runtime named but not installed is an error naming its extra."""
    defined = targets.load_file(args.targets) if args.targets else []
    by_name = {t.name: t for t in defined}
    specs = list(args.runtimes or [])
    if not specs and not defined:
        specs = adapters.installed_builtins()
        skipped = [n for n in adapters.default_builtins() if n not in specs]
        if skipped:
            (err or stderr()).print(
                "not installed, skipped: "
                + ", ".join(f"{name} ({adapters.install_hint(name)})" for name in skipped),
                markup=False,
            )
    picked = [by_name[spec] for spec in specs if spec in by_name]
    chosen = targets.parse_all([spec for spec in specs if spec not in by_name])
    for target in chosen:
        missing = adapters.not_installed(target.adapter)
        if missing:
            raise targets.TargetError(missing)
    chosen += picked if picked else defined
    names = [t.name for t in chosen if t.name]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise targets.TargetError(f"target named twice: {', '.join(repeated)}")
    return chosen


# Workers per runtime at most: each is a process that loads the runtime (some
# 100 MB or more) and computes on the cores, so beyond a few per core more only
# wait for the cores and fill the memory; -j 100000 would start that many.
JOBS_PER_CORE = 4


def max_jobs() -> int:
    """The largest -j: :data:`JOBS_PER_CORE` per core of this machine."""
    return JOBS_PER_CORE * (os.cpu_count() or 1)


def jobs(text: str) -> int | str:
    """-j: a positive number up to :func:`max_jobs`, or 'auto'."""
    if text == "auto":
        return text
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a positive number of workers, or auto")
    if int(text) > max_jobs():
        raise argparse.ArgumentTypeError(
            f"{text!r}: at most {max_jobs()} workers per runtime ({JOBS_PER_CORE} per core, "
            f"{os.cpu_count() or 1} cores): more only wait for the cores, each holding a runtime "
            "in memory"
        )
    return int(text)


AUTO_JOBS = (
    "as many as leave each target's threads their cores: one for a target in its default "
    "profile; the header says"
)


def add_jobs(parser, auto: str = AUTO_JOBS) -> None:
    """-j/--jobs, and --gpu-workers for the GPU targets, which -j does not
    count; ``auto`` says what -j auto means for this command."""
    parser.add_argument(
        "-j",
        "--jobs",
        type=jobs,
        default="auto",
        metavar="N",
        help=f"worker processes per runtime (default auto: {auto}); "
        f"at most {JOBS_PER_CORE} per core; not for GPU targets (--gpu-workers)",
    )
    parser.add_argument(
        "--gpu-workers",
        type=gpu_workers,
        default=targets.DEFAULT_GPU_WORKERS,
        metavar="N",
        help="worker processes the GPU targets share, whatever -j says (default "
        f"{targets.DEFAULT_GPU_WORKERS}; each holds a CUDA context on the GPU: docs/gpu.md); "
        "a targets file's gpu_workers gives a target its own",
    )


MAX_GPU_WORKERS = 64  # as a targets file's gpu_workers (docs/schemas/targets.schema.json)


def gpu_workers(text: str) -> int:
    """--gpu-workers: 1 up to MAX_GPU_WORKERS."""
    return at_most(text, MAX_GPU_WORKERS, "GPU workers")


MAX_PACK = 1024  # cases per model: past a few dozen nothing is gained (engine/packs.py)


def pack_size(text: str) -> int:
    """Cases per model: 1 (each case alone) up to MAX_PACK."""
    return at_most(text, MAX_PACK, "cases per model")


def add_pack(parser) -> None:
    parser.add_argument(
        "--pack",
        type=pack_size,
        default=None,
        metavar="N",
        help="cases per model on every runtime (default: each runtime's measured size, "
        "32 for onnxruntime, openvino, tvm and iree, 1 for reference, tract and other "
        "adapters; the header says). 1 runs each case alone in its own one-node model. "
        "Whatever the size, a case that must be rejected or has an empty tensor runs "
        "alone, and every discrepancy seen in a pack is confirmed alone (docs/cli.md)",
    )


def workers(jobs: int | str, chosen: list[Target]) -> int:
    """Workers per target: -j as given, or for 'auto' as many as leave each
    target's threads their cores (conformance.engine.targets.auto_workers)."""
    if jobs != "auto":
        return int(jobs)
    return targets.auto_workers(chosen, os.cpu_count() or 1)


def shard(text: str) -> tuple[int, int]:
    """'I/N' with 1 <= I <= N: this process's share of the work."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise argparse.ArgumentTypeError(f"{text!r}: give I/N with 1 <= I <= N, e.g. 2/4")
    return int(match.group(1)), int(match.group(2))


def add_shard(parser, what: str) -> None:
    parser.add_argument(
        "--shard",
        type=shard,
        default=(1, 1),
        metavar="I/N",
        help=f"run shard I of N ({what}); `conformance report` merges the shards' folders",
    )


def size(text: str) -> int:
    """'512MiB', '2g', '1.5GiB' or plain bytes."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([kmgt]?)(i?b)?\s*", text.lower())
    if not match:
        raise ValueError(f"not a size: {text!r} (examples: 512MiB, 2GiB, 1000000)")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


# Numeric options are checked where argparse parses them, so a bad value exits
# 2 naming the option and the value before anything starts: a NaN timeout
# never fires (and is not JSON), a zero budget or memory runs nothing.
MAX_SECONDS = 30 * 24 * 3600.0


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0 (at most 30 days)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_SECONDS:  # false for NaN too
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a finite number of seconds > 0, at most {MAX_SECONDS:.0f} (30 days)"
        )
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number >= 1")
    return value


def element_cap(text: str) -> int:
    """Elements per tensor: 1 up to the case files' limit (conformance.cases.values)."""
    return at_most(text, MAX_ELEMENTS, "elements")


def at_most(text: str, maximum: int, unit: str) -> int:
    """A whole number from 1 up to ``maximum`` (of ``unit``)."""
    value = positive_int(text)
    if value > maximum:
        raise argparse.ArgumentTypeError(f"{text!r}: give at most {maximum} {unit}")
    return value


def positive_size(text: str) -> int:
    """A size as :func:`size` reads it, at least one byte."""
    try:
        value = size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a size of at least 1 byte")
    return value


# -- the gate --------------------------------------------------------------------------
def add_known(add, now: str | None = None, **extra) -> None:
    """``--known DIR...``, the baseline folders: what the gate of ``run`` and
    ``fuzz``, ``gate`` and the pytest plugin hold results against (default the
    shipped baselines; given folders replace them, the word ``shipped`` stands
    for them); for ``report`` and ``scoreboard``, which read runs gated
    already, ``now`` says what they do with it instead of reading each run's gate.json."""
    said = (
        "folders of <name>.yaml baselines, a target's entries the union of its file in each; "
        "given ones replace the shipped baselines, the word 'shipped' stands for them: "
        "shipped my/known (a folder named shipped: ./shipped)"
    )
    if now:
        meaning = f"{now} ({said}; default: the verdict each run's gate left in its gate.json)"
    else:
        meaning = f"{said} (default: the shipped baselines)"
    add("--known", nargs="+", action="extend", type=shipped.word_or_path, metavar="DIR",
        help=meaning, **extra)  # fmt: skip


def add_gate(parser, *, optional: bool = False) -> None:
    """The gate's options: ``--known`` and ``--allow-fixed``; where the gate
    is ``optional`` (``run``, ``model``: it decides the exit code only when
    asked), ``--gate`` first. In ``fuzz``, ``fuzz replay`` and ``gate`` it always decides."""
    if optional:
        parser.add_argument(
            "--gate",
            action="store_true",
            help="exit 0 when every discrepancy is a known one (cases/known/<runtime>.yaml)",
        )
    add_known(parser.add_argument)
    parser.add_argument(
        "--allow-fixed",
        action="store_true",
        help="do not fail on baseline entries that no longer reproduce (still reported)",
    )


def known_folder(args, err: Console) -> baseline.BaselineFolders | None:
    """The baseline folders: those of --known, the word 'shipped' standing for
    the shipped ones (None after saying so when one does not exist), else the
    shipped baselines (:func:`conformance.gate.baseline.folders`)."""
    folders = baseline.folders(args.known)
    said = baseline.missing(folders, args.known)
    if said:
        err.print(said, markup=False)
        return None
    return folders


def add_json(parser, what: str) -> None:
    """``--json FILE.json``: also ``what``, as JSON (``report``, ``scoreboard``)."""
    parser.add_argument("--json", type=Path, metavar="FILE.json", help=f"also {what}")


def default_out(kind: str) -> Path:
    """reports/<kind>-<time>: where a run or campaign goes without --out."""
    return Path("reports") / datetime.now().strftime(f"{kind}-%Y%m%d-%H%M%S")


def add_out(parser, kind: str) -> None:
    """``--out DIR``: the run's folder (default :func:`default_out` of ``kind``)."""
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help=f"output folder (default reports/{kind}-<time>)"
    )


def add_timeout(parser, timeouts: Timeouts, job: str, why: str) -> None:
    """``--timeout S``: seconds per ``job`` and runtime; the defaults said from
    ``timeouts`` (the engine's table), each runtime's own followed by ``why``."""
    own = ", ".join(f"{t:g} for {name}" for name, t in timeouts.by_adapter.items())
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=None,
        metavar="S",
        help=f"seconds per {job} and runtime (default {timeouts.default:g}"
        + (f"; {own}{why}" if own else "")
        + ")",
    )


def add_case_memory(parser, refused: str) -> None:
    """``--case-memory``: the memory guard, the same wherever the oracle computes."""
    parser.add_argument(
        "--case-memory",
        type=positive_size,
        default=DEFAULT_CASE_MEMORY,
        metavar="SIZE",
        help=f"cases declaring more than SIZE of inputs and output {refused} "
        f"(default {DEFAULT_CASE_MEMORY >> 30}GiB)",
    )
