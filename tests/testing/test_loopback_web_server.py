import io
import time
from collections.abc import Iterator

import httpx
import pypdf
import pytest

from haystack_deep_research.errors import ConfigurationError, UsageError
from haystack_deep_research.testing import LoopbackWebServer


@pytest.fixture
def web() -> Iterator[LoopbackWebServer]:
    with LoopbackWebServer() as server:
        yield server


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False, timeout=5.0) as client:
        yield client


def test_serves_html_page(web, http):
    web.add_page("/article.html", "<html><body><p>Hello, world</p></body></html>")

    response = http.get(web.url("/article.html"))

    assert web.base_url.startswith("http://127.0.0.1:")
    assert web.url("/article.html") == f"{web.base_url}/article.html"
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "Hello, world" in response.text


def test_page_options_and_routes_added_before_start(http):
    server = LoopbackWebServer()
    server.add_page("/gone", b"gone", content_type="text/plain", status=410, headers={"X-Test": "yes"})
    with server:
        response = http.get(server.url("/gone"))

    assert response.status_code == 410
    assert response.headers["content-type"] == "text/plain"
    assert response.headers["x-test"] == "yes"
    assert response.content == b"gone"


def test_head_sends_headers_without_body(web, http):
    web.add_page("/a", "abcdef")

    response = http.head(web.url("/a"))

    assert response.status_code == 200
    assert response.headers["content-length"] == "6"
    assert response.content == b""


def test_serves_pdf(web, http):
    web.add_pdf("/paper.pdf", ["Abstract: loopback servers", "Results: they work"], title="A paper")

    response = http.get(web.url("/paper.pdf"))

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/pdf"
    reader = pypdf.PdfReader(io.BytesIO(response.content))
    assert "loopback servers" in reader.pages[0].extract_text()
    assert "they work" in reader.pages[1].extract_text()
    assert reader.metadata is not None
    assert reader.metadata.title == "A paper"


def test_redirect(web, http):
    web.add_page("/new", "new place")
    web.add_redirect("/old", "/new")
    web.add_redirect("/moved", web.url("/new"), status=301)

    raw = http.get(web.url("/old"))
    followed = http.get(web.url("/moved"), follow_redirects=True)

    assert raw.status_code == 302
    assert raw.headers["location"] == "/new"
    assert followed.status_code == 200
    assert followed.text == "new place"
    assert [r.status_code for r in followed.history] == [301]


def test_unknown_path_is_404_html(web, http):
    response = http.get(web.url("/missing"))

    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "404" in response.text


def test_query_string_falls_back_to_path(web, http):
    web.add_page("/item", "any query")
    web.add_page("/item?id=2", "second")

    assert http.get(web.url("/item?id=1")).text == "any query"
    assert http.get(web.url("/item?id=2")).text == "second"


def test_other_methods_are_405(web, http):
    web.add_page("/a", "x")

    response = http.post(web.url("/a"), content=b"data")

    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"


def test_remove_route(web, http):
    web.add_page("/a", "x")
    web.remove("/a")

    assert http.get(web.url("/a")).status_code == 404


def test_slow_body_is_dripped(web, http):
    web.add_slow("/slow", b"0123456789", delay_per_chunk=0.03, chunk_size=2, content_type="text/plain")

    with http.stream("GET", web.url("/slow")) as response:
        pieces = list(response.iter_raw())

    entry = web.requests.wait_for(1)[0]
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain"
    assert b"".join(pieces) == b"0123456789"
    assert len(pieces) > 1
    assert entry.path == "/slow"
    assert entry.status == 200
    assert entry.duration >= 5 * 0.03 * 0.8


def test_slow_body_without_content_length_ends_at_close(web, http):
    web.add_slow("/stream", b"abcdef", delay_per_chunk=0, chunk_size=2, content_type="text/plain", content_length=False)

    response = http.get(web.url("/stream"))

    assert "content-length" not in response.headers
    assert response.content == b"abcdef"


def test_raw_response_is_sent_as_given_and_logged_with_its_status(web, http):
    web.add_raw("/raw", b"HTTP/1.1 203 Odd\r\nX-Raw: yes\r\nContent-Length: 2\r\n\r\nhi")

    response = http.get(web.url("/raw"))

    (entry,) = web.requests.wait_for(1)
    assert (response.status_code, response.reason_phrase, response.headers["x-raw"]) == (203, "Odd", "yes")
    assert response.content == b"hi"
    assert (entry.path, entry.status) == ("/raw", 203)


