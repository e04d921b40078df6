"""Tables: the project's data, each a module that imports nothing of the rest.

- :mod:`.dtypes`: every tensor element type, its ONNX enum and NumPy dtype
- :mod:`.operators`: the operators, one row each (opsets, inputs, the shape
  rule, the features only one operator has)
- :mod:`.spec`: operators, opsets and their type constraints, read from ``onnx.defs``
- :mod:`.decisions`: every clause the oracle enforces and every point where the
  documents disagree or are silent, with the project's decision
- :mod:`.profiles`: the named configurations of each runtime (``openvino:1thread``)
- :mod:`.features`: input features (negative indices, empty tensors...) that
  records carry and baselines and fuzz signatures match on
- :mod:`.outcomes`: every outcome kind a result can have, and what each means
  to the gate, the export, the report and the fuzz skip rule
- :mod:`.variants`: the model variants' names (``static``, ``dynamic``...)
"""
