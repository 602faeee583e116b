"""
The options every command shares: which models on which server, what each model call may take, their prices, and what
the researchers search.

:func:`add_shared_options` adds them to a parser, as two groups (``models`` by :func:`add_model_options`, ``sources``
by :func:`add_source_options`); the main command, its iterative mode, ``replay``, ``update``, ``scan``, ``mcp`` and
``check`` all take them from here, so an option means the same on each. What they become (factory arguments) is in
:mod:`.arguments`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from haystack_deep_research.agents import APIS
from haystack_deep_research.agents.models import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S
from haystack_deep_research.cli.numbers import bounded_int, bounded_number
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.settings import Price
from haystack_deep_research.sources import SEARCH_NAMES

__all__ = [
    "MAX_RETRIES",
    "MAX_TIMEOUT_S",
    "MAX_TOKENS",
    "add_model_options",
    "add_search_endpoint_options",
    "add_shared_options",
    "add_source_options",
    "parse_price",
]


MAX_TIMEOUT_S = 3600.0
MAX_RETRIES = 20
MAX_TOKENS = 1_000_000


def parse_price(text: str) -> tuple[str, Price]:
    """
    ``--price MODEL=INPUT,OUTPUT``: a model's price in US dollars per million input and output tokens.

    :param text: For example ``qwen3:8b=0,0`` or ``my-model=0.5,1.5``.
    :returns: The model name and its price.
    :raises argparse.ArgumentTypeError: If the text is not of that form, or a price is out of range.
    """
    model, equals, numbers = text.rpartition("=")
    parts = numbers.split(",")
    try:
        if not equals or not model.strip() or len(parts) != 2 or "=" in model or len(model.split()) != 1:
            raise ValueError(text)
        return model.strip(), Price(input_per_mtok=float(parts[0]), output_per_mtok=float(parts[1]))
    except (ValueError, ConfigurationError) as error:
        raise argparse.ArgumentTypeError(
            f"takes MODEL=INPUT,OUTPUT in US dollars per million tokens, for example qwen3:8b=0,0; got {text!r}"
        ) from error


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """
    Which models, on which server, and what each call may take: ``--model``, ``--small-model``, ``--role-model``,
    ``--base-url``, ``--api``, ``--price``, ``--timeout``, ``--retries``, ``--max-tokens``, ``--no-tool-choice``.

    :param parser: The parser to add the group to.
    """
    group = parser.add_argument_group("models")
    group.add_argument(
        "--model", metavar="NAME", help="Model of the orchestrator, scope and writer (env DEEP_RESEARCH_MODEL)."
    )
    group.add_argument(
        "--small-model",
        metavar="NAME",
        help="Model of the researchers and the summarizer (env DEEP_RESEARCH_SMALL_MODEL).",
    )
    group.add_argument(
        "--role-model",
        action="append",
        default=[],
        metavar="ROLE=NAME",
        help="Model of one role (orchestrator, scope, writer, researcher, summarizer, judge); repeatable.",
    )
    group.add_argument(
        "--base-url",
        metavar="URL",
        help="An OpenAI-compatible server, e.g. http://localhost:11434/v1 (env DEEP_RESEARCH_BASE_URL or "
        "OPENAI_BASE_URL).",
    )
    group.add_argument(
        "--api",
        choices=APIS,
        help="chat (Chat Completions) or responses; default chat with --base-url (env DEEP_RESEARCH_API).",
    )
    group.add_argument(
        "--price",
        dest="prices",
        action="append",
        default=[],
        type=parse_price,
        metavar="MODEL=INPUT,OUTPUT",
        help="A model's price in US dollars per million input and output tokens, e.g. qwen3:8b=0,0; repeatable "
        "(env DEEP_RESEARCH_PRICES).",
    )
    group.add_argument(
        "--timeout",
        type=bounded_number(MAX_TIMEOUT_S),
        metavar="SECONDS",
        help=f"Seconds one model request may take ({DEFAULT_TIMEOUT_S:g}; env DEEP_RESEARCH_TIMEOUT).",
    )
    group.add_argument(
        "--retries",
        type=bounded_int(0, MAX_RETRIES),
        metavar="N",
        help=f"Retries of a failed model request, 0 to {MAX_RETRIES} ({DEFAULT_MAX_RETRIES}; env "
        "DEEP_RESEARCH_RETRIES).",
    )
    group.add_argument(
        "--max-tokens",
        type=bounded_int(1, MAX_TOKENS),
        metavar="N",
        help="The most tokens one model reply may hold (no cap by default; env DEEP_RESEARCH_MAX_TOKENS).",
    )
    group.add_argument(
        "--no-tool-choice",
        action="store_true",
        help='With --base-url: do not send tool_choice "auto" with the tools (env DEEP_RESEARCH_NO_TOOL_CHOICE=1).',
    )


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """
    What the researchers search: ``--search``, ``--search-url``, ``--allow-host``, ``--docs``, ``--no-web``,
    ``--index-dir``.

    :param parser: The parser to add the group to.
    """
    group = parser.add_argument_group("sources")
    group.add_argument(
        "--search",
        choices=SEARCH_NAMES,
        help="Web search: auto (Tavily with TAVILY_API_KEY, else keyless ddgs), tavily or ddgs "
        "(env DEEP_RESEARCH_SEARCH).",
    )
    add_search_endpoint_options(group)
    group.add_argument(
        "--docs", action="append", default=[], type=Path, metavar="FOLDER", help="Also search this folder; repeatable."
    )
    group.add_argument("--no-web", action="store_true", help="Research the --docs folders only: no web search.")
    group.add_argument(
        "--index-dir", type=Path, metavar="DIR", help="Keep the --docs indexes here (default: the user's cache)."
    )


def add_search_endpoint_options(group: argparse._ActionsContainer) -> None:
    """
    Where web search and reading may go: ``--search-url``, ``--allow-host``, and the chosen domains and dates
    (``--include-domain``, ``--exclude-domain``, ``--since`` / ``--time-range``).

    :param group: The parser or argument group to add the options to (the sources group of every command that
        searches).
    """
    group.add_argument(
        "--search-url",
        metavar="URL",
        help="A Tavily-compatible search server to search instead of Tavily's, e.g. the testing kit's; no "
        "TAVILY_API_KEY is needed.",
    )
    group.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="Let the researchers read pages on this non-public host, address or network (e.g. 127.0.0.1 for the "
        "testing kit); repeatable.",
    )
    group.add_argument(
        "--include-domain",
        action="append",
        default=[],
        metavar="DOMAIN",
        help="Search and read only this domain and its subdomains (e.g. who.int); repeatable.",
    )
    group.add_argument(
        "--exclude-domain",
        action="append",
        default=[],
        metavar="DOMAIN",
        help="Never search or read this domain or its subdomains; repeatable.",
    )
    recency = group.add_mutually_exclusive_group()
    recency.add_argument(
        "--since", metavar="DATE", help="Keep only search results published on or after this date (YYYY-MM-DD)."
    )
    recency.add_argument(
        "--time-range",
        choices=("day", "week", "month", "year"),
        help="Keep only search results published within this window ending today.",
    )


def add_shared_options(parser: argparse.ArgumentParser) -> None:
    """
    Add the options every command shares: the ``models`` and ``sources`` groups.

    :param parser: The parser to add them to.
    """
    add_model_options(parser)
    add_source_options(parser)
