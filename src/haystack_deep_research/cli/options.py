"""
The options of ``deep-research "question"``, one group per concern.

Each ``add_*_options(parser)`` function adds one group (it shows as its own section of ``--help``);
:func:`research_parser` builds the parser from :data:`OPTION_GROUPS`. A new option joins the group it belongs to, or
a new group function joins :data:`OPTION_GROUPS`. Numbers are checked here, so a bad value is a usage error in the
option's own terms (``argument --max-subtopics: must be an integer from 1 to 50``) before anything runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from haystack_deep_research.agents import APIS
from haystack_deep_research.cli.exit_codes import ExitCode
from haystack_deep_research.prompts import REPORT_TYPES
from haystack_deep_research.run.budget import MAX_COST_BUDGET, MAX_TIME_BUDGET_S, MAX_TOKEN_BUDGET
from haystack_deep_research.sources import SEARCH_NAMES

__all__ = [
    "MODES",
    "OPTION_GROUPS",
    "PROGRESS_MODES",
    "CommandParser",
    "add_display_options",
    "add_iterative_options",
    "add_model_options",
    "add_output_options",
    "add_research_options",
    "add_search_endpoint_options",
    "add_source_options",
    "bounded_int",
    "research_parser",
]

PROGRESS_MODES = ("auto", "rich", "plain", "none")
"""``--progress``: ``auto`` is ``rich`` when rich is installed and stderr is a terminal, else ``plain``."""

MAX_SUBTOPICS = 50
"""The most sub-topics one run may delegate (the factory's own limit)."""


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``deep-research: error: ... (see deep-research --help)``."""

    def error(self, message: str) -> NoReturn:
        """
        Print the error as one line and exit with the usage error status.

        :param message: What is wrong.
        :raises SystemExit: Always, with status 2.
        """
        self.exit(ExitCode.USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """
    :param low: The smallest value accepted.
    :param high: The largest value accepted.
    :returns: An argparse ``type`` reading an integer from ``low`` to ``high``; anything else is a one-line error.
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer from {low} to {high}; got {text!r}")
        return value

    return parse


def _bounded_number(high: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value <= high:  # NaN fails both comparisons
            raise argparse.ArgumentTypeError(f"must be a number above 0 and at most {high:g}; got {text!r}")
        return value

    return parse


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """
    Where the report and the evidence go: ``-o``, ``--sources``, ``--run-dir``, ``--json``.

    :param parser: The parser to add the group to.
    """
    group = parser.add_argument_group("output")
    group.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="Write the report to this file instead of stdout."
    )
    group.add_argument(
        "--sources", type=Path, metavar="FILE", help="Also write the evidence ledger as JSON to this file."
    )
    group.add_argument(
        "--run-dir",
        type=Path,
        metavar="DIR",
        help="Journal the run here; re-running with the same directory resumes it.",
    )
    group.add_argument(
        "--json",
        action="store_true",
        help="Print one JSON object on stdout (report, sources, citations, warnings, exit_reason, usage_by_phase, "
        "cost) instead of the Markdown report.",
    )


def add_research_options(parser: argparse.ArgumentParser) -> None:
    """
    How much research, and when it stops: ``--max-subtopics``, the budgets, ``--grounding``, ``--approve-plan``.

    :param parser: The parser to add the group to.
    """
    group = parser.add_argument_group("research and budgets")
    group.add_argument(
        "--max-subtopics",
        type=bounded_int(1, MAX_SUBTOPICS),
        metavar="N",
        default=5,
        help=f"Sub-topics to research, 1 to {MAX_SUBTOPICS} (default 5).",
    )
    group.add_argument(
        "--token-budget",
        type=bounded_int(1, MAX_TOKEN_BUDGET),
        metavar="N",
        help="Stop researching after this many tokens (all phases).",
    )
    group.add_argument(
        "--time-budget",
        type=_bounded_number(MAX_TIME_BUDGET_S),
        metavar="SECONDS",
        help="Stop researching after this many seconds.",
    )
    group.add_argument(
        "--max-cost",
        type=_bounded_number(MAX_COST_BUDGET),
        metavar="USD",
        help="Stop researching once the model calls have cost this many US dollars.",
    )
    group.add_argument(
        "--grounding", action="store_true", help="Judge each cited claim against its source and repair the report."
    )
    group.add_argument(
        "--approve-plan",
        action="store_true",
        help="Review each planned sub-topic at the terminal before it is researched: accept, edit or drop it.",
    )


def _length(text: str) -> int | str:
    """``--length``: a number of words, or a named length (checked by the factory, which names the accepted ones)."""
    return int(text) if text.strip().isdigit() else text.strip()


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """
    What the report looks like, and whether the question may be clarified first: ``--report-type``, ``--tone``,
    ``--length``, ``--clarify``.

    :param parser: The parser to add the group to.
    """
    group = parser.add_argument_group("report")
    group.add_argument(
        "--report-type",
        choices=tuple(REPORT_TYPES),
        help="research_report (default), detailed_report, outline, resource_list or executive_brief.",
    )
    group.add_argument(
        "--tone", help="objective (default), formal, analytical, informal, or a few words describing the tone."
    )
    group.add_argument(
        "--length",
        type=_length,
        metavar="WORDS|short|medium|long",
        help="The report's target length: words (100 to 20000), or short, medium, long.",
    )
    group.add_argument(
        "--clarify",
        action="store_true",
        help="Let the run ask one clarifying question first: asked on a terminal, else printed (exit status 3).",
    )


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """
    Which models, on which server: ``--model``, ``--small-model``, ``--role-model``, ``--base-url``, ``--api``.

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
        help="An OpenAI-compatible server, e.g. http://localhost:11434/v1 (env OPENAI_BASE_URL).",
    )
    group.add_argument(
        "--api",
        choices=APIS,
        help="chat (Chat Completions) or responses; default chat with --base-url (env DEEP_RESEARCH_API).",
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


MODES = ("deep", "iterative")
"""``--mode``: ``deep`` (parallel sub-researchers) or ``iterative`` (rounds of analysis and search)."""


def add_iterative_options(parser: argparse.ArgumentParser) -> None:
    """
    The research mode and what lasts across runs: ``--mode``, ``--depth``, ``--cache``, ``--cache-ttl``, ``--record``.

    :param parser: The parser to add the group to.
    """
    group = parser.add_argument_group("mode and cache")
    group.add_argument(
        "--mode", choices=MODES, default="deep", help="deep (sub-researchers, default) or iterative (depth rounds)."
    )
    group.add_argument(
        "--depth", type=bounded_int(1, 20), default=3, help="Iterative mode: rounds of analysis and search (3)."
    )
    group.add_argument("--cache", type=Path, help="Keep searches, pages and summaries here across runs.")
    group.add_argument(
        "--cache-ttl", type=_bounded_number(365 * 24 * 3600.0), help="Seconds a cached entry is used (one day)."
    )
    group.add_argument("--record", type=Path, help="Iterative mode: record the run here (replay it with replay DIR).")


def add_display_options(parser: argparse.ArgumentParser) -> None:
    """
    What stderr shows while the run goes on: ``--progress``, ``-q``.

    :param parser: The parser to add the group to.
    """
    group = parser.add_argument_group("progress")
    group.add_argument(
        "--progress",
        choices=PROGRESS_MODES,
        default="auto",
        help="rich: a live view of the phases and researchers; plain: one line per step; none: nothing. "
        "Default auto: rich when rich is installed and stderr is a terminal, else plain.",
    )
    group.add_argument(
        "-q", "--quiet", action="store_true", help="Do not print progress to stderr (same as --progress none)."
    )


OPTION_GROUPS: tuple[Callable[[argparse.ArgumentParser], None], ...] = (
    add_output_options,
    add_research_options,
    add_report_options,
    add_model_options,
    add_iterative_options,
    add_source_options,
    add_display_options,
)
"""The option groups of ``deep-research "question"``, in ``--help`` order."""


def _version() -> str:
    from haystack_deep_research import __version__  # the package imports the command line lazily

    return __version__


def research_parser() -> argparse.ArgumentParser:
    """:returns: The parser of ``deep-research "question"``."""
    parser = CommandParser(
        prog="deep-research",
        description="Research a question on the web and in your documents, and write a cited Markdown report.",
        epilog="Other commands: deep-research check REPORT.md, deep-research scan ITEMS --out rows.jsonl, "
        "deep-research mcp. Exit status: 0 report written, 1 run failed, 2 usage error, 130 interrupted, 3 "
        "clarification needed (--clarify without a terminal).",
    )
    parser.add_argument("question", help='The research question, quoted: deep-research "your question".')
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    for add_group in OPTION_GROUPS:
        add_group(parser)
    return parser
