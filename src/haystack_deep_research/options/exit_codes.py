"""
The exit status of ``deep-research`` and of every subcommand, and how an error becomes one line on stderr.

One table for every subcommand (:class:`ExitCode`; :data:`EXIT_REASON_CODES` gives the code of every
``exit_reason``), described in docs/cli.md ("Exit status") and, in one paragraph, in every command's ``--help``
(:data:`HELP_EPILOG`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import IntEnum
from typing import Any

from haystack_deep_research import state
from haystack_deep_research.errors import DeepResearchError, UsageError

__all__ = [
    "COMMAND_LINE_WORDS",
    "EXIT_REASON_CODES",
    "HELP_EPILOG",
    "MCP_WORDS",
    "ExitCode",
    "error_line",
    "exit_code_of",
    "in_words",
    "outcome_code",
]

HELP_EPILOG = (
    'Commands: deep-research "QUESTION" [options] (--mode iterative for rounds of analysis and search); '
    "deep-research replay DIR [options] (a --record recording, again, offline); deep-research update RUN_DIR [options] "
    "(a finished iterative run, researched again); deep-research ask RUN_DIR QUESTION [--research] (answered from the "
    "run's evidence; 6 when it does not answer); deep-research check REPORT.md [--sources FILE]; deep-research scan "
    "ITEMS --out rows.jsonl; deep-research mcp. Each takes --help. "
    "Exit status: 0 done; 1 failed (an error before a report, a model server that cannot be reached or does not serve "
    "the API; check: a citation never read); 2 usage error, nothing run; 3 clarification needed (--clarify without a "
    "terminal); 4 check: citations cannot be read; 5 partial: the report stands on part of the research (a budget "
    "spent, some researchers failed; scan: some items failed); 6 research failed: the report stands on failed research "
    "(no evidence, every researcher failed, the writer failed; scan: every item failed); 130 interrupted (Ctrl-C), "
    "what was gathered saved; 143 terminated (SIGTERM), saved as for Ctrl-C."
)
"""The end of every command's ``--help``: the commands, and the exit table in one paragraph."""


class ExitCode(IntEnum):
    """The exit status of ``deep-research`` and of every subcommand (see docs/cli.md, "Exit status")."""

    OK = 0
    RUN_FAILED = 1
    USAGE = 2
    CLARIFICATION_NEEDED = 3
    UNREADABLE = 4
    PARTIAL = 5
    RESEARCH_FAILED = 6
    INTERRUPTED = 130
    TERMINATED = 143


EXIT_REASON_CODES: dict[str, ExitCode] = {
    # the research done as asked
    state.EXIT_TEXT: ExitCode.OK,
    state.EXIT_SUBTOPICS_DONE: ExitCode.OK,
    state.EXIT_CONFIDENCE_MET: ExitCode.OK,
    state.EXIT_GROUNDED: ExitCode.OK,
    state.EXIT_DEPTH_REACHED: ExitCode.OK,
    state.EXIT_ANALYSIS_STOPPED: ExitCode.OK,
    state.EXIT_NO_NEW_TOPICS: ExitCode.OK,
    # a report from part of the research
    state.EXIT_TOKEN_BUDGET: ExitCode.PARTIAL,
    state.EXIT_TIME_BUDGET: ExitCode.PARTIAL,
    state.EXIT_COST_BUDGET: ExitCode.PARTIAL,
    state.EXIT_ORCHESTRATOR_FAILED: ExitCode.PARTIAL,
    state.EXIT_LOOP_DETECTED: ExitCode.PARTIAL,
    state.EXIT_MAX_ITERATIONS: ExitCode.PARTIAL,
    state.HAYSTACK_MAX_STEPS: ExitCode.PARTIAL,
    state.EXIT_GROUNDING_EXHAUSTED: ExitCode.PARTIAL,
    state.EXIT_NOT_JUDGED: ExitCode.PARTIAL,
    state.EXIT_STRUCTURED_OUTPUT_FAILED: ExitCode.PARTIAL,
    state.EXIT_DECISION_FAILED: ExitCode.PARTIAL,
    # a report standing on failed research
    state.EXIT_NO_EVIDENCE: ExitCode.RESEARCH_FAILED,
    state.EXIT_WRITER_FAILED: ExitCode.RESEARCH_FAILED,
    state.EXIT_SUMMARY_FAILED: ExitCode.RESEARCH_FAILED,
    state.EXIT_FAILED: ExitCode.RESEARCH_FAILED,
    # the command's own
    state.EXIT_CLARIFICATION_NEEDED: ExitCode.CLARIFICATION_NEEDED,
    state.EXIT_INTERRUPTED: ExitCode.INTERRUPTED,
}
"""The exit status of every ``exit_reason`` the library sets (the ``EXIT_*`` values of ``state``, and Haystack's
``max_agent_steps``). Another reason (an exit tool of ``create_deep_agent`` that the caller named) is a finished run."""


