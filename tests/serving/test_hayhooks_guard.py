"""The Hayhooks example, served in-process by Hayhooks' own app: who may start a run, and which questions it takes."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hayhooks.server.pipelines.registry import registry
from hayhooks.settings import settings

from haystack_deep_research.serving import RequestGuard, RequestGuardMiddleware
from haystack_deep_research.serving.agents import AGENT_FACTORY_ENV
from haystack_deep_research.serving.guard import ALLOWED_HOSTS_ENV, ALLOWED_ORIGINS_ENV, TOKEN_ENV
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer

REPO = Path(__file__).resolve().parents[2]
PIPELINES = REPO / "examples" / "hayhooks"
QUESTION = "How fast is solar growing?"
EVIL = "https://evil.example"
SEARCH_URL_ENV = "DEEP_RESEARCH_TEST_SEARCH_URL"


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


# The documented server: Hayhooks' app built by the library's launcher.

TOKEN = "s3cret-token"
MARKER_WRAPPER = """
from pathlib import Path

Path({marker!r}).write_text("the posted module ran", encoding="utf-8")

from hayhooks import BasePipelineWrapper


class PipelineWrapper(BasePipelineWrapper):
    def setup(self) -> None:
        self.pipeline = None

    def run_api(self, text: str) -> str:
        return text
