"""
The ``deep-research`` command.

    deep-research "your question" [-o report.md] [--sources sources.json] [--run-dir DIR]
                  [--token-budget N] [--time-budget SECONDS] [--max-cost USD] [--grounding]
                  [--model NAME] [--small-model NAME] [--role-model ROLE=NAME ...]
                  [--base-url URL] [--api chat|responses]
                  [--search auto|tavily|ddgs] [--docs FOLDER ...] [--no-web] [--index-dir DIR]
                  [--mode deep|iterative] [--depth N] [--cache DIR] [--cache-ttl SECONDS] [--record DIR]
    deep-research replay DIR
    deep-research update RUN_DIR [options]
    deep-research check REPORT.md [--sources sources.json] [--judge]
    deep-research scan ITEMS --out rows.jsonl [--schema module:Model] [--ray ADDRESS]
    deep-research mcp [--transport stdio|http] [--host HOST] [--port PORT]

Progress goes to stderr, the report to stdout or the ``-o`` file. A missing API key is a one-line error.

Models and search, with their environment equivalents (an option wins over its variable):

- ``--model`` (``DEEP_RESEARCH_MODEL``): orchestrator, scope and writer; ``--small-model``
  (``DEEP_RESEARCH_SMALL_MODEL``): researcher and summarizer; ``--role-model ROLE=NAME`` (repeatable) for one role.
- ``--base-url`` (``OPENAI_BASE_URL``): any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio); then no
  ``OPENAI_API_KEY`` is needed, and ``--api`` (``DEEP_RESEARCH_API``) defaults to ``chat``.
- ``--search`` (``DEEP_RESEARCH_SEARCH``): ``auto`` uses Tavily when ``TAVILY_API_KEY`` is set, else the keyless
  ddgs search.
- ``--docs FOLDER`` indexes a folder (cached while unchanged, in ``--index-dir`` or the user's cache folder) and
  lets the researchers search it; ``--no-web`` researches the documents only.
- ``--mode iterative`` runs the iterative agent (``--depth`` rounds of analysis and search, see
  :mod:`haystack_deep_research.cli.iterative`); ``--cache DIR`` keeps searches, pages and summaries across runs (both
  modes); ``--record DIR`` records an iterative run, ``replay DIR`` runs it again offline, ``update RUN_DIR``
  researches a finished iterative run again.

The first argument chooses the form: exactly ``check`` runs the citation checker (see
:mod:`haystack_deep_research.cli.check`), exactly ``scan`` a multi-item scan (see
:mod:`haystack_deep_research.cli.scan`), exactly ``mcp`` runs the MCP server (see
:mod:`haystack_deep_research.cli.mcp`); anything else is a question, so ``deep-research "check the solar data"`` still
researches. To research the one-word question "check", write ``deep-research -- check``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_deep_research.agents import (
    APIS,
    create_deep_research_agent,
    create_iterative_research_agent,
    role_models,
)
from haystack_deep_research.agents.iterative_agent import journaled_question
from haystack_deep_research.cli.check import run_check
from haystack_deep_research.cli.index_progress import index_progress
from haystack_deep_research.cli.iterative import iterative_options, replay_options, write_manifest
from haystack_deep_research.cli.mcp import run_mcp
from haystack_deep_research.errors import ConfigurationError, DeepResearchError, MissingCredentialsError
from haystack_deep_research.sources import SEARCH_NAMES, folder_store_name, index_folder
from haystack_deep_research.state import PROGRESS_KEY, RUN_DIR_KEY

REQUIRED_KEYS = ("OPENAI_API_KEY",)
CHECK_COMMAND = "check"
ENVIRONMENT = {
    "model": "DEEP_RESEARCH_MODEL",
    "small_model": "DEEP_RESEARCH_SMALL_MODEL",
    "base_url": "OPENAI_BASE_URL",
    "api": "DEEP_RESEARCH_API",
    "search": "DEEP_RESEARCH_SEARCH",
}
"""The environment variable behind each option."""
SCAN_COMMAND = "scan"
MCP_COMMAND = "mcp"
REPLAY_COMMAND = "replay"
UPDATE_COMMAND = "update"
MODES = ("deep", "iterative")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deep-research",
        description="Research a question on the web and in your documents, and write a cited Markdown report.",
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
    parser.add_argument("--model", help="Model of the orchestrator, scope and writer (env DEEP_RESEARCH_MODEL).")
    parser.add_argument(
        "--small-model", help="Model of the researchers and the summarizer (env DEEP_RESEARCH_SMALL_MODEL)."
    )
    parser.add_argument(
        "--role-model",
        action="append",
        default=[],
        metavar="ROLE=NAME",
        help="Model of one role (orchestrator, scope, writer, researcher, summarizer, judge); repeatable.",
    )
    parser.add_argument(
        "--base-url", help="An OpenAI-compatible server, e.g. http://localhost:11434/v1 (env OPENAI_BASE_URL)."
    )
    parser.add_argument(
        "--api", choices=APIS, help="chat (Chat Completions) or responses; default chat with --base-url."
    )
    parser.add_argument(
        "--search",
        choices=SEARCH_NAMES,
        help="Web search: auto (Tavily with TAVILY_API_KEY, else keyless ddgs), tavily or ddgs.",
    )
    parser.add_argument(
        "--docs", action="append", default=[], type=Path, metavar="FOLDER", help="Also search this folder; repeatable."
    )
    parser.add_argument("--no-web", action="store_true", help="Research the --docs folders only: no web search.")
    parser.add_argument("--index-dir", type=Path, help="Keep the --docs indexes here (default: the user's cache).")
    parser.add_argument(
        "--mode", choices=MODES, default="deep", help="deep (sub-researchers, default) or iterative (depth rounds)."
    )
    parser.add_argument("--depth", type=int, default=3, help="Iterative mode: rounds of analysis and search (3).")
    parser.add_argument("--cache", type=Path, help="Keep searches, pages and summaries here across runs.")
    parser.add_argument("--cache-ttl", type=float, help="Seconds a cached entry is used (default one day).")
    parser.add_argument("--record", type=Path, help="Iterative mode: record the run here (replay it with replay DIR).")
    parser.add_argument("-q", "--quiet", action="store_true", help="Do not print progress to stderr.")
    return parser


def check_credentials(
    environ: Mapping[str, str] | None = None, *, base_url: str | None = None, search: str | None = None
) -> None:
    """
    Check that the API keys the chosen clients need are set.

    ``OPENAI_API_KEY`` is needed unless the models run on another server (``base_url``); ``TAVILY_API_KEY`` only
    when Tavily is asked for by name (``auto`` falls back to the keyless search).

    :param environ: The environment to look in; ``os.environ`` by default.
    :param base_url: The OpenAI-compatible server, if any.
    :param search: The search asked for, if any.
    :raises MissingCredentialsError: If a key is missing; the message names what to set.
    """
    env = os.environ if environ is None else environ
    needed = [*([] if base_url else REQUIRED_KEYS), *(["TAVILY_API_KEY"] if search == "tavily" else [])]
    missing = [key for key in needed if not env.get(key, "").strip()]
    if missing:
        hint = " or pass --base-url for an OpenAI-compatible server" if "OPENAI_API_KEY" in missing else ""
        raise MissingCredentialsError(
            f"set {' and '.join(missing)} in the environment (for example: export {missing[0]}=...){hint}."
        )


def _progress(phase: str, message: str) -> None:
    print(f"[{phase}] {message}", file=sys.stderr, flush=True)


def _write(path: Path, text: str) -> None:
    """Write atomically: a crash never leaves a half-written file behind."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def _option(args: argparse.Namespace, name: str) -> Any:
    value = getattr(args, name)
    return value if value else (os.environ.get(ENVIRONMENT[name], "").strip() or None)


