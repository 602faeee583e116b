"""The grouped settings' value objects: :class:`Budgets` with the :class:`Price` of each model (and the default
models' table), :class:`Grounding`, :class:`Sources`, and the checks of their limits (see the package docstring)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from haystack_deep_research import _checks
from haystack_deep_research._serialization import FieldsSerialized
from haystack_deep_research.errors import ConfigurationError

if TYPE_CHECKING:
    from datetime import date

    from haystack_deep_research.web import FetchLimits, SearchScope, UrlPolicy

__all__ = [
    "DEFAULT_PASSAGE_BUDGET",
    "DEFAULT_PRICES",
    "MAX_COST_BUDGET",
    "MAX_TIME_BUDGET_S",
    "MAX_TOKEN_BUDGET",
    "PRICES_AS_OF",
    "WEB_FIELDS",
    "Budgets",
    "Grounding",
    "Price",
    "Sources",
    "checked_limits",
    "given_fields",
    "merge_prices",
    "passage_budget_value",
    "price_of",
    "refuse_fields",
]

DEFAULT_PASSAGE_BUDGET = 2_500
"""Characters of a page's most relevant passages the summarizer reads, by default (chosen from the curve of facts
kept against summarizer input in docs/benchmarks.md)."""

DEFAULT_SUMMARIZE_OVER = 3_000
"""Characters of a page's kept passages up to which the researcher reads them as they are, with no summarizer call:
a summary of so short an excerpt costs a model call and its wait on the researcher's path, and saves the researcher
fewer tokens than it costs (measured in docs/benchmarks.md)."""

MAX_TOKEN_BUDGET = 1_000_000_000
MAX_TIME_BUDGET_S = 7 * 24 * 3600.0
MAX_COST_BUDGET = 1_000_000.0


def checked_limits(
    tokens: Any, seconds: Any, dollars: Any, *, names: tuple[str, str, str]
) -> tuple[int | None, float | None, float | None]:
    """The limits, checked (tokens 1 to 1,000,000,000, seconds up to 7 days, dollars up to 1,000,000), as numbers."""
    if tokens is not None:
        _checks.int_in_range(names[0], tokens, 1, MAX_TOKEN_BUDGET)
    if seconds is not None:
        seconds = _checks.number_in_range(names[1], seconds, 0, MAX_TIME_BUDGET_S)
    if dollars is not None:
        dollars = _checks.number_in_range(names[2], dollars, 0, MAX_COST_BUDGET)
    return tokens, seconds, dollars


def _given(kind: type[Any], value: Any, name: str, example: str) -> Any:
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise ConfigurationError(f"{name} must be a {kind.__name__}, for example {example}; got {value!r}.")
    return value


def passage_budget_value(value: Any) -> int:
    """A ``passage_budget``, checked: 0 (the whole page) or 500 to 1,000,000 characters."""
    if isinstance(value, int) and not isinstance(value, bool) and (value == 0 or 500 <= value <= 1_000_000):
        return value
    raise ConfigurationError(
        f"passage_budget must be 0 (the whole page) or an integer from 500 to 1000000; got {value!r}."
    )


PRICES_AS_OF = "2026-11-30"
"""The day the prices in :data:`DEFAULT_PRICES` were read from OpenAI's model pages."""

_MAX_PRICE = 10_000.0
_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True, kw_only=True)
class Price(FieldsSerialized):
    """
    The price of one model, in US dollars per million tokens.

    :param input_per_mtok: Input (prompt) tokens, 0 to 10,000.
    :param output_per_mtok: Output tokens, reasoning tokens included, 0 to 10,000.
    :param cached_input_per_mtok: Input tokens served from the provider's prompt cache, 0 to 10,000; ``None`` bills
        them at the input price.
    :raises ConfigurationError: If a price is not a number in range.
    """

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None

    def __post_init__(self) -> None:
        for name in ("input_per_mtok", "output_per_mtok", "cached_input_per_mtok"):
            value = getattr(self, name)
            if value is not None or name != "cached_input_per_mtok":
                checked = _checks.number_in_range(f"Price.{name}", value, 0.0, _MAX_PRICE, include_low=True)
                object.__setattr__(self, name, checked)


