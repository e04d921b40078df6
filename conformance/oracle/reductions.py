"""The writes of ScatterElements and ScatterND, and their reductions, as sets
of admissible outputs (:mod:`conformance.oracle.admissible`).

Both operators come down to: ``data`` viewed as rows of S elements (S = 1
for ScatterElements, the slice size for ScatterND), and N updates, row
``dest[n]`` receiving ``updates[n]`` (S elements) through ``f``:

    output = copy(data)
    for n in <some order>:               # "The order of iteration ... is not specified"
        output[dest[n]] = f(output[dest[n]], updates[n])

How it is fast: a row written once is computed for all such rows at once;
only the rows written more than once are grouped (a stable sort of their
entries, so each group keeps the text's row-major order), and their sets
are computed group size by group size. Where the result does not depend on
the order (integers and bools under any reduction, max and min but for
NaN and signed zeros) it is computed once with ``reduceat``; where it does
(no reduction: any of the duplicates' values; floating-point, complex and
string add and mul: every order of the writes), every order of each
element's k writes is folded, for k up to :data:`MAX_ORDERED_WRITES`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from conformance.oracle import admissible
from conformance.oracle.admissible import Admissible, TooManyOrders
from conformance.tables import dtypes

# The most writes to one element under an order-dependent reduction that the
# oracle folds in every order (6! = 720 orders); beyond it the input is
# refused (TooManyOrders, decision sc-reduction-order).
MAX_ORDERED_WRITES = 6
# Elements per chunk of the folds over every order (bounds their memory).
CHUNK_ELEMENTS = 1 << 21

# What each reduction does to (current, update); OpenVINO's own reductions
# (sub, mean) are only reached through the operators' openvino_* functions.
REDUCTIONS = ("none", "add", "mul", "max", "min", "sub", "mean")
# f for bool data (add OR, mul AND, max OR, min AND: decision sc-reduction-bool;
# sub XOR: OpenVINO's ScatterNDUpdate-15) and for the other types; mean adds
# (the division comes after: _mean).
BOOL_UFUNCS: dict[str, np.ufunc] = {"add": np.logical_or, "mul": np.logical_and,
    "max": np.logical_or, "min": np.logical_and, "sub": np.logical_xor}  # fmt: skip
UFUNCS: dict[str, np.ufunc] = {"add": np.add, "mul": np.multiply, "max": np.maximum,
    "min": np.minimum, "sub": np.subtract, "mean": np.add}  # fmt: skip


@dataclass
class Flags:
    """What an evaluation met, for the operators' disputed decision ids."""

    duplicates: bool = False  # an element written more than once
    ordered: bool = False  # an element whose value depends on the order of its writes
    nan_max_min: bool = False  # a NaN met by max or min
    notes: set[str] = field(default_factory=set)


def _ordered(reduction: str, dtype: np.dtype) -> bool:
    """Whether folding the writes in another order can change the bits."""
    if reduction == "none":
        return True
    if dtype.kind == "O":
        return True  # string concatenation
    if dtype.kind in "biu":
        return False  # wrapping integer and boolean arithmetic: any order, one result
    return reduction in ("add", "mul", "sub", "mean")


def _apply(reduction: str, current: np.ndarray, update: np.ndarray) -> np.ndarray:
    """f(current, update), elementwise, in the data's type (wrapping)."""
    dtype = current.dtype
    if reduction == "none":
        return np.broadcast_to(update, np.broadcast_shapes(current.shape, update.shape))
    if dtype == np.bool_:
        return BOOL_UFUNCS[reduction](current, update)
    with np.errstate(all="ignore"):
        result = UFUNCS[reduction](current, update)
    return result.astype(dtype, copy=False) if dtype.kind != "O" else result


@cache
def _orders(k: int) -> np.ndarray:
    """Every order of k writes, (k!, k), the identity first."""
    return np.array(list(itertools.permutations(range(k))), dtype=np.int64).reshape(-1, k)


