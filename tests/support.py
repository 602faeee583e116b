"""
Test-only agent factories for servers the tests start in another process.

``DEEP_RESEARCH_AGENT_FACTORY=tests.support:scripted_agent`` makes ``deep-research mcp`` (or a Hayhooks wrapper) build
its agents here: scripted models, the real web_search and read_url tools against the test's loopback servers, whose
search URL the test passes in ``DEEP_RESEARCH_TEST_SEARCH_URL``. The process is kept off the network. With
``DEEP_RESEARCH_TEST_CALL_LOG`` set, every model call appends its role to that file, so a test can see which calls a
server made, and when.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from haystack.utils import Secret

from haystack_deep_research import Sources, UrlPolicy, WebSearchTool, create_deep_research_agent
from haystack_deep_research.settings.grouped import given_fields
from haystack_deep_research.testing import ScriptedChatGenerator, forbid_network

T = TypeVar("T")

SEARCH_URL_ENV = "DEEP_RESEARCH_TEST_SEARCH_URL"
CALL_LOG_ENV = "DEEP_RESEARCH_TEST_CALL_LOG"
SEARCH_KEY = "test-key"
TOPICS = ["solar capacity", "battery storage"]

_OFFLINE: list[Any] = []


def _stay_offline() -> None:
    """Forbid the network for the rest of this process (once)."""
    if not _OFFLINE:
        guard = forbid_network()
        guard.__enter__()
        _OFFLINE.append(guard)


class _LoggedModel(ScriptedChatGenerator):
    """A scripted model that appends its role to the call log before each call."""

    def _log(self) -> None:
        with open(os.environ[CALL_LOG_ENV], "a", encoding="utf-8") as log:
            log.write(f"{self.role}\n")

    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        self._log()
        return super().run(messages, tools, **kwargs)

    async def run_async(
        self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any
    ) -> dict[str, list[ChatMessage]]:
        self._log()
        return await super().run_async(messages, tools, **kwargs)


CLARIFYING_QUESTION = "Which region should the research cover?"


@component
class ClarifyingScope:
    """A scope model that asks one clarifying question, then writes the brief from the answered conversation."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        text = messages[-1].text or ""
        reply = f"Brief: {text}" if "answer" in text else json.dumps({"clarification": CLARIFYING_QUESTION})
        return {"replies": [ChatMessage.from_assistant(reply)]}


def scripted_agent(**options: Any) -> Agent:
    """
    :param options: The server's options for ``create_deep_research_agent`` (``None`` values are left out).
    :returns: An agent with scripted models that researches against the loopback servers of the calling test.
    """
    _stay_offline()
    given = {name: value for name, value in options.items() if value is not None}
    subtopics = TOPICS[: given.get("max_subtopics", len(TOPICS))]
    model = _LoggedModel if os.environ.get(CALL_LOG_ENV) else ScriptedChatGenerator
    return create_deep_research_agent(
        scope_llm=ClarifyingScope() if given.get("clarify") else model(role="scope"),
        orchestrator_llm=model(role="orchestrator", subtopics=subtopics),
        researcher_llm=model(role="researcher"),
        summarizer_llm=model(role="summarizer"),
        writer_llm=model(role="writer"),
        sources=Sources(
            search=WebSearchTool(
                api_key=Secret.from_token(SEARCH_KEY), api_base_url=os.environ[SEARCH_URL_ENV], max_results=2
            ),
            url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)),
        ),
        **given,
    )


@component
class ListScope:
    """A scope model replying from a list, in order, keeping the conversations it was sent."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.received: list[list[ChatMessage]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        self.received.append(list(messages))
        return {"replies": [ChatMessage.from_assistant(self.replies.pop(0))]}


def loopback_sources(search: Any, given: Sources | None = None) -> Sources:
    """
    :param search: The loopback search tool.
    :param given: A test's own sources, or ``None``.
    :returns: The test's sources, with the loopback search and URL policy wherever it set none of its own.
    """
    defaults = Sources(search=search, url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)))
    if given is None:
        return defaults
    if not given.web:
        return given
    return dataclasses.replace(defaults, **{name: getattr(given, name) for name in given_fields(given)})


VATICAN = "The Vatican discovered tides in 1850"
"""An invented sentence no source backs."""
TRUE_CLAIM = "Global solar capacity grew by 450 gigawatts in 2025"
"""A claim the loopback web server's solar page backs."""


def truth_judge(false: str) -> Any:
    """A judge of our own: every numbered claim it is shown is supported, except those that say ``false``."""
    from haystack.components.generators.chat import MockChatGenerator

    def judge(messages: list[ChatMessage]) -> str:
        claims = dict(re.findall(r"^(\d+)\. (.*)$", messages[-1].text or "", re.MULTILINE))
        verdicts = [
            {"id": int(number), "verdict": "unsupported" if false in claim else "supported", "reason": "checked"}
            for number, claim in claims.items()
        ]
        return json.dumps({"verdicts": verdicts})

    return MockChatGenerator(response_fn=judge)


def plain_writer(solar_url: str, *lines: str) -> Any:
    """A writer of our own that answers every part with the same section: the given lines, then a cited true claim."""
    from haystack.components.generators.chat import MockChatGenerator

    cited = f"{TRUE_CLAIM} [Solar capacity 2025]({solar_url})."
    return MockChatGenerator(response_fn=lambda messages: "\n\n".join(["## Solar", *lines, cited]) + "\n")


def signal_when_held(
    child: subprocess.Popen[str], asked: threading.Event, release: threading.Event, signum: int, what: str
) -> tuple[str, str]:
    """
    Send ``signum`` to ``child`` once a model call it made is held (``asked``), then let the call go (``release``).

    :returns: The child's stdout and stderr; a child still running after 120 s is killed.
    """
    try:
        assert asked.wait(timeout=120), f"the run never reached its {what}"
        child.send_signal(signum)
        return child.communicate(timeout=120)
    finally:
        release.set()
        if child.poll() is None:
            child.kill()
            child.communicate()


def read_fifo(path: Any) -> tuple[threading.Thread, list[bytes]]:
    """Read a FIFO to its end in a thread of its own (a writer opening it blocks until a reader does)."""
    got: list[bytes] = []

    def read() -> None:
        with open(path, "rb") as fifo:
            got.append(fifo.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, got


SUMMARIZE_EVERY_PAGE = Sources(summarize_over=0)
"""Sources whose every page read goes through the summarizer, for tests of the summarizer's role."""


def without_blocking_on(fifo: Path, call: Callable[[], T]) -> tuple[bool, T | BaseException | None]:
    """
    Run ``call`` in a thread for at most 60 s; if it is still blocked then (an ``open()`` of ``fifo`` waiting for a
    writer), open the FIFO for writing to free it.

    :returns: Whether it blocked, and what it returned or raised.
    """
    outcome: list[T | BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # handed back to the test, which asserts on it
            outcome.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=60)
    blocked = worker.is_alive()
    if blocked:
        with open(fifo, "w", encoding="utf-8"):
            pass
        worker.join()
    return blocked, outcome[0] if outcome else None
