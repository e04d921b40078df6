"""The ``onnx.backend.base.Backend`` classes two runners put under onnx's own
backend test ``Runner``, which live in those projects' test folders (no
package ships them), re-implemented from what they do (docs/export.md, "Which
lists are proven by running their runner"):

* :class:`ReferenceBackend`: onnx's ``onnx/test/test_backend_reference.py``
  (onnx/onnx), how onnx runs its backend tests on ``onnx.reference``: each
  model prepared as a ``ReferenceEvaluator``, the runner's inputs fed by the
  evaluator's input names in order;
* :class:`TVMRelaxBackend`: TVM's ``tests/python/relax/test_frontend_onnx_backend.py``
  (apache/tvm): ``from_onnx(model, opset=<the model's>, keep_params_in_input=True)``,
  ``DecomposeOpsForInference``, ``LegalizeOps``, ``detach_params``, compiled at
  ``opt_level=3`` for target ``llvm``, run on the Relax VM with the graph
  inputs by position, then the detached parameters (the initializers).

Both are held to the export's lists by :func:`run`, onnx's ``Runner`` over the
export's tests (``tests/test_export.py``).
"""

from __future__ import annotations

import io
import unittest

import numpy as np
import onnx.backend.base
import pytest


class _ReferenceRep(onnx.backend.base.BackendRep):
    def __init__(self, session) -> None:
        self.session = session

    def run(self, inputs, **kwargs):
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        if isinstance(inputs, list):
            inputs = dict(zip(self.session.input_names, inputs, strict=False))
        return self.session.run(None, inputs)


class ReferenceBackend(onnx.backend.base.Backend):
    @classmethod
    def is_opset_supported(cls, model):
        return True, ""

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return onnx.backend.base.Device(device).type == onnx.backend.base.DeviceType.CPU

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs):
        from onnx.reference import ReferenceEvaluator

        return _ReferenceRep(ReferenceEvaluator(model))

    @classmethod
    def run_model(cls, model, inputs, device=None, **kwargs):
        return cls.prepare(model, device or "CPU").run(inputs)


class _TVMRelaxRep(onnx.backend.base.BackendRep):
    def __init__(self, module, params, parameter_names, graph_inputs) -> None:
        import tvm
        from tvm import relax

        self.params, self.parameter_names, self.graph_inputs = params, parameter_names, graph_inputs
        with tvm.transform.PassContext(opt_level=3):
            executable = tvm.compile(module, target="llvm")
        self.machine = relax.VirtualMachine(executable, tvm.cpu())

    def run(self, inputs, **kwargs):
        by_name = dict(zip(self.graph_inputs, inputs, strict=False))
        arguments = [by_name[name] for name in self.parameter_names if name in by_name]
        if self.params and "main" in self.params:
            arguments += self.params["main"]
        self.machine.set_input("main", *arguments)
        self.machine.invoke_stateful("main")
        output = self.machine.get_outputs("main")
        if isinstance(output, tuple | list):
            return tuple(np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in output)
        return (output.numpy() if hasattr(output, "numpy") else np.asarray(output),)


class TVMRelaxBackend(onnx.backend.base.Backend):
    @classmethod
    def is_compatible(cls, model, device: str = "CPU", **kwargs) -> bool:
        return True

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs):
        from tvm import relax
        from tvm.relax.frontend.onnx import from_onnx

        opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        module = from_onnx(model, opset=opset, keep_params_in_input=True)
        module = relax.transform.DecomposeOpsForInference()(module)
        module = relax.transform.LegalizeOps()(module)
        module, params = relax.frontend.detach_params(module)
        names = [parameter.name for parameter in module["main"].params]
        return _TVMRelaxRep(module, params, names, [value.name for value in model.graph.input])


def run(backend, tests: list, excluded: list[str]) -> tuple[int, set[str]]:
    """onnx's backend ``Runner`` on ``backend`` over ``tests`` (what
    ``load_model_tests`` gave for the export: the runner's own loading of onnx's
    node tests swapped for these), the patterns ``excluded`` as a series excludes
    them; (tests run, names of those that failed, without ``_cpu``)."""
    import onnx.backend.test.runner as runner_module

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            runner_module,
            "load_model_tests",
            lambda data_dir=None, kind=None: tests if kind == "node" else [],
        )
        runner = runner_module.Runner(backend, __name__)
    if excluded:
        runner.exclude("(" + "|".join(excluded) + ")")
    suite = runner.include(r"_cpu$").test_suite
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    failed = {case.id().rsplit(".", 1)[-1] for case, _ in result.failures + result.errors}
    return result.testsRun - len(result.skipped), {n.removesuffix("_cpu") for n in failed}
