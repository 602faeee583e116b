"""
Where a server's agents come from (the MCP server, a Hayhooks wrapper): ``create_deep_research_agent`` with the
server's options, or, for tests only, a factory named in the environment.

``DEEP_RESEARCH_AGENT_FACTORY=module:function`` makes a server build its agents with ``function(**options)`` instead
(for the MCP server the options are the ``deep_research`` tool's: ``max_subtopics``, budgets, ``grounding``). It
exists so that tests can run the real servers in another process with scripted models and loopback servers; it is
not a way to configure a production server.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

from haystack_deep_research.errors import ConfigurationError

__all__ = ["AGENT_FACTORY_ENV", "AgentFactory", "agent_factory", "default_agent"]

AGENT_FACTORY_ENV = "DEEP_RESEARCH_AGENT_FACTORY"
"""Test-only: the environment variable naming a ``module:function`` that builds a server's agents."""

AgentFactory = Callable[..., Any]
"""Builds an agent from a server's options (keyword arguments of ``create_deep_research_agent``)."""


def default_agent(**options: Any) -> Any:
    """
    The agent of a real server: the default models (``OPENAI_API_KEY``) and search (Tavily with ``TAVILY_API_KEY``, else
    the keyless search).

    :param options: Parameters of ``create_deep_research_agent``.
    :returns: The agent.
    :raises MissingCredentialsError: If a key is missing.
    """
    from haystack_deep_research.agents import check_credentials, create_deep_research_agent

    check_credentials()
    return create_deep_research_agent(**options)


def agent_factory(environ: dict[str, str] | None = None) -> AgentFactory:
    """
    :param environ: The environment to read; ``os.environ`` by default.
    :returns: The factory named by ``DEEP_RESEARCH_AGENT_FACTORY`` (test-only), else :func:`default_agent`.
    :raises ConfigurationError: If the variable is set but does not name an importable callable.
    """
    spec = (os.environ if environ is None else environ).get(AGENT_FACTORY_ENV, "").strip()
    if not spec:
        return default_agent
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise ConfigurationError(f"{AGENT_FACTORY_ENV} must look like 'module:function'; got {spec!r}.")
    try:
        factory = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as error:
        raise ConfigurationError(f"{AGENT_FACTORY_ENV}={spec!r} cannot be loaded: {error}.") from error
    if not callable(factory):
        raise ConfigurationError(f"{AGENT_FACTORY_ENV}={spec!r} names {type(factory).__name__}, not a function.")
    return factory