def _roles(pairs: list[str]) -> dict[str, str]:
    roles = {}
    for pair in pairs:
        role, equals, name = pair.partition("=")
        if not equals or not role.strip() or not name.strip():
            raise ConfigurationError(f"--role-model takes ROLE=NAME, for example researcher=qwen3:8b; got {pair!r}.")
        roles[role.strip()] = name.strip()
    return roles


def _agent_options(args: argparse.Namespace) -> dict[str, Any]:
    """The factory arguments the options ask for; nothing for what was left at its default."""
    model, small, base_url, api = (_option(args, name) for name in ("model", "small_model", "base_url", "api"))
    roles = _roles(args.role_model)
    options: dict[str, Any] = {}
    if model or small or roles or base_url or api:
        options.update(role_models(model=model, small_model=small, roles=roles, base_url=base_url, api=api))
    if (search := _option(args, "search")) is not None:
        options["search"] = search
    if args.no_web:
        options["web"] = False
    if args.docs:
        stores: dict[str, Any] = {}
        for folder in args.docs:
            name = folder_store_name(folder)
            name = name if name not in stores else f"{name}_{len(stores) + 1}"
            with index_progress(str(folder), quiet=args.quiet) as progress:
                stores[name] = index_folder(folder, cache_dir=args.index_dir, progress=progress)
        options["datastores"] = stores
    return options


