"""Tests for the synchronous fetch: redirects checked hop by hop, size and time limits, content checks."""

from __future__ import annotations

import gzip
import socket
import threading
import time
import zlib
from collections.abc import Iterator

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
from haystack_deep_research.testing import LoopbackWebServer
from haystack_deep_research.web import FetchLimits, UrlPolicy, fetch


def raw_response(body: bytes, *, headers: str = "Content-Type: text/plain\r\n", status: str = "200 OK") -> bytes:
    """A complete HTTP/1.1 response without Content-Length: its body ends when the server closes the connection."""
    return f"HTTP/1.1 {status}\r\n{headers}Connection: close\r\n\r\n".encode() + body


# --- a plain download ------------------------------------------------------------------------------------------


def test_fetches_a_page_from_an_allowed_host(web: LoopbackWebServer, loopback_policy, quick_limits) -> None:
    web.add_page("/page", b"<html><body><p>Hi</p></body></html>", content_type="text/html; Charset=UTF-8")
    document = fetch(web.url("/page"), policy=loopback_policy, limits=quick_limits)
    assert document.body == b"<html><body><p>Hi</p></body></html>"
    assert (document.status, document.content_type, document.charset) == (200, "text/html", "utf-8")
    assert document.url == document.final_url == web.url("/page")


def test_connects_to_the_checked_address_and_sends_the_original_host(
    web: LoopbackWebServer, loopback_policy, quick_limits
) -> None:
    web.add_page("/host", b"hello", content_type="text/plain")
    url = f"http://docs.test:{web.port}/host"
    document = fetch(
        url, policy=loopback_policy, limits=quick_limits, resolver=fixed_resolver({"docs.test": ["127.0.0.1"]})
    )
    (request,) = web.requests.wait_for(1)
    assert request.headers["Host"] == f"docs.test:{web.port}"
    assert (document.body, document.final_url) == (b"hello", url)


def test_the_default_policy_refuses_the_loopback_server(web: LoopbackWebServer, quick_limits) -> None:
    web.add_page("/page", b"secret")
    with pytest.raises(URLRefusedError, match=r"URL refused: 127\.0\.0\.1 is a loopback address\."):
        fetch(web.url("/page"), policy=UrlPolicy(), limits=quick_limits)
    with pytest.raises(TimeoutError):  # no request ever reaches the server
        web.requests.wait_for(1, timeout=0.2)


# --- redirects -------------------------------------------------------------------------------------------------


def test_a_redirect_to_the_metadata_address_is_refused(web: LoopbackWebServer, loopback_policy, quick_limits) -> None:
    web.add_redirect("/go", "http://169.254.169.254/latest/meta-data/")
    with pytest.raises(URLRefusedError) as caught:
        fetch(web.url("/go"), policy=loopback_policy, limits=quick_limits)
    assert str(caught.value) == (
        f"URL refused: 169.254.169.254 is a cloud metadata address. It was reached by a redirect from {web.url('/go')}."
    )
    assert caught.value.url == web.url("/go")


def test_a_redirect_to_a_name_with_a_private_address_is_refused(
    web: LoopbackWebServer, loopback_policy, quick_limits
) -> None:
    web.add_redirect("/go", "https://internal.test/admin")
    resolver = fixed_resolver({"internal.test": ["10.0.0.5"]})
    with pytest.raises(URLRefusedError, match=r"internal\.test resolves to a private address \(10\.0\.0\.5\)"):
        fetch(web.url("/go"), policy=loopback_policy, limits=quick_limits, resolver=resolver)


def test_a_redirect_to_another_scheme_is_refused(web: LoopbackWebServer, loopback_policy, quick_limits) -> None:
    web.add_redirect("/go", "file:///etc/passwd", status=301)
    with pytest.raises(URLRefusedError, match="only http and https URLs can be read"):
        fetch(web.url("/go"), policy=loopback_policy, limits=quick_limits)


def test_relative_redirects_are_resolved_against_the_current_url(
    web: LoopbackWebServer, loopback_policy, quick_limits
) -> None:
    web.add_redirect("/docs/old", "new?x=1", status=301)
    web.add_redirect("/docs/new?x=1", "../final#section", status=307)
    web.add_page("/final", b"arrived", content_type="text/plain")
    document = fetch(web.url("/docs/old"), policy=loopback_policy, limits=quick_limits)
    assert document.body == b"arrived"
    assert document.url == web.url("/docs/old")
    assert document.final_url == web.url("/final")


