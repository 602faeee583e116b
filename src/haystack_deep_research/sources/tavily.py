"""
Tavily as a search backend (:class:`TavilySearch`, over tavily-python, imported when the first search runs), and
``WebSearchTool``: the library's Tavily ``web_search`` tool, which is :class:`~.search.SearchTool` over that backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Self

from haystack import logging
from haystack.core.serialization import default_to_dict
from haystack.utils import Secret, deserialize_secrets_inplace

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError, MissingCredentialsError, SearchError
from haystack_deep_research.run._cache import CacheStore
from haystack_deep_research.sources.search import SearchScope, SearchTool

if TYPE_CHECKING:
    import requests

__all__ = ["SearchClient", "TavilySearch", "WebSearchTool"]

logger = logging.getLogger(__name__)

_RETRY_STATUSES = (429, 500, 502, 503, 504)
_MAX_RETRY_AFTER_S = 10.0
_DEPTHS = ("basic", "advanced", "fast", "ultra-fast")


class SearchClient(Protocol):
    """What :class:`TavilySearch` needs from a client: ``TavilyClient.search``, a response with a ``results`` list."""

    def search(self, query: str, *, max_results: int, search_depth: str, **scope: Any) -> dict[str, Any]: ...


def _retrying_session(max_retries: int) -> requests.Session:
    """A requests session retrying 429 and 5xx answers, honouring ``Retry-After`` up to 10 seconds."""
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    class CappedRetry(Retry):
        def parse_retry_after(self, retry_after: str) -> float:
            return min(super().parse_retry_after(retry_after), _MAX_RETRY_AFTER_S)

    retry = CappedRetry(
        total=max_retries,
        status_forcelist=_RETRY_STATUSES,
        allowed_methods=frozenset({"POST"}),
        backoff_factor=0.5,
        respect_retry_after_header=True,
        raise_on_status=False,
    )
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


class TavilySearch:
    """
    Tavily's search API as a search backend. 429 and 5xx answers are retried with exponential backoff, honouring
    ``Retry-After`` (capped at 10 s).

    :param api_key: The Tavily API key; read from ``TAVILY_API_KEY`` by default, only when the first search runs.
    :param api_base_url: Override the API address (tests and simulators point it at a loopback server); a server of
        your own needs no key: without one it is sent the placeholder ``"unset"``.
    :param search_depth: Tavily's ``search_depth``: "basic", "advanced", "fast" or "ultra-fast".
    :param max_retries: Retries of a 429 or 5xx answer, 0 to 10.
    :param client: An object with Tavily's ``search`` method, used instead of building a ``TavilyClient``.
        An injected client is not serialized.
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(
        self,
        *,
        api_key: Secret = Secret.from_env_var("TAVILY_API_KEY", strict=False),
        api_base_url: str | None = None,
        search_depth: str = "basic",
        max_retries: int = 3,
        client: SearchClient | None = None,
    ) -> None:
        if not isinstance(api_key, Secret):
            raise ConfigurationError(
                "api_key must be a haystack Secret, for example Secret.from_env_var('TAVILY_API_KEY') or "
                f"Secret.from_token('...'); got {type(api_key).__name__}."
            )
        if api_base_url is not None and (not isinstance(api_base_url, str) or not api_base_url.startswith("http")):
            raise ConfigurationError(f"api_base_url must be an http(s) URL or None; got {api_base_url!r}.")
        if client is not None and not callable(getattr(client, "search", None)):
            raise ConfigurationError(
                "client must have Tavily's search(query, max_results=..., search_depth=...) method; "
                f"{type(client).__name__} has none."
            )
        if search_depth not in _DEPTHS:
            raise ConfigurationError(
                f"search_depth must be 'basic', 'advanced', 'fast' or 'ultra-fast'; got {search_depth!r}."
            )
        self.api_key = api_key
        self.api_base_url = api_base_url
        self.search_depth = search_depth
        self.max_retries = _checks.int_in_range("max_retries", max_retries, 0, 10)
        self._client = client

    def _get_client(self) -> SearchClient:
        if self._client is None:
            from tavily import TavilyClient

            key = self.api_key.resolve_value()
            if not key and self.api_base_url is None:
                raise MissingCredentialsError(
                    "web_search needs a Tavily API key: set the TAVILY_API_KEY environment variable "
                    "or pass api_key=Secret.from_token(...) to WebSearchTool."
                )
            # A server of your own (api_base_url) may want no key: it is sent a placeholder, never another secret.
            self._client = TavilyClient(
                api_key=key or "unset", api_base_url=self.api_base_url, session=_retrying_session(self.max_retries)
            )
        return self._client

    def search(self, query: str, *, max_results: int, scope: SearchScope | None = None) -> dict[str, Any]:
        """
        :param query: The query.
        :param max_results: The most results wanted.
        :param scope: Domains and a recency window, sent as Tavily's own parameters.
        :returns: Tavily's response (a ``results`` list).
        :raises MissingCredentialsError: If no API key is set.
        :raises SearchError: If the service refused the request, could not be reached or answered garbage.
        """
        import requests
        from tavily.errors import BadRequestError, ForbiddenError, InvalidAPIKeyError, UsageLimitExceededError

        client = self._get_client()
        options = scope.arguments(lambda name: name != "since") if scope else {}
        try:
            return client.search(query, max_results=max_results, search_depth=self.search_depth, **options)
        except (UsageLimitExceededError, ForbiddenError, InvalidAPIKeyError, BadRequestError) as error:
            raise SearchError(f"the search service refused the request ({type(error).__name__}: {error}).") from error
        except (requests.RequestException, ValueError) as error:
            raise SearchError(f"the search service could not be reached or answered garbage ({error}).") from error

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized backend; an injected client is left out."""
        if self._client is not None and type(self._client).__module__.split(".")[0] != "tavily":
            logger.warning("TavilySearch: the injected search client is not serialized.")
        return default_to_dict(
            self,
            api_key=self.api_key.to_dict(),
            api_base_url=self.api_base_url,
            search_depth=self.search_depth,
            max_retries=self.max_retries,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TavilySearch:
        """Rebuild the backend from what ``to_dict`` returned."""
        params = dict(data["init_parameters"])
        deserialize_secrets_inplace(params, keys=["api_key"])
        return cls(**params)


class WebSearchTool(SearchTool):
    """
    The library's Tavily ``web_search``: :class:`~.search.SearchTool` over :class:`TavilySearch`.

    :param api_key: The Tavily API key; read from ``TAVILY_API_KEY`` by default, only when the first search runs.
    :param api_base_url: Override the API address (tests and simulators point it at a loopback server).
    :param max_results: Results per search, 1 to 20.
    :param search_depth: Tavily's ``search_depth``: "basic", "advanced", "fast" or "ultra-fast".
    :param max_retries: Retries of a 429 or 5xx answer, 0 to 10.
    :param client: An object with Tavily's ``search`` method, used instead of building a ``TavilyClient``.
        An injected client is not serialized.
    :param notice: Said once per run as a warning, the first time the tool searches; ``""`` for none.
    :param cache: A cross-run cache of search results (for example ``ResearchCache(directory=...)``), or ``None``.
    :param scope: The domains and recency window searches keep to (:class:`~.search.SearchScope`), or ``None``.
    :raises ConfigurationError: If a parameter is out of range.
    """

    def __init__(
        self,
        *,
        api_key: Secret = Secret.from_env_var("TAVILY_API_KEY", strict=False),
        api_base_url: str | None = None,
        max_results: int = 10,
        search_depth: str = "basic",
        max_retries: int = 3,
        client: SearchClient | None = None,
        notice: str = "",
        cache: CacheStore | None = None,
        scope: SearchScope | None = None,
    ) -> None:
        backend = TavilySearch(
            api_key=api_key,
            api_base_url=api_base_url,
            search_depth=search_depth,
            max_retries=max_retries,
            client=client,
        )
        super().__init__(backend=backend, max_results=max_results, notice=notice, cache=cache, scope=scope)
        self.tavily = backend

    def _backend_parameters(self) -> dict[str, Any]:
        return dict(self.tavily.to_dict()["init_parameters"])  # an injected client is left out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Rebuild the tool from what ``to_dict`` returned."""
        params = dict(data["data"])
        deserialize_secrets_inplace(params, keys=["api_key"])
        return super().from_dict({**data, "data": params})
