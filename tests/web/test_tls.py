"""https reads verify the certificate, send SNI and open their own connection, also when TLS contexts are reused."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from haystack_deep_research.errors import FetchError
from haystack_deep_research.web import FetchLimits, UrlPolicy, fetch, fetch_async

HOST = "site.test"
LIMITS = FetchLimits(connect_timeout=5, read_timeout=5, total_timeout=10)
POLICY = UrlPolicy(allow_hosts=("127.0.0.1",))


def to_loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


@dataclass
class TLSServer:
    """A TLS listener on 127.0.0.1 with a self-signed certificate; it records the SNI name of every handshake."""

    port: int
    server_names: list[str | None] = field(default_factory=list)

    def url(self) -> str:
        return f"https://{HOST}:{self.port}/page"


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[TLSServer]:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
            *("-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={HOST}"),
            *("-addext", f"subjectAltName=DNS:{HOST}"),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    server = TLSServer(port=listener.getsockname()[1])
    context.sni_callback = lambda sock, name, ctx: server.server_names.append(name)  # type: ignore[assignment]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(5)
                try:
                    with context.wrap_socket(connection, server_side=True):
                        pass
                except (ssl.SSLError, OSError):
                    pass  # the client refuses the untrusted certificate, as it must

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def test_every_read_verifies_the_certificate_with_sni_on_its_own_connection(tls_server: TLSServer) -> None:
    for _ in range(3):
        with pytest.raises(FetchError, match=r"(?i)certificate verify failed"):
            fetch(tls_server.url(), policy=POLICY, limits=LIMITS, resolver=to_loopback)
    assert tls_server.server_names == [HOST] * 3


def test_concurrent_reads_each_verify_the_certificate(tls_server: TLSServer) -> None:
    def read(_: int) -> str:
        try:
            fetch(tls_server.url(), policy=POLICY, limits=LIMITS, resolver=to_loopback)
        except FetchError as error:
            return str(error)
        return "read"

    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(read, range(8)))
    assert all("certificate verify failed" in outcome.lower() for outcome in outcomes)
    assert tls_server.server_names == [HOST] * 8


def test_async_reads_verify_the_certificate_with_sni(tls_server: TLSServer) -> None:
    async def read_twice() -> list[BaseException | object]:
        return await asyncio.gather(
            *(fetch_async(tls_server.url(), policy=POLICY, limits=LIMITS, resolver=to_loopback) for _ in range(2)),
            return_exceptions=True,
        )

    outcomes = asyncio.run(read_twice())
    assert all(isinstance(o, FetchError) and "certificate verify failed" in str(o).lower() for o in outcomes)
    assert tls_server.server_names == [HOST] * 2


def test_contexts_prepared_ahead_are_lent_to_fetches_and_verify_the_certificate(
    tls_server: TLSServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haystack_deep_research.web import _steps as _tls
    from haystack_deep_research.web._steps import prepare_contexts as prepare_tls_contexts

    monkeypatch.setattr(_tls, "_idle", [])  # as in a fresh interpreter
    monkeypatch.setattr(_tls, "_preparing", [])
    prepare_tls_contexts(3)
    prepare_tls_contexts(3)  # a second call builds no more
    for thread in list(_tls._preparing):
        thread.join(timeout=30)
    with _tls._lock:
        ready = list(_tls._idle)
    assert len(ready) == 3
    with pytest.raises(FetchError, match=r"(?i)certificate verify failed"):
        fetch(tls_server.url(), policy=POLICY, limits=LIMITS, resolver=to_loopback)
    with _tls._lock:
        assert any(context is ready[-1] for context in _tls._idle)  # the last prepared one was lent and given back
    assert tls_server.server_names == [HOST]
