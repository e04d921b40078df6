"""onnx.reference.ReferenceEvaluator: a third runtime to compare.

It is a peer with its own flaws (it is NumPy code, and for example wraps
negative indices however NumPy does), not the oracle. Every exception it
raises is its own: it is pure Python, so there is no binding to get wrong.

One loop is counted instead of waited for. The evaluator's GatherElements
gathers with ``numpy.choose(indices, data, mode="wrap")``, and NumPy wraps an
index by adding or subtracting the axis' size ``n`` once per step: an index
``i`` out of range costs about ``|i| / n`` steps (2**32 on an axis of 3: a
second or more, near the timeout, so a timeout or an answer by the machine's
load; 2**63 - 1: decades). NumPy defines wrap mode as ``i mod n``, so
:class:`GatherElements`, the evaluator's own operator otherwise,
gives ``choose`` the indices already reduced mod ``n`` when they would cost
more than :data:`WRAP_STEPS_RUN` steps, which is the same answer without the
loop, and reports an input that would cost more than :data:`WRAP_STEPS_NEVER`
steps as :class:`WouldNotFinish` (a timeout, the same on every machine).
Indices that are in range, or take another path of the evaluator, are run
untouched.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from pathlib import Path

import numpy as np
import onnx

from conformance.adapters.contract import (
    Adapter,
    LoadError,
    RunError,
    Runtime,
    WouldNotFinish,
    runtime_module,
)

# The evaluator, imported on first use (the declaration below is read without
# it); held as runtime modules, which a fork server imports before it forks.
EVALUATOR_MODULE = "onnx.reference"
GATHER_ELEMENTS_MODULE = "onnx.reference.ops.op_gather_elements"
_evaluator = runtime_module(EVALUATOR_MODULE)
_gather_elements = runtime_module(GATHER_ELEMENTS_MODULE)

RUNTIME_NAME = "reference"
# Below this many wrap steps the evaluator runs as it is (in-range indices: none).
WRAP_STEPS_RUN = 2**20
# Above it no machine answers within any timeout: at 10 steps a nanosecond,
# faster than any measured (about 3 a nanosecond), 2**50 steps take a day.
WRAP_STEPS_NEVER = 2**50
# What the evaluator feeds choose as it is (signed, safely cast to intp);
# other dtypes go its TypeError path (indices.astype(int)), left untouched.
_COUNTED_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


# The evaluator's call this module counts for (onnx 1.23.2's source). Where
# its source does not hold it (an onnx that gathers otherwise), the evaluator
# runs untouched: reduced indices could hide a bounds check it gained.
_WRAP_CALL = 'np.choose(index_swapped, data_swapped, mode="wrap")'


@functools.cache
def counts_wrap_loop() -> bool:
    """Whether this onnx's GatherElements gathers with the wrap call counted here."""
    try:
        return _WRAP_CALL in inspect.getsource(importlib.import_module(GATHER_ELEMENTS_MODULE))
    except (OSError, TypeError):  # no source shipped: nothing to check against
        return False


@functools.cache
def choose_limit() -> int:
    """The most choices ``numpy.choose`` takes from an array (63 with NumPy 2:
    its argument limit, the index array included); above it, choose raises
    ValueError before looking at an index, and the evaluator takes its 2-D path."""
    index = np.zeros(1, np.intp)
    n = 0
    while n < 1024:
        try:
            np.choose(index, np.zeros((n + 1, 1)), mode="wrap")
        except ValueError:
            break
        n += 1
    return n


