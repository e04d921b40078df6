"""The spec model reads type lists from onnx.defs."""

from __future__ import annotations

import pytest

from conformance.tables import dtypes, spec


def test_bfloat16_only_from_opset_13():
    for s in spec.all_specs():
        assert ("bfloat16" in s.data_dtypes) == (s.opset >= 13), (s.op, s.opset)


@pytest.mark.parametrize("s", spec.all_specs(), ids=lambda s: f"{s.op}-{s.opset}")
def test_every_spec(s):
    assert s.index_dtypes == ("int32", "int64")
    assert len(s.data_dtypes) == (16 if s.opset >= 13 else 15)
    assert set(s.data_dtypes) <= set(dtypes.NAMES)
    assert s.axis_default == 0 and not s.axis_required
    assert s.since_version == s.opset


def test_unknown_opset_names_the_known_ones():
    with pytest.raises(spec.UnknownOpset, match="known: 11, 13"):
        spec.op_spec("GatherElements", 1)


def test_dtype_table_round_trips():
    import numpy as np

    for d in dtypes.DTYPES:
        assert dtypes.of_array(np.zeros(1, d.numpy)).name == d.name
