"""
A server's agents and their runs: where the agents come from (``create_deep_research_agent`` on the models and sources
the server's options choose, by the command line's own code, each option left out read from its
``DEEP_RESEARCH_<OPTION>`` variable; docs/hayhooks.md), and a run as a chat reply (the question from OpenAI-style chat
messages, each event streamed as a reasoning chunk, which chat UIs show as the model's thinking, then the report).

``DEEP_RESEARCH_AGENT_FACTORY=module:function`` (test-only) makes a server build its agents with ``function(**options)``
instead, so that tests can run the real servers in another process with scripted models.
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from functools import partial
from typing import Any, cast

from haystack.dataclasses import ChatMessage, ReasoningContent, StreamingChunk

from haystack_deep_research.errors import ConfigurationError, InvalidQuestionError
from haystack_deep_research.events import Event, UsageRecorded
from haystack_deep_research.run import EventStream
from haystack_deep_research.run._lifecycle import check_question

__all__ = [
    "AGENT_FACTORY_ENV",
    "AgentFactory",
    "agent_factory",
    "configured_agent",
    "default_agent",
    "question_from_chat",
    "question_from_text",
    "stream_research",
]

AGENT_FACTORY_ENV = "DEEP_RESEARCH_AGENT_FACTORY"
"""Test-only: the environment variable naming a ``module:function`` that builds a server's agents."""

AgentFactory = Callable[..., Any]
"""Builds an agent from a server's options (keyword arguments of ``create_deep_research_agent``)."""


def configured_agent(settings: argparse.Namespace, **options: Any) -> Any:
    """
    The agent of a real server, on the models and sources its settings choose (each one left out read from its
    environment variable), with a request's ``options`` of ``create_deep_research_agent`` on top.

    :raises MissingCredentialsError: If a key the chosen models or search need is missing.
    :raises ConfigurationError: If a setting is invalid.
    """
    from haystack_deep_research.agents import create_deep_research_agent
    from haystack_deep_research.options.arguments import (
        check_option_credentials,
        factory_arguments,
        with_budgets,
        with_grounding,
    )

    check_option_credentials(settings)
    arguments = with_grounding(factory_arguments(settings), bool(options.pop("grounding", False)))
    if options.get("budgets") is not None:  # a request's limits, over the prices the settings give
        arguments = with_budgets(arguments, options.pop("budgets"))
    return create_deep_research_agent(**{**arguments, **options})


def default_agent(**options: Any) -> Any:
    """The agent of a real server set up by its environment only (the default models and search when nothing is set)."""
    from haystack_deep_research.options.config import environment_options

    return configured_agent(environment_options(), **options)


def agent_factory(environ: dict[str, str] | None = None, *, settings: argparse.Namespace | None = None) -> AgentFactory:
    """
    :param environ: The environment to read; ``os.environ`` by default.
    :param settings: The command line's shared options, if the server has a command line.
    :returns: The factory named by ``DEEP_RESEARCH_AGENT_FACTORY`` (test-only), else :func:`configured_agent` with
        the settings, else :func:`default_agent`.
    :raises ConfigurationError: If the variable is set but does not name an importable callable.
    """
    spec = (os.environ if environ is None else environ).get(AGENT_FACTORY_ENV, "").strip()
    if not spec:
        return default_agent if settings is None else partial(configured_agent, settings)
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise ConfigurationError(f"{AGENT_FACTORY_ENV} must look like 'module:function'; got {spec!r}.")
    try:
        factory = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as error:
        raise ConfigurationError(f"{AGENT_FACTORY_ENV}={spec!r} cannot be loaded: {error}.") from error
    if not callable(factory):
        raise ConfigurationError(f"{AGENT_FACTORY_ENV}={spec!r} names {type(factory).__name__}, not a function.")
    return factory


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": "..."}, ...]
        return " ".join(str(part.get("text") or "") for part in content if isinstance(part, Mapping))
    return ""


def question_from_chat(messages: Sequence[Mapping[str, Any]]) -> str:
    """
    :param messages: OpenAI-style chat messages (``{"role": "user", "content": "..."}``; content may be a list of
        text parts).
    :returns: The text of the last user message, stripped.
    :raises InvalidQuestionError: If there is no user message with text, or its text is longer than
        ``MAX_QUESTION_CHARS``.
    """
    for message in reversed(list(messages or [])):
        if isinstance(message, Mapping) and message.get("role") == "user":
            text = _text(message.get("content")).strip()
            if text:
                return check_question(text)
            break
    raise InvalidQuestionError("No research question: the last user message must hold the question as text.")


def question_from_text(question: Any) -> str:
    """
    :param question: A research question as a server received it (the ``question`` of a request body).
    :returns: The question, stripped.
    :raises InvalidQuestionError: If it is not a string, is blank, or is longer than ``MAX_QUESTION_CHARS``.
    """
    text = question.strip() if isinstance(question, str) else ""
    if not text:
        raise InvalidQuestionError("No research question: send {'question': '...'} with a non-empty question.")
    return check_question(text)


async def stream_research(
    agent: Any, question: str, *, progress: bool = True, **run_kwargs: Any
) -> AsyncGenerator[StreamingChunk, None]:
    """
    Run an agent and stream the run: one reasoning chunk per event, then the report as one content chunk; closing
    the stream early (a client that disconnects) cancels the run.

    :param agent: An agent of this library.
    :param question: The research question.
    :param progress: Whether to stream the events as reasoning chunks.
    :param run_kwargs: More arguments of ``run_async`` (``inputs``, ...).
    :returns: The chunks, as an async generator.
    """
    stream = EventStream(agent, messages=[ChatMessage.from_user(question)], **run_kwargs)
    async with aclosing(cast("AsyncGenerator[Event, None]", aiter(stream))) as events:
        async for event in events:
            if progress and not isinstance(event, UsageRecorded):  # a count per model call: the result has the total
                yield StreamingChunk(
                    content="", index=0, reasoning=ReasoningContent(reasoning_text=f"{event.describe()}\n")
                )
    result = stream.result or {}
    yield StreamingChunk(content=str(result.get("report") or ""), finish_reason="stop")
