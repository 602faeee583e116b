"""Tests for the synchronous fetch: redirects checked hop by hop, size and time limits, content checks."""

from __future__ import annotations

import gzip
import socket
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING

import httpx
import pytest
from resolvers import PUBLIC_IP, fixed_resolver

from haystack_deep_research.errors import (
    ConfigurationError,
    ContentTooLargeError,
    FetchError,
    FetchTimeoutError,
    UnsupportedContentError,
    URLRefusedError,
)
from haystack_deep_research.web import FetchLimits, UrlPolicy, fetch

if TYPE_CHECKING:
    from conftest import LoopbackServer


def echo_host(request: BaseHTTPRequestHandler) -> None:
    body = request.headers.get("Host", "").encode()
    request.send_response(200)
    request.send_header("Content-Type", "text/plain")
    request.send_header("Content-Length", str(len(body)))
    request.end_headers()
    request.wfile.write(body)


# --- a plain download ------------------------------------------------------------------------------------------


def test_fetches_a_page_from_an_allowed_host(server: LoopbackServer, loopback_policy, quick_limits) -> None:
    server.reply("/page", b"<html><body><p>Hi</p></body></html>", content_type="text/html; Charset=UTF-8")
    document = fetch(server.url("/page"), policy=loopback_policy, limits=quick_limits)
    assert document.body == b"<html><body><p>Hi</p></body></html>"
    assert (document.status, document.content_type, document.charset) == (200, "text/html", "utf-8")
    assert document.url == document.final_url == server.url("/page")


def test_connects_to_the_checked_address_and_sends_the_original_host(
    server: LoopbackServer, loopback_policy, quick_limits
) -> None:
    server.route("/host", echo_host)
    url = f"http://docs.test:{server.port}/host"
    document = fetch(
        url, policy=loopback_policy, limits=quick_limits, resolver=fixed_resolver({"docs.test": ["127.0.0.1"]})
    )
    assert document.body == f"docs.test:{server.port}".encode()
    assert document.final_url == url


def test_the_default_policy_refuses_the_loopback_server(server: LoopbackServer, quick_limits) -> None:
    server.reply("/page", b"secret")
    with pytest.raises(URLRefusedError, match=r"URL refused: 127\.0\.0\.1 is a loopback address\."):
        fetch(server.url("/page"), policy=UrlPolicy(), limits=quick_limits)
    assert server.seen_hosts == []


# --- redirects -------------------------------------------------------------------------------------------------


def test_a_redirect_to_the_metadata_address_is_refused(server: LoopbackServer, loopback_policy, quick_limits) -> None:
    server.redirect("/go", "http://169.254.169.254/latest/meta-data/")
    with pytest.raises(URLRefusedError) as caught:
        fetch(server.url("/go"), policy=loopback_policy, limits=quick_limits)
    assert str(caught.value) == (
        "URL refused: 169.254.169.254 is a cloud metadata address. "
        f"It was reached by a redirect from {server.url('/go')}."
    )
    assert caught.value.url == server.url("/go")


def test_a_redirect_to_a_name_with_a_private_address_is_refused(
    server: LoopbackServer, loopback_policy, quick_limits
) -> None:
    server.redirect("/go", "https://internal.test/admin")
    resolver = fixed_resolver({"internal.test": ["10.0.0.5"]})
    with pytest.raises(URLRefusedError, match=r"internal\.test resolves to a private address \(10\.0\.0\.5\)"):
        fetch(server.url("/go"), policy=loopback_policy, limits=quick_limits, resolver=resolver)


def test_a_redirect_to_another_scheme_is_refused(server: LoopbackServer, loopback_policy, quick_limits) -> None:
    server.redirect("/go", "file:///etc/passwd", status=301)
    with pytest.raises(URLRefusedError, match="only http and https URLs can be read"):
        fetch(server.url("/go"), policy=loopback_policy, limits=quick_limits)


def test_relative_redirects_are_resolved_against_the_current_url(
    server: LoopbackServer, loopback_policy, quick_limits
) -> None:
    server.redirect("/docs/old", "new?x=1", status=301)
    server.redirect("/docs/new?x=1", "../final#section", status=307)
    server.reply("/final", b"arrived", content_type="text/plain")
    document = fetch(server.url("/docs/old"), policy=loopback_policy, limits=quick_limits)
    assert document.body == b"arrived"
    assert document.url == server.url("/docs/old")
    assert document.final_url == server.url("/final")


