"""
A Tavily-compatible search API on ``127.0.0.1`` for tests, answering from a fixed corpus.

Point the real client at it and it works unchanged::

    docs = [SearchDocument(url="https://example.org/paris", title="Paris", content="Paris is the capital of France.")]
    with LoopbackSearchServer(docs, require_api_key="test-key") as search:
        client = TavilyClient(api_key="test-key", api_base_url=search.base_url)
        client.search("capital of France", max_results=3)["results"]

The server answers ``POST /search`` with the JSON shape of the real API (``query``, ``answer``, ``images``,
``results`` with ``title``, ``url``, ``content``, ``score``, ``raw_content``, ``response_time``, ``request_id``) and
errors as ``{"detail": {"error": "..."}}`` with the status codes the client maps to its exceptions (400, 401, 429).
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.testing._server import LoopbackServer, RequestHandler, check_headers

__all__ = ["LoopbackSearchServer", "SearchDocument"]

DEFAULT_MAX_RESULTS = 5
MAX_RESULTS_LIMIT = 20
SNIPPET_CHARS = 300
GARBAGE_BODY = b"<html><body>upstream hiccup: this is not JSON</body></html>"
_JSON = "application/json"
_WORD = re.compile(r"\w+")
# Words too common to say anything about relevance; a query made only of these still matches on them.
# fmt: off
_STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "in", "is", "it", "of", "on",
    "or", "that", "the", "this", "to", "was", "what", "when", "where", "which", "who", "why", "with",
})
# fmt: on


@dataclass(frozen=True)
class SearchDocument:
    """
    One document in the search server's corpus.

    :param url: The result URL, ``http://`` or ``https://``; often a page on a :class:`LoopbackWebServer`.
    :param title: The result title.
    :param content: The document text; results carry its first 300 characters as the snippet.
    :raises ConfigurationError: If ``url`` is not an http(s) URL or a field is not a string.
    """

    url: str
    title: str
    content: str

    def __post_init__(self) -> None:
        for name in ("url", "title", "content"):
            if not isinstance(getattr(self, name), str):
                raise ConfigurationError(
                    f"SearchDocument.{name} must be a str, got {type(getattr(self, name)).__name__}."
                )
        parts = urlsplit(self.url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ConfigurationError(f"SearchDocument.url must be an absolute http(s) URL, got {self.url!r}.")


@dataclass(frozen=True)
class _Fault:
    status: int
    body: bytes
    content_type: str
    headers: Mapping[str, str]


class LoopbackSearchServer(LoopbackServer):
    """
    A Tavily-compatible ``/search`` endpoint on ``127.0.0.1`` with an ephemeral port.

    Ranking is deterministic: a document's score is the share of the query's words (lower-cased, common words like
    "the" dropped) found in its title and content; documents scoring 0 are left out, ties keep insertion order, and
    at most ``max_results`` (default 5, at most 20) come back. ``include_domains`` and ``exclude_domains`` filter by
    host name (a domain also matches its subdomains); every other search option is accepted and ignored.

    :param documents: The starting corpus.
    :param require_api_key: If set, requests must carry ``Authorization: Bearer <key>`` (or ``"api_key"`` in the
        JSON body) or get 401; if ``None``, any key or none is accepted.
    :raises ConfigurationError: If a document is not a :class:`SearchDocument` or the key is empty.
    """

    def __init__(self, documents: Sequence[SearchDocument] = (), *, require_api_key: str | None = None) -> None:
        super().__init__()
        if require_api_key is not None and (not isinstance(require_api_key, str) or not require_api_key.strip()):
            raise ConfigurationError("require_api_key must be a non-empty string, or None to accept any key.")
        self._required_key = require_api_key
        self._documents: list[SearchDocument] = []
        self._faults: deque[_Fault] = deque()
        self._state_lock = threading.Lock()
        self._served = 0
        for document in documents:
            self.add_document(document)

    @property
    def documents(self) -> tuple[SearchDocument, ...]:
        """A snapshot of the corpus, in insertion order."""
        with self._state_lock:
            return tuple(self._documents)

    def add_document(self, doc: SearchDocument) -> None:
        """
        Add a document to the corpus; it ranks after earlier documents with the same score.

        :param doc: The document.
        :raises ConfigurationError: If ``doc`` is not a :class:`SearchDocument`.
        """
        if not isinstance(doc, SearchDocument):
            raise ConfigurationError(f"documents must be SearchDocument instances, got {type(doc).__name__}.")
        _document_words(doc.title, doc.content)  # scanned now, not while a search waits
        with self._state_lock:
            self._documents.append(doc)

    def fail_next(
        self,
        status: int,
        *,
        count: int = 1,
        body: str | None = None,
        headers: Mapping[str, str] | None = None,
        garbage: bool = False,
    ) -> None:
        """
        Answer the next ``count`` requests, whatever they ask, with a fault instead of results.

        Faults queue up: calling this twice answers the first call's faults first.

        :param status: The status code, 100 to 599; ``fail_next(429, headers={"Retry-After": "1"})`` simulates rate
            limiting, ``fail_next(200, garbage=True)`` a success whose body is not JSON.
        :param count: How many requests get this fault, 1 or more.
        :param body: The exact body to send (as UTF-8 text); by default the API's error shape,
            ``{"detail": {"error": "..."}}``.
        :param headers: Extra response headers.
        :param garbage: Send an HTML body that is not JSON instead of the default body.
        :raises ConfigurationError: If an argument is out of range, or both ``body`` and ``garbage`` are given.
        """
        _checks.int_in_range("status", status, 100, 599)
        _checks.int_in_range("count", count, 1)
        if body is not None and garbage:
            raise ConfigurationError("pass either body or garbage=True, not both.")
        extra = check_headers(headers)
        if garbage:
            fault = _Fault(status, GARBAGE_BODY, "text/html; charset=utf-8", extra)
        elif body is not None:
            fault = _Fault(status, body.encode("utf-8"), "text/plain; charset=utf-8", extra)
        else:
            phrase = next((known.phrase for known in HTTPStatus if known == status), "Error")
            fault = _Fault(status, _error_json(f"Simulated failure: {status} {phrase}."), _JSON, extra)
        with self._state_lock:
            self._faults.extend([fault] * count)

    def _handle(self, handler: RequestHandler) -> None:
        started = time.monotonic()
        handler.read_json()
        with self._state_lock:
            fault = self._faults.popleft() if self._faults else None
        if fault is not None:
            handler.send_bytes(fault.status, fault.body, content_type=fault.content_type, headers=fault.headers)
            return
        if urlsplit(handler.path).path.rstrip("/") != "/search":
            _send_error(handler, 404, f"No endpoint at {handler.path}; this server answers POST /search.")
        elif handler.command != "POST":
            _send_error(handler, 405, "Use POST for /search.", headers={"Allow": "POST"})
        elif not self._authorised(handler):
            _send_error(handler, 401, "Unauthorized: missing or invalid API key.")
        else:
            self._search(handler, handler.json_body, started)

    def _authorised(self, handler: RequestHandler) -> bool:
        if self._required_key is None:
            return True
        if handler.headers.get("Authorization", "") == f"Bearer {self._required_key}":
            return True
        body = handler.json_body
        return isinstance(body, dict) and body.get("api_key") == self._required_key

    def _search(self, handler: RequestHandler, body: Any, started: float) -> None:
        if not isinstance(body, dict):
            _send_error(handler, 400, "The request body must be a JSON object.")
            return
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            _send_error(handler, 400, "query must be a non-empty string.")
            return
        max_results = DEFAULT_MAX_RESULTS if body.get("max_results") is None else body["max_results"]
        if (
            isinstance(max_results, bool)
            or not isinstance(max_results, int)
            or not 0 <= max_results <= MAX_RESULTS_LIMIT
        ):
            _send_error(handler, 400, f"max_results must be an integer from 0 to {MAX_RESULTS_LIMIT}.")
            return
        include = _domains(body.get("include_domains"))
        exclude = _domains(body.get("exclude_domains"))
        if include is None or exclude is None:
            _send_error(handler, 400, "include_domains and exclude_domains must be lists of strings.")
            return
        with self._state_lock:
            documents = list(self._documents)
            self._served += 1
            request_id = f"loopback-{self._served:06d}"
        candidates = [d for d in documents if _domain_allowed(d.url, include, exclude)]
        raw_content = bool(body.get("include_raw_content"))
        results = [
            {
                "url": doc.url,
                "title": doc.title,
                "content": _snippet(doc.content),
                "score": score,
                "raw_content": doc.content if raw_content else None,
            }
            for doc, score in rank(query, candidates)[:max_results]
        ]
        response = {
            "query": query,
            "follow_up_questions": None,
            "answer": None,
            "images": [],
            "results": results,
            "response_time": round(time.monotonic() - started, 3),
            "request_id": request_id,
        }
        handler.send_bytes(200, json.dumps(response).encode("utf-8"), content_type=_JSON)


def rank(query: str, documents: Sequence[SearchDocument]) -> list[tuple[SearchDocument, float]]:
    """``(document, score)`` by the share of the query's words in its title and content: best first, none scoring 0."""
    words = _words(query)
    terms = (words - _STOP_WORDS) or words
    if not terms:
        return []
    scored = [(doc, round(len(terms & _document_words(doc.title, doc.content)) / len(terms), 4)) for doc in documents]
    return sorted((pair for pair in scored if pair[1] > 0), key=lambda pair: -pair[1])


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


@functools.lru_cache(maxsize=4096)
def _document_words(title: str, content: str) -> frozenset[str]:
    """A document's words, found once: a page of real size takes milliseconds to scan, and every query scans all."""
    return frozenset(_words(f"{title} {content}"))


def _snippet(content: str) -> str:
    text = " ".join(content.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    cut = text[:SNIPPET_CHARS]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "..."


def _domains(value: Any) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return [v.strip().lower().removeprefix("www.") for v in value if v.strip()]


def _domain_allowed(url: str, include: list[str], exclude: list[str]) -> bool:
    host = (urlsplit(url).hostname or "").removeprefix("www.")

    def matches(domain: str) -> bool:
        return host == domain or host.endswith("." + domain)

    return (not include or any(map(matches, include))) and not any(map(matches, exclude))


def _error_json(message: str) -> bytes:
    return json.dumps({"detail": {"error": message}}).encode("utf-8")


def _send_error(
    handler: RequestHandler, status: int, message: str, *, headers: Mapping[str, str] | None = None
) -> None:
    handler.send_bytes(status, _error_json(message), content_type=_JSON, headers=headers)
