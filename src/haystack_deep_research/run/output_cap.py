"""
A per-completion output cap on a model the library does not call itself (the deep agent's own model, which the Agent
calls): a thin wrapper that adds the provider's cap to every call's ``generation_kwargs``.

The cap's name differs by provider and Haystack has no common one, so it is known for the generators that have one
(:func:`output_cap_kwargs`); for any other generator, set the cap in its own ``generation_kwargs``.
"""

from __future__ import annotations

import sys
from typing import Any

from haystack import component
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.run.hooks import UsesModels

__all__ = ["OutputCappedChatGenerator", "output_cap_kwargs"]

# Haystack's generators with a per-completion output cap: module, class, and the generation_kwargs key for it.
_CAPS = (
    ("haystack.components.generators.chat.openai", "OpenAIChatGenerator", "max_completion_tokens"),
    ("haystack.components.generators.chat.openai_responses", "OpenAIResponsesChatGenerator", "max_output_tokens"),
)


def output_cap_kwargs(generator: Any, tokens: int) -> dict[str, int] | None:
    """
    :param generator: A chat generator.
    :param tokens: The cap.
    :returns: The generation settings that cap one completion, or ``None`` for a generator without a known cap.
    """
    for module_name, class_name, key in _CAPS:
        module = sys.modules.get(module_name)
        kind = getattr(module, class_name, None) if module is not None else None
        if isinstance(kind, type) and isinstance(generator, kind):
            return {key: tokens}
    return None


@component
class OutputCappedChatGenerator(UsesModels):
    """
    A chat generator whose every completion is capped at ``max_output_tokens`` tokens.

    :param chat_generator: The model (an OpenAI Chat Completions or Responses generator).
    :param max_output_tokens: The cap, 1 to 1,000,000.
    :raises ConfigurationError: If the model has no known cap, or the cap is out of range.
    """

    def __init__(self, *, chat_generator: Any, max_output_tokens: int) -> None:
        # Any: Haystack's ChatGenerator protocol declares run(messages) only; this one is checked to take tools.
        self.chat_generator: Any = _checks.chat_generator("chat_generator", chat_generator, needs_tools=True)
        self.max_output_tokens = _checks.int_in_range("max_output_tokens", max_output_tokens, 1, 1_000_000)
        cap = output_cap_kwargs(chat_generator, self.max_output_tokens)
        if cap is None:
            raise ConfigurationError(
                f"max_output_tokens is known for OpenAI's chat generators only; {type(chat_generator).__name__} "
                "takes its own cap in its generation_kwargs (for example max_tokens=...). Set it there instead."
            )
        self._cap = cap

    def _used_models(self) -> list[Any]:
        return [self.chat_generator]

    def _inputs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {**kwargs, "generation_kwargs": {**(kwargs.get("generation_kwargs") or {}), **self._cap}}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """
        :param messages: The conversation.
        :param tools: The tools offered.
        :param kwargs: Other generator inputs (streaming callback, generation kwargs).
        :returns: The wrapped generator's replies.
        """
        return dict(self.chat_generator.run(messages=messages, tools=tools, **self._inputs(kwargs)))

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """
        :param messages: The conversation.
        :param tools: The tools offered.
        :param kwargs: Other generator inputs.
        :returns: The wrapped generator's replies.
        """
        return dict(await self.chat_generator.run_async(messages=messages, tools=tools, **self._inputs(kwargs)))

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized wrapper, with the wrapped generator nested."""
        model = component_to_dict(obj=self.chat_generator, name="chat_generator")
        return default_to_dict(self, chat_generator=model, max_output_tokens=self.max_output_tokens)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OutputCappedChatGenerator:
        """
        :param data: What ``to_dict`` returned.
        :returns: The wrapper.
        """
        deserialize_component_inplace(data["init_parameters"], key="chat_generator")
        return default_from_dict(cls, data)
