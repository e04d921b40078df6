"""The run engine: isolated workers, judging against the oracle, records on disk.

- :mod:`conformance.engine.pool`: worker processes, batching, crash and timeout handling
- :mod:`conformance.engine.worker`: the worker process itself
- :mod:`conformance.engine.judge`: outcome kinds and the judge
- :mod:`conformance.engine.run_writer`: what a run writes (records, header, the files' names)
- :mod:`conformance.engine.run_folder`: a run folder read back (``RunFolder``)
- :mod:`conformance.engine.run_schemas`: each file held to its JSON Schema
- :mod:`conformance.engine.records`: the names of those three, re-exported
- :mod:`conformance.engine.run`: cases in, records out (the one path every front-end uses)
- :mod:`conformance.engine.schedule`: which case runs in which model (packs, alone re-runs)
- :mod:`conformance.engine.packs`: what may share a model, and pack sizes
"""
