"""Role models: OpenAI or any OpenAI-compatible server, chat or responses, keys optional on other servers."""

from __future__ import annotations

from typing import Any

import pytest
from haystack.components.generators.chat import OpenAIChatGenerator, OpenAIResponsesChatGenerator
from haystack.core.serialization import component_from_dict, component_to_dict
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool
from haystack.utils import Secret

from haystack_deep_research import ConfigurationError, create_deep_research_agent
from haystack_deep_research.agents import chat_generator, role_models
from haystack_deep_research.testing import LoopbackChatServer


def test_openai_by_default_speaks_the_responses_api() -> None:
    generator = chat_generator("gpt-5.4-mini")
    assert type(generator) is OpenAIResponsesChatGenerator
    assert generator.api_base_url is None
    assert chat_generator("gpt-5.4", api="chat").__class__ is OpenAIChatGenerator


def test_another_server_speaks_chat_completions_and_needs_no_key() -> None:
    with LoopbackChatServer() as server:
        generator = chat_generator("scope", base_url=server.openai_base_url)
        reply = generator.run(messages=[ChatMessage.from_user("Why do tides happen?")])["replies"][0]
        sent = server.requests.wait_for(1)[0]

    assert isinstance(generator, OpenAIChatGenerator)
    assert reply.text == "Research brief: find reliable, current sources that answer: Why do tides happen?"
    assert sent.headers["authorization"] == "Bearer no-key"  # a placeholder, not a real key


def test_a_key_set_in_the_environment_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hosted")
    with LoopbackChatServer() as server:
        chat_generator("scope", base_url=server.openai_base_url).run(messages=[ChatMessage.from_user("q")])
        assert server.requests.wait_for(1)[0].headers["authorization"] == "Bearer sk-hosted"


def test_an_explicit_key_without_tool_choice_is_a_plain_openai_generator() -> None:
    key = Secret.from_env_var("MY_KEY")
    generator = chat_generator("m", base_url="http://127.0.0.1:9/v1", api_key=key, tool_choice=None)
    assert type(generator) is OpenAIChatGenerator


def test_generators_round_trip() -> None:
    generator = chat_generator("llama3.2", base_url="http://127.0.0.1:9/v1", generation_kwargs={"temperature": 0})
    restored = component_from_dict(type(generator), component_to_dict(generator, "g"), "g")
    assert restored.to_dict() == generator.to_dict()
    assert type(restored) is type(generator)


def test_role_models_split_large_small_and_overrides() -> None:
    models = role_models(model="big", small_model="small", roles={"researcher": "r", "judge": "j"})
    assert {role: generator.model for role, generator in models.items()} == {
        "orchestrator_llm": "big",
        "scope_llm": "big",
        "writer_llm": "big",
        "researcher_llm": "r",
        "summarizer_llm": "small",
        "judge_llm": "j",
    }
    assert role_models(model="one")["summarizer_llm"].model == "one"  # one model for every role
    assert role_models()["researcher_llm"].model == "gpt-5.4-mini"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: chat_generator(""), "model must be a non-empty model name"),
        (lambda: chat_generator("m", api="completions"), "api must be 'chat' or 'responses'"),
        (lambda: chat_generator("m", base_url="localhost:11434"), "base_url must be an http"),
        (lambda: role_models(roles={"critic": "x"}), "unknown role"),
    ],
)
def test_bad_choices_are_refused(call: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        call()  # type: ignore[operator]


def test_a_model_without_tool_calling_is_refused_at_build_time() -> None:
    class TextOnly:
        def run(self, messages: list[ChatMessage]) -> dict:
            return {"replies": []}

    with pytest.raises(ConfigurationError, match="researcher_llm must support tool calling"):
        create_deep_research_agent(researcher_llm=TextOnly())


SEARCH = Tool(
    name="web_search",
    description="Search the web.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    function=lambda query: query,
)


def _bodies(**options: Any) -> tuple[dict[str, Any], dict[str, Any], ChatMessage]:
    """
    Two calls on a server that sees tools only with tool_choice, one offering a tool and one offering none; the two
    request bodies, and the reply to the first.
    """
    with LoopbackChatServer(needs_tool_choice=["researcher"]) as server:
        generator = chat_generator("researcher", base_url=server.openai_base_url, **options)
        asked = [ChatMessage.from_user("solar capacity")]
        reply = generator.run(messages=asked, tools=[SEARCH])["replies"][0]
        generator.run(messages=asked)
        with_tools, without = (request.json_body for request in server.requests.wait_for(2))
    return with_tools, without, reply


def test_on_a_server_tool_choice_is_sent_with_the_tools_and_only_then() -> None:
    with_tools, without, reply = _bodies()
    assert with_tools["tool_choice"] == "auto"
    assert "tool_choice" not in without
    assert [call.tool_name for call in reply.tool_calls] == ["web_search"]  # the server used the tool


def test_tool_choice_none_sends_none_and_such_a_server_ignores_the_tools() -> None:
    with_tools, _, reply = _bodies(tool_choice=None)
    assert "tool_choice" not in with_tools
    assert reply.tool_calls == []


def test_a_tool_choice_in_generation_kwargs_wins() -> None:
    with_tools, _, _ = _bodies(generation_kwargs={"tool_choice": "required"})
    assert with_tools["tool_choice"] == "required"


def test_the_tool_choice_and_the_limits_survive_a_round_trip() -> None:
    generator = chat_generator("m", base_url="http://127.0.0.1:9/v1", timeout=5, max_retries=0, max_tokens=99)
    restored = component_from_dict(type(generator), component_to_dict(generator, "g"), "g")
    assert (restored.tool_choice, restored.timeout, restored.max_retries) == ("auto", 5.0, 0)
    assert restored.generation_kwargs == {"max_tokens": 99}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": 0}, "timeout must be a number of seconds above 0"),
        ({"max_retries": -1}, "max_retries must be an integer from 0 to 20"),
        ({"max_tokens": 0}, "max_tokens must be an integer from 1 to 1000000"),
        ({"tool_choice": "always"}, "tool_choice must be one of auto, required, none"),
        ({"tool_choice": "auto", "api": "responses"}, "with the chat API"),
    ],
)
def test_bad_limits_are_configuration_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        chat_generator("m", base_url="http://127.0.0.1:9/v1", **options)


def test_role_models_give_every_role_the_same_limits() -> None:
    models = role_models(model="m", base_url="http://127.0.0.1:9/v1", timeout=8, max_retries=2, max_tokens=50)
    assert {(g.timeout, g.max_retries, g.tool_choice, str(g.generation_kwargs)) for g in models.values()} == {
        (8.0, 2, "auto", "{'max_tokens': 50}")
    }
    assert role_models(model="gpt-5.4", max_tokens=50)["writer_llm"].generation_kwargs == {"max_output_tokens": 50}
