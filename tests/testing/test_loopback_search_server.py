from collections.abc import Iterator

import httpx
import pytest
import requests
from tavily import AsyncTavilyClient, TavilyClient
from tavily.errors import BadRequestError, InvalidAPIKeyError, UsageLimitExceededError

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.testing import LoopbackSearchServer, SearchDocument

KEY = "tvly-test-key"

PARIS = SearchDocument(
    url="https://travel.example/paris",
    title="Paris travel guide",
    content="Paris is the capital of France. " + "The Louvre holds many paintings. " * 20,
)
BERLIN = SearchDocument(
    url="https://travel.example/berlin", title="Berlin", content="Berlin is the capital of Germany."
)
LYON = SearchDocument(url="https://food.example/lyon", title="Lyon", content="Lyon is a food city in France.")
COOKING = SearchDocument(url="https://www.cook.example/bread", title="Bread", content="Bake bread with flour.")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch):
    # The tavily client uses requests, which honours proxy variables; loopback traffic must never leave the host.
    # A real key in the environment would also be picked up by a client built without one.
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def search() -> Iterator[LoopbackSearchServer]:
    with LoopbackSearchServer([PARIS, BERLIN, LYON, COOKING], require_api_key=KEY) as server:
        yield server


@pytest.fixture
def client(search) -> Iterator[TavilyClient]:
    with TavilyClient(api_key=KEY, api_base_url=search.base_url) as tavily:
        yield tavily


def test_client_gets_ranked_results(client):
    response = client.search("capital of France", max_results=3)

    results = response["results"]
    assert response["query"] == "capital of France"
    assert [r["url"] for r in results] == [PARIS.url, BERLIN.url, LYON.url]
    assert [r["score"] for r in results] == [1.0, 0.5, 0.5]
    assert results[0]["title"] == "Paris travel guide"
    assert results[0]["content"].startswith("Paris is the capital of France.")
    assert len(results[0]["content"]) <= 303
    assert results[1]["content"] == BERLIN.content
    assert all(r["raw_content"] is None for r in results)
    assert isinstance(response["response_time"], float)


def test_max_results_and_default(client):
    assert len(client.search("France capital Germany food bread", max_results=2)["results"]) == 2
    assert len(client.search("France capital Germany food bread")["results"]) == 4


def test_ties_keep_insertion_order(search, client):
    search.add_document(SearchDocument(url="https://a.example/1", title="Zebra", content="stripes"))
    search.add_document(SearchDocument(url="https://a.example/2", title="Zebra", content="stripes"))

    results = client.search("zebra stripes")["results"]

    assert [r["url"] for r in results] == ["https://a.example/1", "https://a.example/2"]


def test_no_overlap_gives_no_results(client):
    assert client.search("quantum chromodynamics")["results"] == []


def test_raw_content_and_domain_filters(client):
    raw = client.search("France", include_raw_content=True)["results"]
    only_food = client.search("France", include_domains=["food.example"])["results"]
    no_travel = client.search("bread France", exclude_domains=["travel.example"])["results"]
    www = client.search("bread", include_domains=["cook.example"])["results"]

    assert raw[0]["raw_content"] == PARIS.content
    assert [r["url"] for r in only_food] == [LYON.url]
    assert {r["url"] for r in no_travel} == {LYON.url, COOKING.url}
    assert [r["url"] for r in www] == [COOKING.url]


def test_rate_limit_then_success(search, client):
    search.fail_next(429, headers={"Retry-After": "1"})

    with pytest.raises(UsageLimitExceededError):
        client.search("capital of France")
    results = client.search("capital of France")["results"]

    assert results[0]["url"] == PARIS.url
    assert [entry.status for entry in search.requests.wait_for(2)] == [429, 200]


def test_fault_headers_and_body_reach_the_wire(search):
    search.fail_next(429, headers={"Retry-After": "7"})
    search.fail_next(503, body="try later")

    with httpx.Client(trust_env=False, timeout=5.0) as http:
        first = http.post(f"{search.base_url}/search", json={"query": "x"})
        second = http.post(f"{search.base_url}/search", json={"query": "x"})

    assert first.status_code == 429
    assert first.headers["retry-after"] == "7"
    assert "error" in first.json()["detail"]
    assert (second.status_code, second.text) == (503, "try later")


