"""
OpenAI's generators for OpenAI-compatible servers that need no key (Ollama, vLLM, llama.cpp, LM Studio).

The OpenAI client refuses to start without an API key even when the server ignores it. These subclasses send
``OPENAI_API_KEY`` when it is set (hosted OpenAI-compatible services need it) and a placeholder otherwise, and
serialize like their parents (the key stays an environment variable). Built by
:func:`haystack_deep_research.agents.chat_generator`; importing this module imports openai.
"""

from __future__ import annotations

from typing import Any

from haystack.components.generators.chat import OpenAIChatGenerator, OpenAIResponsesChatGenerator

__all__ = ["NO_KEY", "CompatibleChatGenerator", "CompatibleResponsesChatGenerator"]

NO_KEY = "no-key"
"""Sent as the API key when none is set."""


class CompatibleChatGenerator(OpenAIChatGenerator):
    """``OpenAIChatGenerator`` (Chat Completions API) that works without an API key."""

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs = super()._client_kwargs()
        kwargs["api_key"] = kwargs.get("api_key") or NO_KEY
        return kwargs


class CompatibleResponsesChatGenerator(OpenAIResponsesChatGenerator):
    """``OpenAIResponsesChatGenerator`` (Responses API) that works without an API key."""

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs = super()._client_kwargs()
        kwargs["api_key"] = kwargs.get("api_key") or NO_KEY
        return kwargs
