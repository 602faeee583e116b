"""A switch that forbids network connections and name look-ups to anything but this machine's loopback addresses."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Iterator
from typing import Any
from unittest import mock

from haystack_deep_research.errors import UsageError


class NetworkForbiddenError(UsageError):
    """A test tried to connect to an address outside loopback while the network was forbidden."""


_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def _is_loopback_host(host: Any) -> bool:
    if host is None:
        return True  # getaddrinfo(None, port) names the local wildcard address
    text = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
    if text.lower().rstrip(".") in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(text.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _is_loopback(address: Any) -> bool:
    # Unix sockets and other families carry no IP address.
    return not isinstance(address, tuple) or not address or _is_loopback_host(str(address[0]))


@contextlib.contextmanager
def forbid_network() -> Iterator[None]:
    """
    Refuse every socket connection to a non-loopback address, and every name look-up of a non-loopback name, with
    :class:`NetworkForbiddenError` while the block runs, so that no test reaches a paid service by accident (the
    project's own test suite turns it on for every test).

    :returns: A context manager.
    """
    original_getaddrinfo = socket.getaddrinfo

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_loopback_host(host):
            raise NetworkForbiddenError(f"looking up {host!r} is forbidden in tests; use a loopback server.")
        return original_getaddrinfo(host, *args, **kwargs)

    def guarded(original: Any) -> Any:
        def connect(sock: socket.socket, address: Any) -> Any:
            if not _is_loopback(address):
                raise NetworkForbiddenError(
                    f"network access to {address!r} is forbidden in tests; use a loopback server."
                )
            return original(sock, address)

        return connect

    with (
        mock.patch.object(socket.socket, "connect", guarded(socket.socket.connect)),
        mock.patch.object(socket.socket, "connect_ex", guarded(socket.socket.connect_ex)),
        mock.patch.object(socket, "getaddrinfo", guarded_getaddrinfo),
    ):
        yield