def test_a_redirect_chain_within_the_limit_is_followed(server: LoopbackServer, loopback_policy) -> None:
    for hop in range(3):
        server.redirect(f"/r{hop}", f"/r{hop + 1}")
    server.reply("/r3", b"end", content_type="text/plain")
    document = fetch(server.url("/r0"), policy=loopback_policy, limits=FetchLimits(max_redirects=3))
    assert (document.body, document.final_url) == (b"end", server.url("/r3"))


def test_a_redirect_chain_beyond_the_limit_fails(server: LoopbackServer, loopback_policy) -> None:
    for hop in range(10):
        server.redirect(f"/r{hop}", f"/r{hop + 1}")
    with pytest.raises(FetchError) as caught:
        fetch(server.url("/r0"), policy=loopback_policy, limits=FetchLimits(max_redirects=3))
    assert str(caught.value) == f"{server.url('/r0')} redirected more than 3 times; the redirect limit was reached."
    assert len(server.seen_hosts) == 4


def test_no_redirect_is_followed_when_the_limit_is_zero(server: LoopbackServer, loopback_policy) -> None:
    server.redirect("/go", "/page")
    with pytest.raises(FetchError, match="redirected more than 0 times"):
        fetch(server.url("/go"), policy=loopback_policy, limits=FetchLimits(max_redirects=0))


def test_a_redirect_without_location_fails(server: LoopbackServer, loopback_policy, quick_limits) -> None:
    server.reply("/go", b"", status=302, content_type=None)
    with pytest.raises(FetchError, match=r"HTTP 302 from .* redirects without a Location header"):
        fetch(server.url("/go"), policy=loopback_policy, limits=quick_limits)


# --- status and content checks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [404, 500, 304])
def test_a_non_success_status_fails(server: LoopbackServer, loopback_policy, quick_limits, status: int) -> None:
    server.reply("/page", b"nope", status=status)
    with pytest.raises(FetchError) as caught:
        fetch(server.url("/page"), policy=loopback_policy, limits=quick_limits)
    assert str(caught.value) == f"HTTP {status} from {server.url('/page')}"


@pytest.mark.parametrize("content_type", ["image/png", "application/json; charset=utf-8", "Application/Zip"])
def test_an_unsupported_content_type_fails(
    server: LoopbackServer, loopback_policy, quick_limits, content_type: str
) -> None:
    server.reply("/file", b"\x89PNG", content_type=content_type)
    mime = content_type.split(";", maxsplit=1)[0].lower()
    with pytest.raises(UnsupportedContentError) as caught:
        fetch(server.url("/file"), policy=loopback_policy, limits=quick_limits)
    assert str(caught.value).startswith(f"The content type {mime} at {server.url('/file')} cannot be read;")


def test_a_missing_content_type_is_recognised_from_the_body(
    server: LoopbackServer, loopback_policy, quick_limits
) -> None:
    server.reply("/doc", b"%PDF-1.4\n%%EOF\n", content_type=None)
    server.reply("/html", b"  <!DOCTYPE html><html></html>", content_type=None)
    server.reply("/blob", b"\x00\x01\x02", content_type=None)
    assert fetch(server.url("/doc"), policy=loopback_policy, limits=quick_limits).content_type == "application/pdf"
    assert fetch(server.url("/html"), policy=loopback_policy, limits=quick_limits).content_type == "text/html"
    with pytest.raises(UnsupportedContentError, match=r"The content type \(none\)"):
        fetch(server.url("/blob"), policy=loopback_policy, limits=quick_limits)


def test_charsets_are_reported_only_when_known(server: LoopbackServer, loopback_policy, quick_limits) -> None:
    server.reply("/latin", "Café".encode("latin-1"), content_type='text/plain; charset="ISO-8859-1"')
    server.reply("/bogus", b"x", content_type="text/plain; charset=no-such-charset")
    assert fetch(server.url("/latin"), policy=loopback_policy, limits=quick_limits).charset == "iso-8859-1"
    assert fetch(server.url("/bogus"), policy=loopback_policy, limits=quick_limits).charset is None


# --- size limit ------------------------------------------------------------------------------------------------


def test_a_body_announced_as_too_large_is_refused_before_reading(server: LoopbackServer, loopback_policy) -> None:
    server.stream("/big", chunks=1, chunk=b"x" * 100, content_length=10_000_000)
    with pytest.raises(ContentTooLargeError) as caught:
        fetch(server.url("/big"), policy=loopback_policy, limits=FetchLimits(max_bytes=1000))
    assert str(caught.value) == (
        f"The document at {server.url('/big')} is larger than the download limit of 1000 bytes "
        "(10000000 bytes announced)."
    )


