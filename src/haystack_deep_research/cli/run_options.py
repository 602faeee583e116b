"""
The options a run was made with, kept in its run directory (``options.json``) so that ``update RUN_DIR`` researches
again the way the run did (and ``ask RUN_DIR`` asks with the run's own models and sources): the same depth,
grounding, documents, web, search and models, not the defaults.

The file holds the options as the command line gave them (``{"options": [["--depth", "2"], ["--no-web"], ...]}``,
paths made absolute, models and search resolved from their environment variables). Reading it checks every entry
against the options that may be recorded and parses them with the command's own parser, so a damaged or hostile file
is one line of error, never an option a run does not record (``--output``, ``--record``). Options given to ``update``
win over the recorded ones. Since recorded options may name a server or a host to reach (``--base-url``,
``--search-url``, ``--allow-host``), ``update`` says on stderr which ones it reuses.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research._untrusted.files import read_regular_file, write_file
from haystack_deep_research.cli.display import say
from haystack_deep_research.errors import LocalFileRefusedError, RunDirError

__all__ = [
    "OPTIONS_FILE",
    "RECORDED_OPTIONS",
    "flatten",
    "load_run_options",
    "merged_argv",
    "reuse_notice",
    "run_options",
    "save_run_options",
    "update_argv",
]

OPTIONS_FILE = "options.json"
"""The file of a run directory that holds the options the run was made with."""

RECORDED_OPTIONS: dict[str, tuple[str, str]] = {
    "depth": ("--depth", "value"),
    "grounding": ("--grounding", "flag"),
    "docs": ("--docs", "paths"),
    "no_web": ("--no-web", "flag"),
    "index_dir": ("--index-dir", "path"),
    "search": ("--search", "value"),
    "search_url": ("--search-url", "value"),
    "allow_host": ("--allow-host", "values"),
    "include_domain": ("--include-domain", "values"),
    "exclude_domain": ("--exclude-domain", "values"),
    "since": ("--since", "value"),
    "time_range": ("--time-range", "value"),
    "model": ("--model", "value"),
    "small_model": ("--small-model", "value"),
    "role_model": ("--role-model", "values"),
    "base_url": ("--base-url", "value"),
    "api": ("--api", "value"),
    "token_budget": ("--token-budget", "value"),
    "time_budget": ("--time-budget", "value"),
    "max_cost": ("--max-cost", "value"),
    "cache": ("--cache", "path"),
    "cache_ttl": ("--cache-ttl", "value"),
    "report_type": ("--report-type", "value"),
    "tone": ("--tone", "value"),
    "length": ("--length", "value"),
}
"""The options a run directory keeps, by their ``argparse`` name: the option and what it takes."""
_FLAGS = {flag: kind for flag, kind in RECORDED_OPTIONS.values()}
_MAX_BYTES = 256 * 1024


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    options: list[list[str]]


def run_options(args: argparse.Namespace, resolved: Mapping[str, Any]) -> list[list[str]]:
    """
    :param args: The parsed command line of the run.
    :param resolved: Values read from the environment (``model``, ``search``, ...), used where an option was not given.
    :returns: The recorded options, each ``[option]`` or ``[option, value]``.
    """
    recorded: list[list[str]] = []
    for name, (flag, kind) in RECORDED_OPTIONS.items():
        value = getattr(args, name, None) or resolved.get(name)
        if value is None or value is False or value == []:
            continue
        if kind == "flag":
            recorded.append([flag])
        elif kind in ("paths", "values"):
            recorded += [[flag, str(Path(v).expanduser().resolve()) if kind == "paths" else str(v)] for v in value]
        else:
            recorded.append([flag, str(Path(value).expanduser().resolve()) if kind == "path" else str(value)])
    return recorded


def save_run_options(run_dir: Path, options: list[list[str]]) -> None:
    """
    Write ``options.json`` into the run directory (atomically; the directory is made if needed).

    :param run_dir: The run directory.
    :param options: What :func:`run_options` returned.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    write_file(run_dir / OPTIONS_FILE, json.dumps({"options": options}, ensure_ascii=False, indent=1))


def load_run_options(run_dir: Path, parser: argparse.ArgumentParser) -> list[list[str]]:
    """
    :param run_dir: A run directory.
    :param parser: The command's parser, which checks each recorded value as it would on the command line.
    :returns: The options the run was made with; ``[]`` when the directory keeps none (a run of an older version).
    :raises RunDirError: If ``options.json`` is not a file of recorded options, in the message's terms.
    """
    path = run_dir / OPTIONS_FILE
    if not path.exists():
        return []
    fix = f"delete {path} to update with the default options, or research the question again"
    try:
        options = _Stored.model_validate(_safe_json.loads(read_regular_file(path, root=None, max_bytes=_MAX_BYTES)))
    except (OSError, LocalFileRefusedError, UnicodeDecodeError, json.JSONDecodeError, ValidationError) as error:
        why = type(error).__name__ if isinstance(error, ValidationError) else str(error)
        raise RunDirError(f"{path} is not a file of recorded options ({why}); {fix}.") from None
    for entry in options.options:
        kind = _FLAGS.get(entry[0]) if entry else None
        if kind is None or len(entry) != (1 if kind == "flag" else 2):
            raise RunDirError(f"{path} holds {entry!r}, which is not an option a run records; {fix}.")
    shown = io.StringIO()
    try:
        with contextlib.redirect_stderr(shown):
            parser.parse_args([*flatten(options.options), "--", "question"])
    except SystemExit:
        raise RunDirError(f"{path} holds an invalid option ({shown.getvalue().strip()}); {fix}.") from None
    return options.options


def flatten(options: Sequence[Sequence[str]]) -> list[str]:
    """:returns: The recorded options as command-line arguments."""
    return [token for entry in options for token in entry]


def merged_argv(recorded: Sequence[Sequence[str]], given: Sequence[str]) -> list[str]:
    """
    :param recorded: The recorded options.
    :param given: The arguments given to ``update``.
    :returns: The recorded options the arguments do not give again, then the arguments.
    """
    named = {token.split("=", 1)[0] for token in given if token.startswith("--")}
    return [*flatten([entry for entry in recorded if entry[0] not in named]), *given]


def reuse_notice(recorded: Sequence[Sequence[str]], given: Sequence[str], command: str = "update") -> str | None:
    """
    :param recorded: The recorded options.
    :param given: The arguments given to ``update``.
    :param command: The subcommand reusing them (``update``, ``ask``).
    :returns: The line that tells which recorded options the update reuses (they may name a server or a host to
        reach), or ``None`` when it reuses none or ``-q`` was given.
    """
    if "-q" in given or "--quiet" in given:
        return None
    kept = merged_argv(recorded, given)[: len(merged_argv(recorded, given)) - len(given)]
    return f"deep-research: {command} reuses the run's options: {shlex.join(kept)}" if kept else None


def update_argv(
    run_dir: Path, given: Sequence[str], parser: argparse.ArgumentParser, *, command: str = "update"
) -> list[str]:
    """
    The arguments ``update RUN_DIR`` (or ``ask RUN_DIR``) runs with: the run's recorded options, then those given;
    says on stderr which recorded ones it reuses (see :func:`reuse_notice`).

    :param run_dir: The run directory.
    :param given: The arguments given after it.
    :param parser: The command's parser (see :func:`load_run_options`).
    :param command: The subcommand, as the notice names it.
    :returns: The arguments.
    :raises RunDirError: If ``options.json`` is damaged.
    """
    recorded = load_run_options(run_dir, parser)
    if (notice := reuse_notice(recorded, given, command)) is not None:
        say(notice)
    return merged_argv(recorded, given)
