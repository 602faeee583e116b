"""
What the researchers search, as the command builds and records it: ``--search-url`` (a Tavily-compatible search
server), ``--allow-host`` (a non-public host whose pages may be read), and the sources a recording keeps so that
``replay`` can refuse what it cannot reproduce.

A recording made with ``--record`` keeps, in its ``recording.json``, the ``--docs`` folders (each with a fingerprint of
its files' names and contents), whether the web was searched, the search engine's name, its ``--search-url`` and the
``--allow-host`` entries. ``replay`` rebuilds the same sources, and refuses (a usage error, one line) a recording whose
folder is missing or changed, or whose search it does not know, instead of replaying with every look-up missing.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from haystack_deep_research.errors import RecordingError, UsageError
from haystack_deep_research.sources import WebSearchTool, default_search_name
from haystack_deep_research.sources._folder_files import folder_files
from haystack_deep_research.web import UrlPolicy

__all__ = [
    "REPLAYABLE_SEARCHES",
    "check_search_url",
    "folder_fingerprint",
    "recorded_sources",
    "replay_argv",
    "web_options",
]

REPLAYABLE_SEARCHES = ("tavily", "ddgs")
"""The search engines a recording may name: a replay rebuilds the same engine, so its look-ups match."""


def check_search_url(url: str) -> str:
    """
    :param url: The ``--search-url`` given.
    :returns: The URL without a trailing slash.
    :raises UsageError: If it is not an absolute http(s) URL.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--search-url takes an http(s) URL of a Tavily-compatible server; got {url!r}.")
    return url.rstrip("/")


def web_options(args: argparse.Namespace, search: str | None) -> dict[str, Any]:
    """
    :param args: The parsed command line.
    :param search: The ``--search`` chosen (option or environment), or ``None``.
    :returns: The :class:`~haystack_deep_research.Sources` fields of ``--search-url`` (``search``: a Tavily tool at
        that address), ``--allow-host`` (``url_policy``), ``--include-domain``, ``--exclude-domain`` and ``--since``
        / ``--time-range``; nothing for what was not given.
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
    """
    :param folder: A ``--docs`` folder.
    :returns: A SHA-256 of the names and contents of the files it indexes (not of their times: a copy is the same).
    :raises OSError: If a file cannot be read.
    """
    root = folder.expanduser().resolve()
    digest = hashlib.sha256()
    files, _ = folder_files(root)
    for file in files:
        digest.update(file.path.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        with file.path.open("rb") as stream:
            digest.update(hashlib.file_digest(stream, "sha256").digest())
    return digest.hexdigest()


def recorded_sources(args: argparse.Namespace, search: str | None) -> dict[str, Any]:
    """
    :param args: The parsed command line of the recorded run.
    :param search: The ``--search`` chosen (option or environment), or ``None``.
    :returns: The manifest fields of its sources: ``docs`` (path and fingerprint of each folder), ``web``,
        ``search``, ``search_url``, ``allow_hosts``, ``include_domains``, ``exclude_domains`` and ``since``.
    """
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
    """
    The command-line options that rebuild a recording's sources, once checked that they can be rebuilt.

    :param directory: The recording.
    :param manifest: Its :class:`~haystack_deep_research.run._recording.RecordingManifest`.
    :returns: ``--docs``, ``--no-web``, ``--search``, ``--search-url`` and ``--allow-host`` options.
    :raises RecordingError: If a folder is missing or changed since the recording, or the search is unknown.
    """
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
