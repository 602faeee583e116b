"""
Verifying TLS client contexts, built once and lent to one fetch at a time.

Building a context loads the whole CA bundle, which costs tens of milliseconds, so a fresh one per page would
dominate the cost of reading it. A fetch still opens its own connection to the checked address (no connection is
reused across fetches or hosts); only the context, which holds no per-connection state, is kept. Each context is
lent to one fetch at a time, because the HTTP stack sets its ALPN protocols on every connect.

The contexts are built by httpx, with its defaults: certificate and host name checks on, the ``certifi`` bundle, or
the bundle named by ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when one of them was set before the first https fetch.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

__all__ = ["lend_context"]

_MAX_IDLE = 32
_lock = threading.Lock()
_idle: list[ssl.SSLContext] = []


@contextmanager
def lend_context() -> Iterator[ssl.SSLContext]:
    """
    Borrow a verifying TLS client context for the length of one fetch.

    :returns: A context manager yielding an ``ssl.SSLContext`` that no other fetch uses until it is given back.
    """
    with _lock:
        context = _idle.pop() if _idle else None
    if context is None:
        context = httpx.create_ssl_context()
    try:
        yield context
    finally:
        with _lock:
            if len(_idle) < _MAX_IDLE:
                _idle.append(context)