def test_fault_count_and_server_error(search, client):
    search.fail_next(500, count=2)

    for _ in range(2):
        with pytest.raises(requests.HTTPError):
            client.search("France")
    assert client.search("France")["results"]


def test_garbage_response(search, client):
    search.fail_next(200, garbage=True)

    with pytest.raises(requests.JSONDecodeError):
        client.search("France")
    assert client.search("France")["results"]


def test_api_key_is_required(search):
    for api_key in ("wrong", None):  # None: the client sends no Authorization header at all
        with (
            TavilyClient(api_key=api_key, api_base_url=search.base_url) as tavily,
            pytest.raises(InvalidAPIKeyError, match="invalid API key"),
        ):
            tavily.search("France")
    with httpx.Client(trust_env=False, timeout=5.0) as http:
        raw = http.post(f"{search.base_url}/search", json={"query": "France"})

    assert raw.status_code == 401
    assert raw.json() == {"detail": {"error": "Unauthorized: missing or invalid API key."}}


def test_any_key_is_accepted_without_require_api_key():
    with (
        LoopbackSearchServer([LYON]) as server,
        TavilyClient(api_key="anything", api_base_url=server.base_url) as tavily,
    ):
        assert tavily.search("Lyon")["results"][0]["url"] == LYON.url


def test_bad_requests_are_400(search, client):
    with pytest.raises(BadRequestError):
        client.search("France", max_results=50)
    with pytest.raises(BadRequestError):
        client.search("   ")
    with httpx.Client(trust_env=False, timeout=5.0) as http:
        not_json = http.post(f"{search.base_url}/search", content=b"{", headers={"Authorization": f"Bearer {KEY}"})
        wrong_path = http.post(f"{search.base_url}/extract", json={"urls": []})
        wrong_method = http.get(f"{search.base_url}/search")

    assert not_json.status_code == 400
    assert wrong_path.status_code == 404
    assert wrong_method.status_code == 405


def test_request_log(search, client):
    client.search("capital of France", max_results=2)

    (entry,) = search.requests.wait_for(1)

    assert (entry.method, entry.path, entry.status) == ("POST", "/search", 200)
    assert entry.json_body == {"query": "capital of France", "max_results": 2}
    assert entry.headers["Authorization"] == f"Bearer {KEY}"
    assert entry.started <= entry.finished


async def test_async_client(search):
    async with AsyncTavilyClient(api_key=KEY, api_base_url=search.base_url) as tavily:
        response = await tavily.search("capital of Germany", max_results=1)

    assert [r["url"] for r in response["results"]] == [BERLIN.url]


def test_documents_snapshot():
    server = LoopbackSearchServer([PARIS])
    server.add_document(BERLIN)

    assert server.documents == (PARIS, BERLIN)


@pytest.mark.parametrize(
    "call",
    [
        lambda: SearchDocument(url="ftp://x.example/a", title="t", content="c"),
        lambda: SearchDocument(url="/relative", title="t", content="c"),
        lambda: SearchDocument(url="https://x.example", title=None, content="c"),
        lambda: LoopbackSearchServer(["not a document"]),
        lambda: LoopbackSearchServer(require_api_key=""),
        lambda: LoopbackSearchServer().fail_next(700),
        lambda: LoopbackSearchServer().fail_next(500, count=0),
        lambda: LoopbackSearchServer().fail_next(200, body="x", garbage=True),
        lambda: LoopbackSearchServer().fail_next(500, headers={"X": "a\nb"}),
    ],
)
def test_bad_arguments_raise_configuration_error(call):
    with pytest.raises(ConfigurationError):
        call()


def test_the_log_keeps_arrival_order_even_when_responses_finish_out_of_order() -> None:
    from haystack_deep_research.testing._server import LoggedRequest, RequestLog

    log = RequestLog()
    late = LoggedRequest(method="POST", path="/search", status=200, started=2.0, finished=2.1)
    early = LoggedRequest(method="POST", path="/search", status=429, started=1.0, finished=2.5)
    log.append(late)
    log.append(early)

    assert [entry.status for entry in log.wait_for(2)] == [429, 200]
