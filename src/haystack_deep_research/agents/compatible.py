"""
OpenAI's generators for OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio): they work without an API key
(the OpenAI client refuses to start without one, even where the server ignores it) and can send ``tool_choice`` with
every request that offers tools (see docs/providers.md). Importing this module imports openai.
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.components.generators.chat import OpenAIChatGenerator, OpenAIResponsesChatGenerator
from haystack.dataclasses import ChatMessage, StreamingCallbackT
from haystack.tools import ToolsType, flatten_tools_or_toolsets

from haystack_deep_research._haystack_internals import KeylessClientMixin

__all__ = ["CompatibleChatGenerator", "CompatibleResponsesChatGenerator"]


class CompatibleChatGenerator(KeylessClientMixin, OpenAIChatGenerator):
    """
    ``OpenAIChatGenerator`` (Chat Completions API) that works without an API key and can send ``tool_choice``.

    :param tool_choice: Sent as the request's ``tool_choice`` whenever tools are offered (``"auto"``, ``"required"``
        or ``"none"``); ``None`` sends none. A ``tool_choice`` in ``generation_kwargs`` wins.
    :param kwargs: The parameters of ``OpenAIChatGenerator``.
    """

    def __init__(self, *, tool_choice: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tool_choice = tool_choice

    def _chosen(self, generation_kwargs: dict[str, Any] | None, tools: ToolsType | None) -> dict[str, Any] | None:
        """The call's generation kwargs, with ``tool_choice`` when tools are offered and none is set."""
        offered = flatten_tools_or_toolsets(tools if tools is not None else self.tools)
        given = {**self.generation_kwargs, **(generation_kwargs or {})}
        if self.tool_choice is None or not offered or "tool_choice" in given:
            return generation_kwargs
        return {**(generation_kwargs or {}), "tool_choice": self.tool_choice}

    @component.output_types(replies=list[ChatMessage])
    def run(
        self,
        messages: list[ChatMessage] | str,
        streaming_callback: StreamingCallbackT | None = None,
        generation_kwargs: dict[str, Any] | None = None,
        *,
        tools: ToolsType | None = None,
        tools_strict: bool | None = None,
    ) -> dict[str, list[ChatMessage]]:
        """As ``OpenAIChatGenerator.run``, with ``tool_choice`` sent when tools are offered."""
        kwargs = self._chosen(generation_kwargs, tools)
        return super().run(messages, streaming_callback, kwargs, tools=tools, tools_strict=tools_strict)

    @component.output_types(replies=list[ChatMessage])
    async def run_async(
        self,
        messages: list[ChatMessage] | str,
        streaming_callback: StreamingCallbackT | None = None,
        generation_kwargs: dict[str, Any] | None = None,
        *,
        tools: ToolsType | None = None,
        tools_strict: bool | None = None,
    ) -> dict[str, list[ChatMessage]]:
        """Async variant of :meth:`run`: the same parameters and outputs."""
        kwargs = self._chosen(generation_kwargs, tools)
        return await super().run_async(messages, streaming_callback, kwargs, tools=tools, tools_strict=tools_strict)

    def to_dict(self) -> dict[str, Any]:
        """:returns: The generator as ``OpenAIChatGenerator`` serializes it, with its ``tool_choice``."""
        data = super().to_dict()
        data["init_parameters"]["tool_choice"] = self.tool_choice
        return data


class CompatibleResponsesChatGenerator(KeylessClientMixin, OpenAIResponsesChatGenerator):
    """``OpenAIResponsesChatGenerator`` (Responses API) that works without an API key."""
