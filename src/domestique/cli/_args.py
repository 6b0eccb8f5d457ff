"""Argument parsing shared by the subcommands.

argparse exits with status 2 on a usage error by itself; the subcommands instead catch
:class:`UsageError` so that they print their own error shape (``check`` prints a deny decision,
``scan`` an error object) before exiting 2, and an error never looks like "allow" or "clean".
"""

from __future__ import annotations

import argparse


class UsageError(Exception):
    """The command line could not be parsed; the message says why."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises :class:`UsageError` instead of exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)
