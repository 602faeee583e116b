"""
Where a server's agents come from: ``create_deep_research_agent`` on the models and sources the server's options
choose, by the command line's own code, each option left out read from its ``DEEP_RESEARCH_<OPTION>`` variable (see
docs/hayhooks.md).

``DEEP_RESEARCH_AGENT_FACTORY=module:function`` (test-only) makes a server build its agents with ``function(**options)``
instead, so that tests can run the real servers in another process with scripted models.
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable
from functools import partial
from typing import Any

from haystack_deep_research.errors import ConfigurationError

__all__ = ["AGENT_FACTORY_ENV", "AgentFactory", "agent_factory", "configured_agent", "default_agent"]

AGENT_FACTORY_ENV = "DEEP_RESEARCH_AGENT_FACTORY"
"""Test-only: the environment variable naming a ``module:function`` that builds a server's agents."""

AgentFactory = Callable[..., Any]
"""Builds an agent from a server's options (keyword arguments of ``create_deep_research_agent``)."""


def configured_agent(settings: argparse.Namespace, **options: Any) -> Any:
    """
    The agent of a real server, on the models and sources its settings choose (each one left out read from its
    environment variable), with a request's ``options`` of ``create_deep_research_agent`` on top.

    :raises MissingCredentialsError: If a key the chosen models or search need is missing.
    :raises ConfigurationError: If a setting is invalid.
    """
    from haystack_deep_research.agents import create_deep_research_agent
    from haystack_deep_research.options.arguments import (
        check_option_credentials,
        factory_arguments,
        with_budgets,
        with_grounding,
    )

    check_option_credentials(settings)
    arguments = with_grounding(factory_arguments(settings), bool(options.pop("grounding", False)))
    if options.get("budgets") is not None:  # a request's limits, over the prices the settings give
        arguments = with_budgets(arguments, options.pop("budgets"))
    return create_deep_research_agent(**{**arguments, **options})


def default_agent(**options: Any) -> Any:
    """The agent of a real server set up by its environment only (the default models and search when nothing is set)."""
    from haystack_deep_research.options.config import environment_options

    return configured_agent(environment_options(), **options)


def agent_factory(environ: dict[str, str] | None = None, *, settings: argparse.Namespace | None = None) -> AgentFactory:
    """
    :param environ: The environment to read; ``os.environ`` by default.
    :param settings: The command line's shared options, if the server has a command line.
    :returns: The factory named by ``DEEP_RESEARCH_AGENT_FACTORY`` (test-only), else :func:`configured_agent` with
        the settings, else :func:`default_agent`.
    :raises ConfigurationError: If the variable is set but does not name an importable callable.
    """
    spec = (os.environ if environ is None else environ).get(AGENT_FACTORY_ENV, "").strip()
    if not spec:
        return default_agent if settings is None else partial(configured_agent, settings)
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
