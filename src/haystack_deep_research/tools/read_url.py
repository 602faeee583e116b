"""
``read_url``: fetch pages and PDFs under the URL policy, extract their text, and summarize the passages most relevant
to a question.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from haystack.components.generators.chat.types import ChatGenerator
from haystack.core.serialization import component_to_dict
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    MAX_URLS_PER_READ,
    OMITTED,
    PAGE_DUPLICATE,
    PAGE_SEPARATOR,
    PAGE_SUMMARY,
    PAGE_UNREADABLE,
    QUESTION_MISSING,
    QUESTION_PARAMETER,
    READ_URL,
    READ_URL_DESCRIPTION,
    SUMMARIZER_EMPTY,
    SUMMARIZER_FAILED,
    TOO_MANY_URLS,
    URLS_MISSING,
    URLS_PARAMETER,
    fence,
    render_text,
)
from haystack_deep_research._tooling.base import ResearchTool
from haystack_deep_research.errors import ConfigurationError, FetchError, ToolArgumentsError
from haystack_deep_research.events import PageRead, PageRefused
from haystack_deep_research.evidence import SourceEntry
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run import RunView
from haystack_deep_research.run._budget import model_name
from haystack_deep_research.run._cache import (
    CachedRead,
    CacheStore,
    cache_from_dict,
    cache_to_dict,
    check_cache,
    page_key,
    summary_key,
)
from haystack_deep_research.run._phases import Call, Phase, ask, blocking, subphase
from haystack_deep_research.settings.grouped import DEFAULT_PASSAGE_BUDGET, DEFAULT_SUMMARIZE_OVER, passage_budget_value
from haystack_deep_research.state import PHASE_RESEARCH, PHASE_SUMMARIZE
from haystack_deep_research.tools.passages import Excerpt, near_duplicate, relevant_passages, summarizer_prompt
from haystack_deep_research.web import (
    FetchedDocument,
    FetchLimits,
    UrlPolicy,
    extract_text,
    extract_text_async,
    fetch,
    fetch_async,
)
from haystack_deep_research.web._pool import start as start_parsers
from haystack_deep_research.web._steps import prepare_contexts as prepare_tls_contexts

__all__ = ["ReadUrlTool"]


FIRST_FETCHES = 2 * MAX_URLS_PER_READ
"""The fetches that find a TLS context ready once the tool is warmed up: two researchers' first reads."""


