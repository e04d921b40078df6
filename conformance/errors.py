"""The root of the harness's user-facing errors: :class:`ConformanceError`.

An error that derives from it is the user's to fix (a malformed case,
targets or baseline file, an unknown runtime or opset, a run folder that
cannot be read or gated, a case over the memory guard, two runs that cannot
be compared) or says the harness cannot go on (a worker that does not start,
an output folder another run holds). It carries its :attr:`exit_code` (2:
:data:`conformance.cli.exits.USAGE`) and its :attr:`message`, written for
the user: ``conformance.cli.main`` catches the root once and prints the
message (escaped, by :func:`conformance.report.terminal.escape.error_lines`), so no
command maps these errors to an exit code by hand. A caller that knows
more adds a note (``error.add_note(...)``, PEP 678); the message ends with it.

These derive from it, each keeping the base its callers may catch
(``ValueError``, ``RuntimeError``, ``LookupError``):
``tables.spec.UnknownOpset``, ``cases.check.OverMemory``,
``cases.loader.CaseErrors``, ``graphs.reading.GraphFileError``,
``graphs.tensors.BrokenTensor`` (a model's tensor that does not hold what it says),
``graphs.saving.SaveRefused`` (``--save-cases`` over a file it did not write),
``gate.verdict.GateError``, ``engine.pool.EngineError`` (and
``fuzz.options.NothingRan``), ``engine.run_schemas.RecordsError`` (and
``report.scoreboard.ScoreboardError``), ``engine.targets.TargetError``,
``engine.files.FolderBusy``, ``engine.files.NotJson``,
``fuzz.store.errors.StoreError`` (and ``fuzz.store.entry.BadEntry``, one entry
a store skips with a warning line), ``fuzz.options.BadCampaign``,
``report.diff.DiffError``, ``oracle.admissible.TooManyOrders`` (an input whose admissible
outputs the oracle does not enumerate: more duplicates than it folds in every order),
``export.selection.ExportError`` (``conformance
export``), ``adapters.names.UnknownRuntime`` (and ``adapters.names.UnknownProfile``).
(``tests/test_errors_taxonomy.py`` holds this list to the code.)

These are signals, not errors, and must not derive from it, since a
handler of user errors would report them as such (exit 2, "fix your
input") when they are a verdict, or a bug, and hide them:

* ``oracle.SpecViolation``: the oracle's verdict that an input breaks a
  clause, caught by the oracle and recorded as the expected error; escaping,
  it is a bug of the oracle, an internal error;
* ``adapters.AdapterError`` (``LoadError``, ``RunError``) and
  ``adapters.HarnessUnsupported``: what a runtime did with one model, sent
  back from a worker process and judged (``load_error``, ``run_error``,
  ``harness_unsupported``); they are results, never the user's to fix;
* ``cases.values.ValueProblem`` and ``cases.yaml_lines``' YAML errors: the
  loader turns each into a ``file:line: field: message`` of
  :class:`~conformance.cases.loader.CaseErrors`; they have no file or line
  of their own, so one that escaped would be a bug of the loader;
* ``strict_json.NotJsonText`` (``NotUtf8``) and ``strict_json.NotText``
  (``ValueError`` s): why bytes are not JSON of ours, turned by each reader
  into its own error naming the file or key (``RecordsError``,
  ``BadEntry``, ``ExportError``);
* ``cases.npy.NpyProblem``: why an ``.npy`` array is not read, turned by its
  readers into a ``ValueProblem`` (the ``npy`` generator) or a
  ``GraphFileError`` (``--inputs``) that names the file;
* the pytest plugin's ``Discrepancy``, ``KnownDiscrepancy`` and
  ``CaseProblem``: ``AssertionError`` s, pytest's failures and xfails;
* ``shipped.NotShipped`` (a ``LookupError``): an installation without the
  corpus, specs or schemas it must carry, a packaging bug of ours (the
  packaging tests guard it), not an input the user can fix: ``cli.main``
  reports it as an internal error, to be reported;
* ``engine.forkserver.ForkServerDown``: a fork server that cannot fork a
  worker; the pool catches it and starts the worker directly, so it never
  reaches the user;
* private control flow (``fuzz.shrinker``'s ``_Found``, ``fuzz.budget``'s ``OutOfBudget``).

Where it sits: at the bottom of the layering (CONTRIBUTING.md), below
``conformance.tables``. It imports nothing, of ours or anyone's, so every
package may import it, ``tables`` and ``adapters`` included: the adapters
also run inside worker processes of other environments, where this module
must cost nothing to import and need nothing installed.
"""

from __future__ import annotations


class ConformanceError(Exception):
    """An error the user can act on; ``conformance`` exits :attr:`exit_code`."""

    exit_code: int = 2  # conformance.cli.exits.USAGE: bad input, or the harness cannot go on

    @property
    def message(self) -> str:
        """What the user reads: the text the error was raised with, then the
        notes callers added (``add_note``), one a line."""
        text = str(self) or type(self).__name__
        return "\n".join([text, *getattr(self, "__notes__", ())])