def wrap_steps(indices: np.ndarray, n: int) -> int:
    """The steps NumPy's wrap loop takes over ``indices`` on an axis of size ``n``:
    ``i // n`` for ``i >= n``, ``ceil(-i / n)`` for ``i < 0`` (exact, in Python ints)."""
    flat = indices.ravel()
    high = flat[flat >= n].astype(np.int64)
    low = flat[flat < 0]  # negated in Python ints: -(-2**63) is not an int64
    return sum(int(q) for q in high // n) + sum((-int(v) + n - 1) // n for v in low)


@functools.cache
def gather_elements() -> type:
    """The evaluator's GatherElements, with NumPy's wrap loop counted (module
    docstring); the evaluator takes an operator of its own by its class name."""
    evaluator = _gather_elements.GatherElements

    class GatherElements(evaluator):  # type: ignore[misc,valid-type]  # onnx's class, found at run time
        def _run(self, data, indices, axis=None):
            n = _wrapped_axis(data, indices, axis)
            if n:
                steps = wrap_steps(indices, n)
                if steps > WRAP_STEPS_NEVER:
                    raise WouldNotFinish(
                        f"no result in any timeout, counted before running: numpy.choose in "
                        f"wrap mode steps an index by the axis' size {n} at a time, and these "
                        f"indices take {steps:.3g} steps (over 2**50, a day at 10 a nanosecond)"
                    )
                if steps > WRAP_STEPS_RUN:
                    indices = np.mod(indices, n).astype(indices.dtype)
            return super()._run(data, indices, axis=axis)

    return GatherElements


def _wrapped_axis(data, indices, axis) -> int:
    """The axis size ``n`` when the evaluator will hand these indices to
    ``numpy.choose`` as they are; 0 when it takes another path (empty indices,
    a dtype it converts first, more choices than choose takes, a bad axis or
    shape, refused before any index is read)."""
    if not isinstance(indices, np.ndarray) or indices.dtype not in _COUNTED_DTYPES:
        return 0
    if not isinstance(data, np.ndarray) or indices.size == 0 or data.ndim != indices.ndim:
        return 0
    axis = 0 if axis is None else int(axis)
    if not -data.ndim <= axis < data.ndim:
        return 0
    # The evaluator's own shape check, slices as it writes them (axis -1
    # compares the whole shapes): where it refuses, no index is read.
    if indices.shape[:axis] + indices.shape[axis + 1 :] != (
        data.shape[:axis] + data.shape[axis + 1 :]
    ):
        return 0
    n = data.shape[axis]
    return n if 1 <= n <= choose_limit() else 0


class ReferenceAdapter(Adapter):
    name = RUNTIME_NAME

    def info(self) -> dict:
        return {
            "name": self.name,
            "version": onnx.__version__,
            "device": "CPU",
            "implementation": "onnx.reference.ReferenceEvaluator",
            "effective": {},  # nothing to configure
        }

    def load(self, model: bytes):
        try:
            evaluator = _evaluator.ReferenceEvaluator
            return evaluator(
                onnx.load_model_from_string(model),
                new_ops=[gather_elements()] if counts_wrap_loop() else None,
            )
        except Exception as error:
            raise LoadError(f"{type(error).__name__}: {error}") from None

    def execute(self, session, feeds):
        try:
            outputs = session.run(None, feeds)
        except WouldNotFinish:
            raise
        except Exception as error:
            raise RunError(f"{type(error).__name__}: {error}") from None
        return list(outputs)


def run_reference(model: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator

    # onnx annotates run's result list | dict: a dict only with intermediate=True
    return ReferenceEvaluator(str(model)).run(None, feeds)[0]  # type: ignore[index]


RUNTIME = Runtime(
    name=RUNTIME_NAME,
    adapter=ReferenceAdapter.__name__,
    position=2,
    modules=(EVALUATOR_MODULE,),
    extra=None,  # onnx is in the core
    # It evaluates node by node in Python (nothing to save by packing) and hangs
    # on some inputs, where a pack would make every case of it wait: alone.
    pack_size=1,
    # Its slowest corpus job takes well under a second, and its hangs are
    # counted, not waited for (the module's docstring): 4 s leaves a wide margin
    # (the engine's default: conformance.engine.pool.DEFAULT_TIMEOUT).
    timeout=4.0,
    profiles={},
    repro=run_reference,
    single_threaded=True,
    # the evaluator, whose outputs `conformance model` compares the other
    # targets' with when it ran
    compared_against=True,
)