"""


def _pipelines(tmp_path: Path) -> Path:
    """A pipelines folder of this test's own, holding the example wrapper (a deploy could write nothing elsewhere)."""
    folder = tmp_path / "pipelines"
    shutil.copytree(PIPELINES / "deep_research", folder / "deep_research", ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _deploy_body(marker: Path) -> dict[str, object]:
    return {"name": "posted", "files": {"pipeline_wrapper.py": MARKER_WRAPPER.format(marker=str(marker))}}


@pytest.fixture
def hostile_marker(tmp_path: Path) -> Path:
    return tmp_path / "pwned ünïcode 標記.txt"


def _launch(
    search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, guard: RequestGuard | None = None
) -> Iterator[TestClient]:
    from haystack_deep_research.serving.hayhooks import create_app

    for name, value in {AGENT_FACTORY_ENV: "tests.support:scripted_agent", SEARCH_URL_ENV: search.base_url}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.syspath_prepend(str(REPO))
    monkeypatch.setattr(settings, "pipelines_dir", settings.pipelines_dir)  # restored after the test
    registry.clear()
    try:
        with TestClient(create_app(_pipelines(tmp_path), guard=guard), base_url="http://127.0.0.1") as client:
            yield client
    finally:
        registry.clear()


@pytest.fixture
def launched(search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[TestClient]:
    yield from _launch(search, monkeypatch, tmp_path, RequestGuard())


@pytest.fixture
def launched_with_token(
    search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[TestClient]:
    guard = RequestGuard(allowed_origins=frozenset({"http://localhost:3000"}), token=TOKEN)
    yield from _launch(search, monkeypatch, tmp_path, guard)


def test_plain_hayhooks_runs_a_module_any_web_page_posts_to_deploy_files(
    search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, hostile_marker: Path
) -> None:
    """What the launcher exists for: `hayhooks run`'s own app imports a posted wrapper, from any origin."""
    from hayhooks.server.app import create_app

    monkeypatch.setattr(settings, "pipelines_dir", str(_pipelines(tmp_path)))
    registry.clear()
    try:
        with TestClient(create_app(), base_url="http://127.0.0.1") as client:
            body = {**_deploy_body(hostile_marker), "save_files": False}
            deployed = client.post("/deploy_files", json=body, headers={"Origin": EVIL})
    finally:
        registry.clear()
    assert deployed.status_code == 200, deployed.text
    assert hostile_marker.read_text(encoding="utf-8") == "the posted module ran"


def test_plain_hayhooks_in_durable_mode_mounts_no_deploy_route(
    search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, hostile_marker: Path
) -> None:
    """The documented way to run plain `hayhooks run` (HAYHOOKS_DURABLE_MODE=true): no deploy route at all."""
    from hayhooks.server.app import create_app

    for name, value in {AGENT_FACTORY_ENV: "tests.support:scripted_agent", SEARCH_URL_ENV: search.base_url}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.syspath_prepend(str(REPO))
    monkeypatch.setattr(settings, "durable_mode", True)
    monkeypatch.setattr(settings, "pipelines_dir", str(_pipelines(tmp_path)))
    with TestClient(create_app(), base_url="http://127.0.0.1") as client:
        for path in ("/deploy_files", "/deploy-yaml", "/undeploy/deep_research"):
            assert client.post(path, json=_deploy_body(hostile_marker)).status_code == 404
        refused = client.post("/deep_research/run", json={"question": QUESTION}, headers={"Origin": EVIL})
    assert not hostile_marker.exists()
    assert refused.status_code == 403  # the wrapper's own check


def test_the_launcher_has_no_deploy_or_undeploy_route_and_runs_no_posted_module(
    launched: TestClient, hostile_marker: Path, web: LoopbackWebServer
) -> None:
    admin = [
        ("/deploy_files", _deploy_body(hostile_marker)),
        ("/deploy-yaml", {"name": "posted", "source_code": "components: {}\nconnections: []\n"}),
        ("/undeploy/deep_research", None),
    ]
    for path, body in admin:
        for origin in (EVIL, "null", "https://évil.example".encode()):  # bytes: a header is not always ASCII
            from_a_page = launched.post(path, json=body, headers={"Origin": origin})  # type: ignore[dict-item]
            assert from_a_page.status_code == 403, from_a_page.text
            assert ALLOWED_ORIGINS_ENV in from_a_page.json()["detail"]
        assert launched.post(path, json=body).status_code == 404  # not there at all, for any caller
    assert not hostile_marker.exists()
    assert not any("deploy" in path for path in launched.get("/openapi.json").json()["paths"])

    # The pipeline it serves is still there: nothing was undeployed.
    answered = launched.post("/deep_research/run", json={"question": "Wie schnell wächst Solarenergie?"})
    assert answered.status_code == 200, answered.text
    assert answered.json()["result"].startswith("# Research report")


def test_with_a_token_every_route_of_the_launcher_needs_it(
    launched_with_token: TestClient, hostile_marker: Path, search: LoopbackSearchServer
) -> None:
    client = launched_with_token
    wrong = [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}, {"Authorization": f"Basic {TOKEN}"}]
    for headers in wrong:
        assert client.post("/deploy_files", json=_deploy_body(hostile_marker), headers=headers).status_code == 401
        for path in ("/status", "/openapi.json", "/docs", "/v1/models", "/deep_research/run", "/no/such/route"):
            refused = client.get(path, headers=headers)
            assert refused.status_code == 401, (path, refused.text)
            assert TOKEN_ENV in refused.json()["detail"]
            assert refused.headers["www-authenticate"] == "Bearer"
        assert client.post("/v1/chat/completions", json=_chat(QUESTION), headers=headers).status_code == 401
    assert not hostile_marker.exists()
    assert len(search.requests) == 0

    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert client.post("/deploy_files", json=_deploy_body(hostile_marker), headers=bearer).status_code == 404
    assert not hostile_marker.exists()
    assert client.get("/status", headers=bearer).json()["pipelines"] == ["deep_research"]
    # A listed origin with the token is served; an unlisted one is refused even with it.
    assert client.get("/status", headers={**bearer, "Origin": "http://localhost:3000"}).status_code == 200
    assert client.get("/status", headers={**bearer, "Origin": EVIL}).status_code == 403


def test_a_browser_preflight_needs_no_token_but_a_listed_origin(launched_with_token: TestClient) -> None:
    ask = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}
    allowed = launched_with_token.options("/deep_research/run", headers={**ask, "Origin": "http://localhost:3000"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] in {"*", "http://localhost:3000"}
    refused = launched_with_token.options("/deep_research/run", headers={**ask, "Origin": EVIL})
    assert refused.status_code == 403
    assert "access-control-allow-origin" not in refused.headers  # the page cannot read the answer either
    # An OPTIONS that is no browser's preflight (no Origin) is an ordinary request: it needs the token.
    assert launched_with_token.options("/deep_research/run", headers=ask).status_code == 401


def test_the_guard_admits_only_loopback_host_names_on_a_loopback_address() -> None:
    loopback = RequestGuard.from_env({ALLOWED_HOSTS_ENV: " Research.LAN , [fd00::7] "}, listen_host="127.0.0.1")
    assert loopback.allowed_hosts == frozenset({"localhost", "127.0.0.1", "::1", "research.lan", "fd00::7"})
    assert RequestGuard.from_env({}, listen_host="localhost").allowed_hosts == frozenset(
        {"localhost", "127.0.0.1", "::1"}
    )
    assert RequestGuard.from_env({}, listen_host="0.0.0.0").allowed_hosts is None
    assert RequestGuard.from_env({ALLOWED_HOSTS_ENV: "a.test"}, listen_host="0.0.0.0").allowed_hosts == {"a.test"}


@pytest.fixture
def launched_from_env(
    search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[TestClient]:
    monkeypatch.setattr(settings, "host", "127.0.0.1")
    monkeypatch.setenv(ALLOWED_HOSTS_ENV, "research.lan")
    yield from _launch(search, monkeypatch, tmp_path)


def test_a_page_that_rebinds_its_name_to_loopback_is_refused_on_every_route(
    launched_from_env: TestClient, search: LoopbackSearchServer
) -> None:
    """DNS rebinding: the page's same-origin GETs carry no Origin but name the page's host in Host."""
    for host in ("rebind.evil.example", "rebind.evil.example:1416", "127.0.0.1.evil.example", "localhost.:80x", ""):
        for path in ("/status", "/openapi.json", "/docs", "/v1/models"):
            refused = launched_from_env.get(path, headers={"Host": host})
            assert refused.status_code == 403, (host, path, refused.text)
            assert ALLOWED_HOSTS_ENV in refused.json()["detail"]
        asked = launched_from_env.post("/deep_research/run", json={"question": QUESTION}, headers={"Host": host})
        assert asked.status_code == 403
    assert len(search.requests) == 0
    for host in ("127.0.0.1:1416", "localhost", "LOCALHOST.:1416", "[::1]:1416", "research.lan:8080"):
        assert launched_from_env.get("/status", headers={"Host": host}).status_code == 200, host


def test_the_middleware_closes_a_refused_websocket_before_the_app_sees_it() -> None:
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    accepted: list[str] = []

    async def echo(socket: WebSocket) -> None:
        await socket.accept()
        accepted.append(socket.headers.get("origin", ""))
        await socket.send_text("hello")
        await socket.close()

    app = RequestGuardMiddleware(Starlette(routes=[WebSocketRoute("/ws", echo)]), RequestGuard(token=TOKEN))
    with TestClient(app) as client:
        for headers in ({"Origin": EVIL, "Authorization": f"Bearer {TOKEN}"}, {}):
            with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws", headers=headers):
                pass
            assert refused.value.code == 1008
        with client.websocket_connect("/ws", headers={"Authorization": f"Bearer {TOKEN}"}) as socket:
            assert socket.receive_text() == "hello"
    assert accepted == [""]


def test_every_http_server_of_the_library_is_built_behind_the_guard() -> None:
    """The door's callers: each module that serves HTTP (uvicorn, Hayhooks' app, the MCP SDK's app) uses the guard."""
    package = REPO / "src" / "haystack_deep_research"
    serving_http = re.compile(r"\buvicorn\b|streamable_http_app|sse_app|hayhooks\.server\.app")
    servers = {
        str(path.relative_to(package)): "RequestGuardMiddleware" in path.read_text(encoding="utf-8")
        for path in package.rglob("*.py")
        if serving_http.search(path.read_text(encoding="utf-8"))
    }
    assert servers == {"mcp_server/server.py": True, "serving/hayhooks.py": True}
