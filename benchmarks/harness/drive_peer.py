"""
Drive ``agent-pack-haystack``'s deep-research agent (the peer) in the simulated world.

The peer takes one generator per stage (``llm`` orchestrates, ``brief_llm`` scopes, ``researcher_llm``,
``page_summary_llm``, ``report_llm``) and a ``search_tool``. Its Tavily tool has no base-URL option, so the driver
gives the tool's component a ``TavilyClient`` pointed at the loopback search server before the run; the tool only
builds its own client when it has none. Every other setting stays at the peer's default.
"""

from __future__ import annotations

from typing import Any

from haystack.dataclasses import ChatMessage
from haystack.utils import Secret

from benchmarks.harness.generators import generators
from benchmarks.harness.spec import Outcome, RunSpec


class PeerRunner:
    """A built peer agent, ready to run one question."""

    def __init__(self, spec: RunSpec) -> None:
        from haystack_integrations.agent_pack.deep_research import create_deep_research_agent
        from haystack_integrations.tools.tavily import TavilyWebSearchTool
        from tavily import TavilyClient

        search_tool = TavilyWebSearchTool(api_key=Secret.from_token("sim"), top_k=spec.max_results)
        search_tool._component._tavily_client = TavilyClient(
            api_key="sim", api_base_url=spec.search_url, client_name="haystack"
        )
        llms = generators(spec)
        self.agent = create_deep_research_agent(
            llm=llms["orchestrator"],
            brief_llm=llms["scope"],
            researcher_llm=llms["researcher"],
            page_summary_llm=llms["summarizer"],
            report_llm=llms["writer"],
            search_tool=search_tool,
            max_subtopics=spec.max_subtopics,
            max_concurrent_researchers=spec.max_concurrent,
        )

    def run(self, question: str) -> Outcome:
        """Run the agent and pick out the report, notes and usage."""
        result: dict[str, Any] = self.agent.run(messages=[ChatMessage.from_user(question)])
        return Outcome(
            report=str(result.get("report") or ""),
            notes=[str(n) for n in result.get("notes") or []],
            sources=[],
            exit_reason=str(result.get("exit_reason") or ""),
            token_usage=result.get("token_usage"),
        )


def build(spec: RunSpec) -> PeerRunner:
    """Build the peer agent for ``spec``."""
    return PeerRunner(spec)
