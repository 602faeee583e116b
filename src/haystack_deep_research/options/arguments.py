"""
What the shared options become: factory arguments (``*_llm`` models, ``budgets`` with the ``--price`` prices,
``sources``, the report style) for every command and server, each option left out read from its environment variable;
the ``--docs`` indexing display; and the sources a ``--record`` recording keeps (each ``--docs`` folder with a
fingerprint of its files), so that ``replay`` refuses in one line a folder missing or changed.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from haystack_deep_research._untrusted.files import read_regular_file
from haystack_deep_research._untrusted.terminal import logged_lines, say, terminal_text
from haystack_deep_research.agents import role_models
from haystack_deep_research.agents.models import DEFAULT_MODEL, check_credentials
from haystack_deep_research.errors import ConfigurationError, RecordingError, UsageError
from haystack_deep_research.options.config import environment_value, environment_variables
from haystack_deep_research.report.style import ReportStyle, outline_from_text
from haystack_deep_research.settings import Budgets, Grounding, Sources
from haystack_deep_research.sources import WebSearchTool, index_folder
from haystack_deep_research.sources.datastore import folder_store_name
from haystack_deep_research.sources.indexing import IndexProgress, folder_files
from haystack_deep_research.sources.selection import default_search_name
from haystack_deep_research.web import UrlPolicy

__all__ = [
    "ENVIRONMENT",
    "check_option_credentials",
    "factory_arguments",
    "judge_model",
    "model_arguments",
    "option_value",
    "recorded_sources",
    "replay_argv",
    "report_style",
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
"""The environment variables behind the model and search options (by ``dest``), read here too for options that no parser
filled (a server's ``check_report`` judge)."""


def option_value(args: argparse.Namespace, name: str, environ: Mapping[str, str] | None = None) -> Any:
    """The option's value, else its environment variable's (``ConfigFileError`` if refused), else ``None``."""
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
    The ``*_llm`` arguments and ``budgets`` with the ``prices``, each only when an option or its variable is set.

    :raises ConfigurationError: If a role, a model name or an environment value is invalid.
    """
    chosen = _model_choice(args, environ)
    arguments: dict[str, Any] = role_models(**chosen) if chosen else {}
    if prices := option_value(args, "prices", environ):
        arguments["budgets"] = Budgets(prices=dict(prices))
    return arguments


def judge_model(args: argparse.Namespace, name: str | None = None, environ: Mapping[str, str] | None = None) -> Any:
    """The grounding judge's chat generator, on the chosen server with the chosen limits."""
    chosen = _model_choice(args, environ)
    roles = chosen.pop("roles", {})
    judge = name or roles.get("judge") or chosen.get("model") or DEFAULT_MODEL
    return role_models(**chosen, roles={"judge": judge})["judge_llm"]


def check_option_credentials(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> None:
    """:raises MissingCredentialsError: If a key the chosen server or search needs is not set."""
    base_url, search = option_value(args, "base_url", environ), option_value(args, "search", environ)
    own_search = getattr(args, "no_web", False) or getattr(args, "search_url", None)  # no search key needed then
    check_credentials(environ, base_url=base_url, search=None if own_search else search)


def factory_arguments(
    args: argparse.Namespace,
    environ: Mapping[str, str] | None = None,
    *,
    quiet: bool = True,
    quiet_skipped: bool | None = None,
    models: bool = True,
) -> dict[str, Any]:
    """
    The arguments of a research factory the shared options ask for: the models (left out with ``models=False``) and
    ``sources`` (each ``--docs`` folder indexed now or loaded from its cached index).

    :returns: The arguments; nothing for what was left at its default.
    :raises UsageError: If the options contradict each other (``--search-url`` with ``--search ddgs``).
    :raises ConfigurationError: If an option or environment value is invalid.
    """
    chosen = model_arguments(args, environ) if models else {}  # a bad model option is said before any indexing
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
    return {**chosen, "sources": Sources(**arguments)}


def with_grounding(arguments: Mapping[str, Any], grounding: bool) -> dict[str, Any]:
    """The arguments with ``grounding``, holding the chosen judge (a ``judge_llm`` never reaches a factory alone)."""
    chosen = dict(arguments)
    judge = chosen.pop("judge_llm", None)
    chosen["grounding"] = Grounding(judge_llm=judge) if grounding and judge is not None else grounding
    return chosen


def with_budgets(arguments: Mapping[str, Any], budgets: Budgets) -> dict[str, Any]:
    """The arguments with ``budgets``: these limits over the arguments' own, the prices of both."""
    return {**arguments, "budgets": budgets.over(arguments.get("budgets") or Budgets())}


REPLAYABLE_SEARCHES = ("tavily", "ddgs")
"""The search engines a recording may name: a replay rebuilds the same engine, so its look-ups match."""


def check_search_url(url: str) -> str:
    """:raises UsageError: If ``--search-url`` is not an absolute http(s) URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--search-url takes an http(s) URL of a Tavily-compatible server; got {url!r}.")
    return url.rstrip("/")


def web_options(args: argparse.Namespace, search: str | None) -> dict[str, Any]:
    """
    The :class:`~haystack_deep_research.Sources` fields of ``--search-url``, ``--allow-host``, ``--include-domain``,
    ``--exclude-domain`` and ``--since`` / ``--time-range``; nothing for what was not given.

    :raises UsageError: If ``--search-url`` is not a URL, or comes with ``--search ddgs`` or ``--no-web``.
    :raises ConfigurationError: If an ``--allow-host`` entry is not a host name, address or network.
    """
    options: dict[str, Any] = {}
    if getattr(args, "search_url", None) is not None:
        if search == "ddgs" or getattr(args, "no_web", False):
            raise UsageError(
                "--search-url points the Tavily-compatible web search at a server; drop --search ddgs "
                "and --no-web, or drop --search-url."
            )
        tool = WebSearchTool(api_base_url=check_search_url(args.search_url))
        options["search"] = tool
    if getattr(args, "allow_host", None):
        options["url_policy"] = UrlPolicy(allow_hosts=tuple(args.allow_host))
    for option in ("include_domain", "exclude_domain"):
        if getattr(args, option, None):
            options[f"{option}s"] = tuple(getattr(args, option))
    since = getattr(args, "since", None) or getattr(args, "time_range", None)
    if since is not None:
        options["since"] = since
    return options


def folder_fingerprint(folder: Path) -> str:
    """A SHA-256 of the names and contents of the files a ``--docs`` folder indexes (not their times)."""
    root = folder.expanduser().resolve()
    digest = hashlib.sha256()
    files, _ = folder_files(root)
    for file in files:
        digest.update(file.path.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        with file.path.open("rb") as stream:
            digest.update(hashlib.file_digest(stream, "sha256").digest())
    return digest.hexdigest()


def recorded_sources(args: argparse.Namespace, search: str | None) -> dict[str, Any]:
    """The recording manifest's fields of the sources: each ``--docs`` folder with its fingerprint, the web options."""
    name = "tavily" if args.search_url else (search or "auto")
    return {
        "docs": [
            {"path": str(Path(d).expanduser().resolve()), "fingerprint": folder_fingerprint(d)} for d in args.docs
        ],
        "web": not args.no_web,
        "search": default_search_name() if name == "auto" else name,
        "search_url": args.search_url,
        "allow_hosts": list(args.allow_host),
        "include_domains": list(getattr(args, "include_domain", [])),
        "exclude_domains": list(getattr(args, "exclude_domain", [])),
        "since": getattr(args, "since", None) or getattr(args, "time_range", None),
    }


def replay_argv(directory: Path, manifest: Any) -> list[str]:
    """The command-line options that rebuild a recording's sources; ``RecordingError`` if they cannot be rebuilt."""
    where = f"the recording {str(directory)!r}"
    if manifest.web and manifest.search not in REPLAYABLE_SEARCHES:
        raise RecordingError(
            f"{where} names the search {manifest.search!r}, which replay cannot rebuild "
            f"({', '.join(REPLAYABLE_SEARCHES)} only); record the run again."
        )
    argv: list[str] = []
    for folder in manifest.docs:
        path = Path(folder.path)
        if not path.is_dir():
            raise RecordingError(f"{where} searched the folder {folder.path}, which is missing; restore it to replay.")
        if folder_fingerprint(path) != folder.fingerprint:
            raise RecordingError(
                f"{where} searched the folder {folder.path}, whose files have changed since; restore them, or "
                "record the run again."
            )
        argv += ["--docs", folder.path]
    if not manifest.web:
        return [*argv, "--no-web"]
    argv += ["--search", manifest.search]
    if manifest.search_url is not None:
        argv += ["--search-url", manifest.search_url]
    for host in manifest.allow_hosts:
        argv += ["--allow-host", host]
    for domain in manifest.include_domains:
        argv += ["--include-domain", domain]
    for domain in manifest.exclude_domains:
        argv += ["--exclude-domain", domain]
    if manifest.since is not None:
        argv += ["--time-range" if manifest.since in ("day", "week", "month", "year") else "--since", manifest.since]
    return argv


def _lines(done: int, total: int, file: str) -> None:
    if file:
        say(f"[index] {done + 1}/{total} {terminal_text(file, one_line=True)}")


def _unsaid(line: str) -> None:
    """``-q``: nothing is said while indexing; the files left out are in the run's warnings."""


@contextmanager
def index_progress(
    label: str, *, quiet: bool = False, quiet_notes: bool | None = None
) -> Iterator[IndexProgress | None]:
    """A progress callback (``None`` when quiet) for :func:`~haystack_deep_research.sources.index_folder`."""
    shown = terminal_text(label, one_line=True)
    silent = quiet if quiet_notes is None else quiet_notes
    with logged_lines(_unsaid if silent else lambda line: say(f"[index] {shown}: {line}")):
        if quiet or importlib.util.find_spec("rich") is None or not sys.stderr.isatty():
            yield None if quiet else _lines
            return
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as bar:  # lines said meanwhile go above the bar
            task = bar.add_task(f"indexing {terminal_text(shown, markup=True)}", total=None)

            def update(done: int, total: int, file: str) -> Any:
                name = terminal_text(f"indexing {shown}: {file}" if file else shown, one_line=True, markup=True)
                bar.update(task, completed=done, total=total, description=name)

            yield update


MAX_OUTLINE_BYTES = 64 * 1024
_STYLE_FIELDS = {
    "report_type": "report_type",
    "tone": "tone",
    "length": "report_length",
    "instructions": "instructions",
}
"""The :class:`ReportStyle` field of each report option, by ``dest`` (``--outline`` names a file of headings)."""


def read_outline(path: Path) -> list[str]:
    """
    The ``--outline`` file's headings, to be checked by :class:`ReportStyle`.

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
    The report's style the options ask for, or ``None`` when they leave it at its default.

    :raises ConfigurationError: If the outline file cannot be read, or a value is not one the style accepts.
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
