"""create_deep_agent(confirm_tools=...): a person confirms, edits or rejects tool calls through Haystack's hooks."""

from __future__ import annotations

from typing import Any

import pytest
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage
from haystack.hooks.human_in_the_loop import AlwaysAskPolicy, BlockingConfirmationStrategy, ConfirmationUIResult
from haystack.tools import tool

from haystack_deep_research import ConfigurationError, create_deep_agent
from haystack_deep_research.testing import ScriptedChatGenerator

QUESTION = [ChatMessage.from_user("Tidy up the notes on mid-market CRM platforms.")]
RAN: list[tuple[str, dict[str, Any]]] = []


@tool
def delete_notes(folder: str) -> str:
    """Delete every note in a folder."""
    RAN.append(("delete_notes", {"folder": folder}))
    return f"deleted {folder}"


@tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    RAN.append(("search_kb", {"query": query}))
    return f"Results for {query}: Acme leads the segment."


class ScriptedUI:
    """Answers each confirmation with the next scripted result; records the tool it was asked about."""

    def __init__(self, answers: list[ConfirmationUIResult]) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    def get_user_confirmation(
        self, tool_name: str, tool_description: str, tool_params: dict[str, Any]
    ) -> ConfirmationUIResult:
        self.asked.append(tool_name)
        return self.answers.pop(0)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScriptedUI:
        return default_from_dict(cls, data)


def _asking(ui: ScriptedUI) -> BlockingConfirmationStrategy:
    return BlockingConfirmationStrategy(confirmation_policy=AlwaysAskPolicy(), confirmation_ui=ui)


def _agent(steps: list[Any], **options: Any) -> Any:
    return create_deep_agent(
        chat_generator=ScriptedChatGenerator(role="agent", steps=steps),
        tools=[delete_notes, search_kb],
        system_prompt="You keep the notes tidy.",
        reflexion=False,
        grounding=False,
        **options,
    )


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


def test_a_rejected_tool_call_never_runs_and_the_model_reads_why() -> None:
    ui = ScriptedUI([ConfirmationUIResult(action="reject", feedback="keep the 2024 notes")])
    steps = [
        [
            {"tool_name": "delete_notes", "arguments": {"folder": "2024"}},
            {"tool_name": "search_kb", "arguments": {"query": "CRM"}},
        ],
        "Nothing was deleted.",
    ]
    agent = _agent(steps, confirm_tools={"delete_notes": _asking(ui)})

    result = agent.run(messages=QUESTION)

    assert ui.asked == ["delete_notes"]  # only the tool named was asked about
    assert [name for name, _ in RAN] == ["search_kb"]  # the other call of the turn still ran
    results = [m.tool_call_result for m in result["messages"] if m.tool_call_result is not None]
    [rejected] = [r for r in results if r.error]
    assert rejected.origin.tool_name == "delete_notes"
    assert "keep the 2024 notes" in str(rejected.result)
    assert result["exit_reason"] == "text"


def test_one_strategy_confirms_every_tool_and_an_edit_runs_the_edited_call() -> None:
    ui = ScriptedUI([ConfirmationUIResult(action="modify", new_tool_params={"folder": "drafts"})])
    agent = _agent([{"tool_name": "delete_notes", "arguments": {"folder": "2024"}}, "Done."], confirm_tools=_asking(ui))

    agent.run(messages=QUESTION)

    assert RAN == [("delete_notes", {"folder": "drafts"})]


def test_confirm_tools_must_name_the_agents_tools() -> None:
    with pytest.raises(ConfigurationError, match="confirm_tools names 'drop_table', which is not one of the agent's"):
        _agent(["Done."], confirm_tools={"drop_table": _asking(ScriptedUI([]))})
    with pytest.raises(ConfigurationError, match="confirm_tools must be a Haystack confirmation strategy"):
        _agent(["Done."], confirm_tools=ScriptedUI([]))
