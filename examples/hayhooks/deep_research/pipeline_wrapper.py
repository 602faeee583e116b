"""
Serve the deep research agent over HTTP with Hayhooks, through the library's launcher (Hayhooks' app without its
deploy and undeploy routes, every route behind the origin and token guard):
``python -m haystack_deep_research.serving.hayhooks --pipelines-dir examples/hayhooks``.

- ``POST /deep_research/run`` with ``{"question": "..."}`` returns the Markdown report.
- ``POST /v1/chat/completions`` with ``"model": "deep_research"`` is an OpenAI-compatible chat endpoint; with
  ``"stream": true`` each event of the run arrives as a ``reasoning_content`` delta and the report as content.

Requests from web pages of other origins are refused (HTTP 403) unless ``DEEP_RESEARCH_ALLOWED_ORIGINS`` lists them;
with ``DEEP_RESEARCH_TOKEN`` set, every request needs ``Authorization: Bearer <token>`` (HTTP 401 otherwise). The
wrapper checks both on its own entry points too, for a server that is not the launcher (plain ``hayhooks run`` with
``HAYHOOKS_DURABLE_MODE=true``; without it, ``hayhooks run`` lets anyone deploy code). An empty question, or one
longer than 20,000 characters, is answered with HTTP 422.

The models and search are chosen by the environment, as the command line's options choose them (the same code maps
both to the agent's arguments): DEEP_RESEARCH_MODEL, DEEP_RESEARCH_SMALL_MODEL, DEEP_RESEARCH_BASE_URL (a local
OpenAI-compatible server such as http://localhost:11434/v1; then no OPENAI_API_KEY is needed), DEEP_RESEARCH_API,
DEEP_RESEARCH_PRICES ("qwen3:8b=0,0"), DEEP_RESEARCH_TIMEOUT, DEEP_RESEARCH_RETRIES, DEEP_RESEARCH_MAX_TOKENS,
DEEP_RESEARCH_NO_TOOL_CHOICE and DEEP_RESEARCH_SEARCH. With none set, runs use OpenAI (OPENAI_API_KEY) and Tavily when
TAVILY_API_KEY is set, else the keyless search. Install with ``pip install "haystack-deep-research[hayhooks]"``.
"""

from collections.abc import AsyncGenerator, Callable

from fastapi import HTTPException
from hayhooks import BasePipelineWrapper
from haystack.dataclasses import ChatMessage
from starlette.datastructures import Headers

from haystack_deep_research.errors import InvalidQuestionError, RequestRefusedError
from haystack_deep_research.serving import (
    RequestGuard,
    agent_factory,
    http_status,
    question_from_chat,
    question_from_text,
    stream_research,
)


def _admitted(guard: RequestGuard, headers: Headers | None, question: Callable[[], str]) -> str:
    """The request's question, once the guard let the request in; an HTTP error (401, 403, 422) otherwise."""
    try:
        guard.check(headers)
        return question()
    except (RequestRefusedError, InvalidQuestionError) as error:
        raise HTTPException(status_code=http_status(error), detail=str(error)) from None


class PipelineWrapper(BasePipelineWrapper):
    def setup(self) -> None:
        # The agent the environment sets up (DEEP_RESEARCH_AGENT_FACTORY, a test-only setting, swaps in scripted
        # models). One agent serves every request: runs keep their data apart.
        self.pipeline = agent_factory()()
        self.guard = RequestGuard.from_env()

    async def run_api_async(self, question: str, headers: Headers | None = None) -> str:
        """Research a question on the web and return a Markdown report whose every citation was read."""
        asked = _admitted(self.guard, headers, lambda: question_from_text(question))
        result = await self.pipeline.run_async(messages=[ChatMessage.from_user(asked)])
        return result["report"]

    async def run_chat_completion_async(
        self, model: str, messages: list[dict], body: dict, headers: Headers | None = None
    ) -> AsyncGenerator:
        return stream_research(self.pipeline, _admitted(self.guard, headers, lambda: question_from_chat(messages)))
