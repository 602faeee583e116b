"""
Drive haystack-deep-research in the simulated world through its public factory.

The search tool is the library's own ``WebSearchTool`` pointed at the loopback search server, and the URL policy
allows the loopback host the web server runs on. Every other setting stays at the library's default.
"""

from __future__ import annotations

from typing import Any

from haystack.dataclasses import ChatMessage
from haystack.utils import Secret

from benchmarks.harness.generators import generators
from benchmarks.harness.spec import Outcome, RunSpec


def _source_urls(sources: Any) -> list[str]:
    urls = []
    for source in sources or []:
        url = source.get("url") if isinstance(source, dict) else getattr(source, "url", source)
        if isinstance(url, str):
            urls.append(url)
    return urls


class OursRunner:
    """A built agent, ready to run one question."""

    def __init__(self, spec: RunSpec) -> None:
        import dataclasses

        from haystack_deep_research import Sources, UrlPolicy, WebSearchTool, create_deep_research_agent

        llms = generators(spec)
        fields = {field.name for field in dataclasses.fields(Sources)}
        chosen = {name: value for name, value in spec.ours_options.items() if name in fields}  # e.g. passage_budget
        others = {name: value for name, value in spec.ours_options.items() if name not in fields}
        search = WebSearchTool(
            api_key=Secret.from_token("sim"), api_base_url=spec.search_url, max_results=spec.max_results
        )
        self.agent = create_deep_research_agent(
            scope_llm=llms["scope"],
            orchestrator_llm=llms["orchestrator"],
            researcher_llm=llms["researcher"],
            summarizer_llm=llms["summarizer"],
            writer_llm=llms["writer"],
            sources=Sources(search=search, url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)), **chosen),
            max_subtopics=spec.max_subtopics,
            max_concurrent_researchers=spec.max_concurrent,
            **others,
        )

    def run(self, question: str) -> Outcome:
        """Run the agent and pick out the report, notes, sources and usage."""
        result: dict[str, Any] = self.agent.run(messages=[ChatMessage.from_user(question)])
        return Outcome(
            report=str(result.get("report") or ""),
            notes=[str(n) for n in result.get("notes") or []],
            sources=_source_urls(result.get("sources")),
            exit_reason=str(result.get("exit_reason") or ""),
            token_usage=result.get("token_usage"),
        )


def build(spec: RunSpec) -> OursRunner:
    """Build the agent for ``spec``."""
    return OursRunner(spec)
