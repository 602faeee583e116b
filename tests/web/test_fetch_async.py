"""Tests for fetch_async: the same contract as fetch, over httpx.AsyncClient."""

from __future__ import annotations

import asyncio
import gzip
import socket
import threading
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from resolvers import PUBLIC_IP, fixed_resolver

from haystack_deep_research.errors import (
    ContentTooLargeError,
    FetchError,
    FetchTimeoutError,
    UnsupportedContentError,
    URLRefusedError,
)
from haystack_deep_research.testing import LoopbackWebServer
from haystack_deep_research.web import FetchLimits, UrlPolicy, fetch_async


async def test_fetches_a_page_after_a_relative_redirect(web: LoopbackWebServer, loopback_policy, quick_limits) -> None:
    web.add_redirect("/docs/old", "new", status=308)
    web.add_page("/docs/new", b"<html><p>moved</p></html>", content_type="application/xhtml+xml")
    document = await fetch_async(web.url("/docs/old"), policy=loopback_policy, limits=quick_limits)
    assert document.body == b"<html><p>moved</p></html>"
    assert (document.status, document.content_type, document.charset) == (200, "application/xhtml+xml", None)
    assert (document.url, document.final_url) == (web.url("/docs/old"), web.url("/docs/new"))


async def test_connects_to_the_checked_address_with_the_original_host(
    web: LoopbackWebServer, loopback_policy, quick_limits
) -> None:
    web.add_page("/host", b"hello", content_type="text/plain")
    document = await fetch_async(
        f"http://docs.test:{web.port}/host",
        policy=loopback_policy,
        limits=quick_limits,
        resolver=fixed_resolver({"docs.test": ["127.0.0.1"]}),
    )
    (request,) = await asyncio.to_thread(web.requests.wait_for, 1)
    assert (document.body, request.headers["Host"]) == (b"hello", f"docs.test:{web.port}")


async def test_the_default_policy_refuses_loopback(web: LoopbackWebServer, quick_limits) -> None:
    web.add_page("/page", b"secret")
    with pytest.raises(URLRefusedError, match=r"127\.0\.0\.1 is a loopback address"):
        await fetch_async(web.url("/page"), policy=UrlPolicy(), limits=quick_limits)
    with pytest.raises(TimeoutError):  # no request ever reaches the server
        await asyncio.to_thread(web.requests.wait_for, 1, timeout=0.2)


async def test_a_redirect_to_the_metadata_address_is_refused(
    web: LoopbackWebServer, loopback_policy, quick_limits
) -> None:
    web.add_redirect("/go", "http://169.254.169.254/latest/meta-data/")
    with pytest.raises(URLRefusedError) as caught:
        await fetch_async(web.url("/go"), policy=loopback_policy, limits=quick_limits)
    assert str(caught.value).startswith("URL refused: 169.254.169.254 is a cloud metadata address.")
    assert caught.value.url == web.url("/go")


async def test_a_redirect_chain_beyond_the_limit_fails(web: LoopbackWebServer, loopback_policy) -> None:
    for hop in range(10):
        web.add_redirect(f"/r{hop}", f"/r{hop + 1}")
    with pytest.raises(FetchError, match="redirected more than 2 times"):
        await fetch_async(web.url("/r0"), policy=loopback_policy, limits=FetchLimits(max_redirects=2))
    logged = await asyncio.to_thread(web.requests.wait_for, 3)
    assert [request.path for request in logged] == ["/r0", "/r1", "/r2"]


async def test_a_404_fails(web: LoopbackWebServer, loopback_policy, quick_limits) -> None:
    with pytest.raises(FetchError) as caught:
        await fetch_async(web.url("/missing"), policy=loopback_policy, limits=quick_limits)
    assert str(caught.value) == f"HTTP 404 from {web.url('/missing')}"


async def test_an_unsupported_content_type_fails(web: LoopbackWebServer, loopback_policy, quick_limits) -> None:
    web.add_page("/img", b"GIF89a", content_type="image/gif")
    with pytest.raises(UnsupportedContentError, match="The content type image/gif at"):
        await fetch_async(web.url("/img"), policy=loopback_policy, limits=quick_limits)


