"""
The models of the roles: OpenAI's Responses API by default, or any OpenAI-compatible server, built when first
needed (importing openai is slow). Every helper gives a model call the same limits (``timeout``, ``max_retries``,
``max_tokens`` sent under the API's own name); docs/providers.md describes them and ``tool_choice``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from haystack.utils import Secret

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError, MissingCredentialsError
from haystack_deep_research.run._phases import API_TABLE

if TYPE_CHECKING:
    from haystack.components.generators.chat.openai import OpenAIChatGenerator
    from haystack.components.generators.chat.openai_responses import OpenAIResponsesChatGenerator

    from haystack_deep_research.settings import Budgets

__all__ = [
    "APIS",
    "API_TABLE",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MODEL",
    "DEFAULT_SMALL_MODEL",
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_TOOL_CHOICE",
    "LARGE_ROLES",
    "SMALL_ROLES",
    "TOOL_CHOICES",
    "chat_generator",
    "check_credentials",
    "default_chat_generator",
    "role_models",
    "run_settings_of",
]

DEFAULT_MODEL = "gpt-5.4"
DEFAULT_SMALL_MODEL = "gpt-5.4-mini"
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 3


APIS = tuple(API_TABLE)
TOOL_CHOICES = ("auto", "required", "none")
"""The ``tool_choice`` values a Chat Completions request may carry (besides naming one function)."""
DEFAULT_TOOL_CHOICE = "auto"
"""The ``tool_choice`` sent to another server's Chat Completions when tools are offered (see :func:`chat_generator`)."""
_DEFAULT = object()
LARGE_ROLES = ("orchestrator", "scope", "writer")
SMALL_ROLES = ("researcher", "summarizer")
_ROLES = (*LARGE_ROLES, *SMALL_ROLES, "judge")


def default_chat_generator(
    model: str,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_tokens: int | None = None,
) -> OpenAIResponsesChatGenerator:
    """
    The default chat generator for a role: OpenAI's Responses API with a timeout and retries.

    Building it needs no API key; the key (``OPENAI_API_KEY``) is read when the first request is made.

    :param model: The OpenAI model name.
    :param timeout: Seconds per request.
    :param max_retries: Retries of a failed request.
    :param max_tokens: The most tokens one completion may hold (``max_output_tokens``); ``None`` for no cap.
    :returns: A chat generator.
    """
    from haystack.components.generators.chat.openai_responses import OpenAIResponsesChatGenerator

    cap = {"max_output_tokens": max_tokens} if max_tokens is not None else None
    return OpenAIResponsesChatGenerator(model=model, timeout=timeout, max_retries=max_retries, generation_kwargs=cap)


