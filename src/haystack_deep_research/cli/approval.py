"""
``--approve-plan``: the person at the terminal reviews each planned sub-topic with Haystack's ``RichConsoleUI``
(rich is the ``[cli]`` extra), on stderr, so the report on stdout stays clean. It needs a terminal to answer on:
without one (stdin not a TTY: a pipe, a CI job) it is a usage error, and so is a live view (``--progress rich``)
that would draw over the questions; ``--progress auto`` shows one line per step instead.
"""

from __future__ import annotations

import argparse
import sys

from haystack.hooks.human_in_the_loop.policies import AlwaysAskPolicy
from haystack.hooks.human_in_the_loop.strategies import BlockingConfirmationStrategy

from haystack_deep_research.errors import MissingExtraError, UsageError

__all__ = ["check_approve_plan", "console_plan_review", "progress_mode"]


def check_approve_plan(args: argparse.Namespace) -> None:
    """
    :param args: The parsed options.
    :raises UsageError: If ``--approve-plan`` is given without a terminal, with ``--mode iterative`` or with
        ``--progress rich``.
    """
    if not args.approve_plan:
        return
    if args.mode != "deep":
        raise UsageError("--approve-plan reviews the sub-topics of --mode deep; drop it or --mode iterative.")
    if not sys.stdin.isatty():
        raise UsageError(
            "--approve-plan asks at the terminal, but stdin is not one; run it in a terminal, or drop --approve-plan."
        )
    if args.progress == "rich":
        raise UsageError(
            "--approve-plan asks at the terminal, which a live view would draw over; use --progress plain."
        )


def progress_mode(args: argparse.Namespace) -> str:
    """:returns: The ``--progress`` mode the display uses: ``auto`` is ``plain`` with ``--approve-plan``."""
    if args.quiet:
        return "none"
    return "plain" if args.approve_plan and args.progress == "auto" else str(args.progress)


def console_plan_review() -> BlockingConfirmationStrategy:
    """
    :returns: The strategy ``--approve-plan`` passes as ``approve_plan``: ask about every sub-topic on stderr.
    :raises MissingExtraError: If rich is not installed.
    """
    try:
        from rich.console import Console
    except ImportError as error:
        raise MissingExtraError("--approve-plan and its console questions", extra="cli", module="rich") from error
    from haystack.hooks.human_in_the_loop.user_interfaces import RichConsoleUI

    return BlockingConfirmationStrategy(
        confirmation_policy=AlwaysAskPolicy(), confirmation_ui=RichConsoleUI(console=Console(stderr=True))
    )