Words = Sequence[tuple["re.Pattern[str]", str]]
"""A surface's words: each Python spelling the library's messages use (a pattern), and what the surface calls it."""


def _setting(python: str) -> re.Pattern[str]:
    """``Budgets(tokens=...)``, also as ``budgets=Budgets(tokens=...)``."""
    owner, _, _ = python.partition("(")
    return re.compile(rf"(?:{owner.lower()}=)?{re.escape(python)}")


_PRICED = re.compile(r"(?:budgets=)?Budgets\(prices=\{'([^']+)': Price\([^)]*\)\}\)")
_QUESTION = re.compile(r"messages=\[ChatMessage\.from_user\([^)]*\)\]")
_BOTH = (  # a setting both surfaces name: its Python spelling, the command line's words, an MCP client's words
    ("Budgets(prices=...)", "--price MODEL=INPUT,OUTPUT", "the server's --price MODEL=INPUT,OUTPUT"),
    ("Budgets(tokens=...)", "--token-budget N", "token_budget"),
    ("Budgets(seconds=...)", "--time-budget SECONDS", "time_budget"),
    ("Budgets(dollars=...)", "--max-cost USD", "max_cost"),
    ("Sources(datastores=...)", "--docs FOLDER", "the server's --docs FOLDER"),
)

COMMAND_LINE_WORDS: Words = (
    (_PRICED, r"--price \1=INPUT,OUTPUT"),
    *((_setting(python), words) for python, words, _ in _BOTH),
    (_setting("Sources(search=...)"), "--search"),
    (_setting("Sources(web=...)"), "--no-web"),
    (_setting("Sources(url_policy=...)"), "--allow-host HOST"),
    (re.compile(r"search='(\w+)'"), r"--search \1"),
    (_QUESTION, 'the question: deep-research "your question"'),
)
"""What the command line calls the settings the library's messages name (options, files)."""

MCP_WORDS: Words = (
    (_PRICED, r"the server's --price \1=INPUT,OUTPUT"),
    *((_setting(python), words) for python, _, words in _BOTH),
    (_QUESTION, "question"),
)
"""What an MCP client calls them: the ``deep_research`` tool's arguments, else the server's own options."""


def in_words(message: str, words: Words = COMMAND_LINE_WORDS) -> str:
    """The message naming them as the surface's user gives them."""
    for pattern, word in words:
        message = pattern.sub(word, message)
    return message


def exit_code_of(error: BaseException) -> ExitCode:
    """:attr:`ExitCode.USAGE` for a mistake the user can fix in the command, else :attr:`ExitCode.RUN_FAILED`."""
    return ExitCode.USAGE if isinstance(error, UsageError) else ExitCode.RUN_FAILED


def outcome_code(result: dict[str, Any], *, researchers_failed: int = 0) -> ExitCode:
    """
    The code of its ``exit_reason`` (see :data:`EXIT_REASON_CODES`), from its notes too: a run that gathered no note
    (every researcher failed) failed, and one whose researchers partly failed is partial, whatever its exit reason says.
    """
    code = EXIT_REASON_CODES.get(str(result.get("exit_reason") or ""), ExitCode.OK)
    if code in (ExitCode.CLARIFICATION_NEEDED, ExitCode.INTERRUPTED, ExitCode.RESEARCH_FAILED):
        return code
    notes = result.get("notes")
    if isinstance(notes, list) and not notes:
        return ExitCode.RESEARCH_FAILED
    return ExitCode.PARTIAL if researchers_failed else code


def error_line(error: BaseException, *, command: str = "deep-research") -> str:
    """
    The error as the one line the command prints: the library's own message for an error it raised on purpose (in the
    command line's words, :func:`in_words`), the error's type and message for a provider or network failure.
    """
    if isinstance(error, DeepResearchError):
        return f"{command}: error: {in_words(str(error))}"
    return f"{command}: error: the run failed: {type(error).__name__}: {error}"
