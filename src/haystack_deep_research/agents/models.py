"""The default model of each role: OpenAI's Responses API, built when first needed (importing openai is slow)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from haystack.components.generators.chat import OpenAIResponsesChatGenerator

__all__ = ["DEFAULT_MAX_RETRIES", "DEFAULT_MODEL", "DEFAULT_SMALL_MODEL", "DEFAULT_TIMEOUT_S", "default_chat_generator"]

DEFAULT_MODEL = "gpt-5.4"
DEFAULT_SMALL_MODEL = "gpt-5.4-mini"
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 3


def default_chat_generator(model: str) -> OpenAIResponsesChatGenerator:
    """
    The default chat generator for a role: OpenAI's Responses API with a timeout and retries.

    Building it needs no API key; the key (``OPENAI_API_KEY``) is read when the first request is made.

    :param model: The OpenAI model name.
    :returns: A chat generator.
    """
    from haystack.components.generators.chat import OpenAIResponsesChatGenerator

    return OpenAIResponsesChatGenerator(model=model, timeout=DEFAULT_TIMEOUT_S, max_retries=DEFAULT_MAX_RETRIES)
