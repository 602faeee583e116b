"""
The ``deep-research`` command.

    deep-research "your question" [-o report.md] [--sources sources.json] [--run-dir DIR]
                  [--token-budget N] [--time-budget SECONDS] [--max-cost USD] [--grounding]
    deep-research check REPORT.md [--sources sources.json] [--judge]
    deep-research mcp [--transport stdio|http] [--host HOST] [--port PORT]

Progress goes to stderr, the report to stdout or the ``-o`` file. A missing API key is a one-line error.

The first argument chooses the form: exactly ``check`` runs the citation checker (see
:mod:`haystack_deep_research.cli.check`), exactly ``mcp`` runs the MCP server (see
:mod:`haystack_deep_research.cli.mcp`); anything else is a question, so ``deep-research "check the solar data"``
still researches. To research the one-word question "check", write ``deep-research -- check``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from haystack.dataclasses import ChatMessage

from haystack_deep_research.agents import create_deep_research_agent
from haystack_deep_research.cli.check import run_check
from haystack_deep_research.cli.mcp import run_mcp
from haystack_deep_research.errors import DeepResearchError, MissingCredentialsError
from haystack_deep_research.state import PROGRESS_KEY, RUN_DIR_KEY

REQUIRED_KEYS = ("OPENAI_API_KEY", "TAVILY_API_KEY")
CHECK_COMMAND = "check"
MCP_COMMAND = "mcp"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deep-research",
        description="Research a question on the web and write a cited Markdown report.",
        epilog="To check the citations of an existing report: deep-research check REPORT.md [--sources FILE].",
    )
    parser.add_argument("question", help="The research question (quote it).")
    parser.add_argument("-o", "--output", type=Path, help="Write the report to this file instead of stdout.")
    parser.add_argument("--sources", type=Path, help="Also write the evidence ledger as JSON to this file.")
    parser.add_argument("--max-subtopics", type=int, default=5, help="Sub-topics to research (default 5).")
    parser.add_argument(
        "--run-dir", type=Path, help="Journal the run here; re-running with the same directory resumes it."
    )
    parser.add_argument("--token-budget", type=int, help="Stop researching after this many tokens (all phases).")
    parser.add_argument("--time-budget", type=float, help="Stop researching after this many seconds.")
    parser.add_argument(
        "--max-cost", type=float, help="Stop researching once the model calls have cost this many US dollars."
    )
    parser.add_argument(
        "--grounding", action="store_true", help="Judge each cited claim against its source and repair the report."
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="Do not print progress to stderr.")
    return parser


def check_credentials(environ: dict[str, str] | None = None) -> None:
    """
    Check that the default clients' API keys are set.

    :param environ: The environment to look in; ``os.environ`` by default.
    :raises MissingCredentialsError: If a key is missing; the message names what to set.
    """
    env = os.environ if environ is None else environ
    missing = [key for key in REQUIRED_KEYS if not env.get(key, "").strip()]
    if missing:
        raise MissingCredentialsError(
            f"set {' and '.join(missing)} in the environment (for example: export {missing[0]}=...)."
        )


def _progress(phase: str, message: str) -> None:
    print(f"[{phase}] {message}", file=sys.stderr, flush=True)


def _write(path: Path, text: str) -> None:
    """Write atomically: a crash never leaves a half-written file behind."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run the command.

    :param argv: The arguments (without the program name); ``sys.argv[1:]`` by default.
    :returns: The exit status: 0 on success, 1 when the run failed, 2 for a usage error.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [CHECK_COMMAND]:
        return run_check(argv[1:])
    if argv[:1] == [MCP_COMMAND]:
        return run_mcp(argv[1:])
    args = _parser().parse_args(argv)
    try:
        check_credentials()
        agent = create_deep_research_agent(
            max_subtopics=args.max_subtopics,
            token_budget=args.token_budget,
            time_budget=args.time_budget,
            cost_budget=args.max_cost,
            grounding=args.grounding,
        )
        context: dict[str, object] = {} if args.quiet else {PROGRESS_KEY: _progress}
        if args.run_dir is not None:
            context[RUN_DIR_KEY] = args.run_dir
        result = agent.run(messages=[ChatMessage.from_user(args.question)], hook_context=context)
    except (MissingCredentialsError, DeepResearchError) as error:
        print(f"deep-research: error: {error}", file=sys.stderr)
        return 2 if isinstance(error, MissingCredentialsError | ValueError) else 1
    except Exception as error:  # a provider or network failure: one line, not a traceback
        print(f"deep-research: error: the run failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    for warning in result.get("warnings") or []:
        print(f"[warning] {warning}", file=sys.stderr)
    if args.sources is not None:
        _write(args.sources, json.dumps(result.get("sources") or [], indent=2, ensure_ascii=False))
    if args.output is not None:
        _write(args.output, result["report"])
        if not args.quiet:
            print(f"[done] report written to {args.output} (exit reason: {result['exit_reason']})", file=sys.stderr)
    else:
        print(result["report"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