def scatter(
    data: np.ndarray,
    rows: np.ndarray,
    updates: np.ndarray,
    reduction: str,
    use_init: bool = True,
) -> tuple[Admissible, Flags]:
    """The admissible outputs of writing ``updates`` (N, S) to the rows
    ``rows`` (N,) of ``data`` viewed as (-1, S), in range and normalised.

    ``use_init`` false: an element's
    reduction starts from its first write, not from data (OpenVINO's
    ``use_init_val``)."""
    flags = Flags()
    computed = reduction != "none"  # a NaN it computes may be any NaN; one it moves keeps its bits
    out = np.array(data, copy=True, order="C")
    n = rows.shape[0]
    s = updates.shape[1] if updates.ndim == 2 else 1
    if n == 0 or s == 0 or out.size == 0:
        return admissible.exact(out), flags
    out2 = out.reshape(-1, s)
    total = out2.shape[0]
    if use_init and reduction != "none" and out.dtype.kind in "biu":
        # Integers and bools: one result in any order (wrapping), so the
        # writes are applied in place, in row-major order, duplicates and all.
        ufunc = (BOOL_UFUNCS if out.dtype == np.bool_ else UFUNCS)[reduction]
        if reduction != "mean":
            with np.errstate(all="ignore"):
                ufunc.at(out2, rows, updates)
            return admissible.exact(out), flags
    if total <= 4 * n:
        counts = np.bincount(rows, minlength=total)
        repeated = bool(counts.max() > 1)
        once = counts[rows] == 1 if repeated else None
    else:
        ranked = np.sort(rows)
        repeated = bool((ranked[1:] == ranked[:-1]).any())
        once = None
        if repeated:
            _, inverse, counts = np.unique(rows, return_inverse=True, return_counts=True)
            once = counts[inverse] == 1
    candidates: list[np.ndarray] = []
    flats: list[np.ndarray] = []
    nans: list[np.ndarray] = []
    if not repeated:
        _single(out2, data, rows, updates, reduction, use_init, flats, candidates, nans, flags)
        return admissible.from_candidates(out, flats, candidates, nans, computed), flags
    assert once is not None
    flags.duplicates = True
    _single(
        out2, data, rows[once], updates[once], reduction, use_init, flats, candidates, nans, flags
    )
    many = ~once
    if reduction == "none" and out.dtype.kind != "O" and out.dtype.itemsize <= 4:
        if s == 1:  # flat: NumPy's 1-D fancy assignment is several times faster
            out.reshape(-1)[rows] = updates.reshape(-1)  # some write is last everywhere: a member
        else:
            out2[rows] = updates
        return _moved_sets(out, rows[many], updates[many]), flags
    picked = np.flatnonzero(many)
    order = picked[np.argsort(rows[picked], kind="stable")]  # row-major order kept per row
    sorted_rows = rows[order]
    starts = np.flatnonzero(np.concatenate([[True], sorted_rows[1:] != sorted_rows[:-1]]))
    sizes = np.diff(np.concatenate([starts, [order.size]]))
    group_rows = sorted_rows[starts]
    if not _ordered(reduction, out.dtype):
        _exact_groups(out2, order, starts, group_rows, updates, reduction, use_init, nans, flags)
        _signed_zeros(out2, data, order, starts, sizes, group_rows, updates, reduction, flats,
                      candidates)  # fmt: skip
        return admissible.from_candidates(out, flats, candidates, nans, computed), flags
    for k in np.unique(sizes).tolist():
        chosen = sizes == k
        entries = order[starts[chosen][:, None] + np.arange(k)]  # (g, k), row-major per group
        targets = group_rows[chosen]
        if reduction == "none":
            # Any of the k writes may be the last: each element's candidates are its k values.
            writes = updates[entries]  # (g, k, S)
            out2[targets] = writes[:, -1]
            cand = writes.transpose(0, 2, 1).reshape(-1, k)
        else:
            if k > MAX_ORDERED_WRITES:
                first = int(targets[0]) * s
                raise TooManyOrders(
                    f"output element {_where(first, out.shape)} receives {k} writes under "
                    f"reduction {reduction} on {admissible_dtype(out)}: every order of them "
                    f"({k}! = {math.factorial(k)}) is more than the oracle enumerates (at most "
                    f"{MAX_ORDERED_WRITES} writes per element, MAX_ORDERED_WRITES); draw the case "
                    f"without more than {MAX_ORDERED_WRITES} duplicate indices per element "
                    "(decision sc-reduction-order)"
                )
            cand = _every_order(data.reshape(-1, s)[targets], updates[entries], reduction, use_init)
            out2[targets] = cand[..., 0]
            cand = cand.reshape(-1, cand.shape[-1])
            flags.ordered = True
        flat = (targets[:, None] * s + np.arange(s)).reshape(-1)
        flats.append(flat)
        candidates.append(cand)
    return admissible.from_candidates(out, flats, candidates, nans, computed), flags


