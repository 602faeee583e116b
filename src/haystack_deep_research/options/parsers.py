"""
The options of every command, apart from what the commands do, so that the config layer, the servers and the docs can
read them without importing the commands. Every command takes the ``models`` and ``sources`` groups from here
(:func:`add_shared_options`), so an option means the same on each; what they become is in :mod:`.arguments`. Numbers
are checked here, so a bad value is a one-line usage error before anything runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from haystack_deep_research._prompts import REPORT_TYPES
from haystack_deep_research._untrusted.terminal import terminal_text
from haystack_deep_research.agents.models import APIS, DEFAULT_MAX_RETRIES, DEFAULT_MODEL, DEFAULT_TIMEOUT_S
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.options.exit_codes import HELP_EPILOG, ExitCode
from haystack_deep_research.settings import Price
from haystack_deep_research.settings.grouped import MAX_COST_BUDGET, MAX_TIME_BUDGET_S, MAX_TOKEN_BUDGET
from haystack_deep_research.sources.selection import SEARCH_NAMES

__all__ = [
    "OPTION_GROUPS",
    "CommandParser",
    "add_display_options",
    "add_output_options",
    "bounded_int",
    "check_parser",
    "mcp_parser",
    "parse_price",
    "research_parser",
    "scan_parser",
]


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type`` reading an integer from ``low`` to ``high``; anything else is a one-line error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer from {low} to {high}; got {text!r}")
        return value

    return parse


def bounded_number(high: float) -> Callable[[str], float]:
    """An argparse ``type`` reading a number above 0 and at most ``high``; anything else is a one-line error."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value <= high:  # NaN fails both comparisons
            raise argparse.ArgumentTypeError(f"must be a number above 0 and at most {high:g}; got {text!r}")
        return value

    return parse


MAX_TIMEOUT_S = 3600.0
MAX_RETRIES = 20
MAX_TOKENS = 1_000_000


