"""The simulated world of one run: the LLM server, the search server and the web server over one corpus."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from benchmarks.sim.corpus import Corpus
from benchmarks.sim.llm_server import FaultModel, LatencyModel, SimLLMServer
from benchmarks.sim.policies import PolicyConfig
from haystack_deep_research.testing.search_server import LoopbackSearchServer, SearchDocument
from haystack_deep_research.testing.web_server import LoopbackWebServer


@dataclass
class World:
    """The running servers and the corpus they serve."""

    llm: SimLLMServer
    search: LoopbackSearchServer
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
        search = stack.enter_context(LoopbackSearchServer(documents))
        llm = stack.enter_context(SimLLMServer(config, latency, faults))
        yield World(llm, search, web, corpus)
