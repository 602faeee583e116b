"""
Defaults for every option of every command, from TOML files and from the environment, and the options a run directory
keeps (``options.json``) so that ``update RUN_DIR`` and ``ask RUN_DIR`` research the way the run did.

docs/cli.md ("Config file and environment") has the order in which a value wins, and why the working folder's file may
not set an option that names a server, a host, a path or code (:func:`trusted_only`) unless it is trusted; every fault
of a file or a variable is a :class:`~haystack_deep_research.errors.ConfigFileError`, shown as a one-line usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shlex
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from pydantic import BaseModel, ConfigDict, ValidationError

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research._untrusted.files import read_regular_file, write_file
from haystack_deep_research._untrusted.terminal import say
from haystack_deep_research.errors import ConfigFileError, ConfigurationError, LocalFileRefusedError, RunDirError
from haystack_deep_research.options.parsers import check_parser, mcp_parser, research_parser, scan_parser

__all__ = [
    "MAX_CONFIG_BYTES",
    "PREFIX",
    "add_config_option",
    "config_parsers",
    "environment_options",
    "environment_value",
    "environment_variables",
    "load_config",
    "parse_configured",
    "run_options",
    "save_run_options",
    "trusted_only",
    "update_argv",
]


CONFIG_VARIABLE = "DEEP_RESEARCH_CONFIG"  # names the config file, as --config does
LOCAL_CONFIG = Path("deep-research.toml")
"""The config file of the working folder, read when no other is named, and not trusted (see :func:`trusted_only`)."""
MAX_CONFIG_BYTES = 1024 * 1024


class ConfigFile(NamedTuple):
    """A config file to read, and whether the user chose it (named it, or keeps it in their own config folder)."""

    path: Path
    trusted: bool


def config_files(named: str | None, environ: Mapping[str, str] | None = None) -> list[ConfigFile]:
    """The files to read, the winner last: the named one, else ``./deep-research.toml`` (untrusted) and the user's."""
    if named:
        return [ConfigFile(Path(named), trusted=True)]
    environ = os.environ if environ is None else environ
    home = environ.get("XDG_CONFIG_HOME", "").strip()
    user = (Path(home) if home else Path.home() / ".config") / "deep-research" / "config.toml"
    found = [ConfigFile(LOCAL_CONFIG, trusted=False), ConfigFile(user, trusted=True)]
    return [file for file in found if os.path.lexists(file.path)]


def load_config(path: Path) -> dict[str, Any]:
    """:raises ConfigFileError: The file is missing, not a regular file, too large, not UTF-8 or not TOML."""
    try:
        data = read_regular_file(path, root=None, max_bytes=MAX_CONFIG_BYTES)  # a FIFO never blocks the command
    except LocalFileRefusedError as error:
        why = "not a regular file; give a TOML file."
        if error.reason == "too_large":
            why = f"over {MAX_CONFIG_BYTES // 1024} KiB; a config file is small."
        raise ConfigFileError(f"config file {path}: {why}") from error
    except OSError as error:
        raise ConfigFileError(f"config file {path}: cannot be read ({error.strerror}); check --config.") from error
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigFileError(f"config file {path}: not valid TOML: {error}") from error


PREFIX = "DEEP_RESEARCH_"
SDK_VARIABLES: dict[str, tuple[str, ...]] = {"base_url": ("OPENAI_BASE_URL",)}
"""The variables of the model SDK an option reads after its own ``DEEP_RESEARCH_<DEST>``, by the option's ``dest``."""

_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
_SKIPPED = (argparse._HelpAction, argparse._VersionAction)
_OWN = ("config", "trust_folder_config", "show_config")  # what chooses the configuration is never configured
_TRUSTED_ONLY = frozenset(
    {"base_url", "search_url", "allow_host", "host", "transport", "schema", "ray", "instructions"}
)  # instructions: the writer is told they are the user's own words
_Setting = tuple[Any, Any, str]  # an option's value, as converted and as written, and where it was read


