"""The ``conformance`` command line: one module per command, each a thin
front-end over the engine, the gate and the report. Exit codes: :mod:`.exits`.

:func:`main` maps every error once: a user-facing error
(:class:`conformance.errors.ConformanceError`: a malformed file, an unknown
runtime, an unreadable run folder, a worker that does not start...) prints
its message and exits with its ``exit_code`` (2); an unreadable input or
unwritable output (``OSError``) exits 2 naming the file; anything else is a
bug of ours, one line and exit 2 (never 1). Commands do not catch these
errors themselves.

The command modules are imported when the parser is built, not with this
package: the pytest plugin imports the options it shares with ``run``
(:mod:`.options`) without loading every command.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from conformance import __version__
from conformance.cli import exits
from conformance.engine import credentials
from conformance.errors import ConformanceError
from conformance.report.terminal import escape as escape_text

COMMANDS = (
    "cases",
    "decisions",
    "run",
    "model",
    "fuzz",
    "report",
    "scoreboard",
    "gate",
    "diff",
    "oracle",
    "export",
)  # modules of this package, in --help's order


class _Parser(argparse.ArgumentParser):
    """argparse's parser, but a usage error that repeats an argument (``unrecognized
    arguments: --stor redis://:PW@host/0``) shows a URL's credentials as ``***``.
    Subcommands' parsers are of the same class (argparse's ``parser_class``)."""

    def __init__(self, *args, intermixed: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # a command whose positionals are OUT_DIR and PATHS... (export, cases list,
        # cases validate) takes its options between them: `export OUT --force a.yaml`
        # is `export OUT a.yaml --force`, as a user expects (argparse alone gives
        # PATHS nothing and calls a.yaml unrecognized)
        self._intermixed = intermixed
        self._in_intermixed = False

    def parse_known_args(self, args=None, namespace=None):
        if not self._intermixed or self._in_intermixed:
            return super().parse_known_args(args, namespace)
        self._in_intermixed = True  # parse_known_intermixed_args calls back in here
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._in_intermixed = False

    def error(self, message: str):
        super().error(credentials.mask_text(message))


def parser() -> argparse.ArgumentParser:
    top = _Parser(
        prog="conformance",
        description="Conformance suite for ONNX Gather and GatherElements.",
        epilog=exits.epilog(exits.OK, exits.FAILED, exits.USAGE, exits.INTERRUPTED),
    )
    top.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parser(commands)
    return top


DEBUG = "CONFORMANCE_DEBUG"  # set to 1: an internal error shows its traceback


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `conformance cases list | head` is not an error
        # Point stdout at devnull so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exits.OK
    except ConformanceError as error:  # the user's to fix, or the harness cannot go on
        for line in escape_text.error_lines(error):
            print(line, file=sys.stderr)
        return error.exit_code
    except OSError as error:  # an unreadable input or unwritable output: the user's to fix
        where = f"{error.filename}: " if error.filename else ""
        print(escape_text.safe(f"error: {where}{error.strerror or error}"), file=sys.stderr)
        return exits.USAGE
    except Exception as error:
        # A bug of ours, or an input no check caught: one line, exit 2 (never 1,
        # which means "a discrepancy" or "the gate failed"); the traceback on demand.
        if os.environ.get(DEBUG):
            raise
        print(
            escape_text.safe(  # a message may repeat a store URL: its password masked
                f"internal error: {type(error).__name__}: {credentials.mask_text(str(error))} "
                f"(set {DEBUG}=1 for the traceback, and please report it)"
            ),
            file=sys.stderr,
        )
        return exits.USAGE


if __name__ == "__main__":
    sys.exit(main())
