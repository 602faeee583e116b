"""
The parsers of the subcommands ``check``, ``mcp`` and ``scan``, apart from what the commands do, so that the config
layer (:mod:`.config`) and the documentation can read every command's options without importing the commands.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from haystack_deep_research.agents.models import DEFAULT_MODEL
from haystack_deep_research.cli.numbers import bounded_int
from haystack_deep_research.cli.options import CommandParser
from haystack_deep_research.cli.shared_options import add_model_options, add_shared_options

__all__ = ["check_parser", "mcp_parser", "scan_parser"]


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
