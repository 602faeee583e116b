"""
What a run checks at its door, and what it closes on its way out.

- :func:`check_question` refuses a question longer than :data:`MAX_QUESTION_CHARS` (every shape, the command line and
  the servers call it), before any model is called.
- :func:`check_messages` and :func:`check_hook_context` refuse malformed run input with the library's typed errors,
  naming what to change. The run's ``before_run`` hook calls them, and so does
  :class:`~haystack_deep_research.agents.ResearchAgent` before Haystack's ``Agent.run`` touches its input: Haystack
  fails on a ``messages`` that is not a list of ``ChatMessage`` (a string, a bare message, a list of dicts) with a
  ``TypeError`` or an ``AttributeError`` from deep inside, before any hook runs.
- :class:`RunGuard` closes what a run opened (the run directory's journal and its lock) when the agent's run ends,
  also when it fails: Haystack runs no ``after_run`` hook after an exception.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from haystack import logging
from haystack.dataclasses import ChatMessage

from haystack_deep_research.errors import ConfigurationError, InvalidQuestionError

__all__ = ["MAX_QUESTION_CHARS", "RunGuard", "check_hook_context", "check_messages", "check_question"]

logger = logging.getLogger(__name__)

_EXAMPLE = "messages=[ChatMessage.from_user('your question')]"

MAX_QUESTION_CHARS = 20_000
"""The longest research question, in characters (after stripping): longer text is material, not a question."""


def check_question(question: str) -> str:
    """
    Check a research question's length.

    :param question: The question, stripped.
    :returns: The question.
    :raises InvalidQuestionError: If it is longer than :data:`MAX_QUESTION_CHARS`; the message says what to do.
    """
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidQuestionError(
            f"The question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}. Ask a shorter "
            "question, and give long material as documents instead (Sources(datastores=...))."
        )
    return question


def check_messages(messages: Any) -> list[ChatMessage]:
    """
    Check that ``messages`` is a list of ``ChatMessage``.

    :param messages: What was passed to ``run`` as ``messages``.
    :returns: The messages.
    :raises InvalidQuestionError: If it is anything else; the message says what was passed and what to pass.
    """
    if isinstance(messages, ChatMessage):
        raise InvalidQuestionError("messages must be a list of ChatMessage; wrap the message: messages=[message].")
    if isinstance(messages, str):
        raise InvalidQuestionError(f"messages must be a list of ChatMessage, not a string; pass {_EXAMPLE}.")
    if not isinstance(messages, list):
        raise InvalidQuestionError(
            f"messages must be a list of ChatMessage, for example {_EXAMPLE}; got {type(messages).__name__}."
        )
    for index, message in enumerate(messages):
        if isinstance(message, ChatMessage):
            continue
        fix = "ChatMessage.from_dict(...)" if isinstance(message, dict) else "ChatMessage.from_user(...)"
        raise InvalidQuestionError(
            f"messages[{index}] is a {type(message).__name__}, not a ChatMessage; build each message with {fix}, "
            f"for example {_EXAMPLE}."
        )
    return messages


_MOVED_KEYS = {
    "haystack_deep_research.run_dir": "run_dir=...",
    "haystack_deep_research.on_event": "on_event=...",
    "haystack_deep_research.progress": "on_event=progress_view(progress)",
    "haystack_deep_research.streaming_callback": "streaming_callback=...",
    "haystack_deep_research.budgets": "budgets=...",
    "haystack_deep_research.brief": "brief=...",
    "haystack_deep_research.on_run_opened": "on_run_opened=...",
}
"""The ``hook_context`` keys a run read before its inputs became one ``RunInputs``, and the field each became."""


def check_hook_context(hook_context: Any) -> dict[str, Any]:
    """
    Check that ``hook_context`` is a dict (or ``None``, meaning an empty one) that holds none of the keys a run used to
    read its inputs from: those are refused, naming the ``RunInputs`` field to pass instead, never ignored.

    :param hook_context: What was passed to ``run`` as ``hook_context``.
    :returns: The dict (a new empty one for ``None``).
    :raises ConfigurationError: If it is anything else, or holds such a key.
    """
    if hook_context is None:
        return {}
    if not isinstance(hook_context, dict):
        raise ConfigurationError(
            f"hook_context must be a dict, for example {{'request_id': 7}}; got {type(hook_context).__name__}."
        )
    if moved := sorted(hook_context.keys() & _MOVED_KEYS.keys()):
        key = moved[0]
        raise ConfigurationError(
            f"hook_context[{key!r}] is not read any more: pass inputs=RunInputs({_MOVED_KEYS[key]}) to run instead."
        )
    return hook_context


class RunGuard:
    """
    What one agent run opened that must be closed when the run ends, whatever the way it ends.

    The agent puts a guard in ``hook_context`` (under ``RUN_GUARD_KEY``) for the run's life; the run's ``before_run``
    hook registers what it opens; the agent calls :meth:`close` once its run returned or raised. Closing something
    twice must be harmless: a run that ends normally has already closed it. Copying the guard returns the guard.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closers: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        return f"RunGuard(open={len(self._closers)})"

    def on_close(self, closer: Callable[[], None]) -> None:
        """
        :param closer: Called once by :meth:`close`.
        """
        with self._lock:
            self._closers.append(closer)

    def close(self) -> None:
        """Call every registered closer once, newest first; one that raises is logged and the others still run."""
        with self._lock:
            closers, self._closers = self._closers[::-1], []
        for closer in closers:
            try:
                closer()
            except Exception as error:  # closing must go on; the run's own outcome is what the caller sees
                logger.warning(
                    "Closing a run failed: {error_type}: {error}", error_type=type(error).__name__, error=error
                )
