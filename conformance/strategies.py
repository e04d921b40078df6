"""``conformance.strategies``: the public name of :mod:`conformance.fuzz.strategies`.

Users' property tests import the strategies from here (``from conformance
import strategies as cs``); the module lives with the fuzz campaign that
draws from it. This name is that very module, not a copy.
"""

import sys

from conformance.fuzz import strategies

sys.modules[__name__] = strategies