def test_a_body_without_length_is_cut_at_the_cap(server: LoopbackServer, loopback_policy) -> None:
    server.stream("/endless", chunks=2000, chunk=b"y" * 10_000)
    started = time.monotonic()
    with pytest.raises(ContentTooLargeError, match="larger than the download limit of 50000 bytes"):
        fetch(server.url("/endless"), policy=loopback_policy, limits=FetchLimits(max_bytes=50_000))
    assert time.monotonic() - started < 2


def test_a_body_of_exactly_the_cap_is_accepted(server: LoopbackServer, loopback_policy) -> None:
    server.stream("/exact", chunks=10, chunk=b"z" * 100)
    server.stream("/over", chunks=10, chunk=b"z" * 100)
    document = fetch(server.url("/exact"), policy=loopback_policy, limits=FetchLimits(max_bytes=1000))
    assert document.body == b"z" * 1000
    with pytest.raises(ContentTooLargeError):
        fetch(server.url("/over"), policy=loopback_policy, limits=FetchLimits(max_bytes=999))


def test_a_streamed_body_is_never_read_past_the_cap() -> None:
    produced = 0

    def endless() -> Iterator[bytes]:
        nonlocal produced
        while produced < 100_000:
            produced += 1
            yield b"x" * 1000

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": "text/plain"}, content=endless())

    with pytest.raises(ContentTooLargeError):
        fetch(
            "http://stream.test/",
            policy=UrlPolicy(),
            limits=FetchLimits(max_bytes=10_000),
            transport=httpx.MockTransport(handler),
            resolver=fixed_resolver({"stream.test": [PUBLIC_IP]}),
        )
    assert produced <= 12


def mock_fetch(headers: dict[str, str], body: bytes, *, max_bytes: int = 1_000_000):  # type: ignore[no-untyped-def]
    """Fetch a response served by a mock transport, streamed so that httpx does not decode it on its own."""
    return fetch(
        "http://mock.test/doc",
        policy=UrlPolicy(),
        limits=FetchLimits(max_bytes=max_bytes),
        transport=httpx.MockTransport(lambda request: httpx.Response(200, headers=headers, content=iter([body]))),
        resolver=fixed_resolver({"mock.test": [PUBLIC_IP]}),
    )


def test_gzip_and_deflate_bodies_are_decoded() -> None:
    text = b"<html><body>" + b"compressed words " * 200 + b"</body></html>"
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    raw_deflate = raw.compress(text) + raw.flush()
    for encoding, body in [("gzip", gzip.compress(text)), ("deflate", zlib.compress(text)), ("deflate", raw_deflate)]:
        document = mock_fetch({"Content-Type": "text/html", "Content-Encoding": encoding}, body)
        assert document.body == text


def test_a_body_read_into_memory_by_the_transport_is_still_decoded_once() -> None:
    text = b"plain words " * 50
    response = httpx.Response(
        200, headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"}, content=gzip.compress(text)
    )
    document = fetch(
        "http://mock.test/doc",
        policy=UrlPolicy(),
        limits=FetchLimits(),
        transport=httpx.MockTransport(lambda request: response),
        resolver=fixed_resolver({"mock.test": [PUBLIC_IP]}),
    )
    assert document.body == text


def test_a_compression_bomb_is_cut_at_the_cap() -> None:
    bomb = gzip.compress(b"\0" * 50_000_000)
    with pytest.raises(ContentTooLargeError, match="download limit of 100000 bytes"):
        mock_fetch({"Content-Type": "text/plain", "Content-Encoding": "gzip"}, bomb, max_bytes=100_000)


def test_unknown_or_corrupt_compression_fails() -> None:
    with pytest.raises(UnsupportedContentError, match="compressed with br, which cannot be read"):
        mock_fetch({"Content-Type": "text/plain", "Content-Encoding": "br"}, b"\x0b")
    with pytest.raises(FetchError, match=r"gzip-compressed body from http://mock\.test/doc is corrupt"):
        mock_fetch({"Content-Type": "text/plain", "Content-Encoding": "gzip"}, b"not gzip")


# --- time limits and connection failures -----------------------------------------------------------------------


