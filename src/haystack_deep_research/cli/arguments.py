"""
What the shared options become: factory arguments (``*_llm`` models, ``budgets`` with the ``--price`` prices,
``sources``) for every command and server, from parsed options (see :mod:`.shared_options`) with the
:data:`ENVIRONMENT` variables behind an option left out; a server with no command line (the Hayhooks wrapper, the MCP
server) goes through the same functions with :func:`~haystack_deep_research.cli.config.environment_options`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from haystack_deep_research._untrusted.files import read_regular_file
from haystack_deep_research.agents import DEFAULT_MODEL, check_credentials, role_models
from haystack_deep_research.cli.config import environment_value, environment_variables
from haystack_deep_research.cli.index_progress import index_progress
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.report.style import ReportStyle, outline_from_text
from haystack_deep_research.settings import Budgets, Grounding, Sources
from haystack_deep_research.sources import folder_store_name, index_folder

__all__ = [
    "ENVIRONMENT",
    "check_option_credentials",
    "factory_arguments",
    "judge_model",
    "model_arguments",
    "option_value",
    "read_outline",
    "report_style",
    "source_arguments",
    "with_budgets",
    "with_grounding",
]


ENVIRONMENT: dict[str, tuple[str, ...]] = {
    dest: environment_variables(dest)
    for dest in (
        "model",
        "small_model",
        "base_url",
        "api",
        "prices",
        "timeout",
        "retries",
        "max_tokens",
        "no_tool_choice",
        "search",
    )
}
"""The environment variables behind the model and search options (by ``dest``), named as every option's are (see
:func:`~haystack_deep_research.cli.config.environment_variables`), the first set one winning; an option wins over them.
They are read here too, by the same function, for options that no parser filled (a server's ``check_report``
judge)."""


def option_value(args: argparse.Namespace, name: str, environ: Mapping[str, str] | None = None) -> Any:
    """
    :param args: Parsed options.
    :param name: An option's ``dest``.
    :param environ: The environment; ``os.environ`` by default.
    :returns: The option's value, else its environment variable's (read as the option reads it), else ``None``.
    :raises ConfigFileError: If the variable holds a value the option refuses (the message names the variable).
    """
    value = getattr(args, name, None)
    given = value is not None and value is not False and value != []
    if given or name not in ENVIRONMENT:
        return value if given else None
    return environment_value(name, os.environ if environ is None else environ)


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
    :returns: The ``*_llm`` arguments (only when a model option or its variable is set) and ``budgets`` holding the
        ``prices`` (only when some are given).
    :raises ConfigurationError: If a role, a model name or an environment value is invalid.
    """
    chosen = _model_choice(args, environ)
    arguments: dict[str, Any] = role_models(**chosen) if chosen else {}
    if prices := option_value(args, "prices", environ):
        arguments["budgets"] = Budgets(prices=dict(prices))
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
    The arguments of a research factory the shared options ask for (see :func:`model_arguments`), with ``sources``
    (see :func:`source_arguments`).

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
    The factory argument of what the researchers search, the same for every command: ``sources``, a
    :class:`~haystack_deep_research.Sources` with ``search`` (``--search``, or a Tavily tool at ``--search-url``),
    ``url_policy`` (``--allow-host``), ``web`` (``--no-web``) and ``datastores`` (each ``--docs`` folder, indexed now
    or loaded from its cached index).

    :param args: Parsed options (see :func:`add_source_options`).
    :param environ: The environment behind options left out; ``os.environ`` by default.
    :param quiet: Print no indexing progress.
    :param quiet_skipped: Print nothing about the files an index left out; ``quiet`` by default.
    :returns: ``{"sources": ...}``.
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
        with index_progress(str(folder), quiet=quiet, quiet_notes=quiet_skipped) as progress:
            stores[name] = index_folder(folder, cache_dir=args.index_dir, progress=progress)
    if stores:
        arguments["datastores"] = stores
    return {"sources": Sources(**arguments)}


def with_grounding(arguments: Mapping[str, Any], grounding: bool) -> dict[str, Any]:
    """
    :param arguments: Factory arguments (see :func:`factory_arguments`), which may hold the ``judge_llm`` that
        ``--role-model judge=NAME`` chose.
    :param grounding: Whether the command or request asked for grounding.
    :returns: The arguments with ``grounding``: ``Grounding(judge_llm=...)`` when grounding was asked for and a judge
        chosen, else the flag; the judge never reaches a factory on its own.
    """
    chosen = dict(arguments)
    judge = chosen.pop("judge_llm", None)
    chosen["grounding"] = Grounding(judge_llm=judge) if grounding and judge is not None else grounding
    return chosen


def with_budgets(arguments: Mapping[str, Any], budgets: Budgets) -> dict[str, Any]:
    """
    :param arguments: Factory arguments (see :func:`factory_arguments`), which may hold ``budgets`` with prices.
    :param budgets: A command's or a request's own budgets.
    :returns: The arguments with ``budgets``: these limits over the arguments' own, the prices of both.
    """
    return {**arguments, "budgets": budgets.over(arguments.get("budgets") or Budgets())}


MAX_OUTLINE_BYTES = 64 * 1024
"""The largest ``--outline`` file read."""
_STYLE_FIELDS = {
    "report_type": "report_type",
    "tone": "tone",
    "length": "report_length",
    "instructions": "instructions",
}
"""The :class:`ReportStyle` field of each report option, by ``dest`` (``--outline`` names a file of headings)."""


def read_outline(path: Path) -> list[str]:
    """
    :param path: An ``--outline`` file: one heading per line, or a Markdown file whose ``#`` and ``##`` headings are
        the outline (see :func:`~haystack_deep_research.report.style.outline_from_text`).
    :returns: Its headings, to be checked by :class:`ReportStyle`.
    :raises ConfigurationError: If it is not a regular UTF-8 text file of at most :data:`MAX_OUTLINE_BYTES`, or names
        no heading.
    """
    try:
        text = read_regular_file(path, root=None, max_bytes=MAX_OUTLINE_BYTES).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        why = "it is not UTF-8 text" if isinstance(error, UnicodeDecodeError) else str(error)
        raise ConfigurationError(f"--outline {path} was not read: {why}.") from None
    headings = outline_from_text(text)
    if not headings:
        raise ConfigurationError(f"--outline {path} names no heading: write one per line, or # and ## headings.")
    return headings


def report_style(args: argparse.Namespace) -> ReportStyle | None:
    """
    :param args: Parsed options (see ``add_report_options``).
    :returns: The report's style the options ask for, or ``None`` when they leave it at its default.
    :raises ConfigurationError: If the outline file cannot be read, or a value is not one the style accepts (the
        message names the option's field).
    """
    chosen: dict[str, Any] = {
        field: getattr(args, dest) for dest, field in _STYLE_FIELDS.items() if getattr(args, dest, None) is not None
    }
    if getattr(args, "outline", None) is not None:
        headings = read_outline(args.outline)
        try:
            chosen["outline"] = ReportStyle(outline=headings).outline
        except ConfigurationError as error:
            raise ConfigurationError(f"--outline {args.outline}: {error}") from None
    return ReportStyle(**chosen) if chosen else None
