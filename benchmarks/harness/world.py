"""The simulated world of one run: the LLM server, the search server and the web server over one corpus."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from benchmarks.sim.corpus import Corpus
from benchmarks.sim.llm_server import FaultModel, LatencyModel, SimLLMServer
from benchmarks.sim.policies import PolicyConfig
from haystack_deep_research.testing._server import RequestHandler
from haystack_deep_research.testing.search_server import MAX_RESULTS_LIMIT, LoopbackSearchServer, SearchDocument, rank
from haystack_deep_research.testing.web_server import LoopbackWebServer

DEFAULT_RESULTS = 5


class SearchServer(LoopbackSearchServer):
    """
    The Tavily-compatible search server, which also answers GPT Researcher's ``custom`` retriever.

    That retriever sends ``GET /search?query=...`` (plus its ``RETRIEVER_ARG_*`` parameters, here ``max_results``)
    and reads a JSON list of ``{url, raw_content}``. The list holds the same ranked documents a ``POST /search``
    returns, with an empty ``raw_content``: a hit list, so GPT Researcher reads each page with its own scraper. The
    query is logged where a ``POST``'s is, so the run's search log reads both alike.
    """

    def _handle(self, handler: RequestHandler) -> None:
        if handler.command != "GET":
            super()._handle(handler)
            return
        parts = urlsplit(handler.path)
        params = parse_qs(parts.query)
        query = (params.get("query") or [""])[0]
        raw_limit = (params.get("max_results") or [str(DEFAULT_RESULTS)])[0]
        limit = min(MAX_RESULTS_LIMIT, max(0, int(raw_limit))) if raw_limit.isdigit() else DEFAULT_RESULTS
        handler.json_body = {"query": query, "max_results": limit}
        if parts.path.rstrip("/") != "/search" or not query.strip():
            body = json.dumps({"detail": {"error": "GET /search needs a non-empty query parameter."}}).encode()
            handler.send_bytes(400, body, content_type="application/json")
            return
        hits = [{"url": doc.url, "title": doc.title, "raw_content": ""} for doc, _ in rank(query, self.documents)]
        handler.send_bytes(200, json.dumps(hits[:limit]).encode(), content_type="application/json")


@dataclass
class World:
    """The running servers and the corpus they serve."""

    llm: SimLLMServer
    search: SearchServer
    web: LoopbackWebServer
    corpus: Corpus


@contextmanager
def open_world(
    corpus: Corpus, config: PolicyConfig, latency: LatencyModel, faults: FaultModel, *, unreadable_first: bool = False
) -> Iterator[World]:
    """
    Start the three servers on ``127.0.0.1`` and stop them all on exit, whatever happens.

    :param corpus: The pages to serve and index.
    :param config: The LLM role policies' knobs.
    :param latency: The LLM latency model.
    :param faults: The LLM 429 model.
    :param unreadable_first: Serve the first page of every facet (the one every search of that facet ranks first) as
        a 404; the search server still indexes it, so its snippet is all anyone gets of it.
    :returns: A context manager yielding the running world.
    """
    with ExitStack() as stack:
        web = stack.enter_context(LoopbackWebServer())
        facets: set[str] = set()
        for page in corpus.pages:
            first = page.facet not in facets
            facets.add(page.facet)
            if unreadable_first and first:
                web.add_page(page.path, "<html><body><h1>Not found</h1></body></html>", status=404)
            elif page.kind == "pdf":
                web.add_pdf(page.path, page.pdf_pages(), title=page.title)
            else:
                web.add_page(page.path, page.html())
        documents = [SearchDocument(url=web.url(p.path), title=p.title, content=p.text) for p in corpus.pages]
        search = stack.enter_context(SearchServer(documents))
        llm = stack.enter_context(SimLLMServer(config, latency, faults))
        yield World(llm, search, web, corpus)
