"""
The options every command shares, and what they become: which models on which server, what each model call may take,
their prices, and what the researchers search.

:func:`add_shared_options` adds them to a parser, as two groups (``models`` by :func:`add_model_options`, ``sources``
by :func:`add_source_options`); the main command, its iterative mode, ``replay``, ``update``, ``scan``, ``mcp`` and
``check`` all take them from here, so an option means the same on each. :func:`factory_arguments` turns parsed
options into factory arguments (``*_llm`` models, ``prices``, ``search``, ``web``, ``datastores``), falling back on
:data:`ENVIRONMENT` for an option left out; a server with no command line (the Hayhooks wrapper) goes through the
same function with :func:`~haystack_deep_research.cli.config.environment_options`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from haystack_deep_research.agents import APIS, DEFAULT_MODEL, check_credentials, role_models
from haystack_deep_research.agents.models import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S
from haystack_deep_research.cli.index_progress import index_progress, print_skipped
from haystack_deep_research.cli.numbers import bounded_int, bounded_number
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.run import Price
from haystack_deep_research.sources import SEARCH_NAMES, folder_store_name, index_folder

__all__ = [
    "ENVIRONMENT",
    "add_model_options",
    "add_shared_options",
    "add_source_options",
    "check_option_credentials",
    "factory_arguments",
    "judge_model",
    "model_arguments",
    "option_value",
    "parse_price",
    "source_arguments",
]

ENVIRONMENT: dict[str, tuple[str, ...]] = {
    "model": ("DEEP_RESEARCH_MODEL",),
    "small_model": ("DEEP_RESEARCH_SMALL_MODEL",),
    "base_url": ("DEEP_RESEARCH_BASE_URL", "OPENAI_BASE_URL"),
    "api": ("DEEP_RESEARCH_API",),
    "prices": ("DEEP_RESEARCH_PRICES",),
    "timeout": ("DEEP_RESEARCH_TIMEOUT",),
    "retries": ("DEEP_RESEARCH_RETRIES",),
    "max_tokens": ("DEEP_RESEARCH_MAX_TOKENS",),
    "no_tool_choice": ("DEEP_RESEARCH_NO_TOOL_CHOICE",),
    "search": ("DEEP_RESEARCH_SEARCH",),
}
"""The environment variables behind each option (by ``dest``), the first set one winning; an option wins over them.
``DEEP_RESEARCH_PRICES`` holds ``--price`` values separated by semicolons; ``DEEP_RESEARCH_NO_TOOL_CHOICE``
is on when it is ``1``, ``true`` or ``yes``."""

_MAX_TIMEOUT_S = 3600.0
_MAX_RETRIES = 20
_MAX_TOKENS = 1_000_000


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
        type=bounded_number(_MAX_TIMEOUT_S),
        metavar="SECONDS",
        help=f"Seconds one model request may take ({DEFAULT_TIMEOUT_S:g}; env DEEP_RESEARCH_TIMEOUT).",
    )
    group.add_argument(
        "--retries",
        type=bounded_int(0, _MAX_RETRIES),
        metavar="N",
        help=f"Retries of a failed model request, 0 to {_MAX_RETRIES} ({DEFAULT_MAX_RETRIES}; env "
        "DEEP_RESEARCH_RETRIES).",
    )
    group.add_argument(
        "--max-tokens",
        type=bounded_int(1, _MAX_TOKENS),
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
    Where web search and reading may go besides the public web: ``--search-url``, ``--allow-host``.

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


def add_shared_options(parser: argparse.ArgumentParser) -> None:
    """
    Add the options every command shares: the ``models`` and ``sources`` groups.

    :param parser: The parser to add them to.
    """
    add_model_options(parser)
    add_source_options(parser)


def _environment(name: str, environ: Mapping[str, str]) -> str | None:
    for variable in ENVIRONMENT[name]:
        if value := environ.get(variable, "").strip():
            return value
    return None


def _one_of(choices: tuple[str, ...]) -> Any:
    def read(text: str) -> str:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"must be one of {', '.join(choices)}; got {text!r}")
        return text

    return read


def _from_environment(name: str, text: str) -> Any:
    """An environment value read as its option reads it; a bad one is a ConfigurationError naming the variable."""
    readers: dict[str, Any] = {
        "timeout": bounded_number(_MAX_TIMEOUT_S),
        "retries": bounded_int(0, _MAX_RETRIES),
        "max_tokens": bounded_int(1, _MAX_TOKENS),
        "prices": lambda value: [parse_price(part.strip()) for part in value.split(";") if part.strip()],
        "no_tool_choice": lambda value: value.lower() in ("1", "true", "yes"),
        "api": _one_of(APIS),
        "search": _one_of(SEARCH_NAMES),
    }
    try:
        return readers.get(name, str)(text)
    except argparse.ArgumentTypeError as error:
        raise ConfigurationError(f"{ENVIRONMENT[name][0]} {error}.") from None


def option_value(args: argparse.Namespace, name: str, environ: Mapping[str, str] | None = None) -> Any:
    """
    :param args: Parsed options.
    :param name: An option's ``dest``.
    :param environ: The environment; ``os.environ`` by default.
    :returns: The option's value, else its environment variable's (read as the option reads it), else ``None``.
    """
    value = getattr(args, name, None)
    given = value is not None and value is not False and value != []
    if given or name not in ENVIRONMENT:
        return value if given else None
    text = _environment(name, os.environ if environ is None else environ)
    return _from_environment(name, text) if text is not None else None


def _roles(pairs: list[str]) -> dict[str, str]:
    roles = {}
    for pair in pairs:
        role, equals, name = pair.partition("=")
        if not equals or not role.strip() or not name.strip():
            raise ConfigurationError(f"--role-model takes ROLE=NAME, for example researcher=qwen3:8b; got {pair!r}.")
        roles[role.strip()] = name.strip()
    return roles


def _model_choice(args: argparse.Namespace, environ: Mapping[str, str] | None) -> dict[str, Any]:
    """The arguments of ``role_models`` the options ask for; nothing for what was left at its default."""
    names = ("model", "small_model", "base_url", "api")
    chosen: dict[str, Any] = {name: value for name in names if (value := option_value(args, name, environ))}
    if roles := _roles(getattr(args, "role_model", [])):
        chosen["roles"] = roles
    limits = {"timeout": "timeout", "retries": "max_retries", "max_tokens": "max_tokens"}
    chosen |= {key: value for name, key in limits.items() if (value := option_value(args, name, environ)) is not None}
    if option_value(args, "no_tool_choice", environ):
        chosen["tool_choice"] = None
    return chosen


def model_arguments(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """
    :param args: Parsed options (see :func:`add_model_options`).
    :param environ: The environment behind options left out; ``os.environ`` by default.
    :returns: The ``*_llm`` arguments (only when a model option or its variable is set) and ``prices`` (only when
        some are given).
    :raises ConfigurationError: If a role, a model name or an environment value is invalid.
    """
    chosen = _model_choice(args, environ)
    arguments: dict[str, Any] = role_models(**chosen) if chosen else {}
    if prices := option_value(args, "prices", environ):
        arguments["prices"] = dict(prices)
    return arguments


def judge_model(args: argparse.Namespace, name: str | None = None, environ: Mapping[str, str] | None = None) -> Any:
    """
    :param args: Parsed options.
    :param name: The judge's model when named on its own (``check --judge-model``); else ``--role-model judge=NAME``,
        else ``--model``, else the default model.
    :param environ: The environment behind options left out.
    :returns: The grounding judge's chat generator, on the chosen server with the chosen limits.
    """
    chosen = _model_choice(args, environ)
    roles = chosen.pop("roles", {})
    judge = name or roles.get("judge") or chosen.get("model") or DEFAULT_MODEL
    return role_models(**chosen, roles={"judge": judge})["judge_llm"]


def check_option_credentials(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> None:
    """
    :param args: Parsed options.
    :param environ: The environment.
    :raises MissingCredentialsError: If a key the chosen server or search needs is not set.
    """
    base_url, search = option_value(args, "base_url", environ), option_value(args, "search", environ)
    own_search = getattr(args, "no_web", False) or getattr(args, "search_url", None)  # no search key needed then
    check_credentials(environ, base_url=base_url, search=None if own_search else search)


def factory_arguments(
    args: argparse.Namespace,
    environ: Mapping[str, str] | None = None,
    *,
    quiet: bool = True,
    quiet_skipped: bool | None = None,
) -> dict[str, Any]:
    """
    The arguments of a research factory the shared options ask for (see :func:`model_arguments`), with ``search``,
    ``web`` and ``datastores`` (each ``--docs`` folder, indexed now or loaded from its cached index).

    :param args: Parsed options (see :func:`add_shared_options`).
    :param environ: The environment behind options left out; ``os.environ`` by default.
    :param quiet: Print no indexing progress.
    :param quiet_skipped: Print nothing about the files an index left out; ``quiet`` by default.
    :returns: The arguments; nothing for what was left at its default.
    :raises ConfigurationError: If an option or environment value is invalid.
    """
    arguments = model_arguments(args, environ)
    arguments.update(source_arguments(args, environ, quiet=quiet, quiet_skipped=quiet_skipped))
    return arguments


def source_arguments(
    args: argparse.Namespace,
    environ: Mapping[str, str] | None = None,
    *,
    quiet: bool = True,
    quiet_skipped: bool | None = None,
) -> dict[str, Any]:
    """
    The factory arguments of what the researchers search, the same for every command: ``search`` (``--search``, or a
    Tavily tool at ``--search-url``), ``url_policy`` (``--allow-host``), ``web`` (``--no-web``) and ``datastores``
    (each ``--docs`` folder, indexed now or loaded from its cached index).

    :param args: Parsed options (see :func:`add_source_options`).
    :param environ: The environment behind options left out; ``os.environ`` by default.
    :param quiet: Print no indexing progress.
    :param quiet_skipped: Print nothing about the files an index left out; ``quiet`` by default.
    :returns: The arguments; nothing for what was left at its default.
    :raises UsageError: If the options contradict each other (``--search-url`` with ``--search ddgs``).
    :raises ConfigurationError: If an option or environment value is invalid.
    """
    from haystack_deep_research.cli.sources import web_options  # it builds the search tool: imported when used

    arguments: dict[str, Any] = {}
    if (search := option_value(args, "search", environ)) is not None:
        arguments["search"] = search
    arguments.update(web_options(args, search))
    if getattr(args, "no_web", False):
        arguments["web"] = False
    stores: dict[str, Any] = {}
    for folder in getattr(args, "docs", []):
        name = folder_store_name(folder)
        name = name if name not in stores else f"{name}_{len(stores) + 1}"
        with index_progress(str(folder), quiet=quiet) as progress:
            stores[name] = index_folder(folder, cache_dir=args.index_dir, progress=progress)
        skipped = stores[name]["retriever"].index.warnings
        print_skipped(str(folder), skipped, quiet=quiet if quiet_skipped is None else quiet_skipped)
    if stores:
        arguments["datastores"] = stores
    return arguments
