"""``web_search``: the library's own search tool over tavily-python (imported when the first search runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from haystack import logging
from haystack.utils import Secret, deserialize_secrets_inplace

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError, MissingCredentialsError, SearchError, ToolArgumentsError
from haystack_deep_research.events import SearchDone
from haystack_deep_research.evidence import clean_text
from haystack_deep_research.prompts import (
    QUERY_MISSING,
    QUERY_PARAMETER,
    SEARCH_RESULTS,
    WEB_SEARCH,
    WEB_SEARCH_DESCRIPTION,
    fence,
    render_text,
)
from haystack_deep_research.run import Phase, RunView, blocking
from haystack_deep_research.state import PHASE_RESEARCH
from haystack_deep_research.tools.base import ResearchTool

if TYPE_CHECKING:
    import requests

__all__ = ["SearchClient", "WebSearchTool"]

logger = logging.getLogger(__name__)

_RETRY_STATUSES = (429, 500, 502, 503, 504)
_MAX_RETRY_AFTER_S = 10.0


class SearchClient(Protocol):
    """What ``WebSearchTool`` needs from a client: tavily-python's ``TavilyClient.search`` signature subset."""

    def search(self, query: str, *, max_results: int, search_depth: str) -> dict[str, Any]:
        """Search and return a Tavily-shaped response with a ``results`` list."""
        ...


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


class WebSearchTool(ResearchTool):
    """
    Search the web with Tavily and return title, exact URL and snippet of each result, fenced as untrusted data.

    Every result is recorded in the run's evidence ledger. 429 and 5xx answers are retried with exponential backoff,
    honouring ``Retry-After`` (capped at 10 s).

    :param api_key: The Tavily API key; read from ``TAVILY_API_KEY`` by default, only when the first search runs.
    :param api_base_url: Override the API address (tests and simulators point it at a loopback server).
    :param max_results: Results per search, 1 to 20.
    :param search_depth: Tavily's ``search_depth``: "basic", "advanced", "fast" or "ultra-fast".
    :param max_retries: Retries of a 429 or 5xx answer, 0 to 10.
    :param client: An object with Tavily's ``search`` method, used instead of building a ``TavilyClient``.
        An injected client is not serialized.
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
        self.api_key = api_key
        self.api_base_url = api_base_url
        self.max_results = _checks.int_in_range("max_results", max_results, 1, 20)
        if search_depth not in ("basic", "advanced", "fast", "ultra-fast"):
            raise ConfigurationError(
                f"search_depth must be 'basic', 'advanced', 'fast' or 'ultra-fast'; got {search_depth!r}."
            )
        self.search_depth = search_depth
        self.max_retries = _checks.int_in_range("max_retries", max_retries, 0, 10)
        self._client = client
        super().__init__(
            name=WEB_SEARCH,
            description=render_text(WEB_SEARCH_DESCRIPTION, max_results=self.max_results),
            parameters={
                "type": "object",
                "properties": {"query": {"type": "string", "description": QUERY_PARAMETER}},
                "required": ["query"],
            },
        )

    def _get_client(self) -> SearchClient:
        if self._client is None:
            from tavily import TavilyClient

            key = self.api_key.resolve_value()
            if not key:
                raise MissingCredentialsError(
                    "web_search needs a Tavily API key: set the TAVILY_API_KEY environment variable "
                    "or pass api_key=Secret.from_token(...) to WebSearchTool."
                )
            self._client = TavilyClient(
                api_key=key, api_base_url=self.api_base_url, session=_retrying_session(self.max_retries)
            )
        return self._client

    def _search(self, query: str) -> list[dict[str, str]]:
        import requests
        from tavily.errors import BadRequestError, ForbiddenError, InvalidAPIKeyError, UsageLimitExceededError

        client = self._get_client()
        try:
            response = client.search(query, max_results=self.max_results, search_depth=self.search_depth)
        except (UsageLimitExceededError, ForbiddenError, InvalidAPIKeyError, BadRequestError) as error:
            raise SearchError(f"the search service refused the request ({type(error).__name__}: {error}).") from error
        except (requests.RequestException, ValueError) as error:
            raise SearchError(f"the search service could not be reached or answered garbage ({error}).") from error
        return _parse_results(response, limit=self.max_results)

    def phase(self, view: RunView | None, query: Any = None, **_: Any) -> Phase[str]:
        """
        Search, record the results in the run's ledger, and render them fenced.

        :param view: The researcher's view of the run, or ``None``.
        :param query: The model's query.
        :returns: The phase; it returns the rendered results.
        :raises ToolArgumentsError: (from the phase) If the query is missing or blank.
        :raises SearchError: (from the phase) If the service failed or answered garbage.
        """
        if not isinstance(query, str) or not query.strip():
            raise ToolArgumentsError(render_text(QUERY_MISSING, got=repr(query)))
        text = query.strip()
        [searched] = yield [blocking(self._search, text)]
        if searched.error is not None:
            raise searched.error
        results = [{key: clean_text(value) for key, value in result.items()} for result in searched.value]
        if view is not None:
            for result in results:
                view.ledger.record_search_result(url=result["url"], title=result["title"], snippet=result["snippet"])
            view.emit(SearchDone(phase=PHASE_RESEARCH, query=text, results=len(results)))
        fenced = [{key: fence(value) for key, value in result.items()} for result in results]
        return render_text(SEARCH_RESULTS, query=fence(text), results=fenced)

    def to_dict(self) -> dict[str, Any]:
        """
        Serialize the tool; an injected client is left out.

        :returns: The serialized tool.
        """
        if self._client is not None and type(self._client).__module__.split(".")[0] != "tavily":
            logger.warning("WebSearchTool: the injected search client is not serialized.")
        return self._serialized(
            {
                "api_key": self.api_key.to_dict(),
                "api_base_url": self.api_base_url,
                "max_results": self.max_results,
                "search_depth": self.search_depth,
                "max_retries": self.max_retries,
            }
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WebSearchTool:
        """
        Deserialize the tool.

        :param data: What ``to_dict`` returned.
        :returns: The tool.
        """
        params = dict(data["data"])
        deserialize_secrets_inplace(params, keys=["api_key"])
        return cls(**params)


def _parse_results(response: Any, *, limit: int) -> list[dict[str, str]]:
    """Validate a Tavily-shaped response and keep title, url and snippet of each usable result."""
    if not isinstance(response, dict) or not isinstance(response.get("results"), list):
        raise SearchError("the search service answered without a result list.")
    results: list[dict[str, str]] = []
    for item in response["results"]:
        if not isinstance(item, dict) or not isinstance(item.get("url"), str) or not item["url"].strip():
            continue
        results.append(
            {
                "title": str(item.get("title") or "").strip(),
                "url": item["url"].strip(),
                "snippet": str(item.get("content") or "").strip(),
            }
        )
    return results[:limit]
