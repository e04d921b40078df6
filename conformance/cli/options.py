"""What several commands share: their common options, each defined once with
its argparse type. What the parsed options become (targets, workers, the
baseline folders and baselines, the engine's options) is
:func:`conformance.gate.settings.build`'s; reading case files and run
folders is :mod:`.inputs`; the end of a run (gate, report, exit code)
:mod:`.finish`.

The options the pytest plugin shares with the commands (``--variants``,
``--known``, the checked types of ``--pack`` and ``--timeout``) are defined
once in :mod:`conformance.gate.settings`, below both front-ends (the plugin
imports nothing of the cli), and taken from there.
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
from conformance.engine import packs, targets
from conformance.engine.pool import Timeouts

# The options and checked types the pytest plugin shares with the commands
# are defined below the front-ends, in conformance.gate.settings (the plugin
# imports nothing of the cli); the commands take them from here.
from conformance.gate.settings import MAX_PACK as MAX_PACK
from conformance.gate.settings import MAX_SECONDS as MAX_SECONDS
from conformance.gate.settings import Settings, build
from conformance.gate.settings import add_known as add_known
from conformance.gate.settings import add_variants as add_variants
from conformance.gate.settings import at_most as at_most
from conformance.gate.settings import pack_size as pack_size
from conformance.gate.settings import positive_int as positive_int
from conformance.gate.settings import positive_seconds as positive_seconds
from conformance.report.terminal.escape import safe

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
        + "; only when named: "
        + ", ".join(sorted(adapters.OPT_IN))
        + "), each in its default profile unless one is named: "
        + "; ".join(
            f"{name}: {', '.join(known)}" for name, known in adapters.registry.PROFILES.items()
        )
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


def _and(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def _measured_sizes() -> str:
    """Each measured pack size with its runtimes (``32 for a, b and c, 1 for d
    and other adapters``): the unmeasured size is every other adapter's."""
    by_size: dict[int, list[str]] = {}
    for name, size in packs.PACK_SIZES.items():
        by_size.setdefault(size, []).append(name)
    by_size.setdefault(packs.UNMEASURED, [])
    said = []
    for size in sorted(by_size, reverse=True):
        names = by_size[size] + (["other adapters"] if size == packs.UNMEASURED else [])
        said.append(f"{size} for {_and(names)}")
    return ", ".join(said)


def add_pack(parser) -> None:
    parser.add_argument(
        "--pack",
        type=pack_size,
        default=None,
        metavar="N",
        help="cases per model on every runtime (default: each runtime's measured size, "
        + _measured_sizes()
        + "; the header says). 1 runs each case alone in its own one-node model. "
        "Whatever the size, a case that must be rejected or has an empty tensor runs "
        "alone, and every discrepancy seen in a pack is confirmed alone (docs/cli.md)",
    )


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


def element_cap(text: str) -> int:
    """Elements per tensor: 1 up to the case files' limit (conformance.cases.values)."""
    return at_most(text, MAX_ELEMENTS, "elements")


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


def add_json(parser, what: str) -> None:
    """``--json FILE.json``: also ``what``, as JSON (``report``, ``scoreboard``)."""
    parser.add_argument("--json", type=Path, metavar="FILE.json", help=f"also {what}")


def default_out(kind: str) -> Path:
    """reports/<kind>-<time>: where a run or campaign goes without --out."""
    return Path("reports") / datetime.now().strftime(f"{kind}-%Y%m%d-%H%M%S")


def settings_of(args, kind: str, err: Console, **more) -> Settings:
    """The settings (:func:`conformance.gate.settings.build`) of a command that
    runs targets (``run``, ``model``, ``fuzz``, ``fuzz replay``): the options they
    all have, its output folder (default :func:`default_out` of ``kind``), lines
    said on ``err``; ``more``: the command's own options."""
    return build(
        runtimes=args.runtimes,
        targets_file=args.targets,
        say=lambda line: err.print(line, markup=False),
        known=args.known,
        allow_fixed=args.allow_fixed,
        jobs=args.jobs,
        gpu_workers=args.gpu_workers,
        timeout=args.timeout,
        out=args.out or default_out(kind),
        verbose=args.verbose,
        summary_md=args.summary_md,
        command=args.command,
        **more,
    )


def run_settings(args, kind: str, err: Console) -> Settings:
    """:func:`settings_of` a command that runs cases (``run``, ``model``): with
    the gate, the variants, the engine's limits, the pack and the progress line."""
    return settings_of(
        args,
        kind,
        err,
        # Without --gate the verdict is still written (gate.json: the report marks
        # each group known or new from it), but it does not decide the exit code.
        gate=args.gate,
        variants=args.variants,
        batch_size=args.batch_size,
        worker_memory=args.worker_memory,
        case_memory=args.case_memory,
        pack=args.pack,
        progress=not args.no_progress,
    )


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