def _moved_sets(out: np.ndarray, rows: np.ndarray, updates: np.ndarray) -> Admissible:
    """No reduction, items of at most 4 bytes: per element written more than
    once, its values' bit patterns, found by one sort of (position, bits)."""
    s = updates.shape[1]
    width = out.dtype.itemsize * 8
    flat = (rows[:, None] * s + np.arange(s, dtype=np.int64)).reshape(-1).astype(np.uint64)
    bits = np.ascontiguousarray(updates).view(f"uint{width}").reshape(-1).astype(np.uint64)
    keys = (flat << np.uint64(32)) | bits
    keys.sort()  # by position, then bits (np.unique hashes: several times slower here)
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    positions = (keys >> np.uint64(32)).astype(np.int64)
    first = np.concatenate([[True], positions[1:] != positions[:-1]])
    starts = np.flatnonzero(first)
    counts = np.diff(np.concatenate([starts, [positions.size]]))
    several = np.repeat(counts >= 2, counts)
    kept = keys[several]
    values = (kept & np.uint64((1 << width) - 1)).astype(f"uint{width}").view(out.dtype)
    offsets = np.concatenate([[0], np.cumsum(counts[counts >= 2])]).astype(np.int64)
    return Admissible(out, positions[starts][counts >= 2], offsets, values, admissible._EMPTY)


def _where(flat: int, shape) -> list[int]:
    return [int(i) for i in np.unravel_index(flat, shape)]


def admissible_dtype(out: np.ndarray) -> str:
    return dtypes.name_of(out)


def _single(out2, data, rows, updates, reduction, use_init, flats, candidates, nans, flags):
    """Rows written once: f(data, update) for all of them at once."""
    if rows.size == 0:
        return
    if reduction == "none" or not use_init:
        out2[rows] = updates
        return
    current = out2[rows]
    if reduction == "mean":
        result = _mean(current[:, :, None], updates[:, :, None], True)
    else:
        result = _apply(reduction, current, updates)
    out2[rows] = result
    s = out2.shape[1]
    if out2.dtype.kind in "fc" or out2.dtype.name == "bfloat16":
        nan = admissible._is_nan(result)
        if nan.any():
            nans.append((rows[:, None] * s + np.arange(s))[nan])
            if reduction in ("max", "min"):
                flags.nan_max_min = True
        if reduction in ("max", "min"):
            pair = np.stack([current, updates], axis=-1)  # (n, S, 2)
            _zeros_of(result, pair, rows, s, flats, candidates)


def _exact_groups(out2, order, starts, group_rows, updates, reduction, use_init, nans, flags):
    """Groups under an order-independent reduction: one reduceat per group."""
    ordered_updates = updates[order]
    dtype = out2.dtype
    # sub folds its updates by adding them: x - u1 - u2 = x - (u1 + u2), wrapping (XOR on bool).
    if dtype == np.bool_:
        ufunc = BOOL_UFUNCS[reduction]
    else:
        ufunc = UFUNCS["add" if reduction in ("sub", "mean") else reduction]
    with np.errstate(all="ignore"):
        if reduction == "mean":
            _integer_mean(out2, order, starts, group_rows, updates, use_init)
            return
        folded = ufunc.reduceat(ordered_updates, starts, axis=0, dtype=dtype)
        if not use_init:
            out2[group_rows] = folded
        else:
            out2[group_rows] = _apply(reduction, out2[group_rows], folded)
    if reduction in ("max", "min") and (dtype.kind == "f" or dtype.name == "bfloat16"):
        result = out2[group_rows]
        nan = admissible._is_nan(result)
        if nan.any():
            s = out2.shape[1]
            nans.append((group_rows[:, None] * s + np.arange(s))[nan])
            flags.nan_max_min = True


