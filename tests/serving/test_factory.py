"""Where servers get their agents: the default factory, or a test-only one named in the environment."""

from __future__ import annotations

import pytest

from haystack_deep_research.errors import ConfigurationError, MissingCredentialsError
from haystack_deep_research.serving import agent_factory
from haystack_deep_research.serving.agents import AGENT_FACTORY_ENV, default_agent


def test_the_agent_factory_comes_from_the_environment_only_when_set() -> None:
    assert agent_factory({}) is default_agent
    assert agent_factory({AGENT_FACTORY_ENV: "tests.support:scripted_agent"}).__name__ == "scripted_agent"
    with pytest.raises(ConfigurationError, match="must look like 'module:function'"):
        agent_factory({AGENT_FACTORY_ENV: "tests.support"})
    with pytest.raises(ConfigurationError, match="cannot be loaded"):
        agent_factory({AGENT_FACTORY_ENV: "tests.support:no_such_factory"})


def test_the_default_agent_needs_the_keys() -> None:
    with pytest.raises(MissingCredentialsError, match="set OPENAI_API_KEY in the environment"):
        default_agent(max_subtopics=2)
