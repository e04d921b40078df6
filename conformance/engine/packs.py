"""Packed execution: many cases in one model, so a run stops paying one compile per case.

Runs are compile-bound: OpenVINO takes far longer to compile a one-node model
than to run it, and a model of many independent nodes costs a fraction of
that per node (docs/development.md, "Pack sizes"). A **pack**
(:func:`conformance.engine.models.build_pack`) holds cases of one opset, one
variant and one data dtype, each with its own node, inputs, initializers and
output; one dtype per pack because runtimes refuse whole
dtypes (OpenVINO: complex, string), so a refused dtype fails its own packs, not
every pack it would share.

What never goes into a pack (:func:`packable`) runs alone, in its one-node model:

- a case the oracle says must be rejected: the runtime must reject *that* node;
- a case with an empty tensor (data, indices or output): where graph code
  breaks (OpenVINO 2025-2026 crashes with SIGFPE or returns the wrong shape),
  and one such case would fail every pack it joined;
- a case of a fed variant (static, dynamic) whose one-node model another case
  of the run already had (the same model key,
  :func:`conformance.engine.models.model_key`: shapes, or ranks): that model
  is compiled once per worker and cached, which beats any pack (a pack never
  repeats). Generated and fuzzed inputs repeat shapes all the time: packing
  them all made generated runs several times slower than --pack 1 (the
  figures: docs/development.md, "Pack sizes");
- a case whose data is large (:data:`conformance.engine.models.SHARED_BAKED_BYTES`
  or more: a model's embedding table) with cases of other data: the pack
  would carry one copy per case. Such a case packs only with the cases that
  share its data (:func:`sharing`: a model node's cases, which hold its
  constant), the pack holding it once (:func:`conformance.engine.models.build_pack`),
  in every variant but ``data_initializer``, whose one-node model (the table
  baked, the indices fed) is already the same for all of them and loaded
  once per worker; on every measured runtime, up to :data:`SHARED_SIZE`
  cases (:func:`shared_sizes`): each one-node model baking the table is a
  load of the table, and so is each run feeding it on OpenVINO (a copy),
  which the pack makes one (docs/development.md, Benchmarks).

Isolation stays exact (:class:`conformance.engine.schedule.Schedule` keeps
the books of a run's packs, by these rules):

- a pack that fails as a whole (it does not load or run, the worker crashes or
  times out, the adapter refuses it, it returns other than one output per case)
  is split in halves (:func:`split`); a half that fails again is split into
  single cases, each run alone: every failing case ends up judged alone;
- a discrepancy seen in a pack is re-run alone: the one-node model is the
  authority, the record holds its outcome (``confirmed``), and
  ``packed_kind`` when the pack gave another kind (the runtime handles that
  case differently in a bigger graph: a finding of its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from conformance.adapters import registry
from conformance.cases.case import Case
from conformance.engine import models
from conformance.engine.pool import Raw
from conformance.engine.worker import array_digest
from conformance.oracle import Verdict

# Cases per pack by adapter, each chosen by measurement and declared in its
# adapter file (Runtime.pack_size; the figures, dated, and the benchmark
# commands that reproduce them: docs/development.md, "Pack sizes"). Why these
# sizes: a compile-bound runtime gains little past 32 cases a pack, and a
# failing pack costs more to split the larger it is; a runtime that gains
# nothing from packing (an evaluator node by node, one whose time goes to
# restarting workers) runs alone. An adapter not measured runs alone too,
# until --pack says otherwise. A profile takes its adapter's size (ONNX
# Runtime's OpenVINO EP takes GatherElements only in packs: docs/cli.md,
# "ONNX Runtime's OpenVINO execution provider").
PACK_SIZES = {r.name: r.pack_size for r in registry.RUNTIMES if r.pack_size is not None}
UNMEASURED = 1


def sizes(adapters: dict[str, str | None], chosen: int | None) -> dict[str, int]:
    """Cases per pack for each runtime (name -> its adapter): ``chosen``
    (``--pack``) for every runtime, else each adapter's measured size."""
    if chosen is not None:
        return dict.fromkeys(adapters, chosen)
    return {name: PACK_SIZES.get(adapter or name, UNMEASURED) for name, adapter in adapters.items()}