class ReadUrlTool(ResearchTool):
    """
    Read web pages and PDFs and return what each says toward the researcher's question.

    Each URL is fetched under the URL policy and the fetch limits, its text extracted, cut to ``max_content_length``
    characters and recorded whole in the run's evidence ledger; the summarizer reads its passages most relevant to
    the question (docs/how-it-works.md, "Orchestrator and sub-researchers", says how they are chosen, when no
    summarizer is called, and how a page is read once per question and a near-duplicate not summarized again).

    :param summarizer_llm: The chat generator that summarizes a page toward the question.
    :param max_content_length: Characters of page text read and kept, 1,000 to 1,000,000.
    :param passage_budget: Characters of the page's most relevant passages given to the summarizer, 500 to
        1,000,000, or 0 for the whole page (up to ``max_content_length``).
    :param summarize_over: Characters of the kept passages above which the summarizer is called; a shorter excerpt
        reaches the researcher as it is, fenced as untrusted, with no model call. 0 summarizes every page.
    :param url_policy: Which URLs may be fetched; by default public http(s) addresses only.
    :param fetch_limits: Size cap, timeouts, redirect and PDF page limits.
    :param cache: A cross-run cache (for example ``ResearchCache(directory=...)``), or ``None``: a page's text is
        looked up (by URL) before it is fetched, and its summary (by URL, question, summarizer model and passage
        budget) before the summarizer is called; what was fetched and summarized is stored.
    :raises ConfigurationError: If a parameter is out of range.
    """

    _model_attributes = ("summarizer_llm",)

    def __init__(
        self,
        *,
        summarizer_llm: ChatGenerator,
        max_content_length: int = 50_000,
        url_policy: UrlPolicy | None = None,
        fetch_limits: FetchLimits | None = None,
        cache: CacheStore | None = None,
        passage_budget: int = DEFAULT_PASSAGE_BUDGET,
        summarize_over: int = DEFAULT_SUMMARIZE_OVER,
    ) -> None:
        self.cache = check_cache(cache)
        self.summarizer_llm = _checks.chat_generator("summarizer_llm", summarizer_llm, needs_tools=False)
        self.max_content_length = _checks.int_in_range("max_content_length", max_content_length, 1_000, 1_000_000)
        self.passage_budget = passage_budget_value(passage_budget)
        self.summarize_over = _checks.int_in_range("summarize_over", summarize_over, 0, 1_000_000)
        for name, value, kind in (("url_policy", url_policy, UrlPolicy), ("fetch_limits", fetch_limits, FetchLimits)):
            if value is not None and not isinstance(value, kind):
                raise ConfigurationError(f"{name} must be a {kind.__name__}; got {type(value).__name__}.")
        self.url_policy = url_policy or UrlPolicy()
        self.fetch_limits = fetch_limits or FetchLimits()
        self.max_concurrency = MAX_URLS_PER_READ
        super().__init__(
            name=READ_URL,
            description=READ_URL_DESCRIPTION,
            parameters={
                "type": "object",
                "properties": {
                    "urls": {
                        "type": "array",
                        "items": {"type": "string"},
                        "minItems": 1,
                        "maxItems": MAX_URLS_PER_READ,
                        "description": URLS_PARAMETER,
                    },
                    "question": {"type": "string", "description": QUESTION_PARAMETER},
                },
                "required": ["urls", "question"],
            },
        )

    def phase(self, view: RunView | None, urls: Any = None, question: Any = None, **_: Any) -> Phase[str]:
        """Read every URL side by side (a single URL string is accepted); each gives its summary or why it failed."""
        url_list, text = _check_arguments(urls, question)
        reads = [subphase(lambda url=url: self._read_one(view, url, text)) for url in url_list]  # type: ignore[misc]
        outcomes = yield reads
        for outcome in outcomes:
            if outcome.error is not None:
                raise outcome.error
        return PAGE_SEPARATOR.join(str(outcome.value) for outcome in outcomes)

    def _read_one(self, view: RunView | None, url: str, question: str) -> Phase[str]:
        claim = view.reads.claim(url, question) if view is not None else None
        if claim is not None and not claim.owner:
            [waited] = yield [Call(claim.wait, claim.wait_async)]
            if isinstance(waited.value, CachedRead):
                if view is not None:
                    view.emit(PageRead(phase=PHASE_RESEARCH, url=url, title=waited.value.title, shared=True))
                return self._render(url, waited.value)
            claim = None  # the other researcher's read failed: read the page here
        outcome: CachedRead | str = ""
        try:
            outcome = yield from self._read_fresh(view, url, question)
        finally:
            if claim is not None:
                claim.settle(outcome if isinstance(outcome, CachedRead) else None)
        return self._render(url, outcome) if isinstance(outcome, CachedRead) else outcome

    def _read_fresh(self, view: RunView | None, url: str, question: str) -> Phase[CachedRead | str]:
        pages = PageFetcher(self.url_policy, self.fetch_limits, self.max_content_length, self.cache)
        page = yield from pages.cached(url)
        cached = isinstance(page, Page)
        if page is None:
            page = yield from pages.fetched(view, url)
        if isinstance(page, FetchError):
            if view is not None:
                view.emit(PageRefused(phase=PHASE_RESEARCH, url=url, reason=str(page)))
            return _unreadable(view, url, str(page))
        entries = view.ledger.entries() if view is not None else []
        [prepared] = yield [blocking(self._prepare, page, question, entries)]
        if prepared.error is not None:
            raise prepared.error
        excerpt, earlier = prepared.value
        if earlier is not None:
            return self._repeat(view, page, earlier)
        kept = page.text if excerpt.whole else excerpt.text(OMITTED)
        summary, failed = "", None
        if len(kept) > self.summarize_over:
            summary, failed = yield from self._summary(view, page, excerpt, question)
        if view is not None and (summary or failed is None):
            view.ledger.record_page(url=url, title=page.title, text=page.text, summary=summary, policy=self.url_policy)
            view.emit(PageRead(phase=PHASE_RESEARCH, url=url, title=page.title, chars=len(page.text), cached=cached))
        if failed is not None:
            return _unreadable(view, url, failed)
        return CachedRead(title=page.title, summary=summary, partial=page.partial, excerpt="" if summary else kept)

    def _summary(
        self, view: RunView | None, page: Page, excerpt: Excerpt, question: str
    ) -> Phase[tuple[str, str | None]]:
        """The page's summary toward the question (cached, or from the summarizer), and why there is none."""
        key = summary_key(page.url, question, f"{model_name(self.summarizer_llm)} passages={self.passage_budget}")
        found = yield from _cached(self.cache, "summary", key)
        if found is not None and str(found.get("summary") or "").strip():
            return str(found["summary"]), None
        streaming = view.run.streaming_callback if view is not None else None
        agent = view.researcher if view is not None else ""
        budget = view.run.budget if view is not None else None
        prompt = summarizer_prompt(page.url, page.title, page.text, excerpt, question)
        asked = ask(
            self.summarizer_llm, prompt, role="summarizer", streaming_callback=streaming, agent=agent, budget=budget
        )
        [summarized] = yield [asked]
        summary = summarized.text
        if view is not None and summarized.reply is not None:
            view.record_usage(PHASE_SUMMARIZE, summarized.reply.meta.get("usage"))
        if summarized.error is not None:
            error = f"{type(summarized.error).__name__}: {summarized.error}"
            return summary, render_text(SUMMARIZER_FAILED, error=error)
        if not summary:
            return summary, SUMMARIZER_EMPTY
        if self.cache is not None:
            yield [blocking(self.cache.put, "summary", key, {"summary": summary})]
        return summary, None

    def _prepare(self, page: Page, question: str, entries: list[SourceEntry]) -> tuple[Excerpt, SourceEntry | None]:
        """Choose the passages the summarizer reads, and look for a page read earlier that this one repeats."""
        budget = self.passage_budget or len(page.text)
        return relevant_passages(page.text, question, budget=budget), near_duplicate(page.text, page.url, entries)

    def _repeat(self, view: RunView | None, page: Page, earlier: SourceEntry) -> CachedRead:
        """A page that repeats one read earlier in the run: recorded as read, summarized by the earlier summary."""
        if view is not None:
            view.ledger.record_page(
                url=page.url, title=page.title, text=page.text, summary=earlier.summary, policy=self.url_policy
            )
            view.emit(PageRead(phase=PHASE_RESEARCH, url=page.url, title=page.title, shared=True))
        summary = render_text(PAGE_DUPLICATE, url=earlier.url, summary=earlier.summary)
        return CachedRead(title=page.title, summary=summary, partial=page.partial)

    def _render(self, url: str, read: CachedRead) -> str:
        shown = {"title": read.title, "partial": read.partial, "summary": read.summary, "excerpt": fence(read.excerpt)}
        return render_text(PAGE_SUMMARY, url=url, limit=self.max_content_length, **shown)

    def warm_up(self) -> None:
        """Warm up the summarizer, and start two parser processes and the first fetches' TLS contexts: no read waits."""
        _start_fetching()
        super().warm_up()

    async def warm_up_async(self) -> None:
        """The same as :meth:`warm_up`, warming the summarizer up asynchronously."""
        _start_fetching()
        await super().warm_up_async()

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized tool."""
        return self._serialized(
            {
                "summarizer_llm": component_to_dict(obj=self.summarizer_llm, name="summarizer_llm"),
                "max_content_length": self.max_content_length,
                "passage_budget": self.passage_budget,
                "summarize_over": self.summarize_over,
                "url_policy": self.url_policy.to_dict(),
                "fetch_limits": self.fetch_limits.to_dict(),
                **({} if self.cache is None else {"cache": cache_to_dict(self.cache)}),
            }
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReadUrlTool:
        """:returns: The tool ``to_dict`` serialized."""
        params = dict(data["data"])
        deserialize_component_inplace(params, key="summarizer_llm")
        params["url_policy"] = UrlPolicy.from_dict(params["url_policy"])
        params["fetch_limits"] = FetchLimits.from_dict(params["fetch_limits"])
        params["cache"] = cache_from_dict(params.get("cache"))
        return cls(**params)


def _cached(cache: CacheStore | None, kind: str, key: str) -> Phase[dict[str, Any] | None]:
    if cache is None:
        return None
    [found] = yield [blocking(cache.get, kind, key)]
    if found.error is not None:
        raise found.error
    return found.value if isinstance(found.value, dict) else None


def _start_fetching() -> None:
    start_parsers()
    prepare_tls_contexts(FIRST_FETCHES)


def _check_arguments(urls: Any, question: Any) -> tuple[list[str], str]:
    """Validate the model's arguments, accepting a single URL string as a one-element list."""
    if isinstance(urls, str):
        urls = [urls]
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) and u.strip() for u in urls):
        raise ToolArgumentsError(URLS_MISSING)
    if len(urls) > MAX_URLS_PER_READ:
        raise ToolArgumentsError(render_text(TOO_MANY_URLS, count=len(urls)))
    if not isinstance(question, str) or not question.strip():
        raise ToolArgumentsError(QUESTION_MISSING)
    return list(dict.fromkeys(u.strip() for u in urls)), question.strip()


