"""
``deep-research mcp``: serve deep research to MCP clients.

    deep-research mcp                                  # stdio: an MCP client starts this command
    deep-research mcp --transport http [--host H] [--port P]   # streamable HTTP at http://H:P/mcp
    deep-research mcp --base-url http://localhost:11434/v1 --model qwen3:8b [other model and source options]

The server's tools are described in :mod:`haystack_deep_research.mcp_server`. Its runs (and ``check_report``'s judge)
use the models and sources the shared options choose, as ``deep-research`` does (see
:mod:`~haystack_deep_research.options.parsers`); the keys they need (``OPENAI_API_KEY`` unless ``--base-url``,
``TAVILY_API_KEY`` for ``--search tavily``) are checked when a run starts. The server itself needs the ``mcp`` extra.

Exit status: 0 when the server stopped, 2 for a usage error (bad arguments such as a port outside 1 to 65535, the
extra not installed), printed as one line.
"""

from __future__ import annotations

from collections.abc import Sequence

from haystack_deep_research._untrusted.terminal import say
from haystack_deep_research.errors import UsageError
from haystack_deep_research.options.arguments import judge_model, model_arguments
from haystack_deep_research.options.config import parse_configured
from haystack_deep_research.options.exit_codes import ExitCode
from haystack_deep_research.options.parsers import mcp_parser

__all__ = ["run_mcp"]


def run_mcp(argv: Sequence[str]) -> int:
    """
    Run ``deep-research mcp``.

    :param argv: The arguments after ``mcp``.
    :returns: The exit status (see the module docstring).
    """
    try:
        args = parse_configured(mcp_parser(), argv, command="mcp")
    except SystemExit as stop:  # --help, or a usage error already printed as one line
        return stop.code if isinstance(stop.code, int) else ExitCode.USAGE
    try:
        from haystack_deep_research.mcp_server.server import serve
        from haystack_deep_research.serving import agent_factory

        chosen = any(name.endswith("_llm") for name in model_arguments(args))  # the options are checked here too
        judge = judge_model(args) if chosen else None  # else check_report's own default, with its key check
        factory = agent_factory(settings=args)
        serve(
            transport=args.transport,
            host=args.host,
            port=args.port,
            agent_factory=factory,
            judge_llm=judge,
            runs_root=args.runs_root,
        )
    except UsageError as error:
        say(f"deep-research mcp: error: {error}")
        return ExitCode.USAGE
    except KeyboardInterrupt:
        pass
    return ExitCode.OK