# Cases per pack of cases sharing a large data array (:func:`sharing`) on each
# measured runtime, whatever its own pack size: such a pack saves loads of the
# table, not compiles, on an evaluator too (docs/development.md, Benchmarks).
SHARED_SIZE = 32


def shared_sizes(adapters: dict[str, str | None], chosen: int | None) -> dict[str, int]:
    """Cases per pack of cases sharing a large data array, by runtime:
    ``chosen`` (``--pack``), else :data:`SHARED_SIZE` on every measured
    runtime (an adapter not measured runs alone, as in :func:`sizes`)."""
    if chosen is not None:
        return dict.fromkeys(adapters, chosen)
    return {
        name: SHARED_SIZE if (adapter or name) in PACK_SIZES else UNMEASURED
        for name, adapter in adapters.items()
    }


def packable(case: Case, verdict: Verdict | None) -> bool:
    """Whether the case may share a model with others (see the module's
    docstring); one with large data only with those that share it (:func:`sharing`)."""
    return (
        verdict is not None
        and verdict.valid
        and case.data.size > 0
        and case.indices.size > 0
        and verdict.output.size > 0
    )


def large(case: Case) -> bool:
    """Whether the case's data is large: it packs only by :func:`sharing`."""
    return case.data.nbytes >= models.SHARED_BAKED_BYTES


def sharing(case: Case, variant: str) -> bytes | None:
    """The digest of the large data array by which the case packs in this
    variant (only with cases holding the same), or None: its data is small,
    or it runs alone (``data_initializer``: one model for all the cases
    sharing the table, loaded once per worker; strings: their bytes are not
    the array's)."""
    if not large(case) or case.data.dtype.hasobject or models.shared_by_key(variant):
        return None
    return array_digest(case.data)


class ModelKeys:
    """The one-node models a run has met, by model key (models.model_key),
    the last ``limit`` of them (as workers keep the last few hundred sessions)."""

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._seen: dict[tuple, None] = {}  # insertion order: the oldest first

    def repeated(self, key: tuple | None) -> bool:
        """Whether the key was met before; it is met now either way."""
        if key is None:
            return False
        if key in self._seen:
            return True
        if len(self._seen) >= self.limit:
            self._seen.pop(next(iter(self._seen)))
        self._seen[key] = None
        return False


@dataclass(eq=False)
class Pack:
    """A pack job's tag: its cases (the run's (case index, variant)), in graph order."""

    members: list[tuple[int, str]]
    variant: str
    runtimes: tuple[str, ...]
    halved: bool = False  # a half of a pack that failed


@dataclass(eq=False)
class Alone:
    """A case re-run alone after a pack, on one runtime: what the pack showed of it."""

    index: int
    variant: str
    size: int  # cases in the pack it came from
    kind: str | None = None  # the pack's outcome for it (None: the pack failed as a whole)
    message: str = ""
    raw: Raw | None = field(default=None, repr=False)  # its result in the pack


def split(pack: Pack) -> list[list[tuple[int, str]]]:
    """The parts a failed pack is run again as: halves the first time, single
    cases when a half fails too (a cause shared by many cases, such as a dtype
    the runtime refuses, would otherwise cost a pack per level)."""
    members = pack.members
    if pack.halved or len(members) <= 2:
        return [[member] for member in members]
    middle = len(members) // 2
    return [members[:middle], members[middle:]]


def shares(raw: Raw, count: int) -> list[Raw] | None:
    """Each case's result from a pack's: its own output, the pack's load and
    run times shared evenly; None when the pack failed as a whole."""
    if raw.status != "ok" or raw.outputs is None or len(raw.outputs) != count:
        return None
    load = None if raw.load_s is None else raw.load_s / count
    run = None if raw.run_s is None else raw.run_s / count
    return [
        Raw("ok", [output], load_s=load, run_s=run, cached=raw.cached, packed=True)
        for output in raw.outputs
    ]


def groups(runtimes: Sequence[str], size_of: dict[str, int]) -> list[tuple[int, tuple[str, ...]]]:
    """The runtimes by pack size: one job per group shares its model."""
    found: dict[int, list[str]] = {}
    for name in runtimes:
        found.setdefault(max(1, size_of.get(name, 1)), []).append(name)
    return [(size, tuple(names)) for size, names in found.items()]
