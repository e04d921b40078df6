"""A user's ONNX model, read for its Gather and GatherElements nodes.

Where it sits: at the ``cases`` step of the layering (it makes ordinary
:class:`conformance.cases.case.Case` objects, so it imports ``cases``,
``oracle`` and ``tables`` and nothing above them).

- :mod:`.reading`: loading a model (every tensor checked, external data
  never loaded whole), shape inference, every graph walked (main graph, If/Loop/Scan
  bodies at any depth, model-local functions): one :class:`~.reading.Site`
  per node found;
- :mod:`.tensors`: every tensor of a model, wherever it stands: the one
  check (dims, bytes, external-data fields and files) and the one reader;
- :mod:`.constants`: which values are constant in a graph (initializers,
  Constant nodes, constants of an enclosing graph, chains of constant-only
  nodes, folded with ``onnx.reference``), loaded lazily and once;
- :mod:`.drawing`: symbolic dims resolved, indices drawn over the axis'
  whole range, data drawn as the corpus draws it, nodes deduplicated into
  node cases;
- :mod:`.capture`: the model run once on ``--inputs`` with every Gather
  node's inputs captured;
- :mod:`.saving`: node cases written as a case file.

"Model" means an ONNX model throughout: the user's file here, the one-node
models of ``engine.models`` elsewhere; where the two must be told apart, this
package calls the user's file a *graph file*.
"""
