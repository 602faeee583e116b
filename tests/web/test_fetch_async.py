"""Tests for fetch_async: the same contract as fetch, over httpx.AsyncClient."""

from __future__ import annotations

import asyncio
import gzip
import socket
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

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
from haystack_deep_research.web import FetchLimits, UrlPolicy, fetch_async

if TYPE_CHECKING:
    from conftest import LoopbackServer


async def test_fetches_a_page_after_a_relative_redirect(server: LoopbackServer, loopback_policy, quick_limits) -> None:
    server.redirect("/docs/old", "new", status=308)
    server.reply("/docs/new", b"<html><p>moved</p></html>", content_type="application/xhtml+xml")
    document = await fetch_async(server.url("/docs/old"), policy=loopback_policy, limits=quick_limits)
    assert document.body == b"<html><p>moved</p></html>"
    assert (document.status, document.content_type, document.charset) == (200, "application/xhtml+xml", None)
    assert (document.url, document.final_url) == (server.url("/docs/old"), server.url("/docs/new"))


async def test_connects_to_the_checked_address_with_the_original_host(
    server: LoopbackServer, loopback_policy, quick_limits
) -> None:
    def echo_host(request) -> None:  # type: ignore[no-untyped-def]
        body = request.headers.get("Host", "").encode()
        request.send_response(200)
        request.send_header("Content-Type", "text/plain")
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    server.route("/host", echo_host)
    document = await fetch_async(
        f"http://docs.test:{server.port}/host",
        policy=loopback_policy,
        limits=quick_limits,
        resolver=fixed_resolver({"docs.test": ["127.0.0.1"]}),
    )
    assert document.body == f"docs.test:{server.port}".encode()


async def test_the_default_policy_refuses_loopback(server: LoopbackServer, quick_limits) -> None:
    server.reply("/page", b"secret")
    with pytest.raises(URLRefusedError, match=r"127\.0\.0\.1 is a loopback address"):
        await fetch_async(server.url("/page"), policy=UrlPolicy(), limits=quick_limits)
    assert server.seen_hosts == []


async def test_a_redirect_to_the_metadata_address_is_refused(
    server: LoopbackServer, loopback_policy, quick_limits
) -> None:
    server.redirect("/go", "http://169.254.169.254/latest/meta-data/")
    with pytest.raises(URLRefusedError) as caught:
        await fetch_async(server.url("/go"), policy=loopback_policy, limits=quick_limits)
    assert str(caught.value).startswith("URL refused: 169.254.169.254 is a cloud metadata address.")
    assert caught.value.url == server.url("/go")


async def test_a_redirect_chain_beyond_the_limit_fails(server: LoopbackServer, loopback_policy) -> None:
    for hop in range(10):
        server.redirect(f"/r{hop}", f"/r{hop + 1}")
    with pytest.raises(FetchError, match="redirected more than 2 times"):
        await fetch_async(server.url("/r0"), policy=loopback_policy, limits=FetchLimits(max_redirects=2))
    assert len(server.seen_hosts) == 3


async def test_a_404_fails(server: LoopbackServer, loopback_policy, quick_limits) -> None:
    with pytest.raises(FetchError) as caught:
        await fetch_async(server.url("/missing"), policy=loopback_policy, limits=quick_limits)
    assert str(caught.value) == f"HTTP 404 from {server.url('/missing')}"


async def test_an_unsupported_content_type_fails(server: LoopbackServer, loopback_policy, quick_limits) -> None:
    server.reply("/img", b"GIF89a", content_type="image/gif")
    with pytest.raises(UnsupportedContentError, match="The content type image/gif at"):
        await fetch_async(server.url("/img"), policy=loopback_policy, limits=quick_limits)


async def test_size_cap_with_and_without_content_length(server: LoopbackServer, loopback_policy) -> None:
    server.stream("/announced", chunks=1, chunk=b"x", content_length=5_000)
    server.stream("/endless", chunks=2000, chunk=b"y" * 10_000)
    limits = FetchLimits(max_bytes=4_000)
    with pytest.raises(ContentTooLargeError, match=r"\(5000 bytes announced\)"):
        await fetch_async(server.url("/announced"), policy=loopback_policy, limits=limits)
    with pytest.raises(ContentTooLargeError, match="larger than the download limit of 4000 bytes"):
        await fetch_async(server.url("/endless"), policy=loopback_policy, limits=limits)


async def test_a_dripping_server_is_cut_at_the_total_deadline(server: LoopbackServer, loopback_policy) -> None:
    server.stream("/drip", chunks=200, chunk=b"d", delay=0.05)
    limits = FetchLimits(read_timeout=5.0, total_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError) as caught:
        await fetch_async(server.url("/drip"), policy=loopback_policy, limits=limits)
    assert 0.4 < time.monotonic() - started < 1.2
    assert str(caught.value) == f"Reading {server.url('/drip')} took longer than the total limit of 0.5 seconds."


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
