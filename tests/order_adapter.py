"""An adapter that writes a ScatterElements node's updates in an order it is
told, to give the engine's judge every member of an admissible set (and, on
demand, a value outside it): no real runtime picks its order on request.

The order is data's last element, a number the node never writes (the test's
cases scatter into element 0 only): order ``p`` folds the updates onto
data[0] in the ``p``-th permutation of their positions (itertools'
order); ``WRONG_ORDER`` gives the oracle's row-major member with element 0
one bit off, a value no order of the writes gives.
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import onnx
from onnx import numpy_helper

from conformance.adapters import Adapter

WRONG_ORDER = 99


class OrderAdapter(Adapter):
    name = "ordered"

    def info(self) -> dict:
        return {"name": self.name, "version": "0", "device": "CPU", "pid": os.getpid()}

    def load(self, model: bytes):
        parsed = onnx.load_model_from_string(model)
        node = parsed.graph.node[0]
        reduction = next((a.s.decode() for a in node.attribute if a.name == "reduction"), "none")
        baked = {t.name: numpy_helper.to_array(t) for t in parsed.graph.initializer}
        return reduction, baked

    def execute(self, session, feeds):
        reduction, baked = session
        arrays = {**baked, **feeds}
        data, updates = arrays["data"], arrays["updates"]
        order = int(data[-1])
        out = data.copy()
        writes = list(updates)
        orders = list(itertools.permutations(range(len(writes))))
        for position in orders[order % len(orders)]:
            value = writes[position]
            out[0] = value if reduction == "none" else out[0] + value
        if order == WRONG_ORDER:
            out[0] = np.nextafter(out[0], np.float32(np.inf), dtype=out.dtype)
        return [out]
