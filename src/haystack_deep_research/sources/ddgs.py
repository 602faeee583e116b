"""
A keyless web search backend: :class:`DdgsSearch`, over the ``ddgs`` metasearch package, imported when the first
search runs. Chosen over the ``ddgs-haystack`` component because that one takes no timeout; its client is injectable.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Protocol

from haystack import logging
from haystack.core.serialization import default_from_dict, default_to_dict

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError, SearchError
from haystack_deep_research.sources.search import SearchScope
from haystack_deep_research.web.url_policy import TIME_RANGES

__all__ = ["DdgsClient", "DdgsSearch"]

logger = logging.getLogger(__name__)

_SAFESEARCH = ("on", "moderate", "off")
_TIMELIMITS = {"day": "d", "week": "w", "month": "m", "year": "y"}


class DdgsClient(Protocol):
    """What :class:`DdgsSearch` needs from a client: ``ddgs.DDGS.text``, results with ``title``, ``href``, ``body``."""

    def text(self, query: str, **options: Any) -> list[dict[str, Any]]: ...


class DdgsSearch:
    """
    Keyless web search through ``ddgs``: results come back with ``title``, ``href`` and ``body``.

    :param timeout: Seconds one search may take, 1 to 60.
    :param region: The ddgs region, for example "us-en" or "wt-wt" (no region).
    :param safesearch: "on", "moderate" or "off".
    :param backend: Which engines ddgs asks: "auto" (its default mix) or a comma-separated list such as
        "duckduckgo,brave".
    :param client: An object with ``DDGS.text``'s signature, used instead of building a ``DDGS`` (tests inject one);
        it is not serialized.
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(
        self,
        *,
        timeout: int = 5,
        region: str = "us-en",
        safesearch: str = "moderate",
        backend: str = "auto",
        client: DdgsClient | None = None,
    ) -> None:
        self.timeout = _checks.int_in_range("timeout", timeout, 1, 60)
        for name, value in (("region", region), ("backend", backend)):
            if not isinstance(value, str) or not value.strip():
                raise ConfigurationError(f"{name} must be a non-empty string; got {value!r}.")
        if safesearch not in _SAFESEARCH:
            raise ConfigurationError(f"safesearch must be 'on', 'moderate' or 'off'; got {safesearch!r}.")
        if client is not None and not callable(getattr(client, "text", None)):
            raise ConfigurationError(
                f"client must have ddgs' text(query, max_results=...) method; {type(client).__name__} has none."
            )
        self.region = region
        self.safesearch = safesearch
        self.backend = backend
        self._client = client

    def _get_client(self) -> DdgsClient:
        if self._client is None:
            from ddgs import DDGS

            self._client = DDGS(timeout=self.timeout)
        return self._client

    def search(self, query: str, *, max_results: int, scope: SearchScope | None = None) -> list[dict[str, Any]]:
        """
        :param query: The query.
        :param max_results: The most results wanted.
        :param scope: Domains, as ``site:`` and ``-site:`` operators in the query, and a recency window, as ddgs'
            ``timelimit`` (the smallest of day, week, month, year that covers it).
        :returns: ddgs' results.
        :raises SearchError: If ddgs failed (offline, rate-limited, timed out).
        """
        from ddgs.exceptions import DDGSException

        client = self._get_client()
        options: dict[str, Any] = {}
        if scope:
            sites = " OR ".join(f"site:{domain}" for domain in scope.include_domains)
            excluded = [f"-site:{domain}" for domain in scope.exclude_domains]
            query = " ".join([query, *([f"({sites})"] if sites else []), *excluded])
            start = scope.start()
            if start is not None:
                days = (date.today() - start).days
                word = next((name for name, limit in TIME_RANGES.items() if days <= limit), "year")
                options["timelimit"] = _TIMELIMITS[word]
        try:
            return client.text(
                query,
                region=self.region,
                safesearch=self.safesearch,
                backend=self.backend,
                max_results=max_results,
                **options,
            )
        except DDGSException as error:
            raise SearchError(f"the keyless search (ddgs) failed: {type(error).__name__}: {error}.") from error

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized backend; an injected client is left out."""
        if self._client is not None and type(self._client).__module__.split(".")[0] != "ddgs":
            logger.warning("DdgsSearch: the injected client is not serialized.")
        return default_to_dict(
            self, timeout=self.timeout, region=self.region, safesearch=self.safesearch, backend=self.backend
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DdgsSearch:
        """Rebuild the backend from what ``to_dict`` returned."""
        return default_from_dict(cls, data)
