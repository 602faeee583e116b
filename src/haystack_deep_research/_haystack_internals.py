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
- :func:`telemetry_off_unless_asked`: Haystack reads ``HAYSTACK_TELEMETRY_ENABLED`` once, when it is imported (which
  importing this package does), and keeps its client in the module global ``haystack.telemetry._telemetry.telemetry``
  that every Pipeline run looks up; ``None`` there sends nothing. Its sender (PostHog) posts from a thread of its own,
  whose failed attempts urllib3 and PostHog log as warnings and errors.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import MutableMapping
from typing import Any

from haystack.core.component.types import InputSocket, OutputSocket

__all__ = ["NO_KEY", "TELEMETRY_ENV", "KeylessClientMixin", "input_names", "output_names", "telemetry_off_unless_asked"]

TELEMETRY_ENV = "HAYSTACK_TELEMETRY_ENABLED"
"""Haystack's switch for its anonymous usage telemetry: on unless set to anything but ``true`` or ``1``."""

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
    """The input names of a Haystack component instance, or ``None`` for anything else."""
    sockets = getattr(obj, "__haystack_input__", None)
    if sockets is None:
        return None
    return {name for name, socket in vars(sockets).items() if isinstance(socket, InputSocket)}


def output_names(obj: Any) -> list[str] | None:
    """The output names a Haystack component instance declares, or ``None`` for anything else."""
    sockets = getattr(obj, "__haystack_output__", None)
    if sockets is None:
        return None
    return [name for name, socket in vars(sockets).items() if isinstance(socket, OutputSocket)]


_SENDER_LOGGERS = ("urllib3.connectionpool", "urllib3.util.retry", "posthog", "backoff")


def _not_from_the_telemetry_sender(record: logging.LogRecord) -> bool:
    """Whether a record comes from another thread than PostHog's sender."""
    return not type(threading.current_thread()).__module__.startswith("posthog")


def telemetry_off_unless_asked(environ: MutableMapping[str, str] | None = None) -> bool:
    """
    Turn Haystack's telemetry off for this process and the processes it starts, unless ``HAYSTACK_TELEMETRY_ENABLED``
    asks for it explicitly (``true`` or ``1``); either way, a failure to send it is never logged (it would reach a
    progress display as retry warnings). Called by the command line and the servers, not by importing the library.

    :returns: Whether telemetry stays on.
    """
    from haystack.telemetry import _telemetry

    env = os.environ if environ is None else environ
    asked = env.get(TELEMETRY_ENV, "").strip().lower() in ("true", "1")
    if not asked:
        env[TELEMETRY_ENV] = "False"  # for the processes this one starts (parsers, scan workers): read at import
        _telemetry.telemetry = None
    for name in _SENDER_LOGGERS:
        logger = logging.getLogger(name)
        if _not_from_the_telemetry_sender not in logger.filters:
            logger.addFilter(_not_from_the_telemetry_sender)
    return asked
