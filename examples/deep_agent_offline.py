"""A deep agent with no API key and no network: a scripted model, a knowledge-base tool and a submit tool."""

from haystack.dataclasses import ChatMessage
from haystack.tools import tool
from pydantic import BaseModel, Field

from haystack_deep_research import create_deep_agent
from haystack_deep_research.testing import ScriptedChatGenerator
from haystack_deep_research.tools import TodoState

KNOWLEDGE_BASE = {
    "mid-market CRM": "Acme leads the mid-market CRM segment with a 30 percent share, ahead of Zenith and Orbit.",
    "CRM pricing": "Acme charges 45 dollars per seat per month; Zenith charges 39 dollars per seat per month.",
}


class ResearchResult(BaseModel):
    summary: str
    sources: list[str]
    confidence: float = Field(ge=0.0, le=1.0)


@tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    return KNOWLEDGE_BASE.get(query, "No entry.")


@tool
def submit_research(result: ResearchResult) -> str:
    """Submit the completed report. Call when confidence >= 0.85."""
    return "submitted"


summary = (
    "Acme leads the mid-market CRM segment with a 30 percent share. "
    "Acme charges 45 dollars per seat per month; Zenith charges 39 dollars per seat per month."
)
model = ScriptedChatGenerator(
    role="agent",
    steps=[  # what a real model would decide, turn by turn
        {
            "tool_name": "write_todos",
            "arguments": {
                "todos": [
                    {"content": "find the segment leader", "status": "in_progress"},
                    {"content": "compare pricing", "status": "pending"},
                ]
            },
        },
        [
            {"tool_name": "search_kb", "arguments": {"query": "mid-market CRM"}},
            {"tool_name": "search_kb", "arguments": {"query": "CRM pricing"}},
        ],
        {
            "tool_name": "submit_research",
            "arguments": {
                "result": {
                    "summary": summary,
                    "sources": ["mid-market CRM", "CRM pricing"],
                    "confidence": "0.9",  # a string, coerced
                }
            },
        },
    ],
)
todo_state = TodoState()
agent = create_deep_agent(
    chat_generator=model,
    tools=[search_kb, submit_research],
    system_prompt="You are a market-research agent. Submit when confident.",
    output_schema=ResearchResult,
    submit_tool="submit_research",
    min_confidence=0.85,
    max_iterations=20,
    enable_todos=True,
    todo_state=todo_state,
)

result = agent.run(
    messages=[ChatMessage.from_user("Summarise the competitive landscape for mid-market CRM platforms.")]
)
report: ResearchResult = result["structured"]

print(result["exit_reason"])
print(report.summary)
print(f"confidence {report.confidence}, grounding {result['grounding_score']:.2f}")
for todo in todo_state.snapshot():
    print(f"[{todo.status}] {todo.content}")