def _unreadable(view: RunView | None, url: str, reason: str) -> str:
    """Why a page could not be read, with the snippet its search result gave (fenced), which still backs a claim."""
    entry = view.ledger.get(url) if view is not None else None
    snippet = entry.text if entry is not None and entry.kind == "snippet" else ""
    return render_text(PAGE_UNREADABLE, url=fence(url), reason=reason, snippet=fence(snippet))


@dataclass(frozen=True)
class Page:
    """One page's text as ``read_url`` reads it."""

    url: str
    title: str
    text: str
    partial: bool
    final_url: str = ""  # where the body came from, after redirects ("" in entries cached before it was kept)


@dataclass(frozen=True)
class PageFetcher:
    """
    Gets pages for ``read_url``: from the cross-run cache when it holds the page (read at least as far as the tool
    reads) and this run's URL policy admits it, else fetched within the run's time budget, extracted, cleaned, cut to
    ``max_content_length`` and stored in the cache.
    """

    policy: UrlPolicy
    limits: FetchLimits
    max_content_length: int
    cache: CacheStore | None = None

    def cached(self, url: str) -> Phase[Page | FetchError | None]:
        """The cached page, if this run's URL policy admits the URL asked for and the one the body came from."""
        found = yield from _cached(self.cache, "page", page_key(url))
        if found is None or (found.get("partial") and int(found.get("limit") or 0) < self.max_content_length):
            return None  # cut shorter than this tool reads: fetch it again
        final, policy = str(found.get("final_url") or url), self.policy
        [admitted] = yield [blocking(lambda: [policy.check(one) for one in dict.fromkeys((url, final))])]
        if isinstance(admitted.error, FetchError):
            return admitted.error  # stored by a run under another policy: this run may not read it
        if admitted.error is not None:
            raise admitted.error
        title, text = str(found.get("title") or ""), str(found.get("text") or "")
        return self.cut(url, title, text, bool(found.get("partial")), final_url=final)

    def fetched(self, view: RunView | None, url: str) -> Phase[Page | FetchError]:
        """The page fetched and extracted (and stored in the cache), or why it could not be read."""
        policy, limits = self.policy, self.limits
        # The run's time budget caps every read: research stuck in I/O still ends on time.
        left = view.time_left() if view is not None else None
        [fetched] = yield [
            Call(
                lambda: fetch(url, policy=policy, limits=limits, deadline_s=left),
                lambda: fetch_async(url, policy=policy, limits=limits, deadline_s=left),
            )
        ]
        if fetched.error is None:
            document: FetchedDocument = fetched.value
            left = view.time_left() if view is not None else None
            [extracted] = yield [
                Call(
                    lambda: extract_text(document, limits=limits, deadline_s=left),
                    lambda: extract_text_async(document, limits=limits, deadline_s=left),
                )
            ]
        else:
            extracted = fetched
        if isinstance(extracted.error, FetchError):
            return extracted.error
        if extracted.error is not None:
            raise extracted.error
        title, text = clean_text(extracted.value.title), clean_text(extracted.value.text)
        page = self.cut(url, title, text, final_url=document.final_url)
        if self.cache is not None:
            stored = {**asdict(page), "limit": self.max_content_length}
            yield [blocking(self.cache.put, "page", page_key(url), stored)]
        return page

    def cut(self, url: str, title: str, text: str, partial: bool = False, *, final_url: str = "") -> Page:
        """The page as ``read_url`` reads it: its text cut to ``max_content_length`` characters."""
        partial = partial or len(text) > self.max_content_length
        return Page(url=url, title=title, text=text[: self.max_content_length], partial=partial, final_url=final_url)