def test_raw_response_can_trickle_its_headers(web, http):
    web.add_raw("/trickle", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", chunk_size=4, delay_per_chunk=0.02)

    response = http.get(web.url("/trickle"))

    (entry,) = web.requests.wait_for(1)
    assert response.content == b"ok"
    assert entry.duration >= 9 * 0.02 * 0.8  # 36 bytes in nine pieces


def test_empty_raw_response_drops_the_connection(web, http):
    web.add_raw("/drop", b"")

    with pytest.raises(httpx.RemoteProtocolError):
        http.get(web.url("/drop"))
    assert web.requests.wait_for(1)[0].status == 0


def test_held_connection_stays_silent_until_the_client_leaves(web):
    web.add_raw("/stall", b"", hold_open=True)

    with httpx.Client(trust_env=False, timeout=0.2) as client, pytest.raises(httpx.ReadTimeout):
        client.get(web.url("/stall"))
    (entry,) = web.requests.wait_for(1)  # logged once the client hung up
    assert entry.status == 0


def test_stop_releases_a_held_connection_within_bounds():
    server = LoopbackWebServer().start()
    server.add_raw("/stall", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", hold_open=True)
    with httpx.Client(trust_env=False, timeout=5.0) as client, client.stream("GET", server.url("/stall")) as response:
        started = time.monotonic()
        server.stop(timeout=2.0)
        assert time.monotonic() - started < 2.5
        with pytest.raises(httpx.HTTPError):
            response.read()


def test_stop_cuts_a_slow_body_short_within_bounds(http):
    server = LoopbackWebServer().start()
    server.add_slow("/forever", b"x" * 1000, delay_per_chunk=1.0)
    with http.stream("GET", server.url("/forever")) as response:
        assert response.status_code == 200
        started = time.monotonic()
        server.stop(timeout=2.0)
        assert time.monotonic() - started < 2.5
        with pytest.raises(httpx.HTTPError):
            response.read()


def test_request_log(web, http):
    web.add_page("/a", "x")
    http.get(web.url("/a"), headers={"User-Agent": "log-test"})
    http.head(web.url("/b"))

    first, second = web.requests.wait_for(2)

    assert (first.method, first.path, first.status) == ("GET", "/a", 200)
    assert (second.method, second.path, second.status) == ("HEAD", "/b", 404)
    assert first.headers["User-Agent"] == "log-test"
    assert first.started <= first.finished <= second.started <= second.finished <= time.monotonic()
    assert len(web.requests) == 2
    web.requests.clear()
    assert list(web.requests) == []


def test_wait_for_is_bounded(web):
    with pytest.raises(TimeoutError):
        web.requests.wait_for(1, timeout=0.05)


def test_explicit_start_stop():
    server = LoopbackWebServer()
    with pytest.raises(UsageError):
        server.url("/")
    server.start()
    try:
        assert server.running
        with pytest.raises(UsageError):
            server.start()
        url = server.url("/")
    finally:
        server.stop()
    server.stop()  # a second stop does nothing

    assert not server.running
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=1.0, trust_env=False)


def test_nothing_is_written_to_stderr(web, http, capfd):
    web.add_slow("/slow", b"x" * 100, delay_per_chunk=0.01, chunk_size=10)
    http.get(web.url("/missing"))
    with http.stream("GET", web.url("/slow")) as response:
        next(response.iter_raw())  # leave before the body is complete
    web.requests.wait_for(2)

    assert capfd.readouterr().err == ""


@pytest.mark.parametrize(
    "call",
    [
        lambda w: w.add_page("no-slash", "x"),
        lambda w: w.add_page("/a b", "x"),
        lambda w: w.add_page("/a", "x", status=99),
        lambda w: w.add_page("/a", 5),
        lambda w: w.add_page("/a", "x", content_type=""),
        lambda w: w.add_page("/a", "x", headers={"X-Bad": "a\r\nb"}),
        lambda w: w.add_redirect("/a", "/b", status=200),
        lambda w: w.add_redirect("/a", ""),
        lambda w: w.add_slow("/a", "text", delay_per_chunk=0.1),
        lambda w: w.add_slow("/a", b"x", delay_per_chunk=-1),
        lambda w: w.add_slow("/a", b"x", delay_per_chunk=0.1, chunk_size=0),
        lambda w: w.add_raw("/a", "HTTP/1.1 200 OK"),
        lambda w: w.add_raw("/a", b"", delay_per_chunk=True),
        lambda w: w.add_raw("/a", b"", chunk_size=-1),
        lambda w: w.add_pdf("/a", []),
        lambda w: w.stop(timeout=0),
    ],
)
def test_bad_arguments_raise_configuration_error(call):
    with pytest.raises(ConfigurationError):
        call(LoopbackWebServer())


def test_a_request_whose_response_was_read_is_already_in_the_log() -> None:
    with LoopbackWebServer() as web:
        web.add_page("/a", "<html><body><p>A page.</p></body></html>")
        with httpx.Client() as http:
            for count in range(1, 201):
                assert http.get(web.url("/a")).status_code == 200
                assert len(web.requests) == count  # read at once, without waiting: never one behind


def test_a_streamed_body_is_made_chunk_by_chunk_with_or_without_a_length() -> None:
    made: list[int] = []

    def chunks() -> Iterator[bytes]:
        for number in range(3):
            made.append(number)
            yield b"<p>%d</p>" % number

    with LoopbackWebServer() as web:
        web.add_stream("/sized", chunks, content_length=24)
        web.add_stream("/open", chunks, headers={"X-Kind": "stream"})
        with httpx.Client() as http:
            sized, unsized = http.get(web.url("/sized")), http.get(web.url("/open"))

    assert sized.text == unsized.text == "<p>0</p><p>1</p><p>2</p>"
    assert sized.headers["Content-Length"] == "24"
    assert "Content-Length" not in unsized.headers
    assert unsized.headers["X-Kind"] == "stream"
    assert made == [0, 1, 2, 0, 1, 2]


def test_a_stream_needs_a_callable() -> None:
    with LoopbackWebServer() as web, pytest.raises(ConfigurationError, match="chunks must be a callable"):
        web.add_stream("/x", [b"a"])  # type: ignore[arg-type]
