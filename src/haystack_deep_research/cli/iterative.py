"""
The iterative mode of the ``deep-research`` command (``--mode iterative``), its recordings (``--record DIR`` writes
``recording.json``, which ``replay DIR`` runs again with no network, model or key) and the help of ``replay``,
``update`` and ``ask``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from haystack_deep_research._untrusted.files import write_file
from haystack_deep_research.agents import role_models
from haystack_deep_research.errors import ConfigurationError, RecordingError
from haystack_deep_research.options.arguments import with_grounding
from haystack_deep_research.options.exit_codes import ExitCode
from haystack_deep_research.options.parsers import CommandParser, parse_price
from haystack_deep_research.report.style import ReportStyle
from haystack_deep_research.run import Recording, ReplayChatGenerator
from haystack_deep_research.run._phases import model_name
from haystack_deep_research.run._recording import read_manifest
from haystack_deep_research.settings import Sources
from haystack_deep_research.sources.selection import default_search_name

__all__ = [
    "MANIFEST_FILE",
    "iterative_options",
    "replay_options",
    "subcommand_help",
    "subcommand_parser",
    "write_manifest",
]

MANIFEST_FILE = "recording.json"
"""What a recording made by the command holds besides its exchanges: the question and the options."""

_ROLES = {"analysis_llm": "orchestrator_llm", "writer_llm": "writer_llm", "summarizer_llm": "summarizer_llm"}


def iterative_options(args: argparse.Namespace, options: dict[str, Any]) -> dict[str, Any]:
    """The arguments of ``create_iterative_research_agent`` from the main agent's ``options`` the command asked for."""
    models = {key: options.pop(key) for key in list(options) if key.endswith("_llm")}
    if not models:
        models = role_models()
    chosen: dict[str, Any] = {own: models[main] for own, main in _ROLES.items() if main in models}
    grounding = with_grounding(models, args.grounding)["grounding"]
    return {**chosen, **options, "depth": args.depth, "grounding": grounding, "record_to": args.record}


def _models_of(agent: Any) -> dict[str, str]:
    """The names of the models an iterative agent calls, by factory argument."""
    pipeline = agent.pipeline
    write, read_url = pipeline.get_component("write"), pipeline.get_component("search").read_url
    models = {
        "analysis_llm": pipeline.get_component("decide").chat_generator,
        "writer_llm": write.chat_generator,
        "summarizer_llm": read_url.summarizer_llm if read_url is not None else None,
        "judge_llm": write.judge_llm,
    }
    return {role: model_name(model) for role, model in models.items() if model is not None}


def write_manifest(
    directory: Path, question: str, agent: Any, options: dict[str, Any], *, sources: dict[str, Any] | None = None
) -> None:
    """Write ``recording.json``: what ``replay`` needs to run the recording again (``options``: the agent's)."""
    chosen = options.get("sources") or Sources()
    search = chosen.search or "auto"
    prices = dict(options["budgets"].prices or {}) if options.get("budgets") is not None else {}
    manifest = {
        "question": question,
        "depth": options["depth"],
        "grounding": bool(options["grounding"]),
        "search": default_search_name() if search == "auto" else search if isinstance(search, str) else "custom",
        "web": chosen.web,
        **(sources or {}),
        "models": _models_of(agent),
        "prices": {name: [price.input_per_mtok, price.output_per_mtok] for name, price in prices.items()},
        "style": options["style"].to_dict() if options.get("style") is not None else {},
    }
    directory.mkdir(parents=True, exist_ok=True)
    write_file(directory / MANIFEST_FILE, json.dumps(manifest, ensure_ascii=False, indent=2))


def replay_options(directory: Path) -> tuple[str, dict[str, Any]]:
    """
    The question a ``--record`` recording holds, and the ``create_iterative_research_agent`` arguments that replay it.

    :raises ConfigurationError: If the directory holds no recording made by the command.
    :raises RecordingError: If its ``recording.json`` or its exchanges are damaged.
    """
    path = directory / MANIFEST_FILE
    if not path.is_file():
        raise ConfigurationError(
            f"{str(directory)!r} holds no recording made with --record ({MANIFEST_FILE} is missing)."
        )
    manifest = read_manifest(path)
    recording = Recording(directory=directory, mode="replay")
    models = {role: ReplayChatGenerator(recording=recording, model=name) for role, name in manifest.models.items()}
    try:
        style = ReportStyle.from_dict(manifest.style) if manifest.style else None
    except (ConfigurationError, TypeError) as error:
        raise RecordingError(f"{path}: style is not a report style ({error}); record the run again.") from None
    options = {
        **with_grounding(models, manifest.grounding),
        "depth": manifest.depth,
        "sources": Sources(search=manifest.search) if manifest.web else None,
        "replay_from": directory,
        **({"style": style} if style is not None else {}),
    }
    return manifest.question, options


_HELP = {
    "replay": (
        "DIR",
        "Run a recorded iterative run again from its recording (DIR, written with --record): no model and no search "
        "is called. The options below may follow DIR.",
    ),
    "update": (
        "RUN_DIR",
        "Research a finished iterative run again (RUN_DIR, its --run-dir), keeping what it found; the report says "
        "what changed. The options below may follow RUN_DIR; each one left out is the run's own.",
    ),
    "ask": (
        "RUN_DIR",
        "Answer a question from a finished run's evidence (RUN_DIR, its --run-dir), cited as its report is; with "
        "--research, research what the evidence does not answer into the run first. The options below may follow "
        "the question; each one left out is the run's own (--mode iterative for an iterative run's researcher).",
    ),
}
"""The positional argument and description of ``replay``, ``update`` and ``ask``, for their ``--help``."""


def subcommand_help(command: str, argv: Sequence[str]) -> int | None:
    """With ``-h`` or ``--help`` first in ``argv``, print the subcommand's help and return 0; else ``None``."""
    if not argv or argv[0] not in ("-h", "--help"):
        return None
    subcommand_parser(command).print_help()
    return ExitCode.OK


def subcommand_parser(command: str) -> argparse.ArgumentParser:
    """The parser of ``replay``, ``update`` or ``ask`` for its ``--help`` (the options: those of ``deep-research``)."""
    from haystack_deep_research.options.parsers import OPTION_GROUPS, add_display_options, add_output_options

    positional, description = _HELP[command]
    parser = CommandParser(prog=f"deep-research {command}", description=description)
    parser.add_argument(positional.lower(), metavar=positional, help="The directory.")
    if command == "ask":
        parser.add_argument("question", metavar="QUESTION", help="The question to answer from the run's evidence.")
        parser.add_argument_group("asking").add_argument(
            "--research",
            action="store_true",
            help="When the evidence does not answer, research the question as one sub-topic into the run first.",
        )
    if command in ("update", "ask"):  # every option of deep-research, the run's own by default
        for add_group in OPTION_GROUPS:
            add_group(parser)
        return parser
    add_output_options(parser)
    prices = parser.add_argument_group("cost")
    prices.add_argument(
        "--price",
        dest="prices",
        action="append",
        type=parse_price,
        default=[],
        metavar="MODEL=INPUT,OUTPUT",
        help="A model's price in US dollars per million input and output tokens; repeatable (default: the prices "
        "the run was recorded with).",
    )
    add_display_options(parser)
    return parser
