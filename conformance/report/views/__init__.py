"""What the report pages show, computed from run folders (no HTML here): one
module per view. :mod:`.report` is the report page (:func:`.report.from_runs`,
its :class:`.report.Report`: the matrix, the discrepancy groups), built from
the views beside it: :mod:`.families` (groups by mechanism), :mod:`.fuzz`
(fuzz bugs), :mod:`.coverage` (the heat map), :mod:`.decisions` (the spec
decisions observed), :mod:`.tensors` (tensors as text) and :mod:`.severity`
(the kinds worst first). The scoreboard page is :mod:`conformance.report.scoreboard`."""
