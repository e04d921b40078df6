"""The model variants, one name each: what a case runs in
(:mod:`conformance.engine.models` builds them). Here, below the cases, so that
the case loader can hold a saved node case's ``as-built-<variant>`` tag to
them without importing the engine."""

from __future__ import annotations

VARIANTS: tuple[str, ...] = (
    "static",  # every input a graph input with its exact shape
    "dynamic",  # every input a graph input with symbolic dimensions
    "indices_initializer",  # indices baked into the model
    "data_initializer",  # data baked into the model
    "both_initializers",  # nothing fed at run time
)

# A saved node case's tag (``conformance model --save-cases``): the case holds
# values its node can receive as built, in the variant named after it
# (``as-built-static``); ``run --cases`` judges the node as built in that variant.
AS_BUILT_TAG = "as-built-"
