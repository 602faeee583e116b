"""
What a run checks at its door.

- :func:`check_messages` and :func:`check_hook_context` refuse malformed run input with the library's typed errors,
  naming what to change. The run's ``before_run`` hook calls them, and so does
  :class:`~haystack_deep_research.agents.ResearchAgent` before Haystack's ``Agent.run`` touches its input: Haystack
  fails on a ``messages`` that is not a list of ``ChatMessage`` (a string, a bare message, a list of dicts) with a
  ``TypeError`` or an ``AttributeError`` from deep inside, before any hook runs.
"""

from __future__ import annotations

from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_deep_research.errors import ConfigurationError, InvalidQuestionError

__all__ = ["check_hook_context", "check_messages"]

_EXAMPLE = "messages=[ChatMessage.from_user('your question')]"


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


def check_hook_context(hook_context: Any) -> dict[str, Any]:
    """
    Check that ``hook_context`` is a dict (or ``None``, meaning an empty one).

    :param hook_context: What was passed to ``run`` as ``hook_context``.
    :returns: The dict (a new empty one for ``None``).
    :raises ConfigurationError: If it is anything else.
    """
    if hook_context is None:
        return {}
    if not isinstance(hook_context, dict):
        raise ConfigurationError(
            f"hook_context must be a dict, for example {{RUN_DIR_KEY: 'runs/one'}}; got {type(hook_context).__name__}."
        )
    return hook_context
