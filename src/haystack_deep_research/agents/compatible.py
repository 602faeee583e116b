"""
OpenAI's generators for OpenAI-compatible servers that need no key (Ollama, vLLM, llama.cpp, LM Studio).

The OpenAI client refuses to start without an API key even when the server ignores it. These subclasses send
``OPENAI_API_KEY`` when it is set (hosted OpenAI-compatible services need it) and a placeholder otherwise, and
serialize like their parents (the key stays an environment variable). Built by
:func:`haystack_deep_research.agents.chat_generator`; importing this module imports openai.
"""

from __future__ import annotations

from haystack.components.generators.chat import OpenAIChatGenerator, OpenAIResponsesChatGenerator

from haystack_deep_research._haystack_internals import NO_KEY, KeylessClientMixin

__all__ = ["NO_KEY", "CompatibleChatGenerator", "CompatibleResponsesChatGenerator"]


class CompatibleChatGenerator(KeylessClientMixin, OpenAIChatGenerator):
    """``OpenAIChatGenerator`` (Chat Completions API) that works without an API key."""


class CompatibleResponsesChatGenerator(KeylessClientMixin, OpenAIResponsesChatGenerator):
    """``OpenAIResponsesChatGenerator`` (Responses API) that works without an API key."""
