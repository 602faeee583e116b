"""
The models of the roles: OpenAI's Responses API by default, or any OpenAI-compatible server, built when first
needed (importing openai is slow).

- :func:`default_chat_generator`: a role's default (OpenAI, Responses API, timeout and retries).
- :func:`chat_generator`: one model on OpenAI or on any OpenAI-compatible server (``base_url``), through the
  Chat Completions API (``api="chat"``, what Ollama, vLLM, llama.cpp and LM Studio serve) or the Responses API.
- :func:`role_models`: the ``*_llm`` arguments of ``create_deep_research_agent`` from a large model (orchestrator,
  scope, writer), a small one (researcher, summarizer) and per-role overrides.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from haystack.utils import Secret

from haystack_deep_research.errors import ConfigurationError, MissingCredentialsError

if TYPE_CHECKING:
    from haystack.components.generators.chat.openai import OpenAIChatGenerator
    from haystack.components.generators.chat.openai_responses import OpenAIResponsesChatGenerator

__all__ = [
    "APIS",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MODEL",
    "DEFAULT_SMALL_MODEL",
    "DEFAULT_TIMEOUT_S",
    "LARGE_ROLES",
    "SMALL_ROLES",
    "chat_generator",
    "check_credentials",
    "default_chat_generator",
    "role_models",
]

DEFAULT_MODEL = "gpt-5.4"
DEFAULT_SMALL_MODEL = "gpt-5.4-mini"
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 3
APIS = ("chat", "responses")
LARGE_ROLES = ("orchestrator", "scope", "writer")
"""The roles that get the large model."""
SMALL_ROLES = ("researcher", "summarizer")
"""The roles that get the small model."""
_ROLES = (*LARGE_ROLES, *SMALL_ROLES, "judge")


def default_chat_generator(model: str) -> OpenAIResponsesChatGenerator:
    """
    The default chat generator for a role: OpenAI's Responses API with a timeout and retries.

    Building it needs no API key; the key (``OPENAI_API_KEY``) is read when the first request is made.

    :param model: The OpenAI model name.
    :returns: A chat generator.
    """
    from haystack.components.generators.chat.openai_responses import OpenAIResponsesChatGenerator

    return OpenAIResponsesChatGenerator(model=model, timeout=DEFAULT_TIMEOUT_S, max_retries=DEFAULT_MAX_RETRIES)


def chat_generator(
    model: str,
    *,
    base_url: str | None = None,
    api: str | None = None,
    api_key: Secret | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = DEFAULT_MAX_RETRIES,
    generation_kwargs: dict[str, Any] | None = None,
) -> OpenAIChatGenerator | OpenAIResponsesChatGenerator:
    """
    A chat generator for one model, on OpenAI or on any OpenAI-compatible server.

    With ``base_url`` (for example ``"http://localhost:11434/v1"`` for Ollama) the key is optional: ``OPENAI_API_KEY``
    is sent when set, a placeholder otherwise. Both APIs support tool calling where the server and model do.

    :param model: The model name, as the server knows it.
    :param base_url: The server's OpenAI-compatible address (ending in ``/v1``); ``None`` for OpenAI.
    :param api: "chat" (Chat Completions, what local servers speak) or "responses" (OpenAI's Responses API);
        by default "chat" with a ``base_url`` and "responses" without.
    :param api_key: The key; by default ``OPENAI_API_KEY`` (required without ``base_url``, optional with it).
    :param timeout: Seconds per request.
    :param max_retries: Retries of a failed request (429 and 5xx, with backoff).
    :param generation_kwargs: Extra arguments for every request (temperature, ...).
    :returns: The generator: ``OpenAIChatGenerator`` or ``OpenAIResponsesChatGenerator`` (or their key-optional
        subclasses from :mod:`.compatible` for a ``base_url`` without an explicit key).
    :raises ConfigurationError: If ``model``, ``base_url`` or ``api`` is invalid.
    """
    if not isinstance(model, str) or not model.strip():
        raise ConfigurationError(f"model must be a non-empty model name; got {model!r}.")
    if base_url is not None and (not isinstance(base_url, str) or not base_url.startswith(("http://", "https://"))):
        raise ConfigurationError(
            f"base_url must be an http(s) URL such as http://localhost:11434/v1; got {base_url!r}."
        )
    chosen = api or ("chat" if base_url else "responses")
    if chosen not in APIS:
        raise ConfigurationError(f"api must be 'chat' or 'responses'; got {api!r}.")
    from haystack.components.generators.chat.openai import OpenAIChatGenerator
    from haystack.components.generators.chat.openai_responses import OpenAIResponsesChatGenerator

    from haystack_deep_research.agents.compatible import CompatibleChatGenerator, CompatibleResponsesChatGenerator

    keyless = base_url is not None and api_key is None
    options: dict[str, Any] = {
        "model": model.strip(),
        "api_base_url": base_url,
        "api_key": api_key or Secret.from_env_var("OPENAI_API_KEY", strict=not keyless),
        "timeout": timeout,
        "max_retries": max_retries,
        "generation_kwargs": generation_kwargs,
    }
    if chosen == "chat":
        return (CompatibleChatGenerator if keyless else OpenAIChatGenerator)(**options)
    return (CompatibleResponsesChatGenerator if keyless else OpenAIResponsesChatGenerator)(**options)


def role_models(
    *,
    model: str | None = None,
    small_model: str | None = None,
    roles: Mapping[str, str] | None = None,
    base_url: str | None = None,
    api: str | None = None,
) -> dict[str, Any]:
    """
    The ``*_llm`` arguments of ``create_deep_research_agent`` for a choice of models on one server.

    :param model: The large model (orchestrator, scope, writer); ``DEFAULT_MODEL`` by default.
    :param small_model: The small model (researcher, summarizer); the large model when only it is given, else
        ``DEFAULT_SMALL_MODEL``.
    :param roles: Per-role overrides, ``{"researcher": "qwen3:8b", ...}``; roles: orchestrator, scope, writer,
        researcher, summarizer, judge.
    :param base_url: An OpenAI-compatible server for every role (see :func:`chat_generator`).
    :param api: "chat" or "responses" (see :func:`chat_generator`).
    :returns: ``{"orchestrator_llm": ..., "scope_llm": ..., ...}`` (``judge_llm`` only when overridden).
    :raises ConfigurationError: If a role is unknown or a name is invalid.
    """
    overrides = dict(roles or {})
    unknown = sorted(set(overrides) - set(_ROLES))
    if unknown:
        raise ConfigurationError(f"unknown role(s) {unknown}; roles are {', '.join(_ROLES)}.")
    large = model or DEFAULT_MODEL
    small = small_model or (model if model else DEFAULT_SMALL_MODEL)
    names = {role: large for role in LARGE_ROLES} | {role: small for role in SMALL_ROLES} | overrides
    return {f"{role}_llm": chat_generator(name, base_url=base_url, api=api) for role, name in names.items()}


def check_credentials(
    environ: Mapping[str, str] | None = None, *, base_url: str | None = None, search: str | None = None
) -> None:
    """
    Check that the API keys the chosen clients need are set.

    ``OPENAI_API_KEY`` is needed unless the models run on another server (``base_url``); ``TAVILY_API_KEY`` only
    when Tavily is asked for by name (``auto`` falls back to the keyless search).

    :param environ: The environment to look in; ``os.environ`` by default.
    :param base_url: The OpenAI-compatible server, if any.
    :param search: The search asked for, if any.
    :raises MissingCredentialsError: If a key is missing; the message names what to set.
    """
    env = os.environ if environ is None else environ
    needed = [*([] if base_url else ["OPENAI_API_KEY"]), *(["TAVILY_API_KEY"] if search == "tavily" else [])]
    missing = [key for key in needed if not env.get(key, "").strip()]
    if missing:
        hint = " or pass --base-url for an OpenAI-compatible server" if "OPENAI_API_KEY" in missing else ""
        raise MissingCredentialsError(
            f"set {' and '.join(missing)} in the environment (for example: export {missing[0]}=...){hint}."
        )
