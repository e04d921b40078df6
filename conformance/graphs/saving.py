"""``--save-cases FILE.yaml``: node cases as a case file (cases/README.md), so
that ``conformance run --cases FILE.yaml`` judges the model's nodes for good.

Each case says where it came from (``description``, ``spec``: the model and
its nodes). Tensors are written as exactly as they were judged: drawn data
as the ``random`` generator that drew it (same seed, same values), small
tensors as literals (floats as ``bits``: NaN payloads kept), and a tensor
over :data:`LITERAL_LIMIT` elements (a model's embedding table) as an
``npy`` generator reading a ``.npy`` file written beside the case file.

This module makes the document and the arrays; the command writes them.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from conformance.cases import writing
from conformance.cases.check import verdict_of
from conformance.graphs.nodes import AS_BUILT_TAG

LITERAL_LIMIT = 4096  # elements written inline; larger tensors go to an .npy file


def document(path: Path, groups, case_memory: int) -> tuple[dict, dict[str, bytes]]:
    """(the case file's content, {file name: .npy bytes} to write beside it)."""
    arrays: dict[str, bytes] = {}
    entries = []
    for group in groups:
        for case in group.cases:
            made = group.made.get(case.id, {})
            entry = writing.entry(
                case.base_id, case.description, case.spec, case.op, case.opset, case.dtype,
                case.indices_dtype, case.axis,
            )  # fmt: skip
            for field, array in (("data", case.data), ("indices", case.indices)):
                recipe = made.get(field)
                if isinstance(recipe, dict) and "random" in recipe:
                    spec = {"shape": list(array.shape), "seed": recipe["random"]}
                    if "low" in recipe:  # drawn within what the node can receive
                        spec.update(low=recipe["low"], high=recipe["high"])
                    entry[field] = {"random": spec}
                elif array.size > LITERAL_LIMIT:
                    name = f"{path.stem}.{case.base_id}.{field}.npy"
                    buffer = io.BytesIO()
                    if array.dtype.name == "bfloat16":  # .npy has no bfloat16: its bits
                        array = array.view(np.uint16)
                    np.save(buffer, array, allow_pickle=False)
                    arrays[name] = buffer.getvalue()
                    entry[field] = {"npy": name}
                else:
                    entry[field] = writing.literal(array)
            entry.update(writing.expectation(verdict_of(case, case_memory)))
            entry["tags"] = list(case.tags)
            if case.id in group.as_built:  # `run --cases` judges the node as built again
                entry["tags"].append(f"{AS_BUILT_TAG}{group.variant}")
            entries.append(entry)
    models = sorted({site.model for group in groups for site in group.sites})
    content = {
        "description": "node cases of " + ", ".join(models) + " (conformance model --save-cases)",
        "cases": entries,
    }
    return content, arrays