def parse_price(text: str) -> tuple[str, Price]:
    """
    ``--price MODEL=INPUT,OUTPUT``: a model's price in US dollars per million input and output tokens.

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
    """The ``models`` group: which models, on which server, what each call may take, their prices."""
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
        type=bounded_number(MAX_TIMEOUT_S),
        metavar="SECONDS",
        help=f"Seconds one model request may take ({DEFAULT_TIMEOUT_S:g}; env DEEP_RESEARCH_TIMEOUT).",
    )
    group.add_argument(
        "--retries",
        type=bounded_int(0, MAX_RETRIES),
        metavar="N",
        help=f"Retries of a failed model request, 0 to {MAX_RETRIES} ({DEFAULT_MAX_RETRIES}; env "
        "DEEP_RESEARCH_RETRIES).",
    )
    group.add_argument(
        "--max-tokens",
        type=bounded_int(1, MAX_TOKENS),
        metavar="N",
        help="The most tokens one model reply may hold (no cap by default; env DEEP_RESEARCH_MAX_TOKENS).",
    )
    group.add_argument(
        "--no-tool-choice",
        action="store_true",
        help='With --base-url: do not send tool_choice "auto" with the tools (env DEEP_RESEARCH_NO_TOOL_CHOICE=1).',
    )


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """The ``sources`` group: what the researchers search."""
    group = parser.add_argument_group("sources")
    group.add_argument(
        "--search",
        choices=SEARCH_NAMES,
        help="Web search: auto (Tavily with TAVILY_API_KEY, else keyless ddgs), tavily or ddgs "
        "(env DEEP_RESEARCH_SEARCH).",
    )
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
    group.add_argument(
        "--include-domain",
        action="append",
        default=[],
        metavar="DOMAIN",
        help="Search and read only this domain and its subdomains (e.g. who.int); repeatable.",
    )
    group.add_argument(
        "--exclude-domain",
        action="append",
        default=[],
        metavar="DOMAIN",
        help="Never search or read this domain or its subdomains; repeatable.",
    )
    recency = group.add_mutually_exclusive_group()
    recency.add_argument(
        "--since", metavar="DATE", help="Keep only search results published on or after this date (YYYY-MM-DD)."
    )
    recency.add_argument(
        "--time-range",
        choices=("day", "week", "month", "year"),
        help="Keep only search results published within this window ending today.",
    )
    group.add_argument(
        "--docs", action="append", default=[], type=Path, metavar="FOLDER", help="Also search this folder; repeatable."
    )
    group.add_argument("--no-web", action="store_true", help="Research the --docs folders only: no web search.")
    group.add_argument(
        "--index-dir", type=Path, metavar="DIR", help="Keep the --docs indexes here (default: the user's cache)."
    )


def add_shared_options(parser: argparse.ArgumentParser) -> None:
    """Add the options every command shares: the ``models`` and ``sources`` groups."""
    add_model_options(parser)
    add_source_options(parser)


PROGRESS_MODES = ("auto", "rich", "plain", "none")
"""``--progress``: ``auto`` is ``rich`` when rich is installed and stderr is a terminal, else ``plain``."""

MAX_SUBTOPICS = 50  # the factory's own limit


class CommandParser(argparse.ArgumentParser):
    """
    An argument parser whose errors are one line: ``deep-research: error: ... (see deep-research --help)``, and whose
    ``--help`` ends with the commands and the exit status (:data:`~.exit_codes.HELP_EPILOG`).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("epilog", HELP_EPILOG)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print the error as one line, through the door to the terminal, and exit with status 2."""
        line = terminal_text(f"{self.prog}: error: {message} (see {self.prog} --help)", one_line=True)
        self.exit(ExitCode.USAGE, line + "\n")  # through the door: a config file's table name is written by others


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """Where the report and the evidence go: ``-o``, ``--sources``, ``--run-dir``, ``--json``."""
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
    """How much research, and when it stops: ``--max-subtopics``, the budgets, ``--grounding``, ``--approve-plan``."""
    group = parser.add_argument_group("research and budgets")
    group.add_argument(
        "--max-subtopics",
        type=bounded_int(1, MAX_SUBTOPICS),
        metavar="N",
        default=5,
        help=f"Sub-topics to research, 1 to {MAX_SUBTOPICS} (default 5).",
    )
    for option, bounded, metavar, text in (  # the budgets
        ("--token-budget", bounded_int(1, MAX_TOKEN_BUDGET), "N", "after this many tokens (all phases)."),
        ("--time-budget", bounded_number(MAX_TIME_BUDGET_S), "SECONDS", "after this many seconds."),
        ("--max-cost", bounded_number(MAX_COST_BUDGET), "USD", "once the model calls have cost this many US dollars."),
    ):
        group.add_argument(option, type=bounded, metavar=metavar, help=f"Stop researching {text}")
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
    """What the report looks like, and whether the question may be clarified first."""
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
        "--outline",
        type=Path,
        metavar="FILE",
        help="The report's own headings, in order: one per line, or the # and ## headings of a Markdown file.",
    )
    group.add_argument(
        "--instructions",
        metavar="TEXT",
        help="What you ask of the writer besides, in your own words (it cannot lift the citation rules).",
    )
    group.add_argument(
        "--clarify",
        action="store_true",
        help="Let the run ask one clarifying question first: asked on a terminal, else printed (exit status 3).",
    )


MODES = ("deep", "iterative")
"""``--mode``: ``deep`` (parallel sub-researchers) or ``iterative`` (rounds of analysis and search)."""


def add_iterative_options(parser: argparse.ArgumentParser) -> None:
    """The research mode and what lasts across runs."""
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
    """What stderr shows while the run goes on: ``--progress``, ``-q``."""
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


OPTION_GROUPS: tuple[Callable[[argparse.ArgumentParser], None], ...] = (  # in --help order
    add_output_options,
    add_research_options,
    add_report_options,
    add_model_options,
    add_iterative_options,
    add_source_options,
    add_display_options,
)


def research_parser() -> argparse.ArgumentParser:
    """:returns: The parser of ``deep-research "question"``."""
    from haystack_deep_research import __version__  # the package imports the command line lazily

    parser = CommandParser(
        prog="deep-research",
        description="Research a question on the web and in your documents, and write a cited Markdown report.",
    )
    parser.add_argument("question", help='The research question, quoted: deep-research "your question".')
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    for add_group in OPTION_GROUPS:
        add_group(parser)
    return parser


def check_parser() -> argparse.ArgumentParser:
    """:returns: The parser of ``deep-research check``."""
    parser = CommandParser(
        prog="deep-research check",
        description="Check the citations of a Markdown report against the sources that were read.",
    )
    parser.add_argument("report", type=Path, help="The Markdown report to check.")
    parser.add_argument(
        "--sources", type=Path, help="The evidence ledger (as `deep-research --sources` writes it) or a JSON URL list."
    )
    parser.add_argument(
        "--judge",
        action="store_true",
        help="Also judge each claim against what was read (a cited one against its stored source).",
    )
    parser.add_argument(
        "--judge-model",
        help=f"The judge's model (default: --role-model judge=NAME, else --model, else {DEFAULT_MODEL}).",
    )
    add_model_options(parser)
    return parser


def mcp_parser() -> argparse.ArgumentParser:
    """:returns: The parser of ``deep-research mcp``."""
    parser = CommandParser(
        prog="deep-research mcp", description="Serve deep research and citation checking to MCP clients."
    )
    parser.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="stdio (default) or streamable HTTP."
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP: the address to listen on (default %(default)s).")
    parser.add_argument(
        "--port", type=bounded_int(1, 65535), default=8000, help="HTTP: the port to listen on (default %(default)s)."
    )
    parser.add_argument(
        "--runs-root",
        type=Path,
        metavar="DIR",
        help="The folder whose run directories the ask tool answers from (default: the working folder).",
    )
    add_shared_options(parser)
    return parser


def scan_parser() -> argparse.ArgumentParser:
    """:returns: The parser of ``deep-research scan``."""
    parser = CommandParser(
        prog="deep-research scan", description="Research every item of a list, one research workflow run each."
    )
    parser.add_argument("items", help="A text file with one item per line, or a provider class as module:Class.")
    parser.add_argument("--out", type=Path, required=True, help="The JSONL file of rows (rerun it to resume).")
    parser.add_argument("--schema", help="The row's pydantic model as module:Model (default: ResearchSummary).")
    parser.add_argument("--ray", metavar="ADDRESS", help="Research on Ray: a cluster address, or 'local'.")
    parser.add_argument("--csv", type=Path, help="Also write every row to this CSV file at the end.")
    parser.add_argument("--concurrency", type=int, default=4, help="Items researched at once (default 4).")
    parser.add_argument("--attempts", type=int, default=3, help="Attempts per item (default 3).")
    parser.add_argument("--progress", choices=("bar", "lines", "none"), help="Progress display on stderr.")
    add_shared_options(parser)
    return parser
