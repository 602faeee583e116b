"""
The one place the package relies on a private name of Haystack (or of a client it wraps); each docstring here says
why, and ``tests/test_adapters.py`` pins the behaviour relied on, so an upgrade that changes it fails that one test.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import MutableMapping
from typing import Any

from haystack.core.component.types import InputSocket, OutputSocket

TELEMETRY_ENV = "HAYSTACK_TELEMETRY_ENABLED"
"""Haystack's switch for its anonymous usage telemetry: on unless set to anything but ``true`` or ``1``."""

NO_KEY = "no-key"
"""Sent as the API key when none is set."""


class KeylessClientMixin:
    """
    Mixed in before ``OpenAIChatGenerator`` or ``OpenAIResponsesChatGenerator``: the client gets the resolved key, or
    :data:`NO_KEY` when none is set, which OpenAI-compatible local servers (Ollama, vLLM) do not need. Haystack builds
    the client from the private ``_client_kwargs()`` hook (in ``warm_up`` and ``warm_up_async``) and has no public way
    without a key; a placeholder ``Secret`` would be serialized, the hook keeps the key an environment variable.
    """

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = super()._client_kwargs()  # type: ignore[misc]
        kwargs["api_key"] = kwargs.get("api_key") or NO_KEY
        return kwargs


def input_names(obj: Any) -> set[str] | None:
    """
    The input names of a Haystack component instance, or ``None`` for anything else: Haystack keeps its sockets in
    ``__haystack_input__`` / ``__haystack_output__`` (what ``Pipeline.connect`` reads) and has no public accessor
    outside a Pipeline, and user-given components (search backends, scan factories) are checked before wiring.
    """
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
    return not type(threading.current_thread()).__module__.startswith("posthog")


def telemetry_off_unless_asked(environ: MutableMapping[str, str] | None = None) -> bool:
    """
    Turn Haystack's telemetry off for this process and the processes it starts, unless ``HAYSTACK_TELEMETRY_ENABLED``
    asks for it (``true`` or ``1``); either way PostHog's sender thread's failures are never logged (they would reach a
    progress display). Haystack reads the variable once, at import, and every Pipeline run looks its client up in the
    module global ``haystack.telemetry._telemetry.telemetry``, where ``None`` sends nothing. Called by the command line
    and the servers, not by importing the library.

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
