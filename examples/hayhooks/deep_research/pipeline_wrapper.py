"""
Serve the deep research agent over HTTP with Hayhooks: ``hayhooks run --pipelines-dir examples/hayhooks``.

- ``POST /deep_research/run`` with ``{"question": "..."}`` returns the Markdown report.
- ``POST /v1/chat/completions`` with ``"model": "deep_research"`` is an OpenAI-compatible chat endpoint; with
  ``"stream": true`` each event of the run arrives as a ``reasoning_content`` delta and the report as content.

Runs need OPENAI_API_KEY and TAVILY_API_KEY. Install with ``pip install "haystack-deep-research[hayhooks]"``.
"""

from collections.abc import AsyncGenerator

from hayhooks import BasePipelineWrapper
from haystack.dataclasses import ChatMessage

from haystack_deep_research.serving import agent_factory, question_from_chat, stream_research


class PipelineWrapper(BasePipelineWrapper):
    def setup(self) -> None:
        # The default agent (DEEP_RESEARCH_AGENT_FACTORY, a test-only setting, swaps in scripted models). One agent
        # serves every request: runs keep their data apart.
        self.pipeline = agent_factory()()

    async def run_api_async(self, question: str) -> str:
        """Research a question on the web and return a Markdown report whose every citation was read."""
        result = await self.pipeline.run_async(messages=[ChatMessage.from_user(question)])
        return result["report"]

    async def run_chat_completion_async(self, model: str, messages: list[dict], body: dict) -> AsyncGenerator:
        return stream_research(self.pipeline, question_from_chat(messages))