DEFAULT_PRICES: Mapping[str, Price] = MappingProxyType(
    {
        "gpt-5.4": Price(input_per_mtok=2.50, output_per_mtok=15.00, cached_input_per_mtok=0.25),
        "gpt-5.4-mini": Price(input_per_mtok=0.75, output_per_mtok=4.50, cached_input_per_mtok=0.075),
        # Test doubles bill nothing: the testing kit's scripted generators and server model, and Haystack's
        # MockChatGenerator.
        "ScriptedChatGenerator": Price(input_per_mtok=0.0, output_per_mtok=0.0),
        "kit": Price(input_per_mtok=0.0, output_per_mtok=0.0),
        "mock-model": Price(input_per_mtok=0.0, output_per_mtok=0.0),
    }
)
"""The prices the library knows, by model name (read on :data:`PRICES_AS_OF`)."""


def merge_prices(prices: Mapping[str, Price] | None) -> dict[str, Price]:
    """The default prices with the caller's (checked: non-empty model names to :class:`Price`) on top."""
    if prices is None:
        return dict(DEFAULT_PRICES)
    if not isinstance(prices, Mapping):
        raise ConfigurationError(
            f"prices must be a dict of model name to Price, for example {{'my-model': Price(input_per_mtok=1.0, "
            f"output_per_mtok=2.0)}}; got {type(prices).__name__}."
        )
    for model, price in prices.items():
        if not isinstance(model, str) or not model.strip() or not isinstance(price, Price):
            raise ConfigurationError(
                f"prices must map model names to Price(input_per_mtok=..., output_per_mtok=...); got {model!r}: "
                f"{type(price).__name__}."
            )
    return {**DEFAULT_PRICES, **prices}


def price_of(model: str, prices: Mapping[str, Price]) -> Price | None:
    """The model's price, or ``None`` when it is unknown."""
    return prices.get(model) or prices.get(_SNAPSHOT.sub("", model))


@dataclass(frozen=True, kw_only=True)
class Budgets:
    """
    What one run may spend, and what its models cost; docs/settings.md says what a run does when a budget is spent.

    :param tokens: Total tokens one run may spend across all phases, 1 to 1,000,000,000, or ``None``.
    :param seconds: Seconds of wall-clock time one run may take (more than 0, up to 7 days), or ``None``.
    :param dollars: US dollars one run's model calls may cost (more than 0, up to 1,000,000), or ``None``; every
        model's price must then be known.
    :param prices: Prices of models the library has no price for, by model name, for example
        ``{"my-model": Price(input_per_mtok=1.0, output_per_mtok=4.0)}``; a given price replaces a default one. They
        price the run's ``cost`` output whether or not ``dollars`` is set.
    :raises ConfigurationError: If a value is out of range; the message names it.
    """

    tokens: int | None = None
    seconds: float | None = None
    dollars: float | None = None
    prices: Mapping[str, Price] | None = None

    def __post_init__(self) -> None:
        names = ("Budgets(tokens=...)", "Budgets(seconds=...)", "Budgets(dollars=...)")
        _, seconds, dollars = checked_limits(self.tokens, self.seconds, self.dollars, names=names)
        object.__setattr__(self, "seconds", seconds)
        object.__setattr__(self, "dollars", dollars)
        if self.prices is not None:
            if not isinstance(self.prices, Mapping) or not all(
                isinstance(name, str) and isinstance(price, Price) for name, price in self.prices.items()
            ):
                raise ConfigurationError(
                    "Budgets(prices=...) must map model names to Price objects, for example "
                    f"{{'my-model': Price(input_per_mtok=1.0, output_per_mtok=4.0)}}; got {self.prices!r}."
                )
            object.__setattr__(self, "prices", dict(self.prices))

    @classmethod
    def of(cls, value: Any) -> Budgets:
        """A factory's ``budgets``: a :class:`Budgets`, or ``None`` for none; a ConfigurationError for anything else."""
        return _given(cls, value, "budgets", "Budgets(tokens=200_000, seconds=600)")

    def over(self, base: Budgets) -> Budgets:
        """``base`` (a factory's, under a run's own) with every limit set here in its place, these prices on top."""
        prices = {**(base.prices or {}), **(self.prices or {})} or None
        return Budgets(
            tokens=self.tokens if self.tokens is not None else base.tokens,
            seconds=self.seconds if self.seconds is not None else base.seconds,
            dollars=self.dollars if self.dollars is not None else base.dollars,
            prices=prices,
        )

    def check_priced(self, phase_models: Mapping[str, str]) -> None:
        """Refuse ``dollars`` when the price of a model a phase calls (``phase_models``) is unknown."""
        if self.dollars is None:
            return
        prices = merge_prices(self.prices)
        unpriced = list(dict.fromkeys(model for model in phase_models.values() if price_of(model, prices) is None))
        if unpriced:
            raise ConfigurationError(
                f"Budgets(dollars=...) needs the price of every model the run calls; none is known for "
                f"{', '.join(unpriced)}. Pass Budgets(prices={{{unpriced[0]!r}: Price(input_per_mtok=..., "
                "output_per_mtok=...)}) too."
            )


