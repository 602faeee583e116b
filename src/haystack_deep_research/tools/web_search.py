"""``web_search``: the library's own search tool over tavily-python."""

from __future__ import annotations

import logging
from typing import Any, Protocol

import requests
from haystack.utils import Secret, deserialize_secrets_inplace
from requests.adapters import HTTPAdapter
from tavily import TavilyClient
from tavily.errors import BadRequestError, ForbiddenError, InvalidAPIKeyError, UsageLimitExceededError
from urllib3.util.retry import Retry

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError, MissingCredentialsError, SearchError, ToolArgumentsError
from haystack_deep_research.prompts import SEARCH_RESULTS, fence, render_text
from haystack_deep_research.state import HOOK_CONTEXT, run_from_context
from haystack_deep_research.tools.base import ResearchTool

logger = logging.getLogger(__name__)

WEB_SEARCH_TOOL_NAME = "web_search"
_RETRY_STATUSES = (429, 500, 502, 503, 504)
_TAVILY_ERRORS = (UsageLimitExceededError, ForbiddenError, InvalidAPIKeyError, BadRequestError)


class SearchClient(Protocol):
    """What ``WebSearchTool`` needs from a client: tavily-python's ``TavilyClient.search`` signature subset."""

    def search(self, query: str, *, max_results: int, search_depth: str) -> dict[str, Any]:
        """Search and return a Tavily-shaped response with a ``results`` list."""
        ...


class _CappedRetry(Retry):
    """urllib3 retries that honour ``Retry-After`` but never wait longer than ``max_retry_after`` seconds."""

    max_retry_after = 10.0

    def parse_retry_after(self, retry_after: str) -> float:
        return min(super().parse_retry_after(retry_after), self.max_retry_after)


def _retrying_session(max_retries: int) -> requests.Session:
    retry = _CappedRetry(
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
            name=WEB_SEARCH_TOOL_NAME,
            description=(
                f"Search the web: up to {self.max_results} results, each with title, exact URL and snippet. "
                "Snippets are not enough to cite: read the pages with read_url."
            ),
            parameters={
                "type": "object",
                "properties": {"query": {"type": "string", "description": "A focused search query."}},
                "required": ["query"],
            },
            function=self._search,
            inputs_from_state={HOOK_CONTEXT: HOOK_CONTEXT},
        )

    def _get_client(self) -> SearchClient:
        if self._client is None:
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

    def _search(self, query: Any = None, hook_context: dict[str, Any] | None = None) -> str:
        if not isinstance(query, str) or not query.strip():
            raise ToolArgumentsError(f"web_search needs a non-empty string argument 'query'; got {query!r}.")
        client = self._get_client()
        try:
            response = client.search(query.strip(), max_results=self.max_results, search_depth=self.search_depth)
        except _TAVILY_ERRORS as error:
            raise SearchError(f"the search service refused the request ({type(error).__name__}: {error}).") from error
        except (requests.RequestException, ValueError) as error:
            raise SearchError(f"the search service could not be reached or answered garbage ({error}).") from error
        results = _parse_results(response, limit=self.max_results)
        run = run_from_context(hook_context)
        if run is not None:
            for result in results:
                run.ledger.record_search_result(url=result["url"], title=result["title"], snippet=result["snippet"])
        fenced = [{key: fence(value) for key, value in result.items()} for result in results]
        return render_text(SEARCH_RESULTS, query=fence(query.strip()), results=fenced)

    def to_dict(self) -> dict[str, Any]:
        """
        Serialize the tool; an injected client is left out.

        :returns: The serialized tool.
        """
        if self._client is not None and not isinstance(self._client, TavilyClient):
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
