"""
The one place the package relies on a private name of Haystack (or of a client it wraps).

Everything else depends on public APIs only. Each name here has a test in ``tests/test_adapters.py`` that pins the
behaviour relied on, so a Haystack upgrade that changes it fails that one named test instead of a run.

- :class:`KeylessClientMixin`: Haystack's OpenAI generators build their ``openai`` client from the private
  ``_client_kwargs()`` hook (called by ``warm_up`` and ``warm_up_async``), and offer no public way to start the
  client without an API key, which OpenAI-compatible local servers (Ollama, vLLM, llama.cpp) do not need. Passing a
  placeholder ``Secret`` instead would serialize the placeholder; overriding the hook keeps the key an environment
  variable in ``to_dict``.
- :func:`input_names` / :func:`output_names`: Haystack keeps a component instance's sockets in the attributes
  ``__haystack_input__`` and ``__haystack_output__`` (what ``Pipeline.connect`` reads); there is no public accessor
  for a component outside a Pipeline, and the library checks user-given components (search backends, scan research
  factories) before wiring them.
"""

from __future__ import annotations

from typing import Any

from haystack.core.component.types import InputSocket, OutputSocket

__all__ = ["NO_KEY", "KeylessClientMixin", "input_names", "output_names"]

NO_KEY = "no-key"
"""Sent as the API key when none is set."""


class KeylessClientMixin:
    """
    Mixed in before ``OpenAIChatGenerator`` or ``OpenAIResponsesChatGenerator``: the client gets the resolved key,
    or :data:`NO_KEY` when none is set.
    """

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = super()._client_kwargs()  # type: ignore[misc]
        kwargs["api_key"] = kwargs.get("api_key") or NO_KEY
        return kwargs


def input_names(obj: Any) -> set[str] | None:
    """
    :param obj: Anything.
    :returns: The input names of a Haystack component instance, or ``None`` for anything else.
    """
    sockets = getattr(obj, "__haystack_input__", None)
    if sockets is None:
        return None
    return {name for name, socket in vars(sockets).items() if isinstance(socket, InputSocket)}


def output_names(obj: Any) -> list[str] | None:
    """
    :param obj: Anything.
    :returns: The output names a Haystack component instance declares, or ``None`` for anything else.
    """
    sockets = getattr(obj, "__haystack_output__", None)
    if sockets is None:
        return None
    return [name for name, socket in vars(sockets).items() if isinstance(socket, OutputSocket)]
