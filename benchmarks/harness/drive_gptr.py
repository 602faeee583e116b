"""
Drive GPT Researcher in the simulated world, in its own environment (it needs Python 3.12 or later).

GPT Researcher reads its settings from the environment when a researcher is made; the driver sets them first:

- LLMs: ``OPENAI_BASE_URL`` points its ``openai`` provider (LangChain's ``ChatOpenAI``) at the simulated LLM server.
  Its strategic LLM (research planning) runs as ``sim-orchestrator``, its smart LLM (choosing the agent, writing the
  report) as ``sim-writer``, both priced as ``gpt-5.4``; its fast LLM as ``sim-summarizer``, priced as
  ``gpt-5.4-mini``. These are GPT Researcher's own default models: ``gpt-5.4`` for smart and strategic,
  ``gpt-5.4-mini`` for fast. ``LLM_KWARGS`` gives ``ChatOpenAI`` the scenario's timeout and retry count, as the
  other libraries' generators get them.
- Search: the ``custom`` retriever sends ``GET /search?query=...&max_results=5`` to the simulated search server.
- Pages: its default ``bs`` scraper (PyMuPDF for PDF) reads the simulated web; ``ALLOW_PRIVATE_URLS`` lets its URL
  guard fetch from ``127.0.0.1``, which it refuses by default.
- ``MAX_ITERATIONS`` (its number of sub-queries) is the scenario's number of sub-questions.

Every other setting stays at GPT Researcher's default (``research_report``, keyword context filter, no source
curation). This module imports nothing from Haystack: GPT Researcher's environment does not have it.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from benchmarks.harness.spec import Outcome, RunSpec

ROLE_MODELS = {"STRATEGIC_LLM": "sim-orchestrator", "SMART_LLM": "sim-writer", "FAST_LLM": "sim-summarizer"}
"""GPT Researcher's three LLM settings and the simulated role each runs as."""


def environment(spec: RunSpec) -> dict[str, str]:
    """
    The environment variables that point GPT Researcher at ``spec``'s world.

    :param spec: The run spec.
    :returns: Variable names and values.
    """
    llm_kwargs: dict[str, Any] = {}
    if spec.llm_timeout_s is not None:
        llm_kwargs["timeout"] = spec.llm_timeout_s
    if spec.llm_max_retries is not None:
        llm_kwargs["max_retries"] = spec.llm_max_retries
    return {
        "OPENAI_API_KEY": "sim",
        "OPENAI_BASE_URL": spec.llm_url,
        **{name: f"openai:{model}" for name, model in ROLE_MODELS.items()},
        "LLM_KWARGS": json.dumps(llm_kwargs),
        "RETRIEVER": "custom",
        "RETRIEVER_ENDPOINT": spec.search_url.rstrip("/") + "/search",
        "RETRIEVER_ARG_MAX_RESULTS": str(spec.max_results),
        "MAX_SEARCH_RESULTS_PER_QUERY": str(spec.max_results),
        "MAX_ITERATIONS": str(spec.max_subtopics),
        "ALLOW_PRIVATE_URLS": "true",
    }


class GptrRunner:
    """GPT Researcher set up for one world; each run is a fresh ``GPTResearcher`` (one object per query)."""

    def __init__(self, spec: RunSpec) -> None:
        os.environ.update(environment(spec))
        from gpt_researcher import GPTResearcher

        self._researcher_class = GPTResearcher

    def run(self, question: str) -> Outcome:
        """Research and write the report, as GPT Researcher's own examples do."""
        researcher = self._researcher_class(query=question, report_type="research_report", verbose=False)

        async def research_and_write() -> str:
            await researcher.conduct_research()
            return str(await researcher.write_report() or "")

        report = asyncio.run(research_and_write())
        return Outcome(
            report=report,
            notes=[],
            sources=[str(url) for url in researcher.get_source_urls()],
            exit_reason="",
            token_usage={"estimated_cost_usd": researcher.get_costs()},
        )


def build(spec: RunSpec) -> GptrRunner:
    """Set GPT Researcher up for ``spec``."""
    return GptrRunner(spec)
