"""
docs/cli.md lists every command and every option as the parsers define them.

The option tables of docs/cli.md sit between ``<!-- cli-reference: COMMAND -->`` and ``<!-- /cli-reference: COMMAND
-->`` markers and are generated from the parsers; the prose around them is written by hand. After changing an option,
regenerate them (from the repository root)::

    PYTHONPATH=src python tests/cli/test_cli_reference.py
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

from haystack_deep_research.cli import research
from haystack_deep_research.options import config

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
_BLOCK = re.compile(r"(<!-- cli-reference: (?P<name>[\w-]+) -->\n).*?(<!-- /cli-reference: (?P=name) -->)", re.S)


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """The parser of every command: ``research`` (the question) and each subcommand, as ``--help`` shows it."""
    builders: dict[str, Callable[[], argparse.ArgumentParser]] = dict(config.config_parsers())
    for name in research.SUBCOMMANDS:
        builders.setdefault(name, partial(research.subcommand_parser, name))
    parsers = {}
    for name, build in builders.items():
        parsers[name] = parser = build()
        if name in config.config_parsers():
            config.add_config_option(parser)
    return parsers


def _cell(text: str) -> str:
    """Table text: a pipe would end the cell, and ``\\|`` shows literally on the documentation site."""
    return " ".join(text.split()).replace("|", "&#124;")


def _names(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    return ", ".join(f"`{option}`" for option in action.option_strings)


def _value(action: argparse.Action) -> str:
    if action.nargs == 0 or not action.option_strings:
        return ""
    if action.choices is not None:
        return ", ".join(f"`{choice}`" for choice in action.choices)
    return _cell(str(action.metavar or action.dest.upper()))


def _default(action: argparse.Action) -> str:
    if action.default in (None, False, [], argparse.SUPPRESS) or action.nargs == 0:
        return ""
    return f"`{action.default}`"


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    expanded = parser._get_formatter()._expand_help(action) if action.help else ""
    repeatable = " Repeatable." if isinstance(action, argparse._AppendAction) and "repeatable" not in expanded else ""
    return _cell(expanded + repeatable)


def _variable(command: str, action: argparse.Action) -> str:
    """The option's environment variables; replay and update take those of ``deep-research`` after their directory."""
    configurable = command in config.config_parsers() and not isinstance(action, argparse._VersionAction)
    if not action.option_strings or not configurable:
        return ""
    return " or ".join(f"`{variable}`" for variable in config.environment_variables(action.dest))


def render(name: str, parser: argparse.ArgumentParser) -> str:
    """:returns: The option tables of one command, one per section of its ``--help``."""
    lines = []
    for group in parser._action_groups:
        actions = [action for action in group._group_actions if not isinstance(action, argparse._HelpAction)]
        if not actions:
            continue
        lines += [f"**{(group.title or 'options').capitalize()}**", ""]
        lines += ["| option | value | environment | default | meaning |", "|---|---|---|---|---|"]
        for action in actions:
            cells = (_names(action), _value(action), _variable(name, action), _default(action), _help(parser, action))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def regenerated(page: str) -> str:
    """:returns: The page with every command's tables generated anew from the parsers."""
    parsers = command_parsers()
    return _BLOCK.sub(lambda m: m.group(1) + "\n" + render(m["name"], parsers[m["name"]]) + "\n" + m.group(3), page)


def test_every_command_has_its_tables_in_the_page() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert [m["name"] for m in _BLOCK.finditer(page)] == list(command_parsers())


def test_the_tables_are_those_the_parsers_give() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert page == regenerated(page), (
        "docs/cli.md is out of date: run PYTHONPATH=src python tests/cli/test_cli_reference.py"
    )


def test_every_option_of_every_command_is_listed() -> None:
    page = PAGE.read_text(encoding="utf-8")
    blocks = {m["name"]: m.group(0) for m in _BLOCK.finditer(page)}
    for name, parser in command_parsers().items():
        for action in (a for a in parser._actions if not isinstance(a, argparse._HelpAction)):  # -h: every command
            for option in action.option_strings:
                assert f"`{option}`" in blocks.get(name, ""), f"{name}: {option} is missing from docs/cli.md"


def test_a_new_option_shows_in_the_tables() -> None:
    parser = config.config_parsers()["research"]()
    parser.add_argument_group("sources").add_argument("--search-mirror", metavar="URL", help="A search | server.")

    table = render("research", parser)

    assert "| `--search-mirror` | URL | `DEEP_RESEARCH_SEARCH_MIRROR` |  | A search &#124; server. |" in table


if __name__ == "__main__":
    PAGE.write_text(regenerated(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    sys.exit(0)
