"""The Hayhooks example, served in-process by Hayhooks' own app: who may start a run, and which questions it takes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hayhooks.server.pipelines.registry import registry
from hayhooks.settings import settings

from haystack_deep_research.serving import AGENT_FACTORY_ENV, ALLOWED_ORIGINS_ENV, TOKEN_ENV, RequestGuard
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer

REPO = Path(__file__).resolve().parents[2]
PIPELINES = REPO / "examples" / "hayhooks"
QUESTION = "How fast is solar growing?"
EVIL = "https://evil.example"


def _serve(search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch, **env: str) -> Iterator[TestClient]:
    from hayhooks.server.app import create_app

    for name, value in {AGENT_FACTORY_ENV: "tests.support:scripted_agent", **env}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DEEP_RESEARCH_TEST_SEARCH_URL", search.base_url)
    monkeypatch.syspath_prepend(str(REPO))
    monkeypatch.setattr(settings, "pipelines_dir", str(PIPELINES))
    registry.clear()
    try:
        with TestClient(create_app(), base_url="http://127.0.0.1") as client:
            yield client
    finally:
        registry.clear()


@pytest.fixture
def server(search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    yield from _serve(search, monkeypatch)


@pytest.fixture
def token_server(search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    yield from _serve(search, monkeypatch, **{TOKEN_ENV: "s3cret-token", ALLOWED_ORIGINS_ENV: "http://localhost:3000"})


def _chat(question: str) -> dict[str, object]:
    return {"model": "deep_research", "messages": [{"role": "user", "content": question}]}


def test_a_page_of_another_origin_cannot_start_a_run(
    server: TestClient, search: LoopbackSearchServer, web: LoopbackWebServer
) -> None:
    for path, body in (("/deep_research/run", {"question": QUESTION}), ("/v1/chat/completions", _chat(QUESTION))):
        refused = server.post(path, json=body, headers={"Origin": EVIL})
        assert refused.status_code == 403, refused.text
        assert ALLOWED_ORIGINS_ENV in refused.json()["detail"]
    assert len(search.requests) == 0  # nothing was researched, nothing was paid for

    # A client that is not a browser sends no Origin: it is served.
    answered = server.post("/deep_research/run", json={"question": QUESTION})
    assert answered.status_code == 200
    assert answered.json()["result"].startswith("# Research report")


@pytest.mark.parametrize("question", ["", "   \n\t ", "x" * 20_001])
def test_an_empty_or_overlong_question_is_422_with_a_message(server: TestClient, question: str) -> None:
    for path, body in (("/deep_research/run", {"question": question}), ("/v1/chat/completions", _chat(question))):
        answered = server.post(path, json=body)
        assert answered.status_code == 422, answered.text
        detail = answered.json()["detail"]
        assert "No research question" in detail or "the limit is 20,000" in detail


def test_with_a_token_set_only_requests_that_carry_it_run(
    token_server: TestClient, search: LoopbackSearchServer, web: LoopbackWebServer
) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
        refused = token_server.post("/deep_research/run", json={"question": QUESTION}, headers=headers)
        assert refused.status_code == 401, refused.text
        assert TOKEN_ENV in refused.json()["detail"]
    assert len(search.requests) == 0

    allowed = {"Authorization": "Bearer s3cret-token", "Origin": "http://localhost:3000"}
    answered = token_server.post("/deep_research/run", json={"question": QUESTION}, headers=allowed)
    assert answered.status_code == 200
    assert answered.json()["result"].startswith("# Research report")


def test_the_guard_reads_its_rule_from_the_environment() -> None:
    env = {ALLOWED_ORIGINS_ENV: " http://a.test/ , http://b.test:8080", TOKEN_ENV: " s3cret "}
    guard = RequestGuard.from_env(env)
    assert guard.allowed_origins == frozenset({"http://a.test", "http://b.test:8080"})
    assert guard.token == "s3cret"
    assert "s3cret" not in repr(guard)  # the token stays out of logs
    assert RequestGuard.from_env({}) == RequestGuard()
