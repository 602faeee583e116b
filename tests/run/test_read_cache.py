"""Within one run a page is read once per question: researchers share the summary instead of reading it again."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from haystack.dataclasses import ChatMessage

from haystack_deep_research import ReadUrlTool, ResearchRun, UrlPolicy
from haystack_deep_research.testing import LoopbackWebServer, ScriptedChatGenerator

LOOPBACK = UrlPolicy(allow_hosts=("127.0.0.1",))


class GatedSummarizer:
    """Summarizes like the scripted summarizer, but only once ``gate`` is open; counts its calls."""

    def __init__(self) -> None:
        self.inner = ScriptedChatGenerator(role="summarizer")
        self.gate = threading.Event()
        self.calls = 0
        self._lock = threading.Lock()

    def run(self, messages: list[ChatMessage]) -> dict:
        with self._lock:
            self.calls += 1
        self.gate.wait(timeout=10)
        return self.inner.run(messages)


class AsyncGatedSummarizer:
    """An async summarizer that says when it was entered and answers once ``gate`` is open."""

    def __init__(self) -> None:
        self.inner = ScriptedChatGenerator(role="summarizer")
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()
        self.calls = 0

    def run(self, messages: list[ChatMessage]) -> dict:
        raise AssertionError("the async path must not call run")

    async def run_async(self, messages: list[ChatMessage]) -> dict:
        self.calls += 1
        self.entered.set()
        await asyncio.wait_for(self.gate.wait(), timeout=10)
        return self.inner.run(messages)


def _fetches(web: LoopbackWebServer, path: str) -> int:
    return sum(1 for request in web.requests.snapshot() if request.path == path)


def test_researchers_reading_one_page_at_once_share_one_read(web: LoopbackWebServer) -> None:
    summarizer = GatedSummarizer()
    tool = ReadUrlTool(summarizer_llm=summarizer, url_policy=LOOPBACK, summarize_over=0)
    run = ResearchRun()
    url = web.url("/solar.html")

    def read(question: str) -> str:
        return tool.bind(run.view()).invoke(urls=[url], question=question)

    with ThreadPoolExecutor(max_workers=3) as pool:
        results = [pool.submit(read, q) for q in ("Solar growth?", "solar   GROWTH?", "Solar growth?")]
        threading.Timer(0.2, summarizer.gate.set).start()
        texts = [result.result(timeout=20) for result in results]

    assert summarizer.calls == 1
    assert _fetches(web, "/solar.html") == 1
    assert all(f"Source: {url}" in text and "450 gigawatts" in text for text in texts)
    assert len(run.ledger) == 1


def test_a_page_summarized_earlier_in_the_run_is_not_read_again(web: LoopbackWebServer) -> None:
    summarizer = GatedSummarizer()
    summarizer.gate.set()
    tool = ReadUrlTool(summarizer_llm=summarizer, url_policy=LOOPBACK, summarize_over=0)
    run = ResearchRun()

    first = tool.bind(run.view()).invoke(urls=[web.url("/solar.html")], question="growth?")
    again = tool.bind(run.view()).invoke(urls=[web.url("/solar.html/"), web.url("/storage.pdf")], question="growth?")

    assert summarizer.calls == 2  # the PDF only
    assert _fetches(web, "/solar.html") == 1
    assert "450 gigawatts" in first
    assert "450 gigawatts" in again
    assert "300 gigawatt hours" in again
    assert f"Source: {web.url('/solar.html/')}" in again  # each researcher sees the URL as it asked for it


def test_another_question_or_another_run_reads_the_page_again(web: LoopbackWebServer) -> None:
    summarizer = GatedSummarizer()
    summarizer.gate.set()
    tool = ReadUrlTool(summarizer_llm=summarizer, url_policy=LOOPBACK, summarize_over=0)
    run, other_run = ResearchRun(), ResearchRun()
    url = web.url("/solar.html")

    tool.bind(run.view()).invoke(urls=[url], question="growth?")
    tool.bind(run.view()).invoke(urls=[url], question="Which countries installed most?")
    tool.bind(other_run.view()).invoke(urls=[url], question="growth?")
    tool.invoke(urls=[url], question="growth?")  # outside a run nothing is shared

    assert summarizer.calls == 4
    assert _fetches(web, "/solar.html") == 4


def test_a_failed_read_is_not_kept_and_the_next_researcher_reads_the_page(web: LoopbackWebServer) -> None:
    tool = ReadUrlTool(summarizer_llm=ScriptedChatGenerator(role="summarizer"), url_policy=LOOPBACK)
    run = ResearchRun()
    url = web.url("/late.html")

    missing = tool.bind(run.view()).invoke(urls=[url], question="q")
    web.add_page("/late.html", "<html><body><article><p>" + "Tides follow the moon. " * 10 + "</p></article></body>")
    found = tool.bind(run.view()).invoke(urls=[url], question="q")

    assert f"Could not read {url}: HTTP 404" in missing
    assert "Tides follow the moon" in found
    assert _fetches(web, "/late.html") == 2


async def test_async_researchers_share_one_read_and_a_cancelled_one_does_not_spoil_it(web: LoopbackWebServer) -> None:
    summarizer = AsyncGatedSummarizer()
    tool = ReadUrlTool(summarizer_llm=summarizer, url_policy=LOOPBACK, summarize_over=0)
    run = ResearchRun()
    url = web.url("/solar.html")

    def read() -> asyncio.Task[str]:
        return asyncio.create_task(tool.bind(run.view()).invoke_async(urls=[url], question="growth?"))

    owner = read()
    await asyncio.wait_for(summarizer.entered.wait(), timeout=10)
    cancelled, waiting = read(), read()
    await asyncio.sleep(0.05)
    cancelled.cancel()
    summarizer.gate.set()
    texts = await asyncio.gather(owner, waiting)

    assert cancelled.cancelled()
    assert summarizer.calls == 1
    assert all("450 gigawatts" in text for text in texts)
    assert "450 gigawatts" in await tool.bind(run.view()).invoke_async(urls=[url], question="growth?")
    assert _fetches(web, "/solar.html") == 1
