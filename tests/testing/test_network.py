"""forbid_network refuses connections and name look-ups beyond loopback, and puts back what was there when it ends."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from haystack_deep_research.testing import LoopbackWebServer, NetworkForbiddenError, forbid_network


def test_a_connection_or_a_look_up_beyond_loopback_is_refused() -> None:
    with forbid_network():
        for connect in ("connect", "connect_ex"):
            with socket.socket() as sock:
                sock.settimeout(2)
                with pytest.raises(NetworkForbiddenError, match=r"192\.0\.2\.7"):
                    getattr(sock, connect)(("192.0.2.7", 80))
        with pytest.raises(NetworkForbiddenError, match=r"bücher\.example"):
            socket.getaddrinfo("bücher.example", 443)
        with socket.socket(socket.AF_INET6) as sock, pytest.raises(NetworkForbiddenError):
            sock.connect(("2001:db8::1", 443, 0, 0))


def test_loopback_addresses_names_and_unix_sockets_are_let_through(tmp_path: Path) -> None:
    with forbid_network(), LoopbackWebServer() as web:
        with socket.create_connection(("127.0.0.1", web.port), timeout=5):
            pass
        assert socket.getaddrinfo("localhost", web.port)
        with socket.socket(socket.AF_UNIX) as sock, pytest.raises(FileNotFoundError):
            sock.connect(str(tmp_path / "no-such-socket"))


def test_leaving_the_block_puts_back_what_was_there() -> None:
    before = (socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo)
    with forbid_network():
        assert socket.getaddrinfo is not before[2]
    assert (socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo) == before
