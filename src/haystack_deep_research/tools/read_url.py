"""``read_url``: fetch pages and PDFs under the URL policy, extract their text, and summarize it toward a question."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from haystack.core.serialization import component_to_dict
from haystack.dataclasses import ChatMessage
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks, llm
from haystack_deep_research.errors import ConfigurationError, FetchError, ToolArgumentsError
from haystack_deep_research.prompts import (
    PAGE_SUMMARY,
    SUMMARIZER_SYSTEM,
    SUMMARIZER_USER,
    fence,
    render_chat,
    render_text,
)
from haystack_deep_research.read_cache import CachedRead
from haystack_deep_research.state import HOOK_CONTEXT, PHASE_SUMMARIZE, ResearchRun, run_from_context
from haystack_deep_research.tools.base import ResearchTool
from haystack_deep_research.web import FetchLimits, UrlPolicy, extract_text, fetch, fetch_async

READ_URL_TOOL_NAME = "read_url"
MAX_URLS_PER_CALL = 5


@dataclass(frozen=True)
class _Page:
    url: str
    title: str
    text: str
    partial: bool


class ReadUrlTool(ResearchTool):
    """
    Read web pages and PDFs and return a summary of each toward the researcher's question.

    Each URL is fetched under the URL policy and the fetch limits, routed by its content type (HTML through
    trafilatura, PDF through pypdf, plain text as is), cut to ``max_content_length`` characters, and summarized by
    ``summarizer_llm`` (which has no tools). Every document is summarized, concurrently. A URL that cannot be read
    gives a line saying why; the other URLs are still read. Every page read is recorded in the run's evidence ledger.
    Within one run a page is read once per question: a researcher asking for a URL that another one has read (or
    is reading) with the same question gets that summary instead of fetching and summarizing the page again.

    :param summarizer_llm: The chat generator that summarizes a page toward the question.
    :param max_content_length: Characters of page text given to the summarizer, 1,000 to 1,000,000.
    :param url_policy: Which URLs may be fetched; by default public http(s) addresses only.
    :param fetch_limits: Size cap, timeouts, redirect and PDF page limits.
    :raises ConfigurationError: If a parameter is out of range.
    """

    def __init__(
        self,
        *,
        summarizer_llm: Any,
        max_content_length: int = 50_000,
        url_policy: UrlPolicy | None = None,
        fetch_limits: FetchLimits | None = None,
    ) -> None:
        self.summarizer_llm = _checks.chat_generator("summarizer_llm", summarizer_llm, needs_tools=False)
        self.max_content_length = _checks.int_in_range("max_content_length", max_content_length, 1_000, 1_000_000)
        if url_policy is not None and not isinstance(url_policy, UrlPolicy):
            raise ConfigurationError(f"url_policy must be a UrlPolicy; got {type(url_policy).__name__}.")
        if fetch_limits is not None and not isinstance(fetch_limits, FetchLimits):
            raise ConfigurationError(f"fetch_limits must be a FetchLimits; got {type(fetch_limits).__name__}.")
        self.url_policy = url_policy or UrlPolicy()
        self.fetch_limits = fetch_limits or FetchLimits()
        super().__init__(
            name=READ_URL_TOOL_NAME,
            description=(
                f"Read up to {MAX_URLS_PER_CALL} web pages or PDFs; get a summary of each toward your question. "
                "Only pages read here may be cited."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "urls": {
                        "type": "array",
                        "items": {"type": "string"},
                        "minItems": 1,
                        "maxItems": MAX_URLS_PER_CALL,
                        "description": "Exact URLs from search results.",
                    },
                    "question": {"type": "string", "description": "What to learn from the pages."},
                },
                "required": ["urls", "question"],
            },
            function=self._read,
            async_function=self._read_async,
            inputs_from_state={HOOK_CONTEXT: HOOK_CONTEXT},
        )

    def warm_up(self) -> None:
        """Warm up the summarizer."""
        if hasattr(self.summarizer_llm, "warm_up"):
            self.summarizer_llm.warm_up()

    def _read(self, urls: Any = None, question: Any = None, hook_context: dict[str, Any] | None = None) -> str:
        url_list, question_text = _check_arguments(urls, question)
        run = run_from_context(hook_context)
        if len(url_list) == 1:  # one page needs no worker threads
            return self._read_one(url_list[0], question_text, run)
        with ThreadPoolExecutor(max_workers=len(url_list)) as pool:
            parts = list(pool.map(lambda url: self._read_one(url, question_text, run), url_list))
        return "\n\n---\n\n".join(parts)

    async def _read_async(
        self, urls: Any = None, question: Any = None, hook_context: dict[str, Any] | None = None
    ) -> str:
        url_list, question_text = _check_arguments(urls, question)
        run = run_from_context(hook_context)
        parts = await asyncio.gather(*(self._read_one_async(url, question_text, run) for url in url_list))
        return "\n\n---\n\n".join(parts)

    def _read_one(self, url: str, question: str, run: ResearchRun | None) -> str:
        claim = run.reads.claim(url, question) if run is not None else None
        if claim is not None and not claim.owner:
            shared = claim.wait()
            if shared is not None:
                return self._render(url, shared)
            claim = None  # the other researcher's read failed: read the page here
        outcome: CachedRead | str = ""
        try:
            outcome = self._read_fresh(url, question, run)
        finally:
            if claim is not None:
                claim.settle(outcome if isinstance(outcome, CachedRead) else None)
        return self._render(url, outcome) if isinstance(outcome, CachedRead) else outcome

    async def _read_one_async(self, url: str, question: str, run: ResearchRun | None) -> str:
        claim = run.reads.claim(url, question) if run is not None else None
        if claim is not None and not claim.owner:
            shared = await claim.wait_async()
            if shared is not None:
                return self._render(url, shared)
            claim = None
        outcome: CachedRead | str = ""
        try:
            outcome = await self._read_fresh_async(url, question, run)
        finally:
            if claim is not None:
                claim.settle(outcome if isinstance(outcome, CachedRead) else None)
        return self._render(url, outcome) if isinstance(outcome, CachedRead) else outcome

    def _read_fresh(self, url: str, question: str, run: ResearchRun | None) -> CachedRead | str:
        try:
            page = self._page(fetch(url, policy=self.url_policy, limits=self.fetch_limits))
        except FetchError as error:
            return f"Could not read {url}: {error}"
        try:
            reply = llm.call(self.summarizer_llm, self._prompt(page, question))
        except Exception as error:
            return _summarizer_failed(url, error)
        return self._finish(url, page, reply, run)

    async def _read_fresh_async(self, url: str, question: str, run: ResearchRun | None) -> CachedRead | str:
        try:
            page = self._page(await fetch_async(url, policy=self.url_policy, limits=self.fetch_limits))
        except FetchError as error:
            return f"Could not read {url}: {error}"
        try:
            reply = await llm.call_async(self.summarizer_llm, self._prompt(page, question))
        except Exception as error:
            return _summarizer_failed(url, error)
        return self._finish(url, page, reply, run)

    def _page(self, document: Any) -> _Page:
        extracted = extract_text(document, max_pdf_pages=self.fetch_limits.max_pdf_pages)
        text = extracted.text
        partial = len(text) > self.max_content_length
        return _Page(url=document.url, title=extracted.title, text=text[: self.max_content_length], partial=partial)

    def _prompt(self, page: _Page, question: str) -> list[ChatMessage]:
        return render_chat(
            SUMMARIZER_SYSTEM,
            SUMMARIZER_USER,
            question=fence(question),
            url=page.url,
            title=fence(page.title),
            content=fence(page.text),
        )

    def _finish(self, url: str, page: _Page, reply: ChatMessage | None, run: ResearchRun | None) -> CachedRead | str:
        summary = ((reply.text if reply is not None else None) or "").strip()
        if run is not None:
            if reply is not None:
                run.record_usage(PHASE_SUMMARIZE, reply.meta.get("usage"))
            if summary:
                run.ledger.record_page(url=url, title=page.title, text=page.text, summary=summary)
        if not summary:
            return f"Could not read {url}: the summarizer returned no text."
        return CachedRead(title=page.title, summary=summary, partial=page.partial)

    def _render(self, url: str, read: CachedRead) -> str:
        return render_text(
            PAGE_SUMMARY,
            url=url,
            title=read.title,
            partial=read.partial,
            limit=self.max_content_length,
            summary=read.summary,
        )

    def to_dict(self) -> dict[str, Any]:
        """
        Serialize the tool.

        :returns: The serialized tool.
        """
        return self._serialized(
            {
                "summarizer_llm": component_to_dict(obj=self.summarizer_llm, name="summarizer_llm"),
                "max_content_length": self.max_content_length,
                "url_policy": self.url_policy.to_dict(),
                "fetch_limits": self.fetch_limits.to_dict(),
            }
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReadUrlTool:
        """
        Deserialize the tool.

        :param data: What ``to_dict`` returned.
        :returns: The tool.
        """
        params = dict(data["data"])
        deserialize_component_inplace(params, key="summarizer_llm")
        params["url_policy"] = UrlPolicy.from_dict(params["url_policy"])
        params["fetch_limits"] = FetchLimits.from_dict(params["fetch_limits"])
        return cls(**params)


def _summarizer_failed(url: str, error: Exception) -> str:
    """The line a researcher sees when a page was fetched but its summary could not be made."""
    return f"Could not read {url}: the summarizer failed ({type(error).__name__}: {error})."


def _check_arguments(urls: Any, question: Any) -> tuple[list[str], str]:
    """Validate the model's arguments, accepting a single URL string as a one-element list."""
    if isinstance(urls, str):
        urls = [urls]
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) and u.strip() for u in urls):
        raise ToolArgumentsError(f"read_url needs 'urls': a list of 1 to {MAX_URLS_PER_CALL} URL strings.")
    if len(urls) > MAX_URLS_PER_CALL:
        raise ToolArgumentsError(f"read_url reads at most {MAX_URLS_PER_CALL} URLs per call; got {len(urls)}.")
    if not isinstance(question, str) or not question.strip():
        raise ToolArgumentsError("read_url needs 'question': a non-empty string saying what to learn from the pages.")
    return list(dict.fromkeys(u.strip() for u in urls)), question.strip()