def config_parsers() -> dict[str, Callable[[], argparse.ArgumentParser]]:
    """:returns: The builder of each command's parser, by the name of its table in the config file."""
    return {"research": research_parser, "scan": scan_parser, "mcp": mcp_parser, "check": check_parser}


def environment_variables(dest: str) -> tuple[str, ...]:
    """
    The variables the option reads, the first set one winning: ``DEEP_RESEARCH_<DEST>``, then the SDK's own
    (:data:`SDK_VARIABLES`); none for ``--config``, ``--trust-folder-config`` and ``--show-config``.
    """
    if dest == "config":
        return (CONFIG_VARIABLE,)
    return () if dest in _OWN else (PREFIX + dest.upper(), *SDK_VARIABLES.get(dest, ()))


def trusted_only(action: argparse.Action) -> bool:
    """Whether only a trusted file may set it: it names a server, a host, code or a path (docs/safety.md lists them)."""
    return action.dest in _TRUSTED_ONLY or action.type is Path


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The parser's configurable options by ``dest``: not positionals, ``--help``, ``--version`` or :data:`_OWN`."""
    return {
        action.dest: action
        for action in parser._actions
        if action.option_strings and not isinstance(action, _SKIPPED) and action.dest not in _OWN
    }


def _given(parser: argparse.ArgumentParser, argv: Sequence[str], option: str) -> str | bool | None:
    """What the command line gives ``option`` (as argparse reads it, abbreviations included): its value, or ``True``."""
    long_options = [name for name in parser._option_string_actions if name.startswith("--")]
    for index, argument in enumerate(argv):
        if argument == "--":
            return None
        name, equals, value = argument.partition("=")
        if not name.startswith("--"):
            continue
        exact = [each for each in long_options if each == name]
        matches = exact or ([each for each in long_options if each.startswith(name)] if parser.allow_abbrev else [])
        if matches == [option]:
            if parser._option_string_actions[option].nargs == 0:
                return True
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


def _value(action: argparse.Action, raw: Any, where: str, *, from_environment: bool) -> Any:
    if action.nargs == 0:
        return _switch(action, raw, where)
    if not (isinstance(action, argparse._AppendAction) or action.nargs in ("*", "+") or isinstance(action.nargs, int)):
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