async def test_size_cap_with_and_without_content_length(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_raw("/announced", b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5000\r\n\r\nx")
    web.add_slow("/endless", b"y" * 2_000_000, delay_per_chunk=0, chunk_size=10_000, content_length=False)
    limits = FetchLimits(max_bytes=4_000)
    with pytest.raises(ContentTooLargeError, match=r"\(5000 bytes announced\)"):
        await fetch_async(web.url("/announced"), policy=loopback_policy, limits=limits)
    with pytest.raises(ContentTooLargeError, match="larger than the download limit of 4000 bytes"):
        await fetch_async(web.url("/endless"), policy=loopback_policy, limits=limits)


async def test_a_dripping_server_is_cut_at_the_total_deadline(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_slow("/drip", b"d" * 200, delay_per_chunk=0.05, content_type="text/plain", content_length=False)
    limits = FetchLimits(read_timeout=5.0, total_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError) as caught:
        await fetch_async(web.url("/drip"), policy=loopback_policy, limits=limits)
    assert 0.4 < time.monotonic() - started < 1.2
    assert str(caught.value) == f"Reading {web.url('/drip')} took longer than the total limit of 0.5 seconds."


async def test_headers_trickled_a_byte_at_a_time_are_cut_at_the_total_deadline(
    web: LoopbackWebServer, loopback_policy
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Padding: " + b"p" * 200 + b"\r\n\r\nbody"
    web.add_raw("/trickle", head, chunk_size=1, delay_per_chunk=0.05)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError, match=r"took longer than the total limit of 0\.5 seconds"):
        await fetch_async(web.url("/trickle"), policy=loopback_policy, limits=FetchLimits(total_timeout=0.5))
    assert time.monotonic() - started < 1.5


async def test_a_body_slower_than_the_minimum_rate_is_cut_after_the_grace_period(
    web: LoopbackWebServer, loopback_policy
) -> None:
    web.add_slow("/slow", b"s" * 100, delay_per_chunk=0.05, content_type="text/plain")
    limits = FetchLimits(read_timeout=2.0, total_timeout=10.0, min_transfer_rate=1000, transfer_grace=0.5)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError, match="sent its response slower than 1000 bytes per second"):
        await fetch_async(web.url("/slow"), policy=loopback_policy, limits=limits)
    assert 0.4 < time.monotonic() - started < 2.0


async def test_trickled_headers_are_cut_by_the_minimum_rate_after_the_grace_period(
    web: LoopbackWebServer, loopback_policy
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Padding: " + b"p" * 200 + b"\r\n\r\nbody"
    web.add_raw("/trickle", head, chunk_size=1, delay_per_chunk=0.05)
    limits = FetchLimits(read_timeout=2.0, total_timeout=10.0, min_transfer_rate=1000, transfer_grace=0.5)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError, match="sent its response slower than 1000 bytes per second"):
        await fetch_async(web.url("/trickle"), policy=loopback_policy, limits=limits)
    assert time.monotonic() - started < 2.0


async def test_a_body_that_keeps_the_minimum_rate_is_read(web: LoopbackWebServer, loopback_policy) -> None:
    web.add_slow("/steady", b"s" * 40, delay_per_chunk=0.02, chunk_size=4, content_type="text/plain")
    limits = FetchLimits(total_timeout=10.0, min_transfer_rate=10, transfer_grace=0.05)
    assert (await fetch_async(web.url("/steady"), policy=loopback_policy, limits=limits)).body == b"s" * 40


async def test_the_callers_deadline_ends_a_fetch_before_the_total_limit(
    web: LoopbackWebServer, loopback_policy
) -> None:
    web.add_slow("/drip", b"d" * 200, delay_per_chunk=0.05, content_type="text/plain")
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError, match=r"was stopped when the caller's deadline of 0\.5 seconds ran out"):
        await fetch_async(web.url("/drip"), policy=loopback_policy, limits=FetchLimits(), deadline_s=0.5)
    assert 0.4 < time.monotonic() - started < 1.5


async def test_a_stalled_transport_is_cut_at_the_total_deadline() -> None:
    async def stall() -> AsyncIterator[bytes]:
        yield b"start "
        await asyncio.sleep(5)
        yield b"never"

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": "text/plain"}, content=stall())

    started = time.monotonic()
    with pytest.raises(FetchTimeoutError, match=r"took longer than the total limit of 0\.3 seconds"):
        await fetch_async(
            "http://slow.test/",
            policy=UrlPolicy(),
            limits=FetchLimits(total_timeout=0.3),
            transport=httpx.MockTransport(handler),
            resolver=fixed_resolver({"slow.test": [PUBLIC_IP]}),
        )
    assert time.monotonic() - started < 1.0


async def test_https_requests_carry_host_header_and_sni_and_decode_gzip() -> None:
    seen: list[httpx.Request] = []
    text = b"zipped text " * 20

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        headers = {"Content-Type": "text/plain; charset=utf-8", "Content-Encoding": "gzip"}
        return httpx.Response(200, headers=headers, content=gzip.compress(text))

    document = await fetch_async(
        "https://news.test/a",
        policy=UrlPolicy(),
        limits=FetchLimits(),
        transport=httpx.MockTransport(handler),
        resolver=fixed_resolver({"news.test": ["2606:4700::1111"]}),
    )
    assert document.body == text
    (request,) = seen
    assert str(request.url) == "https://[2606:4700::1111]/a"
    assert request.headers["Host"] == "news.test"
    assert request.extensions["sni_hostname"] == "news.test"


async def test_a_refused_connection_is_a_fetch_error(loopback_policy, quick_limits) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(FetchError, match="Could not connect to"):
        await fetch_async(f"http://127.0.0.1:{port}/", policy=loopback_policy, limits=quick_limits)


async def test_a_slow_name_lookup_ends_at_the_deadline(loopback_policy) -> None:
    release = threading.Event()

    def stuck(host: str, port: int) -> list[str]:
        release.wait(5)
        return ["127.0.0.1"]

    started = time.monotonic()
    try:
        with pytest.raises(FetchTimeoutError, match=r"took longer than the total limit of 0\.3 seconds"):
            await fetch_async(
                "http://slow-dns.test/", policy=loopback_policy, limits=FetchLimits(total_timeout=0.3), resolver=stuck
            )
        assert time.monotonic() - started < 1.5
    finally:
        release.set()