def chat_generator(
    model: str,
    *,
    base_url: str | None = None,
    api: str | None = None,
    api_key: Secret | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_tokens: int | None = None,
    tool_choice: Any = _DEFAULT,
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
    :param max_tokens: The most tokens one completion may hold, sent under the API's own name (see
        ``API_TABLE``); ``None`` for no cap.
    :param tool_choice: Chat Completions only: the ``tool_choice`` sent with every request that offers tools
        (``"auto"``, ``"required"`` or ``"none"``); ``None`` sends none. By default ``"auto"`` with a ``base_url``
        (llama.cpp's server uses no tool without it) and none for OpenAI.
    :param generation_kwargs: Extra arguments for every request (temperature, ...).
    :returns: The generator: ``OpenAIChatGenerator`` or ``OpenAIResponsesChatGenerator``, or their subclasses from
        :mod:`.compatible` for a ``base_url`` or a ``tool_choice`` (the key is optional, ``tool_choice`` is sent).
    :raises ConfigurationError: If ``model``, ``base_url``, ``api``, ``timeout``, ``max_retries``, ``max_tokens`` or
        ``tool_choice`` is invalid.
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
    choice = (
        (DEFAULT_TOOL_CHOICE if base_url and chosen == "chat" else None) if tool_choice is _DEFAULT else tool_choice
    )
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 3600:
        raise ConfigurationError(f"timeout must be a number of seconds above 0 and at most 3600; got {timeout!r}.")
    _checks.int_in_range("max_retries", max_retries, 0, 20)
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= 1_000_000
    ):
        raise ConfigurationError(f"max_tokens must be an integer from 1 to 1000000, or None; got {max_tokens!r}.")
    if choice is not None and (choice not in TOOL_CHOICES or chosen != "chat"):
        raise ConfigurationError(
            f"tool_choice must be one of {', '.join(TOOL_CHOICES)} or None, with the chat API; got {choice!r} "
            f"with api={chosen!r}."
        )
    from haystack.components.generators.chat.openai import OpenAIChatGenerator
    from haystack.components.generators.chat.openai_responses import OpenAIResponsesChatGenerator

    from haystack_deep_research.agents.compatible import CompatibleChatGenerator, CompatibleResponsesChatGenerator

    keyless = base_url is not None and api_key is None
    cap = API_TABLE[chosen].compatible_cap if base_url else API_TABLE[chosen].cap
    extra = {cap: max_tokens} if max_tokens is not None else {}
    options: dict[str, Any] = {
        "model": model.strip(),
        "api_base_url": base_url,
        "api_key": api_key or Secret.from_env_var("OPENAI_API_KEY", strict=not keyless),
        "timeout": float(timeout),
        "max_retries": max_retries,
        "generation_kwargs": {**extra, **(generation_kwargs or {})} or None,
    }
    if chosen == "chat" and (keyless or choice is not None):
        return CompatibleChatGenerator(tool_choice=choice, **options)
    if chosen == "chat":
        return OpenAIChatGenerator(**options)
    return (CompatibleResponsesChatGenerator if keyless else OpenAIResponsesChatGenerator)(**options)


def role_models(
    *,
    model: str | None = None,
    small_model: str | None = None,
    roles: Mapping[str, str] | None = None,
    base_url: str | None = None,
    api: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_tokens: int | None = None,
    tool_choice: Any = _DEFAULT,
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
    :param timeout: Seconds per request, for every role.
    :param max_retries: Retries of a failed request, for every role.
    :param max_tokens: The most tokens one completion may hold, for every role; ``None`` for no cap.
    :param tool_choice: Sent with requests that offer tools (see :func:`chat_generator`); ``None`` sends none.
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
    limits: dict[str, Any] = {"timeout": timeout, "max_retries": max_retries, "max_tokens": max_tokens}
    if tool_choice is not _DEFAULT:
        limits["tool_choice"] = tool_choice
    return {f"{role}_llm": chat_generator(name, base_url=base_url, api=api, **limits) for role, name in names.items()}


def run_settings_of(budgets: Budgets, phase_models: dict[str, str]) -> dict[str, Any]:
    """
    What each run of a factory's shape is opened with (the parameters of ``OpenRunHook``).

    :raises ConfigurationError: If ``budgets.dollars`` is set and a model's price is unknown.
    """
    budgets.check_priced(phase_models)
    return {
        "token_budget": budgets.tokens,
        "time_budget": budgets.seconds,
        "cost_budget": budgets.dollars,
        "phase_models": phase_models,
        "prices": dict(budgets.prices or {}),
    }


def check_credentials(
    environ: Mapping[str, str] | None = None, *, base_url: str | None = None, search: str | None = None
) -> None:
    """
    Check that the API keys the chosen clients need are set.

    ``OPENAI_API_KEY`` is needed unless the models run on another server (``base_url``); ``TAVILY_API_KEY`` only
    when Tavily is asked for by name (``auto`` falls back to the keyless search). ``environ`` is ``os.environ`` by
    default.

    :raises MissingCredentialsError: If a key is missing; the message names what to set.
    """
    env = os.environ if environ is None else environ
    needed = [*([] if base_url else ["OPENAI_API_KEY"]), *(["TAVILY_API_KEY"] if search == "tavily" else [])]
    missing = [key for key in needed if not env.get(key, "").strip()]
    if missing:
        hint = (
            " or pass --base-url for an OpenAI-compatible server; with no key at all, `python -m "
            "haystack_deep_research.testing serve` serves the testing kit and prints a run to try"
            if "OPENAI_API_KEY" in missing
            else ""
        )
        raise MissingCredentialsError(
            f"set {' and '.join(missing)} in the environment (for example: export {missing[0]}=...){hint}."
        )
