"""
Defaults for every option of every command, from a TOML file and from the environment.

An option's value comes from, first to last: the command line; its environment variable ``DEEP_RESEARCH_<DEST>``
(the option's name in capitals, dashes as underscores: ``--max-subtopics`` is ``DEEP_RESEARCH_MAX_SUBTOPICS``); the
config file; the option's own default.

The config file is ``--config FILE``, else the file ``DEEP_RESEARCH_CONFIG`` names, else ``./deep-research.toml`` if
there is one, else ``$XDG_CONFIG_HOME/deep-research/config.toml`` (``~/.config/deep-research/config.toml``) if there
is one. Its top-level keys apply to every command that has the option; a table per command (``[research]`` for
``deep-research "question"`` and its ``replay`` and ``update``, ``[scan]``, ``[mcp]``, ``[check]``) holds that
command's own values and wins over the top-level keys. A key is the option's name without its dashes
(``max-subtopics`` or ``max_subtopics``). A switch takes ``true`` or ``false``; a repeatable option a list (in a
variable: separated by semicolons, since a value may hold commas).

Nothing here knows an option by name: :func:`parse_configured` walks the parser's actions and converts every value
with the option's own ``type`` and ``choices``, so a new option is configurable the moment it is added. An unknown
key, a bad value, a file that is not a regular file, over :data:`MAX_CONFIG_BYTES` or not TOML, raises
:class:`~haystack_deep_research.errors.ConfigFileError`, shown as the command's one-line usage error (exit status 2).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from haystack_deep_research.cli.config_file import (
    CONFIG_VARIABLE,
    LOCAL_CONFIG,
    MAX_CONFIG_BYTES,
    default_config_path,
    load_config,
)
from haystack_deep_research.cli.display import say
from haystack_deep_research.errors import ConfigFileError, ConfigurationError

__all__ = [
    "CONFIG_VARIABLE",
    "LOCAL_CONFIG",
    "MAX_CONFIG_BYTES",
    "PREFIX",
    "add_config_option",
    "config_parsers",
    "default_config_path",
    "environment_options",
    "environment_variable",
    "load_config",
    "parse_configured",
]

PREFIX = "DEEP_RESEARCH_"
"""The prefix of every option's environment variable."""

_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
_SKIPPED = (argparse._HelpAction, argparse._VersionAction)
_SECTIONS = ("research", "scan", "mcp", "check")


def config_parsers() -> dict[str, Callable[[], argparse.ArgumentParser]]:
    """:returns: The builder of each command's parser, by the name of its table in the config file."""
    from haystack_deep_research.cli.options import research_parser  # the commands import this module
    from haystack_deep_research.cli.parsers import check_parser, mcp_parser, scan_parser

    builders = {"research": research_parser, "scan": scan_parser, "mcp": mcp_parser, "check": check_parser}
    return {name: builders[name] for name in _SECTIONS}


def environment_variable(dest: str) -> str:
    """:returns: The environment variable of the option whose ``dest`` is given: ``DEEP_RESEARCH_<DEST>``."""
    return PREFIX + dest.upper()


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The parser's configurable options by ``dest``: not positionals, ``--help``, ``--version`` or ``--config``."""
    return {
        action.dest: action
        for action in parser._actions
        if action.option_strings and not isinstance(action, _SKIPPED) and action.dest != "config"
    }


