"""
Verifying TLS client contexts, built once and lent to one fetch at a time.

Building a context loads the whole CA bundle, which costs tens of milliseconds, so a fresh one per page would
dominate the cost of reading it. A fetch still opens its own connection to the checked address (no connection is
reused across fetches or hosts); only the context, which holds no per-connection state, is kept. Each context is
lent to one fetch at a time, because the HTTP stack sets its ALPN protocols on every connect.

The contexts are built by httpx, with its defaults: certificate and host name checks on, the ``certifi`` bundle, or
the bundle named by ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when one of them was set before the first https fetch.
:func:`prepare_contexts` builds some in the background ahead of the first fetches (``read_url`` asks for them when it
warms up, so a run's first pages, read side by side, do not each wait for a context while the run's first model calls
are still running).
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

__all__ = ["lend_context", "prepare_contexts"]

_MAX_IDLE = 32
_lock = threading.Lock()
_idle: list[ssl.SSLContext] = []
_preparing: list[threading.Thread] = []


def prepare_contexts(count: int) -> None:
    """
    Have ``count`` idle contexts ready (at most the pool's size), built in a background thread; returns at once.
    Only the first call in a process builds any: later ones find the contexts the run's fetches give back.
    """
    wanted = min(count, _MAX_IDLE)
    with _lock:
        if _preparing:
            return
        thread = threading.Thread(target=_build, args=(wanted,), name="hdr-tls-contexts", daemon=True)
        _preparing[:] = [thread]
    thread.start()


def _build(wanted: int) -> None:
    while True:
        with _lock:
            if len(_idle) >= wanted:
                return
        context = httpx.create_ssl_context()
        with _lock:
            _idle.append(context)


@contextmanager
def lend_context() -> Iterator[ssl.SSLContext]:
    """Borrow a verifying TLS client context that no other fetch uses until it is given back, for one fetch."""
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