@dataclass(frozen=True, kw_only=True)
class Grounding:
    """
    Judging every cited claim against the stored text of its source, and repairing what fails (see docs/evidence.md).
    Pass ``grounding=Grounding(...)`` (or ``grounding=True`` for these defaults) to a factory.

    :param judge_llm: The grounding judge, a chat generator; ``None`` (default) for the shape's writer model.
    :param threshold: The lowest acceptable grounding score, 0 to 1.
    :param max_regenerations: Rewrites of the report from the same notes, without tools, after a low score, 0 to 5.
        The iterative agent marks unsupported claims and rewrites nothing, so it refuses this.
    :param max_replans: Rounds of researching unsupported claims again, then rewriting, 0 to 5 (the deep agent:
        times an answer is sent back for more research). The iterative agent refuses this.
    :raises ConfigurationError: If a value is out of range, or ``judge_llm`` is not a chat generator.
    """

    judge_llm: Any = None
    threshold: float = 0.65
    max_regenerations: int = 1
    max_replans: int = 2

    def __post_init__(self) -> None:
        if self.judge_llm is not None:
            _checks.chat_generator("Grounding(judge_llm=...)", self.judge_llm, needs_tools=False)
        threshold = _checks.number_in_range("Grounding(threshold=...)", self.threshold, 0.0, 1.0, include_low=True)
        object.__setattr__(self, "threshold", threshold)
        _checks.int_in_range("Grounding(max_regenerations=...)", self.max_regenerations, 0, 5)
        _checks.int_in_range("Grounding(max_replans=...)", self.max_replans, 0, 5)

    @classmethod
    def of(cls, value: Any) -> Grounding | None:
        """A factory's ``grounding``: a :class:`Grounding`, ``True`` (the defaults), or ``False`` / ``None`` (off)."""
        if isinstance(value, Grounding):
            return value
        if value is True:
            return cls()
        if value is False or value is None:
            return None
        raise ConfigurationError(
            f"grounding must be a Grounding (for example Grounding(threshold=0.7)), True or False; got {value!r}."
        )


_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,29}[a-z0-9])?$")