def _given_config(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """The ``--config`` value on the command line (as argparse reads it, abbreviations included)."""
    long_options = [option for option in parser._option_string_actions if option.startswith("--")]
    for index, argument in enumerate(argv):
        if argument == "--":
            return None
        name, equals, value = argument.partition("=")
        if not name.startswith("--"):
            continue
        exact = [option for option in long_options if option == name]
        matches = exact or ([o for o in long_options if o.startswith(name)] if parser.allow_abbrev else [])
        if matches == ["--config"]:
            return value if equals else (argv[index + 1] if index + 1 < len(argv) else None)
    return None


def _accepted(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "true or false (also 1/0, yes/no)"
    if action.choices is not None:
        return "one of " + ", ".join(str(choice) for choice in action.choices)
    return f"a value of {'/'.join(action.option_strings)} {action.metavar or action.dest.upper()}"


def _one(action: argparse.Action, raw: Any, where: str) -> Any:
    """One value of the option, converted and checked as argparse would."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise ConfigFileError(f"{where}: expected {_accepted(action)}; got {raw!r}")
    text = str(raw)
    convert = action.type if callable(action.type) else str
    try:
        value = convert(text)
    except argparse.ArgumentTypeError as error:
        raise ConfigFileError(f"{where}: {error}") from error
    except (TypeError, ValueError) as error:
        raise ConfigFileError(f"{where}: expected {_accepted(action)}; got {text!r}") from error
    if action.choices is not None and value not in action.choices:
        raise ConfigFileError(f"{where}: expected {_accepted(action)}; got {text!r}")
    return value


def _switch(action: argparse.Action, raw: Any, where: str) -> Any:
    word = str(raw).strip().lower() if isinstance(raw, str | int) else None
    if raw is True or (word in _TRUE and raw is not False):
        on = True
    elif raw is False or word in _FALSE:
        on = False
    else:
        raise ConfigFileError(f"{where}: expected {_accepted(action)}; got {raw!r}")
    if isinstance(action, argparse.BooleanOptionalAction) or isinstance(action.const, bool):
        return on  # store_true, store_false: the value of the option's dest
    return action.const if on else action.default


def _is_list(action: argparse.Action) -> bool:
    return isinstance(action, argparse._AppendAction) or action.nargs in ("*", "+") or isinstance(action.nargs, int)


def _value(action: argparse.Action, raw: Any, where: str, *, from_environment: bool) -> Any:
    if action.nargs == 0:
        return _switch(action, raw, where)
    if not _is_list(action):
        return _one(action, raw, where)
    if from_environment:
        # Semicolons, not commas: a value may hold commas itself (--price MODEL=INPUT,OUTPUT).
        items: list[Any] = [item.strip() for item in str(raw).split(";") if item.strip()]
    else:
        items = raw if isinstance(raw, list) else [raw]
    values = [_one(action, item, where) for item in items]
    if isinstance(action.nargs, int) and len(values) != action.nargs:
        raise ConfigFileError(f"{where}: expected {action.nargs} values; got {len(values)}")
    return values


def _key(name: str, aliases: Mapping[str, str] | None = None) -> str:
    """The dest a key names: the option's dest, or its long name without dashes (``price`` for ``prices``)."""
    key = name.replace("-", "_")
    return (aliases or {}).get(key, key)


def _aliases(parsers: Sequence[argparse.ArgumentParser]) -> dict[str, str]:
    """Each option's long names, without their dashes, by the dest they set."""
    return {
        option.lstrip("-").replace("-", "_"): action.dest
        for parser in parsers
        for action in _options(parser).values()
        for option in action.option_strings
        if option.startswith("--")
    }


def _file_values(path: Path, command: str, parser: argparse.ArgumentParser) -> dict[str, tuple[Any, str]]:
    """The file's values for ``command`` by dest, each with where it was read; every key of the file checked."""
    table = load_config(path)
    parsers = {name: parser if name == command else build() for name, build in config_parsers().items()}
    known = {name: set(_options(each)) for name, each in parsers.items()}
    by_table = {name: _aliases([each]) for name, each in parsers.items()}
    aliases = {key: dest for table in by_table.values() for key, dest in table.items()} | by_table.get(command, {})
    every = set().union(*known.values())
    values: dict[str, tuple[Any, str]] = {}
    for name, raw in table.items():
        if isinstance(raw, dict):
            if name not in known:
                sections = ", ".join(f"[{section}]" for section in known)
                raise ConfigFileError(
                    f"config file {path}: unknown table [{name}]; the tables are {sections} (replay and update read "
                    "[research])."
                )
            for key, value in raw.items():
                if _key(key, by_table[name]) not in known[name]:
                    accepted = ", ".join(sorted(known[name]))
                    raise ConfigFileError(f"config file {path}: [{name}] unknown key {key!r}; the keys are {accepted}.")
                if name == command:
                    values[_key(key, by_table[name])] = (value, f"config file {path}: [{name}] {key}")
        elif _key(name, aliases) not in every:
            raise ConfigFileError(
                f"config file {path}: unknown key {name!r}; the top-level keys are the options of any command "
                f"({', '.join(sorted(every))}) and the tables {', '.join(known)}."
            )
        elif _key(name, aliases) in known.get(command, set()):
            values.setdefault(_key(name, aliases), (raw, f"config file {path}: {name}"))  # the command's own table wins
    return values


def _config_path(parser: argparse.ArgumentParser, argv: Sequence[str], environ: Mapping[str, str]) -> Path | None:
    given = _given_config(parser, argv) or environ.get(CONFIG_VARIABLE, "").strip()
    return Path(given) if given else default_config_path(environ)


def _configured(
    parser: argparse.ArgumentParser, path: Path | None, command: str, environ: Mapping[str, str]
) -> dict[str, Any]:
    """Every option's configured value by dest: its variable's, else the file's."""
    options = _options(parser)
    from_file = _file_values(path, command, parser) if path else {}
    raw = {key: (value, where, False) for key, (value, where) in from_file.items()}
    for dest in options:
        text = environ.get(environment_variable(dest), "").strip()
        if text:
            raw[dest] = (text, f"environment variable {environment_variable(dest)}", True)
    return {
        dest: _value(options[dest], value, where, from_environment=from_environment)
        for dest, (value, where, from_environment) in raw.items()
        if dest in options
    }


def add_config_option(parser: argparse.ArgumentParser) -> None:
    """
    Add ``--config FILE`` to a command's parser, in its own ``configuration`` section of ``--help``.

    :param parser: The parser; one that has ``--config`` already is left as it is.
    """
    if "--config" in parser._option_string_actions:
        return
    parser.add_argument_group("configuration").add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help=f"Read option defaults from this TOML file (env {CONFIG_VARIABLE}; default ./deep-research.toml, "
        "else ~/.config/deep-research/config.toml). Every option also reads DEEP_RESEARCH_<OPTION>.",
    )


def parse_configured(
    parser: argparse.ArgumentParser,
    argv: Sequence[str],
    *,
    command: str,
    environ: Mapping[str, str] | None = None,
) -> argparse.Namespace:
    """
    Parse a command's arguments with the defaults of the config file and the environment.

    Adds ``--config FILE`` to the parser. With ``-h``, ``--help`` or ``--version`` nothing is read: they always answer.

    :param parser: The command's parser; its ``error`` shows a :class:`ConfigFileError` (exit status 2).
    :param argv: The arguments.
    :param command: The config file's table for the command: ``research``, ``scan``, ``mcp`` or ``check``.
    :param environ: The environment (``os.environ`` by default).
    :returns: The parsed arguments.
    :raises SystemExit: As ``parse_args`` does, for ``--help`` and usage errors (bad config values included).
    """
    add_config_option(parser)
    argv = list(argv)
    before = argv[: argv.index("--")] if "--" in argv else argv
    if {"-h", "--help", "--version"} & set(before):  # they answer whatever the configuration holds
        return parser.parse_args(argv)
    environ = os.environ if environ is None else environ
    try:
        path = _config_path(parser, argv, environ)
        values = _configured(parser, path, command, environ)
    except ConfigFileError as error:
        parser.error(str(error))
    options = _options(parser)
    # An append option's value is set after parsing, so that the option given again replaces it, not extends it.
    lists = {dest: value for dest, value in values.items() if isinstance(options[dest], argparse._AppendAction)}
    for dest in values:
        options[dest].required = False  # a value from the file or the environment satisfies a required option
    parser.set_defaults(**{dest: None if dest in lists else value for dest, value in values.items()})
    args = parser.parse_args(argv)
    for dest, value in lists.items():
        if getattr(args, dest) is None:
            setattr(args, dest, value)
    if path == LOCAL_CONFIG:  # a file of the working folder may not be the user's own: say that it is read
        say(f"{parser.prog}: reading options from ./{LOCAL_CONFIG} of the working folder")
    return args


def environment_options() -> argparse.Namespace:
    """
    The options of a server (the MCP server, the Hayhooks wrapper, a scan's item) that no command line gives: read
    exactly as the command line's defaults are, from ``DEEP_RESEARCH_<OPTION>`` variables and the config file (see
    :mod:`.config`), so a setting means the same to a server as to the command.

    :returns: The main command's options with no flag given.
    :raises ConfigurationError: If a variable or the config file holds a value the option refuses.
    """
    from haystack_deep_research.cli.options import research_parser  # the commands import this module

    try:
        return parse_configured(research_parser(), ["-"], command="research")
    except SystemExit as stop:  # the parser said why on stderr, in one line
        raise ConfigurationError(
            "the environment or the config file holds a setting the options refuse (see the line above)."
        ) from stop
