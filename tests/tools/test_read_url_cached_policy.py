"""read_url with a cross-run cache: a cached page is read only if this run's URL policy admits it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_deep_research import ReadUrlTool, ResearchCache, ResearchRun, Sources, UrlPolicy
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, ScriptedChatGenerator

QUESTION = [ChatMessage.from_user("How fast are solar and storage growing?")]


def _read(policy: UrlPolicy, cache_dir: Path, url: str) -> tuple[str, ResearchRun]:
    tool = ReadUrlTool(
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        url_policy=policy,
        cache=ResearchCache(directory=cache_dir),
    )
    run = ResearchRun()
    return tool.bind(run.view()).invoke(urls=[url], question="How much solar capacity?"), run


def test_a_page_cached_by_a_run_that_allowed_loopback_is_refused_by_a_run_with_the_default_policy(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer, web: LoopbackWebServer, tmp_path: Path
) -> None:
    first = make_agent(cache=tmp_path).run(messages=QUESTION)
    assert f"]({web.url('/solar.html')})" in first["report"]
    fetched = len(web.requests)

    second = make_agent(sources=Sources(url_policy=UrlPolicy()), cache=tmp_path).run(messages=QUESTION)

    assert web.url("/solar.html") not in second["report"]
    assert [entry["url"] for entry in second["sources"] if entry["kind"] == "page"] == []
    assert second["exit_reason"] == "no_evidence"
    assert len(web.requests) == fetched  # refused before anything was fetched, from the cache or the server


def test_the_url_a_cached_page_came_from_after_redirects_must_pass_too(web: LoopbackWebServer, tmp_path: Path) -> None:
    port = web.url("/").split(":")[2].split("/")[0]
    web.add_redirect("/moved", web.url("/solar.html"))  # localhost -> 127.0.0.1
    asked = f"http://localhost:{port}/moved"
    text, _ = _read(UrlPolicy(allow_hosts=("localhost", "127.0.0.1")), tmp_path, asked)
    assert "450 gigawatts" in text

    text, run = _read(UrlPolicy(allow_hosts=("localhost",)), tmp_path, asked)

    assert f"Could not read {asked}: URL refused: 127.0.0.1" in text
    assert run.ledger.read_urls() == set()


def test_a_domain_denied_later_is_not_served_from_the_cache(web: LoopbackWebServer, tmp_path: Path) -> None:
    port = web.url("/").split(":")[2].split("/")[0]
    asked = f"http://localhost:{port}/solar.html"
    assert "450 gigawatts" in _read(UrlPolicy(allow_hosts=("localhost",)), tmp_path, asked)[0]

    text, run = _read(UrlPolicy(allow_hosts=("localhost",), deny_domains=("localhost",)), tmp_path, asked)

    assert f"Could not read {asked}: URL refused" in text
    assert "450 gigawatts" not in text
    assert run.ledger.read_urls() == set()