@dataclass(frozen=True)
class MCPServer(FieldsSerialized):
    """
    One MCP server whose tools the researchers may call.

    :param name: A host name label (lower-case letters, digits and inner hyphens, at most 31 characters): the prefix
        of its tools' names and the host of the ``mcp://<name>/<tool>/<id>`` citations of what they return.
    :param command: The command that starts the server over stdio, as a list (``["python", "server.py"]``).
    :param url: The server's streamable-HTTP endpoint (``http://127.0.0.1:8000/mcp``), instead of a command.
    :param env: Environment variables for the command, on top of a minimal default environment.
    :param cwd: The command's working directory.
    :param description: What the server holds; shown to the researchers next to its tools.
    :param connect_timeout: Seconds to start the server and list its tools, more than 0 and up to 600.
    :param call_timeout: Seconds one tool call may take, more than 0 and up to 3600.
    :raises ConfigurationError: If a field is invalid, or both or neither of ``command`` and ``url`` are given.
    """

    name: str
    command: Sequence[str] | None = None
    url: str | None = None
    env: Mapping[str, str] | None = field(default=None, compare=False)
    cwd: str | None = None
    description: str = ""
    connect_timeout: float = 20.0
    call_timeout: float = 60.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigurationError(
                "an MCP server name must be lower-case letters, digits and hyphens, starting and ending with a letter "
                "or digit, at most 31 characters (it prefixes its tools' names and is the host of its citations "
                f"mcp://<name>/...); got {self.name!r}."
            )
        if (self.command is None) == (self.url is None):
            raise ConfigurationError(
                f"MCPServer {self.name!r} needs exactly one of command=[...] (a server started over stdio) or "
                "url='http://host:port/mcp' (a streamable-HTTP server)."
            )
        if self.command is not None:
            if isinstance(self.command, str) or not self.command or not all(isinstance(p, str) for p in self.command):
                raise ConfigurationError(
                    f"MCPServer {self.name!r}: command must be a non-empty list of strings, for example "
                    f"['python', 'server.py']; got {self.command!r}."
                )
            object.__setattr__(self, "command", tuple(self.command))
        if self.url is not None and (
            not isinstance(self.url, str) or not self.url.lower().startswith(("http://", "https://"))
        ):
            raise ConfigurationError(f"MCPServer {self.name!r}: url must be an http(s) URL; got {self.url!r}.")
        if self.env is not None and (
            not isinstance(self.env, Mapping)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in self.env.items())
        ):
            raise ConfigurationError(f"MCPServer {self.name!r}: env must map names to strings.")
        if self.cwd is not None and not isinstance(self.cwd, str):
            raise ConfigurationError(f"MCPServer {self.name!r}: cwd must be a string path.")
        if not isinstance(self.description, str):
            raise ConfigurationError(f"MCPServer {self.name!r}: description must be a string.")
        _checks.number_in_range(f"MCPServer({self.name!r}).connect_timeout", self.connect_timeout, 0, 600)
        _checks.number_in_range(f"MCPServer({self.name!r}).call_timeout", self.call_timeout, 0, 3600)