def _aliases(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option's long names, without their dashes, by the dest they set."""
    return {
        option.lstrip("-").replace("-", "_"): action.dest
        for action in _options(parser).values()
        for option in action.option_strings
        if option.startswith("--")
    }


def _file_values(path: Path, command: str, parser: argparse.ArgumentParser) -> dict[str, tuple[Any, str]]:
    """The file's values for ``command`` by dest, each with where it was read; every key of the file checked."""
    table = load_config(path)
    parsers = {name: parser if name == command else build() for name, build in config_parsers().items()}
    known = {name: set(_options(each)) for name, each in parsers.items()}
    by_table = {name: _aliases(each) for name, each in parsers.items()}
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


def _configured(
    parser: argparse.ArgumentParser,
    files: Sequence[ConfigFile],
    command: str,
    environ: Mapping[str, str],
    *,
    trust_folder: bool,
) -> dict[str, _Setting]:
    """Every option's configured value by dest, as the module docstring orders them: a variable, else a file."""
    options = _options(parser)
    raw: dict[str, tuple[Any, str, bool]] = {}
    for file in files:  # the one that wins last
        values = {dest: each for dest, each in _file_values(file.path, command, parser).items() if dest in options}
        refused = [where for dest, (_, where) in values.items() if trusted_only(options[dest])]
        if refused and not (file.trusted or trust_folder):  # before any value is used, let alone sent anywhere
            keys = ", ".join(where.removeprefix(f"config file {file.path}: ") for where in refused)
            raise ConfigFileError(
                f"config file {file.path}: {keys}: the working folder's config file may not set a server, a host, a "
                f"path or code; read it, then give --trust-folder-config, or name it with --config {file.path} or "
                f"{CONFIG_VARIABLE}"
            )
        raw |= {dest: (value, where, False) for dest, (value, where) in values.items()}
    for dest in options:
        if (found := _variable(dest, environ)) is not None:
            raw[dest] = (*found, True)
    return {
        dest: (_value(options[dest], value, where, from_environment=from_environment), value, where)
        for dest, (value, where, from_environment) in raw.items()
    }


def _variable(dest: str, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """The text of the option's first set variable, and where it was read."""
    for variable in environment_variables(dest):
        if text := environ.get(variable, "").strip():
            return text, f"environment variable {variable}"
    return None


def environment_value(dest: str, environ: Mapping[str, str] | None = None) -> Any:
    """
    The value the environment alone gives an option of the main command (``None`` when unset), read as
    :func:`parse_configured` reads it.

    :raises ConfigFileError: If the variable holds a value the option refuses.
    """
    found = _variable(dest, os.environ if environ is None else environ)
    return _value(_options(research_parser())[dest], *found, from_environment=True) if found else None


def _shown(value: Any) -> str:
    """A value as ``--show-config`` prints it: ``repr`` escapes what a terminal would obey."""
    if isinstance(value, list):
        return ", ".join(_shown(each) for each in value)
    return repr(str(value) if isinstance(value, Path) else value)


def _show_config(
    parser: argparse.ArgumentParser,
    argv: Sequence[str],
    files: Sequence[ConfigFile],
    configured: Mapping[str, _Setting],
) -> NoReturn:
    """Print every option the command line, the environment or a config file sets, with where it was set; exit 0."""
    options = _options(parser)
    for action in parser._actions:  # only what the command line gives is parsed now
        action.default, action.required = argparse.SUPPRESS, False
    given = vars(parser.parse_known_args(argv)[0])
    read = ", ".join(f"{file.path}{'' if file.trusted else ' (working folder)'}" for file in files) or "none"
    lines = [f"config files: {read}"]
    for dest, action in options.items():
        name = next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])
        if dest in given:
            lines.append(f"{name} = {_shown(given[dest])}  (command line)")
        elif dest in configured:
            lines.append(f"{name} = {_shown(configured[dest][1])}  ({configured[dest][2]})")
    say("\n".join(lines), file=sys.stdout)
    parser.exit(0)


def add_config_option(parser: argparse.ArgumentParser) -> None:
    """Add the ``configuration`` group (``--config``, ``--trust-folder-config``, ``--show-config``) to a parser."""
    if "--config" in parser._option_string_actions:
        return
    group = parser.add_argument_group("configuration")
    group.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help=f"Read option defaults from this TOML file only (env {CONFIG_VARIABLE}; default "
        "~/.config/deep-research/config.toml over ./deep-research.toml). Every option also reads "
        "DEEP_RESEARCH_<OPTION>, which wins over the file.",
    )
    group.add_argument(
        "--trust-folder-config",
        action="store_true",
        help="Let ./deep-research.toml set the options that name a server, a host, a path or code (refused by "
        "default: the file may come with a folder you did not write).",
    )
    group.add_argument(
        "--show-config",
        action="store_true",
        help="Print the config files read and each option the command line, a variable or a file sets, with where "
        "it was set; then exit.",
    )


