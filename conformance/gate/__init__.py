"""The gate: results held against the known-discrepancy baselines.

- :mod:`.baseline`: ``cases/known/<runtime>.yaml``, read into entries (``covers``)
- :mod:`.check`: the rule (which results are known, new, which entries fixed upstream?)
- :mod:`.verdict`: gating finished runs and the ``gate.json`` contract
- :mod:`.settings`: what a front-end hands the engine and the gate (``build``)
"""

from conformance.gate.check import (
    FIXED_EVIDENCE,
    EntryResult,
    Gate,
    check,
)

__all__ = ["FIXED_EVIDENCE", "EntryResult", "Gate", "check"]