def test_a_redirect_chain_within_the_limit_is_followed(web: LoopbackWebServer, loopback_policy) -> None:
    for hop in range(3):
        web.add_redirect(f"/r{hop}", f"/r{hop + 1}")
    web.add_page("/r3", b"end", content_type="text/plain")
    document = fetch(web.url("/r0"), policy=loopback_policy, limits=FetchLimits(max_redirects=3))
    assert (document.body, document.final_url) == (b"end", web.url("/r3"))


def test_a_redirect_chain_beyond_the_limit_fails(web: LoopbackWebServer, loopback_policy) -> None:
    for hop in range(10):
        web.add_redirect(f"/r{hop}", f"/r{hop + 1}")
    with pytest.raises(FetchError) as caught:
        fetch(web.url("/r0"), policy=loopback_policy, limits=FetchLimits(max_redirects=3))
    assert str(caught.value) == f"{web.url('/r0')} redirected more than 3 times; the redirect limit was reached."
    assert [request.path for request in web.requests.wait_for(4)] == ["/r0", "/r1", "/r2", "/r3"]


def test_no_redirect_is_followed_when_the_limit_is_zero(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_redirect("/go", "/page")
    with pytest.raises(FetchError, match="redirected more than 0 times"):
        fetch(web.url("/go"), policy=loopback_policy, limits=FetchLimits(max_redirects=0))


def test_a_redirect_without_location_fails(web: LoopbackWebServer, loopback_policy, quick_limits) -> None:
    web.add_raw("/go", b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n")
    with pytest.raises(FetchError, match=r"HTTP 302 from .* redirects without a Location header"):
        fetch(web.url("/go"), policy=loopback_policy, limits=quick_limits)


# --- status and content checks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [404, 500, 304])
def test_a_non_success_status_fails(web: LoopbackWebServer, loopback_policy, quick_limits, status: int) -> None:
    web.add_page("/page", b"nope", status=status)
    with pytest.raises(FetchError) as caught:
        fetch(web.url("/page"), policy=loopback_policy, limits=quick_limits)
    assert str(caught.value) == f"HTTP {status} from {web.url('/page')}"


@pytest.mark.parametrize("content_type", ["image/png", "application/json; charset=utf-8", "Application/Zip"])
def test_an_unsupported_content_type_fails(
    web: LoopbackWebServer, loopback_policy, quick_limits, content_type: str
) -> None:
    web.add_page("/file", b"\x89PNG", content_type=content_type)
    mime = content_type.split(";", maxsplit=1)[0].lower()
    with pytest.raises(UnsupportedContentError) as caught:
        fetch(web.url("/file"), policy=loopback_policy, limits=quick_limits)
    assert str(caught.value).startswith(f"The content type {mime} at {web.url('/file')} cannot be read;")


def test_a_missing_content_type_is_recognised_from_the_body(
    web: LoopbackWebServer, loopback_policy, quick_limits
) -> None:
    web.add_raw("/doc", raw_response(b"%PDF-1.4\n%%EOF\n", headers=""))
    web.add_raw("/html", raw_response(b"  <!DOCTYPE html><html></html>", headers=""))
    web.add_raw("/blob", raw_response(b"\x00\x01\x02", headers=""))
    assert fetch(web.url("/doc"), policy=loopback_policy, limits=quick_limits).content_type == "application/pdf"
    assert fetch(web.url("/html"), policy=loopback_policy, limits=quick_limits).content_type == "text/html"
    with pytest.raises(UnsupportedContentError, match=r"The content type \(none\)"):
        fetch(web.url("/blob"), policy=loopback_policy, limits=quick_limits)


def test_charsets_are_reported_only_when_known(web: LoopbackWebServer, loopback_policy, quick_limits) -> None:
    web.add_page("/latin", "Café".encode("latin-1"), content_type='text/plain; charset="ISO-8859-1"')
    web.add_page("/bogus", b"x", content_type="text/plain; charset=no-such-charset")
    assert fetch(web.url("/latin"), policy=loopback_policy, limits=quick_limits).charset == "iso-8859-1"
    assert fetch(web.url("/bogus"), policy=loopback_policy, limits=quick_limits).charset is None


# --- size limit ------------------------------------------------------------------------------------------------


def test_a_body_announced_as_too_large_is_refused_before_reading(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_raw("/big", b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10000000\r\n\r\n" + b"x" * 100)
    with pytest.raises(ContentTooLargeError) as caught:
        fetch(web.url("/big"), policy=loopback_policy, limits=FetchLimits(max_bytes=1000))
    assert str(caught.value) == (
        f"The document at {web.url('/big')} is larger than the download limit of 1000 bytes (10000000 bytes announced)."
    )


def test_a_body_without_length_is_cut_at_the_cap(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_slow("/endless", b"y" * 2_000_000, delay_per_chunk=0, chunk_size=10_000, content_length=False)
    started = time.monotonic()
    with pytest.raises(ContentTooLargeError, match="larger than the download limit of 50000 bytes"):
        fetch(web.url("/endless"), policy=loopback_policy, limits=FetchLimits(max_bytes=50_000))
    assert time.monotonic() - started < 2


def test_a_body_of_exactly_the_cap_is_accepted(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_slow("/exact", b"z" * 1000, delay_per_chunk=0, chunk_size=100, content_length=False)
    document = fetch(web.url("/exact"), policy=loopback_policy, limits=FetchLimits(max_bytes=1000))
    assert document.body == b"z" * 1000
    with pytest.raises(ContentTooLargeError):
        fetch(web.url("/exact"), policy=loopback_policy, limits=FetchLimits(max_bytes=999))


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


def test_a_dripping_server_is_cut_at_the_total_deadline(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_slow("/drip", b"d" * 200, delay_per_chunk=0.05, content_type="text/plain", content_length=False)
    limits = FetchLimits(read_timeout=2.0, total_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError) as caught:
        fetch(web.url("/drip"), policy=loopback_policy, limits=limits)
    assert 0.4 < time.monotonic() - started < 1.5
    assert str(caught.value) == f"Reading {web.url('/drip')} took longer than the total limit of 0.5 seconds."


def test_headers_trickled_a_byte_at_a_time_are_cut_at_the_total_deadline(
    web: LoopbackWebServer, loopback_policy
) -> None:
    # Every byte restarts httpx's read timeout, so only the total deadline can end this.
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Padding: " + b"p" * 200 + b"\r\n\r\nbody"
    web.add_raw("/trickle", head, chunk_size=1, delay_per_chunk=0.05)
    limits = FetchLimits(read_timeout=2.0, total_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError, match=r"took longer than the total limit of 0\.5 seconds"):
        fetch(web.url("/trickle"), policy=loopback_policy, limits=limits)
    assert time.monotonic() - started < 1.5


def test_a_body_slower_than_the_minimum_rate_is_cut_after_the_grace_period(
    web: LoopbackWebServer, loopback_policy
) -> None:
    web.add_slow("/slow", b"s" * 100, delay_per_chunk=0.05, content_type="text/plain")
    limits = FetchLimits(read_timeout=2.0, total_timeout=10.0, min_transfer_rate=1000, transfer_grace=0.5)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError) as caught:
        fetch(web.url("/slow"), policy=loopback_policy, limits=limits)
    assert 0.4 < time.monotonic() - started < 2.0
    assert str(caught.value).startswith(
        f"{web.url('/slow')} sent its response slower than 1000 bytes per second after the first 0.5 seconds "
        "(FetchLimits.min_transfer_rate), so it was cut off after "
    )


def test_trickled_headers_are_cut_by_the_minimum_rate_after_the_grace_period(
    web: LoopbackWebServer, loopback_policy
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Padding: " + b"p" * 200 + b"\r\n\r\nbody"
    web.add_raw("/trickle", head, chunk_size=1, delay_per_chunk=0.05)
    limits = FetchLimits(read_timeout=2.0, total_timeout=10.0, min_transfer_rate=1000, transfer_grace=0.5)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError, match="sent its response slower than 1000 bytes per second"):
        fetch(web.url("/trickle"), policy=loopback_policy, limits=limits)
    assert time.monotonic() - started < 2.0


def test_a_body_that_keeps_the_minimum_rate_is_read(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_slow("/steady", b"s" * 40, delay_per_chunk=0.02, chunk_size=4, content_type="text/plain")
    limits = FetchLimits(total_timeout=10.0, min_transfer_rate=10, transfer_grace=0.05)
    assert fetch(web.url("/steady"), policy=loopback_policy, limits=limits).body == b"s" * 40


def test_the_callers_deadline_ends_a_fetch_before_the_total_limit(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_slow("/drip", b"d" * 200, delay_per_chunk=0.05, content_type="text/plain")
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError) as caught:
        fetch(web.url("/drip"), policy=loopback_policy, limits=FetchLimits(total_timeout=10.0), deadline_s=0.5)
    assert 0.4 < time.monotonic() - started < 1.5
    assert str(caught.value) == (
        f"Reading {web.url('/drip')} was stopped when the caller's deadline of 0.5 seconds ran out."
    )


def test_no_time_left_fails_before_any_request(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_page("/page", b"hello")
    with pytest.raises(FetchTimeoutError, match="the caller's deadline of 0 seconds ran out"):
        fetch(web.url("/page"), policy=loopback_policy, limits=FetchLimits(), deadline_s=0)
    with pytest.raises(TimeoutError):
        web.requests.wait_for(1, timeout=0.2)


@pytest.mark.parametrize("deadline_s", [-1, float("nan"), "5", True])
def test_a_bad_deadline_is_a_configuration_error(loopback_policy, deadline_s: object) -> None:
    with pytest.raises(ConfigurationError, match="deadline_s must be a number from 0"):
        fetch("http://127.0.0.1:9/", policy=loopback_policy, limits=FetchLimits(), deadline_s=deadline_s)  # type: ignore[arg-type]


def test_a_slow_name_lookup_ends_at_the_deadline(web: LoopbackWebServer, loopback_policy) -> None:
    release = threading.Event()

    def stuck(host: str, port: int) -> list[str]:
        release.wait(5)
        return ["127.0.0.1"]

    started = time.monotonic()
    try:
        with pytest.raises(FetchTimeoutError, match=r"took longer than the total limit of 0\.3 seconds"):
            fetch(
                "http://slow-dns.test/", policy=loopback_policy, limits=FetchLimits(total_timeout=0.3), resolver=stuck
            )
        assert time.monotonic() - started < 1.5
    finally:
        release.set()


def test_a_silent_server_hits_the_read_timeout(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_raw("/stall", b"", hold_open=True)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError, match=r"Timed out waiting for .*/stall to respond"):
        fetch(web.url("/stall"), policy=loopback_policy, limits=FetchLimits(read_timeout=0.3))
    assert time.monotonic() - started < 0.9


def test_a_connection_dropped_without_an_answer_is_a_fetch_error(
    web: LoopbackWebServer, loopback_policy, quick_limits
) -> None:
    web.add_raw("/drop", b"")
    with pytest.raises(FetchError, match=rf"Reading {web.url('/drop')} failed: Server disconnected"):
        fetch(web.url("/drop"), policy=loopback_policy, limits=quick_limits)


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
        "min_transfer_rate": 16384.0,
        "transfer_grace": 5.0,
        "max_redirects": 0,
        "max_pdf_pages": 50,
        "max_pdf_decompressed_bytes": 4_000_000,
        "extraction_timeout": 15.0,
        "max_extraction_memory": 104_857_600,
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
        ({"min_transfer_rate": -1}, "FetchLimits.min_transfer_rate must be a number from 0; got -1."),
        ({"transfer_grace": 0}, "FetchLimits.transfer_grace must be a number greater than 0; got 0."),
        ({"extraction_timeout": 0}, "FetchLimits.extraction_timeout must be a number greater than 0; got 0."),
        (
            {"max_pdf_decompressed_bytes": 0},
            "FetchLimits.max_pdf_decompressed_bytes must be an integer of at least 1; got 0.",
        ),
        (
            {"max_extraction_memory": 1024},
            "FetchLimits.max_extraction_memory must be an integer of at least 33554432; got 1024.",
        ),
    ],
)
def test_bad_limits_are_rejected_at_construction(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        FetchLimits(**kwargs)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_from_dict_names_unknown_keys() -> None:
    with pytest.raises(ConfigurationError, match=r"unknown keys \['max_size'\]"):
        FetchLimits.from_dict({"max_size": 10})
