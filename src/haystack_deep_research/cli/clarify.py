"""
``--clarify``: the run may ask one clarifying question before it researches.

On a terminal (stdin is a TTY) the question is asked on stderr and the answer read from stdin; the command then
runs again on the conversation (the question, the clarifying question, the answer) and researches. Without a
terminal the question is printed on stdout (or in the ``--json`` object, as ``clarification``) and the command exits
with :attr:`~haystack_deep_research.options.exit_codes.ExitCode.CLARIFICATION_NEEDED`: run it again with the answer
added to the question. The question is the scope model's words: it is shown through
:func:`~haystack_deep_research._untrusted.terminal.terminal_text`, on one line.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from haystack.dataclasses import ChatMessage

from haystack_deep_research._untrusted.terminal import say, terminal_text
from haystack_deep_research.cli.output import print_stdout, result_json
from haystack_deep_research.cli.session import RunOutcome
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.options.exit_codes import ExitCode
from haystack_deep_research.state import CLARIFICATION, EXIT_CLARIFICATION_NEEDED, EXIT_REASON, MESSAGES

__all__ = ["ask_on_terminal", "clarification_of", "follow_up", "print_clarification"]


def clarification_of(outcome: RunOutcome) -> str | None:
    """
    :param outcome: How a run ended.
    :returns: The clarifying question the run asked, or ``None`` when it researched (or never finished).
    """
    result = outcome.result
    if result is None or result.get(EXIT_REASON) != EXIT_CLARIFICATION_NEEDED:
        return None
    return str(result.get(CLARIFICATION) or "") or None


def ask_on_terminal(question: str, *, stdin: TextIO | None = None, stderr: TextIO | None = None) -> str | None:
    """
    Ask the clarifying question on a terminal.

    :param question: The question.
    :param stdin: Where the answer is read (standard input by default).
    :param stderr: Where the question is written (standard error by default).
    :returns: The answer, cleaned; ``None`` when stdin is not a terminal or the answer is empty (end of input too).
    """
    stdin, stderr = stdin or sys.stdin, stderr or sys.stderr
    if not stdin.isatty():
        return None
    say(
        f"deep-research needs one answer before it researches:\n  {terminal_text(question, one_line=True)}", file=stderr
    )
    say("> ", end="", file=stderr)
    answer = clean_text(stdin.readline()).strip()
    return answer or None


def follow_up(outcome: RunOutcome, answer: str) -> list[ChatMessage]:
    """
    :param outcome: The run that asked (its ``messages`` end with the clarifying question).
    :param answer: The user's answer.
    :returns: The conversation to run again on.
    """
    result: dict[str, Any] = outcome.result or {}
    return [*result.get(MESSAGES, []), ChatMessage.from_user(answer)]


def print_clarification(question: str, result: dict[str, Any], asked: str, *, json: bool) -> int:
    """
    Print the clarifying question for a caller without a terminal.

    :param question: The research question.
    :param result: The run's result.
    :param asked: The clarifying question.
    :param json: Whether ``--json`` was given: then the JSON object (which carries ``clarification``) is printed.
    :returns: :attr:`ExitCode.CLARIFICATION_NEEDED`.
    """
    if json:
        print_stdout(result_json(result, question))
    else:
        print_stdout(terminal_text(asked, one_line=True))
    say("deep-research: the question needs a clarification (above); run again with the answer added to the question.")
    return ExitCode.CLARIFICATION_NEEDED
