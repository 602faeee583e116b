"""
The options of ``deep-research "question"``, one group per concern.

Each ``add_*_options(parser)`` function adds one group (it shows as its own section of ``--help``);
:func:`research_parser` builds the parser from :data:`OPTION_GROUPS`. The ``models`` and ``sources`` groups are every
command's (see :mod:`.shared_options`). A new option joins the group it belongs to, or
a new group function joins :data:`OPTION_GROUPS`. Numbers are checked here, so a bad value is a usage error in the
option's own terms (``argument --max-subtopics: must be an integer from 1 to 50``) before anything runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from haystack_deep_research._prompts import REPORT_TYPES
from haystack_deep_research.cli.exit_codes import HELP_EPILOG, ExitCode
from haystack_deep_research.cli.numbers import bounded_int, bounded_number
from haystack_deep_research.cli.shared_options import add_model_options, add_source_options
from haystack_deep_research.settings import MAX_COST_BUDGET, MAX_TIME_BUDGET_S, MAX_TOKEN_BUDGET

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
    "add_source_options",
    "bounded_int",
    "research_parser",
]

PROGRESS_MODES = ("auto", "rich", "plain", "none")
"""``--progress``: ``auto`` is ``rich`` when rich is installed and stderr is a terminal, else ``plain``."""

MAX_SUBTOPICS = 50
"""The most sub-topics one run may delegate (the factory's own limit)."""


class CommandParser(argparse.ArgumentParser):
    """
    An argument parser whose errors are one line: ``deep-research: error: ... (see deep-research --help)``, and whose
    ``--help`` ends with the commands and the exit status (:data:`~.exit_codes.HELP_EPILOG`).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("epilog", HELP_EPILOG)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """
        Print the error as one line, through the door to the terminal, and exit with the usage error status.

        :param message: What is wrong.
        :raises SystemExit: Always, with status 2.
        """
        from haystack_deep_research.cli.display import terminal_text  # the display imports the options

        line = terminal_text(f"{self.prog}: error: {message} (see {self.prog} --help)", one_line=True)
        self.exit(ExitCode.USAGE, line + "\n")  # through the door: a config file's table name is written by others


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """
    Where the report and the evidence go: ``-o``, ``--sources``, ``--run-dir``, ``--json``.

    :param parser: The parser to add the group to.
    """
    group = parser.add_argument_group("output")
    group.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="Write the report to this file instead of stdout (.html, .docx, .pdf: an export; .csv, .xlsx: the "
        "evidence table).",
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
        type=bounded_number(MAX_TIME_BUDGET_S),
        metavar="SECONDS",
        help="Stop researching after this many seconds.",
    )
    group.add_argument(
        "--max-cost",
        type=bounded_number(MAX_COST_BUDGET),
        metavar="USD",
        help="Stop researching once the model calls have cost this many US dollars.",
    )
    group.add_argument(
        "--grounding",
        action="store_true",
        help="Judge each claim (cited or not) against what was read and repair the report.",
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
        "--cache-ttl", type=bounded_number(365 * 24 * 3600.0), help="Seconds a cached entry is used (one day)."
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
    )
    parser.add_argument("question", help='The research question, quoted: deep-research "your question".')
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    for add_group in OPTION_GROUPS:
        add_group(parser)
    return parser