@dataclass(frozen=True, kw_only=True)
class Sources:
    """
    What the researchers search and read, and how pages are read.

    :param web: ``False`` researches the datastores and MCP servers only: no web search and no page reading.
    :param search: The web search (docs/sources.md): ``None`` ("auto": Tavily when ``TAVILY_API_KEY`` is set, else the
        keyless ddgs search), "tavily", "ddgs", a search backend, a Haystack web-search component with a ``query``
        input, or a Haystack Tool.
    :param datastores: Your own documents: a mapping of name to ``{"retriever": <Haystack retriever or component with a
        query input>, "description": "...", "top_k": 6, "min_score": None}`` (or a store :func:`index_folder` built);
        each becomes a ``search_<name>`` tool (see docs/sources.md).
    :param mcp_servers: MCP servers whose tools may be called (:class:`MCPServer`), each tool as ``<server>_<tool>``
        (needs the ``[mcp]`` extra; see docs/sources.md).
    :param url_policy: Which URLs may be fetched. Default: public http(s) addresses only.
    :param fetch_limits: Download cap, timeouts, redirects and PDF pages of a page read.
    :param passage_budget: Characters of a page's passages most relevant to the question (ranked with BM25 and by the
        figures, dates and names they hold) that the summarizer reads, 500 to 1,000,000, or 0 for the whole page.
    :param summarize_over: Characters of those passages above which the summarizer is called, 0 to 1,000,000; a
        shorter excerpt reaches the researcher as it is, fenced, with no model call.
    :param include_domains: Search and read only these domains and their subdomains, for example
        ``("who.int", "europa.eu")``, enforced on the engine's results and every page read.
    :param exclude_domains: Never search or read these domains and their subdomains.
    :param since: Keep only results published since a date or within a window ending today, as
        :class:`~haystack_deep_research.web.SearchScope` takes it.
    :raises ConfigurationError: If a value has the wrong type or range, or ``web=False`` leaves nothing to search.
    """

    web: bool = True
    search: Any = None
    datastores: Mapping[str, Any] | None = None
    mcp_servers: Sequence[MCPServer] | None = None
    url_policy: UrlPolicy | None = None
    fetch_limits: FetchLimits | None = None
    passage_budget: int = DEFAULT_PASSAGE_BUDGET
    summarize_over: int = DEFAULT_SUMMARIZE_OVER
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()
    since: date | str | None = None

    def __post_init__(self) -> None:
        from haystack_deep_research.web.limits import FetchLimits
        from haystack_deep_research.web.url_policy import SearchScope, UrlPolicy

        scope = SearchScope(
            include_domains=_domains(self.include_domains),
            exclude_domains=_domains(self.exclude_domains),
            since=self.since,
        )
        for name in ("include_domains", "exclude_domains", "since"):
            object.__setattr__(self, name, getattr(scope, name))

        _checks.boolean("Sources(web=...)", self.web)
        for name, kind in (("url_policy", UrlPolicy), ("fetch_limits", FetchLimits)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise ConfigurationError(f"Sources({name}=...) must be a {kind.__name__}; got {type(value).__name__}.")
        passage_budget_value(self.passage_budget)
        _checks.int_in_range("Sources(summarize_over=...)", self.summarize_over, 0, 1_000_000)
        servers = self.mcp_servers
        if servers is not None and (isinstance(servers, str) or not isinstance(servers, Sequence)):
            raise ConfigurationError(
                f"Sources(mcp_servers=...) must be a list of MCPServer; got {type(self.mcp_servers).__name__}."
            )
        if self.web:
            return
        if self.search is not None or self.scope:
            raise ConfigurationError(
                "Sources(web=False) has no web search: drop search=, include_domains=, exclude_domains= and since=, "
                "or set web=True."
            )
        if not self.datastores and not self.mcp_servers:
            raise ConfigurationError(
                "Sources(web=False) leaves the researchers nothing to search: pass datastores={...} (for example "
                "index_folder('./docs')) or mcp_servers=[MCPServer(...)], or set web=True."
            )

    @property
    def scope(self) -> SearchScope:
        """:returns: The domains and recency window the web search keeps to (empty when none is chosen)."""
        from haystack_deep_research.web.url_policy import SearchScope

        return SearchScope(include_domains=self.include_domains, exclude_domains=self.exclude_domains, since=self.since)

    @property
    def read_policy(self) -> UrlPolicy | None:
        """``url_policy`` with the chosen domains applied to every page read, never wider than its ``only_domains``."""
        if not self.include_domains and not self.exclude_domains:
            return self.url_policy
        from haystack_deep_research.web.url_policy import UrlPolicy, in_domains

        policy = self.url_policy or UrlPolicy()
        deny = (*policy.deny_domains, *self.exclude_domains)
        only = self.include_domains or policy.only_domains
        if self.include_domains and policy.only_domains:  # both: what both allow, never wider than the policy
            only = tuple(d for d in self.include_domains if in_domains(d, policy.only_domains)) + tuple(
                d for d in policy.only_domains if in_domains(d, self.include_domains) and d not in self.include_domains
            )
            only = only or ("invalid",)  # nothing in common: nothing may be read (a reserved name no host has)
        return replace(policy, deny_domains=deny, only_domains=only)

    @classmethod
    def of(cls, value: Any) -> Sources:
        """A factory's ``sources``: a :class:`Sources`, or ``None`` for the defaults."""
        return _given(cls, value, "sources", "Sources(search='ddgs', datastores={...})")


def _domains(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigurationError(
            f"Sources domains must be a list of domain names, for example ['who.int']; got {value!r}."
        )
    return tuple(value)


WEB_FIELDS = tuple(field.name for field in fields(Sources) if field.name not in ("datastores", "mcp_servers"))
"""The fields of :class:`Sources` a shape that searches with the caller's own tools has no use for: all but its
datastores and MCP servers."""


def given_fields(settings: Any) -> list[str]:
    """The names of its fields set to something other than their default, in field order."""
    return [
        field.name
        for field in fields(settings)
        if getattr(settings, field.name) != (field.default if field.default is not MISSING else None)
    ]


def refuse_fields(settings: Any, names: Iterable[str], *, factory: str, why: str) -> None:
    """Raise a ConfigurationError when a field ``names`` lists is set in ``settings``: ``factory`` has no use for it."""
    if settings is None:
        return
    unused = [name for name in given_fields(settings) if name in set(names)]
    if unused:
        raise ConfigurationError(f"{factory} does not use {type(settings).__name__}({unused[0]}=...): {why}. Drop it.")
