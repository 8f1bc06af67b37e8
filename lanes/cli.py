"""Command line: ``python -m lanes <command> ...``.

Every subcommand module exposes ``add_subcommands(subparsers)`` and registers
handlers with ``set_defaults(func=handler)``; a handler takes the parsed
arguments, prints its output and returns an exit status.  A ``ValueError``
raised anywhere below a handler becomes one line on stderr and exit status 2,
the same status argparse uses for malformed flags.

Only the standard library is imported on this path: no numpy, pandas,
matplotlib or ipywidgets.
"""

from __future__ import annotations

import argparse
import os
import sys


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line: ``prog: error: message``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


#: The parts whose ``cli`` modules register subcommands, in help order.
_PARTS = ("pool", "gpu")
#: Commands whose part is known without importing the others, so that
#: ``python -m lanes table`` builds (and imports) only the pool's parser.
#: Any other command, ``--help`` or none builds the full parser.
_PART_OF = {"table": "pool", "trace": "pool"}


def _replay_inputs(trace, base):
    """``table --trace``: the replay's scenario and stream, hold times from the engine's step profile.

    The pool cannot import the engine (the layout rule), so the entry point,
    which sees every part, hands the pool's ``table`` this function.
    """
    from .gpu.replay import replay_inputs

    return replay_inputs(trace, base)


def build_parser(parts: tuple[str, ...] = _PARTS) -> argparse.ArgumentParser:
    """The top-level parser with the subcommands of ``parts`` (default: all of them)."""
    parser = _Parser(
        prog="python -m lanes",
        description="Scheduling interactive and batch inference traffic on shared GPU slots.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for part in parts:
        if part == "pool":
            from .pool import cli
        else:
            from .gpu import cli
        cli.add_subcommands(sub)
    parser.set_defaults(replay_inputs=_replay_inputs)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    part = _PART_OF.get(argv[0]) if argv else None
    parser = build_parser((part,) if part else _PARTS)
    args = parser.parse_args(argv)
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler below
        return status
    except ValueError as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{parser.prog} {args.command}: error: out of memory: the input is too large for this machine",
              file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``... | head``): stop quietly, as other command-line tools do.
        # Point stdout at /dev/null so that the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, the status a shell reports for a tool a pipe closed


def main_exit() -> None:
    """Console-script entry point (``lanes ...`` once the package is installed)."""
    sys.exit(main())
