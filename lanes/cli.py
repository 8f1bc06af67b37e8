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
import sys


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line: ``prog: error: message``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from .engine import cli as engine_cli
    from .pool import cli as pool_cli

    parser = _Parser(
        prog="python -m lanes",
        description="Scheduling interactive and batch inference traffic on shared GPU slots.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    pool_cli.add_subcommands(sub)
    engine_cli.add_subcommands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2


def main_exit() -> None:
    """Console-script entry point (``lanes ...`` once the package is installed)."""
    sys.exit(main())
