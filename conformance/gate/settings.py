"""What a front-end hands the engine and the gate: one plain, frozen
:class:`Settings`, made by one function, :func:`build`, from plain values.

Every front-end (``conformance run``, ``model``, ``fuzz``, ``fuzz replay``,
``export`` and the pytest plugin) turns its own options into these values and
calls :func:`build`; nothing past it sees a front-end's parsed options (an
``argparse.Namespace``, pytest's config). It holds the choice of targets
(``--runtime``, ``--targets``: without them every installed built-in
runtime), the baseline folders and the targets' baselines, the engine's
options, the output folder and how the run ends (whether the gate's verdict
decides the exit code, ``--allow-fixed``, ``-v``, ``--summary-md``). The
options the plugin shares with the commands (``--variants``, ``--known``, the
checked types of ``--pack`` and ``--timeout``) are defined here too, once.

It sits at the gate's step of the layering (CONTRIBUTING.md) because it
reads baselines; the engine's own options are :class:`conformance.engine.run.Options`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from conformance import adapters, shipped
from conformance.cases.check import DEFAULT_CASE_MEMORY
from conformance.engine import models, targets
from conformance.engine.pool import DEFAULT_BATCH, DEFAULT_WORKER_MEMORY
from conformance.engine.targets import Target
from conformance.gate import baseline
from conformance.gate.verdict import GateError, load_baselines

if TYPE_CHECKING:  # the engine's run is imported when settings for it are built
    from conformance.engine.run import Options


@dataclass(frozen=True)
class Settings:
    """What a front-end asked for, as the engine and the gate take it."""

    targets: tuple[Target, ...] = ()
    # the baseline folders (--known; default the shipped ones), and the folders as given
    known: baseline.BaselineFolders = field(default_factory=lambda: baseline.BaselineFolders(()))
    known_given: tuple[Path, ...] | None = None
    baselines: dict | None = None  # target name -> its entries; None: not gated
    ungated: tuple[str, ...] = ()  # why the baselines could not be read, in a run they do not stop
    engine: Options | None = None  # None: a front-end that runs nothing (export)
    variants: tuple[str, ...] = models.VARIANTS
    cases: tuple = ()  # the cases read, once the front-end has read them
    out: Path | None = None
    decides: bool = True  # the gate's verdict decides the exit code
    allow_fixed: bool = False
    verbose: bool = False
    summary_md: Path | None = None
    progress: bool = True  # a progress bar, or a line every 10 s outside a terminal
    command: str = "run"  # the command's name, as the Markdown summary's title says it

    @property
    def names(self) -> list[str]:
        """What results call each target."""
        return [t.name or t.adapter for t in self.targets]


def choose_targets(
    runtimes: Sequence[str] | None,
    targets_file: Path | None = None,
    say: Callable[[str], None] | None = None,
) -> list[Target]:
    """The targets asked for; a TargetError (or the targets file's CaseErrors)
    says what is wrong.

    Without ``runtimes`` (``--runtime``) and ``targets_file``: every installed
    built-in runtime, default profile; those not installed are said in one
    line through ``say``, each with its extra. ``runtimes`` may name targets
    of the targets file: then only the named ones of the file run; otherwise
    all of the file's run beside the others. A built-in runtime named but
    not installed is an error naming its extra."""
    defined = targets.load_file(targets_file) if targets_file else []
    by_name = {t.name: t for t in defined}
    specs = list(runtimes or [])
    if not specs and not defined:
        specs = adapters.installed_builtins()
        skipped = [n for n in adapters.default_builtins() if n not in specs]
        if skipped and say is not None:
            say(
                "not installed, skipped: "
                + ", ".join(f"{name} ({adapters.install_hint(name)})" for name in skipped)
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


def workers(jobs: int | str, chosen: Sequence[Target], at_least: int = 1) -> int:
    """Workers per target: -j as given, or for 'auto' as many as leave each
    target's threads their cores (:func:`conformance.engine.targets.auto_workers`),
    and at least ``at_least`` on two cores or more."""
    if jobs != "auto":
        return int(jobs)
    chosen_auto = targets.auto_workers(chosen, os.cpu_count() or 1)
    if (os.cpu_count() or 1) >= 2:
        return max(chosen_auto, at_least)
    return chosen_auto


def known_folders(given: Sequence[Path] | None, flag: str = "--known") -> baseline.BaselineFolders:
    """The baseline folders: those given, the word ``shipped`` standing for
    the shipped ones, else the shipped ones; a GateError saying so when one
    given does not exist."""
    folders = baseline.folders(given)
    said = baseline.missing(folders, given, flag)
    if said:
        raise GateError([said])
    return folders


def build(
    *,
    runtimes: Sequence[str] | None = None,
    targets_file: Path | None = None,
    choose: bool = True,
    say: Callable[[str], None] | None = None,
    known: Sequence[Path] | None = None,
    known_flag: str = "--known",
    gate: bool | None = None,
    allow_fixed: bool = False,
    read_baselines: bool = True,
    variants: Sequence[str] | None = None,
    engine: bool = True,
    jobs: int | str = 1,
    auto_at_least: int = 1,
    gpu_workers: int = targets.DEFAULT_GPU_WORKERS,
    batch_size: int = DEFAULT_BATCH,
    timeout: float | None = None,
    worker_memory: int = DEFAULT_WORKER_MEMORY,
    case_memory: int = DEFAULT_CASE_MEMORY,
    pack: int | None = None,
    out: Path | None = None,
    verbose: bool = False,
    summary_md: Path | None = None,
    progress: bool = True,
    command: str = "run",
) -> Settings:
    """The settings of a front-end's options, checked in the order a run
    meets them: the targets (unless not ``choose``: ``export``; ``say`` gets
    the line of built-ins not installed), the gate's options (``gate``: True
    or False where ``--gate`` makes the gate decide, None where it always
    does: ``--known`` and ``--allow-fixed`` without ``--gate`` are a
    GateError), the baseline folders (``known``; one missing is a GateError
    naming ``known_flag``) and, with ``read_baselines``, the targets'
    baselines: a bad file is a GateError where the gate decides, else its
    problems are kept in ``ungated`` and the run goes on without them. With
    ``engine``, the engine's options (-j ``jobs``: 'auto' gives at least
    ``auto_at_least`` workers on two cores or more)."""
    chosen = choose_targets(runtimes, targets_file, say) if choose else []
    decides = gate is not False
    if gate is False and (known is not None or allow_fixed):
        raise GateError(["--known and --allow-fixed are options of the gate: add --gate"])
    folders = known_folders(known, known_flag)
    baselines: dict | None = None
    ungated: tuple[str, ...] = ()
    if read_baselines:
        try:
            baselines = load_baselines(folders, {t.name or t.adapter: t.adapter for t in chosen})
        except GateError as error:
            if decides:
                raise
            ungated = tuple(error.problems)
    chosen_variants = tuple(dict.fromkeys(variants or models.VARIANTS))
    options = None
    if engine:
        from conformance.engine.run import Options

        options = Options(
            runtimes=chosen,
            variants=chosen_variants,
            workers=workers(jobs, chosen, auto_at_least),
            workers_chosen="auto" if jobs == "auto" else "given",
            gpu_workers=gpu_workers,
            batch_size=batch_size,
            timeout=timeout,
            worker_memory=worker_memory,
            case_memory=case_memory,
            pack=pack,
        )
    return Settings(
        targets=tuple(chosen),
        known=folders,
        known_given=None if known is None else tuple(known),
        baselines=baselines,
        ungated=ungated,
        engine=options,
        variants=chosen_variants,
        out=out,
        decides=decides,
        allow_fixed=allow_fixed,
        verbose=verbose,
        summary_md=summary_md,
        progress=progress,
        command=command,
    )


# -- the options the front-ends share ---------------------------------------------------
# Defined once, here below the front-ends, by functions that take the ``add``
# callable (``parser.add_argument``, or pytest's ``group.addoption``), with the
# types they are checked by: the commands (conformance.cli.options) and the
# pytest plugin (--conformance-variants, --conformance-known, -pack, -timeout)
# refuse the same values with the same words.
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


MAX_PACK = 1024  # cases per model: past a few dozen nothing is gained (engine/packs.py)


def pack_size(text: str) -> int:
    """Cases per model: 1 (each case alone) up to MAX_PACK."""
    return at_most(text, MAX_PACK, "cases per model")


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


def at_most(text: str, maximum: int, unit: str) -> int:
    """A whole number from 1 up to ``maximum`` (of ``unit``)."""
    value = positive_int(text)
    if value > maximum:
        raise argparse.ArgumentTypeError(f"{text!r}: give at most {maximum} {unit}")
    return value


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