def parse_configured(
    parser: argparse.ArgumentParser, argv: Sequence[str], *, command: str, environ: Mapping[str, str] | None = None
) -> argparse.Namespace:
    """
    Parse a command's arguments with the defaults of the config file and the environment (nothing is read for ``-h``
    and ``--version``: they always answer).

    :returns: The parsed arguments, with ``configured_from``: where each option no flag gave was read.
    :raises SystemExit: As ``parse_args`` does (a bad config value, or a refused key of the working folder's file, is
        a usage error); with status 0 after ``--show-config``.
    """
    add_config_option(parser)
    argv = list(argv)
    before = argv[: argv.index("--")] if "--" in argv else argv
    if {"-h", "--help", "--version"} & set(before):  # they answer whatever the configuration holds
        return parser.parse_args(argv)
    environ = os.environ if environ is None else environ
    try:
        named = _given(parser, argv, "--config") or environ.get(CONFIG_VARIABLE, "").strip()
        files = config_files(str(named) if named else None, environ)
        trust = bool(_given(parser, argv, "--trust-folder-config"))
        configured = _configured(parser, files, command, environ, trust_folder=trust)
    except ConfigFileError as error:
        parser.error(str(error))
    if _given(parser, argv, "--show-config"):
        _show_config(parser, argv, files, configured)
    values = {dest: value for dest, (value, _, _) in configured.items()}
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
    given = vars(parser.parse_known_args(argv, namespace=argparse.Namespace(**dict.fromkeys(vars(args))))[0])
    args.configured_from = {dest: where for dest, (_, _, where) in configured.items() if given.get(dest) is None}
    if any(not file.trusted for file in files):  # the folder's file may not be the user's own: say what it sets
        folder = f"config file {LOCAL_CONFIG}: "
        taken = [options[d].option_strings[-1] for d, (_, _, where) in configured.items() if where.startswith(folder)]
        say(
            f"{parser.prog}: reading options from ./{LOCAL_CONFIG} of the working folder: {', '.join(taken) or 'none'} "
            "(--show-config shows where each option comes from)"
        )
    return args


def environment_options() -> argparse.Namespace:
    """
    The main command's options with no flag given, for a server (MCP, Hayhooks, a scan's item), so that a setting means
    the same to a server as to the command; ``ConfigurationError`` where the command would refuse it.
    """
    try:
        return parse_configured(research_parser(), ["-"], command="research")
    except SystemExit as stop:  # the parser said why on stderr, in one line
        raise ConfigurationError(
            "the environment or the config file holds a setting the options refuse (see the line above)."
        ) from stop


OPTIONS_FILE = "options.json"  # in a run directory: the options the run was made with

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
    "outline": ("--outline", "path"),
    "instructions": ("--instructions", "value"),
}
"""The options a run directory keeps, by their ``argparse`` name: the option and what it takes."""
_FLAGS = {flag: kind for flag, kind in RECORDED_OPTIONS.values()}
_MAX_BYTES = 256 * 1024


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    options: list[list[str]]


def run_options(args: argparse.Namespace, resolved: Mapping[str, Any]) -> list[list[str]]:
    """The recorded options, each ``[option]`` or ``[option, value]``."""
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
    """Write ``options.json`` into the run directory (atomically; the directory is made if needed)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    write_file(run_dir / OPTIONS_FILE, json.dumps({"options": options}, ensure_ascii=False, indent=1))


def load_run_options(run_dir: Path, parser: argparse.ArgumentParser) -> list[list[str]]:
    """The options the run was made with (``[]`` when it kept none); ``RunDirError`` for a damaged ``options.json``."""
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
            parser.parse_args([*(token for entry in options.options for token in entry), "--", "question"])
    except SystemExit:
        raise RunDirError(f"{path} holds an invalid option ({shown.getvalue().strip()}); {fix}.") from None
    return options.options


def update_argv(
    run_dir: Path, given: Sequence[str], parser: argparse.ArgumentParser, *, command: str = "update"
) -> list[str]:
    """The arguments ``update RUN_DIR`` (or ``ask``) runs with: the recorded options not given, then those given."""
    named = {token.split("=", 1)[0] for token in given if token.startswith("--")}
    kept = [token for entry in load_run_options(run_dir, parser) if entry[0] not in named for token in entry]
    if kept and "-q" not in given and "--quiet" not in given:
        say(f"deep-research: {command} reuses the run's options: {shlex.join(kept)}")
    return [*kept, *given]
