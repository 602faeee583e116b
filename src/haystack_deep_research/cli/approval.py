"""
``--approve-plan``: the person at the terminal reviews each planned sub-topic through Haystack's confirmation hooks
(rich, the ``[cli]`` extra), on stderr; each sub-topic, the model's words, shown through the door to the terminal as
text, never as markup. docs/plan-approval.md ("From the command line").
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import TYPE_CHECKING, Any

from haystack.hooks.human_in_the_loop import ConfirmationUIResult
from haystack.hooks.human_in_the_loop.policies import AlwaysAskPolicy
from haystack.hooks.human_in_the_loop.strategies import BlockingConfirmationStrategy
from haystack.hooks.human_in_the_loop.types import ConfirmationUI

from haystack_deep_research._untrusted.terminal import terminal_text
from haystack_deep_research.errors import MissingExtraError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["ConsolePlanReview", "check_approve_plan", "console_plan_review", "progress_mode"]


def check_approve_plan(args: argparse.Namespace) -> None:
    """:raises UsageError: If ``--approve-plan`` has no terminal, or comes with ``--mode iterative`` or a live view."""
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
    """The strategy ``--approve-plan`` passes as ``approve_plan``: ask about every sub-topic on stderr."""
    return BlockingConfirmationStrategy(confirmation_policy=AlwaysAskPolicy(), confirmation_ui=ConsolePlanReview())


class ConsolePlanReview(ConfirmationUI):
    """
    A Haystack confirmation UI on a rich console (stderr by default): each planned call shown as text, then ``y``
    researches it, ``n`` drops it (with an optional reason) and ``m`` edits its arguments.
    """

    def __init__(self, console: Console | None = None) -> None:
        try:
            from rich.console import Console
        except ImportError as error:
            raise MissingExtraError("--approve-plan and its console questions", extra="cli", module="rich") from error
        self.console = console or Console(stderr=True)
        self._lock = threading.Lock()  # parallel calls are asked one after the other

    def get_user_confirmation(
        self, tool_name: str, tool_description: str, tool_params: dict[str, Any]
    ) -> ConfirmationUIResult:
        """Ask about one planned call: ``confirm``, ``reject`` (the reason as feedback) or ``modify`` (new values)."""
        from rich.console import Group
        from rich.panel import Panel
        from rich.prompt import Prompt
        from rich.text import Text

        shown = {name: _shown(value) for name, value in tool_params.items()}
        lines = [Text.assemble(("Tool: ", "bold yellow"), terminal_text(tool_name, one_line=True))]
        lines += [Text.assemble((f"{terminal_text(name)}: ", "cyan"), value) for name, value in shown.items()]
        with self._lock:
            self.console.print(Panel(Group(*lines), title="Planned step", title_align="left"))
            choice = Prompt.ask(
                Text("Research it? (y = yes, n = drop it, m = edit it)"),
                choices=["y", "n", "m"],
                default="y",
                console=self.console,
            )
            if choice == "y":
                return ConfirmationUIResult(action="confirm")
            if choice == "n":
                feedback = Prompt.ask(Text("Why (optional)"), default="", console=self.console)
                return ConfirmationUIResult(action="reject", feedback=feedback or None)
            edited = {}
            for name, value in tool_params.items():
                given = Prompt.ask(Text(f"Edit {terminal_text(name)}"), default=shown[name], console=self.console)
                edited[name] = value if given == shown[name] else given if isinstance(value, str) else _parsed(given)
            return ConfirmationUIResult(action="modify", new_tool_params=edited)


def _shown(value: Any) -> str:
    """An argument as the person reads it: text through the door, anything else as JSON."""
    return terminal_text(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), one_line=True)


def _parsed(given: str) -> Any:
    """An edited argument that was not text: JSON when it reads as JSON, else the text as typed."""
    try:
        return json.loads(given)
    except json.JSONDecodeError:
        return given
