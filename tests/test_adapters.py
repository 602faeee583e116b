"""
Pins what the package relies on in Haystack and openai beyond their documented API (see ``_haystack_internals``).

A Haystack or openai upgrade that changes one of these fails the test named after it, not a research run.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from haystack import component
from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator, OpenAIResponsesChatGenerator
from haystack.dataclasses import ChatMessage, ReasoningContent, ToolCall
from haystack.utils import Secret
from pydantic import BaseModel

import haystack_deep_research
from haystack_deep_research._haystack_internals import NO_KEY, KeylessClientMixin, input_names, output_names
from haystack_deep_research.agents.compatible import CompatibleChatGenerator, CompatibleResponsesChatGenerator
from haystack_deep_research.report.structured import strict_output_kwargs
from haystack_deep_research.research.tool_calls import with_tool_calls
from haystack_deep_research.testing import ScriptedChatGenerator

LOCAL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("parent", [OpenAIChatGenerator, OpenAIResponsesChatGenerator])
def test_openai_generators_build_their_client_from_client_kwargs(parent: type) -> None:
    """``warm_up`` and ``warm_up_async`` call the private ``_client_kwargs()``, whose ``api_key`` the mixin fills."""
    assert callable(getattr(parent, "_client_kwargs", None))

    class Probe(KeylessClientMixin, parent):  # type: ignore[misc, valid-type]
        pass

    generator = Probe(api_base_url=LOCAL, api_key=Secret.from_env_var("HDR_UNSET_KEY", strict=False))
    assert generator._client_kwargs()["api_key"] == NO_KEY
    generator.warm_up()
    assert generator.client is not None
    assert generator.client.api_key == NO_KEY


@pytest.mark.parametrize("kind", [CompatibleChatGenerator, CompatibleResponsesChatGenerator])
def test_compatible_generators_start_without_a_key_and_keep_it_an_env_var(
    kind: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    generator = kind(api_base_url=LOCAL, api_key=Secret.from_env_var("OPENAI_API_KEY", strict=False))
    generator.warm_up()
    assert generator.client.api_key == NO_KEY
    assert generator.to_dict()["init_parameters"]["api_key"]["type"] == "env_var"

    monkeypatch.setenv("OPENAI_API_KEY", "sk-set")
    keyed = kind(api_base_url=LOCAL, api_key=Secret.from_env_var("OPENAI_API_KEY", strict=False))
    keyed.warm_up()
    assert keyed.client.api_key == "sk-set"


def test_a_message_rebuilt_with_new_tool_calls_keeps_everything_else() -> None:
    original = ChatMessage.from_assistant(
        text="Looking it up.",
        meta={"model": "m", "usage": {"prompt_tokens": 3}},
        name="orchestrator",
        tool_calls=[ToolCall(tool_name="web_search", arguments={"query": "a"}, id=None)],
        reasoning=ReasoningContent(reasoning_text="think", extra={"signature": "s"}),
    )
    calls = [ToolCall(tool_name="web_search", arguments={"query": "b"}, id="call_1")]

    rebuilt = with_tool_calls(original, calls)

    assert rebuilt.tool_calls == calls
    assert (rebuilt.text, rebuilt.meta, rebuilt.name, rebuilt.reasoning, rebuilt.role) == (
        original.text,
        original.meta,
        original.name,
        original.reasoning,
        original.role,
    )
    assert rebuilt == with_tool_calls(rebuilt, calls)


class Finding(BaseModel):
    """A finding."""

    claim: str
    confidence: float | None = None


def test_structured_output_sends_openais_strict_schema() -> None:
    """Every property required and no extra ones: what OpenAI's strict mode accepts, as Haystack sends it."""
    generator = OpenAIChatGenerator(api_base_url=LOCAL, api_key=Secret.from_token("sk-test"))
    kwargs = strict_output_kwargs(generator, Finding)

    assert kwargs is not None
    spec = kwargs["response_format"]["json_schema"]
    assert (spec["name"], spec["strict"]) == ("Finding", True)
    assert spec["schema"]["additionalProperties"] is False
    assert sorted(spec["schema"]["required"]) == ["claim", "confidence"]


@component
class _Probe:
    @component.output_types(documents=list, links=list)
    def run(self, query: str, top_k: int = 3) -> dict[str, Any]:
        return {"documents": [], "links": []}


def test_component_instances_expose_their_sockets() -> None:
    """``__haystack_input__`` / ``__haystack_output__`` hold a component's sockets, read before wiring it."""
    probe = _Probe()
    assert input_names(probe) == {"query", "top_k"}
    assert sorted(output_names(probe) or []) == ["documents", "links"]
    agent = Agent(chat_generator=ScriptedChatGenerator(role="agent"))
    assert "messages" in (input_names(agent) or set())
    assert input_names(object()) is None
    assert output_names(lambda: None) is None


def test_no_private_name_of_haystack_or_openai_outside_the_adapter() -> None:
    """Private imports of haystack/openai, their private attributes and Haystack's sockets stay in one module."""
    package = Path(haystack_deep_research.__file__).parent
    private_attributes = {"_client_kwargs", "_content", "_role", "_meta", "_name"}
    found = []
    for path in package.rglob("*.py"):
        if path.name == "_haystack_internals.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("haystack", "openai"):
                if any(part.startswith("_") for part in (node.module or "").split(".")) or any(
                    alias.name.startswith("_") for alias in node.names
                ):
                    found.append(f"{path.name}:{node.lineno} imports from {node.module}")
            elif (
                isinstance(node, ast.Attribute)
                and node.attr in private_attributes
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                found.append(f"{path.name}:{node.lineno} reads .{node.attr}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "__haystack_" in node.value:
                found.append(f"{path.name}:{node.lineno} names {node.value}")
    assert not found
