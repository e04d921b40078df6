"""What ``conformance model`` says of the nodes it read: ``nodes.json`` (one
entry per Gather/GatherElements node found) and the run header's ``graphs``;
and the check of ``--dims`` against the dims the models name."""

from __future__ import annotations

import difflib

from conformance.graphs.reading import GraphFile, GraphFileError, tensor_type
from conformance.tables import variants

NODES_FORMAT = 3  # bumped when a field of nodes.json changes meaning or goes away


def check_dims(files: list[GraphFile], given: dict[str, int]) -> dict[str, int]:
    """``--dims`` as given, each name one some model's dims carry (GraphFileError else,
    naming the graph inputs' dims, which are what one sets, and the nearest names)."""
    known = set().union(*(f.dim_names for f in files)) if files else set()
    for name in given:
        if name not in known:
            where = files[0].path if len(files) == 1 else ", ".join(str(f.path) for f in files)
            raise GraphFileError(
                where, f"--dims {name}: no dim of this name ({_dims_said(name, files, known)})"
            )
    return dict(given)


def _dims_said(name: str, files: list[GraphFile], known: set[str]) -> str:
    """What the models' dims are, shortly: a model's inner dims may be a hundred
    expressions (``floor(height/2 - 1/2) + 1``) nobody sets by hand."""
    if not known:
        return "none: every dim has a size"
    inputs = sorted(set().union(*(_input_dims(f) for f in files)))
    said = f"the graph inputs' dims: {', '.join(inputs) or 'none'}"
    if len(known) > len(inputs):
        said += f"; {len(known) - len(inputs)} more inside the graph"
    near = difflib.get_close_matches(name, sorted(known), n=3)
    return (f"did you mean {' or '.join(near)}? " if near else "") + said


def _input_dims(file: GraphFile) -> set[str]:
    shapes = (tensor_type(value).shape or () for value in file.inferred.graph.input)
    return {dim for shape in shapes for dim in shape if isinstance(dim, str)}


def entry(site) -> dict:
    return {
        "model": site.model,
        "graph": site.graph,
        "node": site.node,
        "op": site.op,
        "opset": site.opset,
        "axis": site.axis,
        "data": site.data.to_json(),
        "indices": site.indices.to_json(),
        "indices_constant": site.indices_constant,
        "cases": list(site.cases),
        "not_judged": site.not_judged,
        "as_built": None
        if site.variant is None or not site.cases
        else {"variant": site.variant, "cases": list(site.as_built_cases)},
        "sources": {k: v.to_json() for k, v in site.sources.items()} or None,
        "in_situ": {},
    }


def document(
    files: list[GraphFile], groups, dims: dict[str, int], draws: int, captured=None
) -> dict:
    """nodes.json: its format, the dims and draws used, and one entry per node found."""
    from conformance.graphs.drawing import DEFAULT_DIM

    return {
        "format": NODES_FORMAT,
        "dims": dict(sorted(dims.items())),
        "default_dim": DEFAULT_DIM,
        "draws": draws,
        "nodes": [entry(site) for found in files for site in found.sites],
        "whole_model": {},
        "captured": None
        if captured is None
        else {
            "with": captured.runtime,
            "failed": [{"model": m, "reason": r} for m, r in captured.failed.items()],
            "not_captured": [
                {"model": m, "graph": g, "node": n, "reason": why}
                for (m, g, n), why in captured.missed.items()
            ],
        },
    }


def header(
    files: list[GraphFile], dims: dict[str, int], draws: int, inputs, captured, timings
) -> dict:
    """The run header's ``graphs``: what was read and how the cases were made
    (``draws`` random index tensors a node, the ``inputs`` file or None)."""
    from conformance.graphs.drawing import DEFAULT_DIM

    return {
        "models": [str(f.path) for f in files],
        "opsets": [f.opset for f in files],
        "dims": dict(sorted(dims.items())),
        "default_dim": DEFAULT_DIM,
        "draws": draws,
        "inputs": None if inputs is None else str(inputs),
        "captured_with": None if captured is None else captured.runtime,
        "timings_s": {k: round(v, 3) for k, v in timings.items()},
    }


# a saved node case's tag: as built, in this variant (as-built-static); the case loader
# holds its suffix to the variants, so it is a table's, below the cases
AS_BUILT_TAG = variants.AS_BUILT_TAG


def document_of_cases(cases) -> dict | None:
    """nodes.json for cases that stand for model nodes (``Case.nodes``: a case
    file ``--save-cases`` wrote), so that ``run --cases`` gives the per-node
    section ``model`` gave; None when no case does."""
    entries: dict[tuple[str, str, str], dict] = {}
    for case in cases:
        built = next(
            (t[len(AS_BUILT_TAG) :] for t in case.tags if t.startswith(AS_BUILT_TAG)), None
        )
        for model, graph, node in case.nodes or ():
            entry = entries.setdefault(
                (model, graph, node),
                {
                    "model": model,
                    "graph": graph,
                    "node": node,
                    "op": case.op,
                    "opset": case.opset,
                    "axis": case.axis,
                    "data": {"dtype": case.dtype, "shape": list(case.data.shape)},
                    "indices": {"dtype": case.indices_dtype, "shape": list(case.indices.shape)},
                    "indices_constant": False,
                    "cases": [],
                    "not_judged": None,
                    "as_built": None,
                    "sources": None,
                    "in_situ": {},
                },
            )
            entry["cases"].append(case.id)
            if built is not None:
                if entry["as_built"] is None:
                    entry["as_built"] = {"variant": built, "cases": []}
                entry["as_built"]["cases"].append(case.id)
    if not entries:
        return None
    return {
        "format": NODES_FORMAT,
        "dims": {},
        "default_dim": 0,
        "draws": 0,
        "nodes": list(entries.values()),
        "whole_model": {},
        "captured": None,
    }