def _integer_mean(out2, order, starts, group_rows, updates, use_init):
    """OpenVINO's mean on integers: the exact mean, rounded toward negative infinity."""
    ends = np.concatenate([starts[1:], [order.size]])
    for start, end, row in zip(starts.tolist(), ends.tolist(), group_rows.tolist(), strict=True):
        values = [updates[i].astype(object) for i in order[start:end]]
        if use_init:
            values.insert(0, out2[row].astype(object))
        total = sum(values[1:], values[0])
        out2[row] = np.array([t // len(values) for t in total], dtype=object).astype(out2.dtype)


def _signed_zeros(out2, data, order, starts, sizes, group_rows, updates, reduction, flats, cand):
    """max/min of operands equal to zero of both signs: either zero is admissible."""
    if reduction not in ("max", "min") or not (
        out2.dtype.kind == "f" or out2.dtype.name == "bfloat16"
    ):
        return
    s = out2.shape[1]
    for k in np.unique(sizes).tolist():
        chosen = sizes == k
        entries = order[starts[chosen][:, None] + np.arange(k)]
        targets = group_rows[chosen]
        operands = np.concatenate(
            [data.reshape(-1, s)[targets][:, None, :], updates[entries]], axis=1
        )  # (g, k + 1, S)
        _zeros_of(out2[targets], operands.transpose(0, 2, 1), targets, s, flats, cand)


def _zeros_of(result, operands, rows, s, flats, candidates):
    """Where ``result`` (n, S) is a zero and ``operands`` (n, S, m) hold zeros
    of both signs: candidates {+0, -0} (decision sc-nan-max-min)."""
    with np.errstate(invalid="ignore"):
        zero = operands == 0
    sign = np.signbit(operands.astype(np.float64))
    both = (zero & sign).any(axis=-1) & (zero & ~sign).any(axis=-1)
    both &= np.asarray(result == 0)
    if not both.any():
        return
    flat = (rows[:, None] * s + np.arange(s))[both]
    zeros = np.array([0.0, -0.0]).astype(result.dtype)
    flats.append(flat)
    candidates.append(np.broadcast_to(zeros, (flat.size, 2)).copy())


def _mean(current, writes, use_init):
    """OpenVINO's mean on floats: the sum (in the order given) over the count."""
    total = writes[..., 0] if not use_init else _apply("add", current[..., 0], writes[..., 0])
    for j in range(1, writes.shape[-1]):
        total = _apply("add", total, writes[..., j])
    count = writes.shape[-1] + (1 if use_init else 0)
    if total.dtype.kind in "iu":
        return np.floor_divide(total, count).astype(total.dtype)
    with np.errstate(all="ignore"):
        return (total / np.array(count, dtype=total.dtype)).astype(total.dtype)


def _every_order(initial: np.ndarray, writes: np.ndarray, reduction: str, use_init: bool):
    """Each element's value under every order of its writes: (g, S, k!),
    the row-major order first. ``initial`` (g, S), ``writes`` (g, k, S)."""
    g, k, s = writes.shape
    orders = _orders(k)
    out = np.empty((g, s, orders.shape[0]), dtype=initial.dtype)
    step = max(1, CHUNK_ELEMENTS // max(1, s * orders.shape[0]))
    for a in range(0, g, step):
        w = writes[a : a + step].transpose(0, 2, 1)[:, :, orders]  # (c, S, k!, k)
        cur = initial[a : a + step][:, :, None]
        if reduction == "mean":
            out[a : a + step] = _mean(np.broadcast_to(cur, w.shape[:3])[..., None], w, use_init)
            continue
        acc = np.broadcast_to(cur, w.shape[:3]) if use_init else w[..., 0]
        for j in range(0 if use_init else 1, k):
            acc = _apply(reduction, acc, w[..., j])
        out[a : a + step] = acc
    return out
