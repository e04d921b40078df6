"""The run engine: isolated workers, judging against the oracle, records on disk.

- :mod:`conformance.engine.pool`: worker processes, batching, crash and timeout handling
- :mod:`conformance.engine.worker`: the worker process itself
- :mod:`conformance.engine.judge`: outcome kinds and the judge
- :mod:`conformance.engine.records`: results.jsonl, header.json, summary.json
- :mod:`conformance.engine.run`: cases in, records out (the one path every front-end uses)
- :mod:`conformance.engine.schedule`: which case runs in which model (packs, alone re-runs)
- :mod:`conformance.engine.packs`: what may share a model, and pack sizes
"""
