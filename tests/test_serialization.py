"""Hooks and steps serialize from their ``__init__`` parameters, nested components included, through Haystack."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from haystack import component
from haystack.core.errors import DeserializationError
from haystack.core.serialization import allow_deserialization_module
from haystack.dataclasses import ChatMessage

from haystack_deep_research import create_deep_research_agent, create_iterative_research_agent
from haystack_deep_research.agents import ResearchAgent

allow_deserialization_module(__name__)  # the fake of this file is restored by its import path


@component
class PlainModel:
    """A model of someone else's: no ``to_dict`` of its own, one parameter kept under its name."""

    def __init__(self, answer: str = "Réponse: 42 — ☀") -> None:
        self.answer = answer

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None) -> dict[str, Any]:
        return {"replies": [ChatMessage.from_assistant(self.answer)]}


def _hook(data: dict[str, Any], point: str, name: str) -> dict[str, Any]:
    return next(hook for hook in data["init_parameters"]["hooks"][point] if hook["type"].endswith(name))


def test_a_model_without_to_dict_nested_in_a_hook_comes_back_with_its_parameters() -> None:
    agent = create_deep_research_agent(
        scope_llm=PlainModel("scope"), orchestrator_llm=PlainModel(), researcher_llm=PlainModel(),
        summarizer_llm=PlainModel(), writer_llm=PlainModel("écrit"), grounding=True,
    )  # fmt: skip
    data = agent.to_dict()

    assert _hook(data, "after_run", "WriteHook")["init_parameters"]["chat_generator"] == {
        "type": f"{__name__}.PlainModel",
        "init_parameters": {"answer": "écrit"},
    }
    restored = ResearchAgent.from_dict(copy.deepcopy(data))
    assert restored.to_dict() == data
    write_hook = next(hook for hook in restored.hooks["after_run"] if type(hook).__name__ == "WriteHook")
    assert isinstance(write_hook.chat_generator, PlainModel)
    assert write_hook.chat_generator.answer == "écrit"
    assert [type(stage).__name__ for stage in write_hook.stages] == ["GroundingStage", "NoEvidenceStage"]


def test_a_class_smuggled_into_a_parameter_the_hook_does_not_take_is_refused_before_it_is_imported() -> None:
    data = create_deep_research_agent(scope_llm=PlainModel(), writer_llm=PlainModel()).to_dict()
    _hook(data, "after_run", "WriteHook")["init_parameters"]["payload"] = {"type": "os.system", "init_parameters": {}}

    with pytest.raises(DeserializationError, match="unknown parameter 'payload'"):
        ResearchAgent.from_dict(data)


def test_a_pipeline_step_round_trips_with_a_plain_model() -> None:
    agent = create_iterative_research_agent(analysis_llm=PlainModel("analyse"), writer_llm=PlainModel("rédige"))

    data = agent.to_dict()

    assert type(agent).from_dict(copy.deepcopy(data)).to_dict() == data
