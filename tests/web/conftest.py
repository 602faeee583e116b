"""Fixtures for the web layer tests: the testing kit's loopback web server, a policy that may reach it, quick limits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from haystack_deep_research.testing import LoopbackWebServer
from haystack_deep_research.web import FetchLimits, UrlPolicy


@pytest.fixture
def web() -> Iterator[LoopbackWebServer]:
    """A loopback web server with no routes; each test adds its own."""
    with LoopbackWebServer() as server:
        yield server


@pytest.fixture
def loopback_policy() -> UrlPolicy:
    """A policy that lets the tests reach their own server on 127.0.0.1."""
    return UrlPolicy(allow_hosts=("127.0.0.1",))


@pytest.fixture
def quick_limits() -> FetchLimits:
    """Limits small enough that a failing test never waits long."""
    return FetchLimits(connect_timeout=2.0, read_timeout=2.0, total_timeout=5.0)
