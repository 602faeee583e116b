"""
What a run reads from an agent's State: the question, the caller's run-time inputs in ``hook_context`` (event
subscribers, progress and streaming callbacks, ``on_run_opened``, the run's own budgets), and the agent's view of its
run.
"""

from __future__ import annotations

from typing import Any

from haystack.components.agents.state import State
from haystack.dataclasses import ChatRole

from haystack_deep_research.errors import ConfigurationError, InvalidQuestionError
from haystack_deep_research.events import EventBus, Subscriber, progress_view
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run.door import check_hook_context, check_messages, check_question
from haystack_deep_research.run.view import RunView
from haystack_deep_research.settings import Budgets
from haystack_deep_research.state import (
    BUDGETS_KEY,
    EVENTS_KEY,
    HOOK_CONTEXT,
    PROGRESS_KEY,
    RUN_KEY,
    RUN_OPENED_KEY,
    STREAMING_KEY,
    TOKEN_USAGE,
)

__all__ = [
    "budgets_of",
    "context_of",
    "counted_view",
    "event_bus",
    "on_run_opened",
    "question_from",
    "streaming_of",
    "view_of",
]


def question_from(messages: Any) -> str:
    """
    Find the research question: the text of the last user message, cleaned (see
    :func:`~haystack_deep_research.evidence.clean_text`).

    :param messages: The messages passed to ``run``.
    :returns: The question, stripped.
    :raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage``, holds no user message with text, or
        the question is longer than ``MAX_QUESTION_CHARS``.
    """
    for message in reversed(check_messages(messages)):
        if message.is_from(ChatRole.USER):
            text = clean_text(message.text or "").strip()
            if text:
                return check_question(text)
            break
    raise InvalidQuestionError(
        "No research question: pass messages=[ChatMessage.from_user('your question')] with a non-empty question."
    )


def view_of(state: State) -> RunView | None:
    """
    :param state: An agent's live State.
    :returns: The agent's view of its run, or ``None`` when it runs outside a run of this library.
    """
    context = state.data.get(HOOK_CONTEXT)
    view = context.get(RUN_KEY) if isinstance(context, dict) else None
    return view if isinstance(view, RunView) else None


def counted_view(state: State) -> RunView | None:
    """
    :param state: An agent's live State, at a step boundary.
    :returns: :func:`view_of` the state, with the tokens the agent has spent so far counted toward its run; ``None``
        outside a run of this library.
    """
    view = view_of(state)
    if view is not None:
        view.count_usage(state.data.get(TOKEN_USAGE))
    return view


def context_of(state: State) -> dict[str, Any]:
    """
    :param state: An agent's live State.
    :returns: Its ``hook_context`` (``{}`` when none was given).
    :raises ConfigurationError: If the ``hook_context`` given is not a dict.
    """
    return check_hook_context(state.data.get(HOOK_CONTEXT))


def event_bus(run_id: str, context: dict[str, Any], *, own: Subscriber | None = None) -> EventBus:
    """
    The event bus of a run, delivering to the callbacks the caller put in ``hook_context``.

    :param run_id: The run's id.
    :param context: The run's ``hook_context``: ``EVENTS_KEY`` (``on_event(event)``) and ``PROGRESS_KEY``
        (``progress(phase, message)``) are read.
    :param own: A subscriber of the agent itself (its ``on_event=``), delivered first.
    :returns: The bus.
    :raises ConfigurationError: If one of them is not callable.
    """
    subscribers = [own] if own is not None else []
    for key, adapt in ((PROGRESS_KEY, progress_view), (EVENTS_KEY, None)):
        given = context.get(key)
        if given is None:
            continue
        if not callable(given):
            shape = "progress(phase, message)" if key == PROGRESS_KEY else "on_event(event)"
            raise ConfigurationError(f"hook_context[{key!r}] must be a callable {shape}; got {type(given).__name__}.")
        subscribers.append(adapt(given) if adapt is not None else given)
    return EventBus(run_id, subscribers)


def on_run_opened(context: dict[str, Any]) -> Any:
    """:returns: The caller's ``on_run_opened(run)`` callback, or ``None``."""
    given = context.get(RUN_OPENED_KEY)
    if given is not None and not callable(given):
        raise ConfigurationError(
            f"hook_context[{RUN_OPENED_KEY!r}] must be a callable on_run_opened(run); got {type(given).__name__}."
        )
    return given


def streaming_of(context: dict[str, Any]) -> Any:
    """:returns: The caller's streaming callback, or ``None``."""
    given = context.get(STREAMING_KEY)
    if given is not None and not callable(given):
        raise ConfigurationError(
            f"hook_context[{STREAMING_KEY!r}] must be a Haystack streaming callback, a callable taking a "
            f"StreamingChunk; got {type(given).__name__}."
        )
    return given


def budgets_of(context: dict[str, Any], own: Budgets) -> Budgets:
    """
    :param context: The caller's ``hook_context``.
    :param own: The budgets the shape was built with.
    :returns: The run's budgets: the caller's ``hook_context[BUDGETS_KEY]`` over ``own``, or ``own``.
    :raises ConfigurationError: If that entry is not a ``Budgets``.
    """
    given = context.get(BUDGETS_KEY)
    if given is None:
        return own
    if not isinstance(given, Budgets):
        raise ConfigurationError(
            f"hook_context[{BUDGETS_KEY!r}] must be a Budgets, for example Budgets(tokens=50_000); "
            f"got {type(given).__name__}."
        )
    return given.over(own)