def test_a_dripping_server_is_cut_at_the_total_deadline(server: LoopbackServer, loopback_policy) -> None:
    server.stream("/drip", chunks=200, chunk=b"d", delay=0.05)
    limits = FetchLimits(read_timeout=2.0, total_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError) as caught:
        fetch(server.url("/drip"), policy=loopback_policy, limits=limits)
    assert 0.4 < time.monotonic() - started < 1.5
    assert str(caught.value) == f"Reading {server.url('/drip')} took longer than the total limit of 0.5 seconds."


def test_a_silent_server_hits_the_read_timeout(server: LoopbackServer, loopback_policy) -> None:
    def stall(request: BaseHTTPRequestHandler) -> None:
        time.sleep(1.0)
        echo_host(request)

    server.route("/stall", stall)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError, match=r"Timed out waiting for .*/stall to respond"):
        fetch(server.url("/stall"), policy=loopback_policy, limits=FetchLimits(read_timeout=0.3))
    assert time.monotonic() - started < 0.9


def test_a_refused_connection_is_a_fetch_error(loopback_policy, quick_limits) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(FetchError, match=rf"Could not connect to http://127\.0\.0\.1:{port}/"):
        fetch(f"http://127.0.0.1:{port}/", policy=loopback_policy, limits=quick_limits)


# --- what goes on the wire -------------------------------------------------------------------------------------


def test_https_requests_go_to_the_bracketed_address_with_host_header_and_sni() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"Content-Type": "text/plain"}, content=b"ok")

    document = fetch(
        "https://V6.test:8443/path?q=1",
        policy=UrlPolicy(),
        limits=FetchLimits(),
        transport=httpx.MockTransport(handler),
        resolver=fixed_resolver({"v6.test": ["2606:4700::1111"]}),
    )
    assert document.body == b"ok"
    (request,) = seen
    assert str(request.url) == "https://[2606:4700::1111]:8443/path?q=1"
    assert request.headers["Host"] == "v6.test:8443"
    assert request.extensions["sni_hostname"] == "v6.test"
    assert request.headers["User-Agent"] == "haystack-deep-research/0.1"


def test_the_host_is_resolved_once_per_hop_and_the_first_answer_is_used() -> None:
    answers = iter([[PUBLIC_IP], ["127.0.0.1"], ["127.0.0.1"]])
    hosts: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        return httpx.Response(200, headers={"Content-Type": "text/plain"}, content=b"ok")

    fetch(
        "http://rebind.test/",
        policy=UrlPolicy(),
        limits=FetchLimits(),
        transport=httpx.MockTransport(handler),
        resolver=rebinding,
    )
    assert hosts == [PUBLIC_IP]


# --- limits ----------------------------------------------------------------------------------------------------


def test_limits_round_trip_through_a_dict() -> None:
    limits = FetchLimits(max_bytes=1234, total_timeout=3, max_redirects=0)
    data = limits.to_dict()
    assert data == {
        "max_bytes": 1234,
        "connect_timeout": 5.0,
        "read_timeout": 10.0,
        "total_timeout": 3.0,
        "max_redirects": 0,
        "max_pdf_pages": 50,
    }
    assert FetchLimits.from_dict(data) == limits
    assert FetchLimits.from_dict({}) == FetchLimits()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_bytes": 0}, "FetchLimits.max_bytes must be an integer of at least 1; got 0."),
        ({"max_bytes": 10.5}, "FetchLimits.max_bytes must be an integer of at least 1; got 10.5."),
        ({"max_pdf_pages": True}, "FetchLimits.max_pdf_pages must be an integer of at least 1; got True."),
        ({"max_redirects": -1}, "FetchLimits.max_redirects must be an integer from 0 to 20; got -1."),
        ({"max_redirects": 21}, "FetchLimits.max_redirects must be an integer from 0 to 20; got 21."),
        ({"connect_timeout": 0}, "FetchLimits.connect_timeout must be a number greater than 0; got 0."),
        ({"read_timeout": -1.0}, "FetchLimits.read_timeout must be a number greater than 0; got -1.0."),
        ({"total_timeout": float("inf")}, "FetchLimits.total_timeout must be a number greater than 0; got inf."),
        ({"total_timeout": "30"}, "FetchLimits.total_timeout must be a number greater than 0; got '30'."),
    ],
)
def test_bad_limits_are_rejected_at_construction(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        FetchLimits(**kwargs)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_from_dict_names_unknown_keys() -> None:
    with pytest.raises(ConfigurationError, match=r"unknown keys \['max_size'\]"):
        FetchLimits.from_dict({"max_size": 10})
