"""One drive of a run, scheduled: cases into jobs (packed or alone), results back to cases.

:meth:`conformance.engine.run.Run.drive` feeds the workers from a
:class:`Schedule` and hands it every result; the schedule keeps the books of
packed execution by the rules of :mod:`conformance.engine.packs`:

- the cases in flight, and which (variant, runtime) results each still awaits;
- the packs being filled, one per (runtimes, opset, variant, dtype), and the
  cases that run alone (not packable, a model met before, a pack size of 1);
- the follow-up jobs (``more``), which the pool runs before the rest: the
  halves of a pack that failed as a whole, and each case a pack showed as a
  discrepancy, re-run alone on that runtime (unless the caller's ``confirm``
  says that one need not be: the fuzz campaign confirms the first few of
  each bug; the others are recorded as the pack showed them, with
  ``confirmed: false`` and a note that the verdict rests on the pack);
- what a pack showed of a case until its alone run comes back.

It writes nothing and judges only through :func:`conformance.engine.judge.judge`:
every result it settles comes back as a :class:`Settled`, which the run
records (in the order given).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, cast

from conformance.cases.case import Case
from conformance.cases.check import over_memory, verdict_of
from conformance.engine import models, packs
from conformance.engine.judge import DISCREPANCIES, Outcome, judge
from conformance.engine.packs import Alone, Pack
from conformance.engine.pool import Job, Raw
from conformance.messages import first_line
from conformance.oracle import Verdict

# (case, variant, tag, runtimes or None for all, model key or None) -> a one-node job
OneNode = Callable[[Case, str, object, Sequence[str] | None, tuple | None], Job]
Item = tuple[Case, Sequence[str]] | tuple[Case, Sequence[str], Sequence[str]]


class Settled(NamedTuple):
    """One result to record. ``ran``: False when nothing ran on that runtime
    (the memory guard refused the case, or the time budget ran out first)."""

    case: Case
    variant: str
    runtime: str
    verdict: Verdict | None
    outcome: Outcome
    raw: Raw
    ran: bool = True


# a discrepancy as a pack showed it (its share of the pack's result) -> whether to re-run it alone
Confirm = Callable[[Settled], bool]


@dataclass
class _Pending:
    """A case in flight: its verdict, and the results still to come."""

    case: Case
    verdict: Verdict
    awaiting: Counter  # (variant, runtime) -> results still to come
    done: int = 0  # results settled
    # (variant, runtime) -> (pack size, its result): the last pack that failed as a whole
    failed: dict[tuple[str, str], tuple[int, Raw]] = field(default_factory=dict)


class Schedule:
    """The jobs of one ``Run.drive`` and the bookkeeping of their results.

    ``one_node`` makes a case's one-node job (the run's model cache);
    ``check(case, verdict)`` is told every case that runs (the run notes case
    problems); ``first``: the index of the first case (indices go on across
    the drives of a run).
    """

    def __init__(
        self,
        runtimes: Sequence[str],
        pack_sizes: dict[str, int],
        model_keys: packs.ModelKeys,
        case_memory: int,
        one_node: OneNode,
        check: Callable[[Case, Verdict], object],
        first: int = 0,
        confirm: Confirm | None = None,
        shared_sizes: dict[str, int] | None = None,
    ) -> None:
        self.runtimes = list(runtimes)
        self.pack_sizes = pack_sizes
        # cases per pack of cases sharing a large data array (packs.shared_sizes)
        self.shared_sizes = pack_sizes if shared_sizes is None else shared_sizes
        self.model_keys = model_keys
        self.case_memory = case_memory
        self._one_node = one_node
        self._check = check
        self._confirm = confirm
        self._next = first
        self.cases = 0  # cases taken from the items so far
        self.more: deque[Job] = deque()  # follow-ups: packs split, discrepancies re-run alone
        self._pending: dict[int, _Pending] = {}
        self._refused: list[Settled] = []  # results of cases the memory guard stopped
        # (index, variant, runtime) -> what the pack showed, awaiting its alone run
        self._unconfirmed: dict[tuple, Alone] = {}
        self._items: Iterator[Item] = iter(())

    # -- cases into jobs ------------------------------------------------------
    def jobs(self, items: Iterable[Item]) -> Iterator[Job]:
        """The jobs for each (case, variants) on every runtime, or each (case,
        variants, runtimes) on those, taken from ``items`` as the pool asks."""
        self._items = iter(items)
        return self._jobs()

    def _jobs(self) -> Iterator[Job]:
        # (runtimes, opset, variant, dtype, shared data's digest or None) -> members
        filling: dict[tuple, list] = {}
        for case, variants, *only in self._items:
            index, self._next = self._next, self._next + 1
            chosen = [rt for rt in self.runtimes if not only or rt in only[0]]
            self.cases += 1
            refused_why = over_memory(case, self.case_memory)
            if refused_why:
                outcome, raw = Outcome("harness_unsupported", refused_why), Raw("unsupported")
                for variant in variants:
                    for runtime in chosen:
                        self._refused.append(
                            Settled(case, variant, runtime, None, outcome, raw, ran=False)
                        )
                continue
            if not chosen:
                continue
            verdict = verdict_of(case, self.case_memory)
            self._check(case, verdict)
            awaiting = Counter((variant, runtime) for variant in variants for runtime in chosen)
            self._pending[index] = _Pending(case, verdict, awaiting)
            shared = packs.packable(case, verdict)
            large = packs.large(case)
            sized = packs.groups(chosen, self.pack_sizes)
            for variant in variants:
                by_itself: list[str] = []
                key = models.model_key(
                    case.op, case.opset, case.data, case.indices, case.axis, variant,
                    case.updates, case.reduction,
                )  # fmt: skip
                cached = self.model_keys.repeated(key)
                # large data packs only with the cases that share it, cached or not
                # (each model or run of it is a load or copy of the table: packs.sharing)
                digest = packs.sharing(case, variant) if shared else None
                if digest is not None:
                    each, cached = packs.groups(chosen, self.shared_sizes), False
                else:
                    each = [(1, tuple(chosen))] if large else sized
                for size, group in each:
                    if size == 1 or not shared or cached:
                        by_itself += group
                        continue
                    packing = (group, case.opset, variant, case.dtype, digest)
                    members = filling.setdefault(packing, [])
                    members.append((index, variant))
                    if len(members) >= size:
                        yield self._pack_job(filling.pop(packing), variant, group)
                if by_itself:
                    alone_on = None if len(by_itself) == len(self.runtimes) else by_itself
                    yield self._one_node(case, variant, (index, variant), alone_on, key)
        for (group, _, variant, _, _), members in filling.items():
            if len(members) == 1:  # a pack of one is its one-node model
                ((index, _),) = members
                yield self._one_node(
                    self._pending[index].case, variant, (index, variant), group, None
                )
            else:
                yield self._pack_job(members, variant, group)

    def _pack_job(self, members: list, variant: str, group: tuple, halved: bool = False) -> Job:
        cases = [self._pending[index].case for index, _ in members]
        model, tail = models.serialized_pack(cases, variant)
        return Job(
            None,  # a pack never repeats: its session is not kept
            model,
            models.pack_feeds(cases, variant),
            Pack(members, variant, group, halved),
            group,
            tail=tail,
        )

    def _alone(self, tag: Alone, runtime: str) -> None:
        """Run a case of a pack again in its own one-node model, on one runtime."""
        self._unconfirmed[(tag.index, tag.variant, runtime)] = tag
        case = self._pending[tag.index].case
        self.more.append(self._one_node(case, tag.variant, tag, [runtime], None))

    # -- results back to cases ------------------------------------------------
    def settle(self, job: Job, runtime: str, raw: Raw) -> list[Settled]:
        """What one job's result on one runtime settles (nothing yet, when it
        calls for follow-ups)."""
        tag = job.tag
        if raw.lost:  # the target's worker never ran it: each case says so, none is split
            if isinstance(tag, Pack):
                members = tag.members
            elif isinstance(tag, Alone):
                members = [(tag.index, tag.variant)]
                self._unconfirmed.pop((tag.index, tag.variant, runtime), None)
            else:  # a one-node job's tag: (case index, variant)
                members = [cast(tuple[int, str], tag)]
            return [
                self._finish(index, variant, runtime, raw)._replace(ran=False)
                for index, variant in members
            ]
        if isinstance(tag, Pack):
            return self._packed(tag, runtime, raw)
        if isinstance(tag, Alone):
            return [self._confirmed(tag, runtime, raw)]
        index, variant = cast(tuple[int, str], tag)  # a one-node job's
        return [self._finish(index, variant, runtime, raw)]

    def refused(self) -> list[Settled]:
        """The results of the cases the memory guard stopped, taken since last asked."""
        taken = []
        while self._refused:
            taken.append(self._refused.pop())
        return taken

    def _finish(
        self, index: int, variant: str, runtime: str, raw: Raw, outcome: Outcome | None = None
    ) -> Settled:
        waiting = self._pending[index]
        outcome = outcome or judge(waiting.verdict, raw, waiting.case)
        waiting.awaiting[(variant, runtime)] -= 1
        if not waiting.awaiting[(variant, runtime)]:
            del waiting.awaiting[(variant, runtime)]
        waiting.done += 1
        if not waiting.awaiting:
            del self._pending[index]
        return Settled(waiting.case, variant, runtime, waiting.verdict, outcome, raw)

    def _packed(self, tag: Pack, runtime: str, raw: Raw) -> list[Settled]:
        """A pack's result on one runtime: each case judged from its own
        output, discrepancies re-run alone; a failed pack split."""
        size = len(tag.members)
        each = packs.shares(raw, size)
        if each is None:
            for index, variant in tag.members:
                self._pending[index].failed[(variant, runtime)] = (size, raw)
            for part in packs.split(tag):
                if len(part) == 1:
                    ((index, variant),) = part
                    self._alone(Alone(index, variant, size), runtime)
                else:
                    self.more.append(self._pack_job(part, tag.variant, (runtime,), halved=True))
            return []
        settled = []
        for (index, variant), member in zip(tag.members, each, strict=True):
            waiting = self._pending[index]
            outcome = judge(waiting.verdict, member, waiting.case)
            trusted = (
                outcome.kind in DISCREPANCIES
                and self._confirm is not None
                and not self._confirm(
                    Settled(waiting.case, variant, runtime, waiting.verdict, outcome, member)
                )
            )
            if trusted:  # the caller takes the pack's word for it
                note = "; ".join(filter(None, [member.note, (
                    f"rests on the pack: seen in a model of {size} cases, not re-run alone "
                    "(discrepancies of its cause were confirmed alone often enough)"
                )]))  # fmt: skip
                kept = replace(member, confirmed=False, note=note)
                settled.append(self._finish(index, variant, runtime, kept, outcome))
            elif outcome.kind in DISCREPANCIES:
                seen = Alone(index, variant, size, outcome.kind, outcome.message)
                seen.raw = member
                self._alone(seen, runtime)
            else:
                settled.append(self._finish(index, variant, runtime, member, outcome))
        return settled

    def _confirmed(self, tag: Alone, runtime: str, raw: Raw) -> Settled:
        del self._unconfirmed[(tag.index, tag.variant, runtime)]
        waiting = self._pending[tag.index]
        outcome = judge(waiting.verdict, raw, waiting.case)
        unjudged = outcome.kind == "harness_unsupported" and not outcome.details.get(
            "harness_error"
        )
        if tag.kind is not None and unjudged:
            # Alone, the runtime cannot be judged on this case (e.g. ONNX Runtime
            # does not give a lone GatherElements node to the OpenVINO EP): the
            # pack is its only verdict, kept and marked unconfirmed.
            assert tag.raw is not None  # the pack's result comes with its outcome (kind)
            note = "; ".join(filter(None, [tag.raw.note, (
                f"not confirmed alone: in a model of {tag.size} cases it was {tag.kind}; "
                f"alone, harness_unsupported ({first_line(outcome.message)})"
            )]))  # fmt: skip
            kept = replace(tag.raw, packed=True, confirmed=False, note=note)
            return self._finish(tag.index, tag.variant, runtime, kept)
        note = raw.note
        differs = tag.kind is not None and tag.kind != outcome.kind
        if differs:
            note = "; ".join(filter(None, [note, (
                f"behaves differently when packed: in a model of {tag.size} cases it was "
                f"{tag.kind} ({first_line(tag.message)}); alone, {outcome.kind}"
            )]))  # fmt: skip
        raw = replace(
            raw,
            packed=True,
            confirmed=True,
            packed_kind=tag.kind if differs else None,
            note=note,
        )
        return self._finish(tag.index, tag.variant, runtime, raw, outcome)

    # -- when the workers stop ------------------------------------------------
    def unconfirmed(self) -> list[Settled]:
        """Discrepancies a pack showed whose alone run never came (the time
        budget ran out, Ctrl-C): settled as the pack showed them, unconfirmed."""
        settled = [
            self._finish(index, variant, runtime, replace(tag.raw, confirmed=False))
            for (index, variant, runtime), tag in self._unconfirmed.items()
            if tag.raw is not None
        ]
        self._unconfirmed.clear()
        return settled

    def not_run(self) -> list[Settled]:
        """Every result still awaited of a case that has others: the time
        budget stopped the workers before it ran on that runtime (a pack's
        half never re-run, a job dropped). Each is ``harness_unsupported``
        with a message starting "not run", so that every case a run counts
        has a record for each of its (variant, runtime)."""
        settled = []
        for index, waiting in list(self._pending.items()):
            if not waiting.done:
                continue  # nothing of it ran: not counted at all (unstarted)
            for (variant, runtime), count in list(waiting.awaiting.items()):
                failed = waiting.failed.get((variant, runtime))
                if failed is None:
                    why = "not run: the time budget ran out before it ran on this runtime"
                else:
                    size, raw = failed
                    detail = first_line(raw.message) or raw.signal or ""
                    why = (
                        f"not run: in a model of {size} cases it failed as a whole on this "
                        f"runtime ({raw.status}{': ' + detail if detail else ''}), and the "
                        "time budget ran out before it ran again without them"
                    )
                outcome = Outcome("harness_unsupported", why)
                gone = Raw("unsupported", message=why, packed=failed is not None)
                for _ in range(count):
                    done = self._finish(index, variant, runtime, gone, outcome)
                    settled.append(done._replace(ran=False))
        return settled

    def unstarted(self) -> list[Case]:
        """The cases taken that got no result at all."""
        return [waiting.case for waiting in self._pending.values() if not waiting.done]

    def untaken(self) -> list[Case]:
        """The cases the pool never asked for (it stopped at its deadline)."""
        return [case for case, *_ in self._items]