def _command_argv(argv: list[str]) -> list[str]:
    """``update RUN_DIR ...`` and ``replay DIR ...`` as the options of an iterative run of the journaled question."""
    directory, rest = Path(argv[1]), argv[2:]
    if argv[0] == REPLAY_COMMAND:
        question, _ = replay_options(directory)
        return [*rest, "--mode", "iterative", "--", question]
    return [*rest, "--mode", "iterative", "--run-dir", str(directory), "--", journaled_question(directory)]


def _build(args: argparse.Namespace, *, replay: Path | None) -> tuple[Any, dict[str, Any]]:
    """The agent the options ask for, and (iterative mode) the arguments it was built with."""
    if replay is not None:
        _, options = replay_options(replay)
        return create_iterative_research_agent(**options), options
    check_credentials(base_url=_option(args, "base_url"), search=_option(args, "search"))
    options = _agent_options(args)
    if args.cache is not None:
        options["cache_dir"] = args.cache
    if args.cache_ttl is not None:
        options["cache_ttl"] = args.cache_ttl
    if args.mode == "iterative":
        built = iterative_options(args, options)
        return create_iterative_research_agent(**built), built
    if args.record is not None:
        raise ConfigurationError("--record records iterative runs; add --mode iterative.")
    agent = create_deep_research_agent(
        max_subtopics=args.max_subtopics,
        token_budget=args.token_budget,
        time_budget=args.time_budget,
        cost_budget=args.max_cost,
        grounding=args.grounding,
        **options,
    )
    return agent, {}


def _research(args: argparse.Namespace, *, update: bool, replay: Path | None) -> dict[str, Any]:
    agent, built = _build(args, replay=replay)
    context: dict[str, object] = {} if args.quiet else {PROGRESS_KEY: _progress}
    if args.run_dir is not None:
        context[RUN_DIR_KEY] = args.run_dir
    extra = {"update": True} if update else {}
    result: dict[str, Any] = agent.run(messages=[ChatMessage.from_user(args.question)], hook_context=context, **extra)
    if built.get("record_to") is not None:
        write_manifest(Path(built["record_to"]), args.question, agent, built)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run the command.

    :param argv: The arguments (without the program name); ``sys.argv[1:]`` by default.
    :returns: The exit status: 0 on success, 1 when the run failed, 2 for a usage error.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [CHECK_COMMAND]:
        return run_check(argv[1:])
    if argv[:1] == [SCAN_COMMAND]:
        from haystack_deep_research.cli.scan import run_scan_command  # it imports this module

        return run_scan_command(argv[1:])
    if argv[:1] == [MCP_COMMAND]:
        return run_mcp(argv[1:])
    update = argv[:1] == [UPDATE_COMMAND] and len(argv) > 1
    replay = Path(argv[1]) if argv[:1] == [REPLAY_COMMAND] and len(argv) > 1 else None
    try:
        if update or replay:
            argv = _command_argv(argv)
    except DeepResearchError as error:
        print(f"deep-research: error: {error}", file=sys.stderr)
        return 2
    args = _parser().parse_args(argv)
    try:
        result = _research(args, update=update, replay=replay)
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
