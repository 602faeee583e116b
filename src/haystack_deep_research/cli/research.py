"""
The ``deep-research`` command and its subcommands; docs/cli.md has every option, the config file rules and the exit
status table. The first argument chooses the form: a name in :data:`SUBCOMMANDS` runs that command, anything else is a
question. The options (output paths included) are checked before any model is called, and every user error is one line.
Ctrl-C, and SIGTERM (which ``timeout``, systemd and Kubernetes send) through :func:`sigterm_interrupts`, cancel the
run's task and every researcher; :func:`unfinished_result` turns the run it opened into a partial report. The
iterative mode's recordings (``--record DIR`` writes ``recording.json``) run again with ``replay DIR``, with no network,
model or key.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_deep_research._untrusted.files import write_file
from haystack_deep_research._untrusted.terminal import say, terminal_text
from haystack_deep_research.agents import create_deep_research_agent, create_iterative_research_agent, role_models
from haystack_deep_research.agents.iterative_agent import journaled_question
from haystack_deep_research.cli.display import Display, console_plan_review, make_display, progress_mode
from haystack_deep_research.cli.output import print_stdout, result_json, save_outputs
from haystack_deep_research.cli.research_checks import check_model_server, check_prices, check_research_args
from haystack_deep_research.cli.scan import run_scan_command
from haystack_deep_research.errors import ConfigurationError, RecordingError, UsageError
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.options.arguments import (
    ENVIRONMENT,
    factory_arguments,
    judge_model,
    model_arguments,
    option_value,
    recorded_sources,
    replay_argv,
    report_style,
    with_budgets,
    with_grounding,
)
from haystack_deep_research.options.check import run_check
from haystack_deep_research.options.config import parse_configured, run_options, save_run_options, update_argv
from haystack_deep_research.options.exit_codes import (
    EXIT_REASON_CODES,
    ExitCode,
    error_line,
    exit_code_of,
    in_words,
    outcome_code,
)
from haystack_deep_research.options.parsers import CommandParser, mcp_parser, parse_price, research_parser
from haystack_deep_research.options.progress import RunSummary
from haystack_deep_research.report import citation_findings, verify_report
from haystack_deep_research.report.publish import allowed_urls
from haystack_deep_research.report.sections import fallback_report
from haystack_deep_research.report.style import ReportStyle
from haystack_deep_research.run import Recording, ReplayChatGenerator, ResearchCache, ResearchRun, RunInputs
from haystack_deep_research.run._budget import model_name
from haystack_deep_research.run._cache import read_manifest
from haystack_deep_research.settings import Budgets, Sources
from haystack_deep_research.sources.selection import default_search_name
from haystack_deep_research.state import (
    CLARIFICATION,
    EXIT_CLARIFICATION_NEEDED,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_REASON,
    MESSAGES,
    PHASE_RUN,
)

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


CHECK_COMMAND = "check"
SCAN_COMMAND = "scan"
MCP_COMMAND = "mcp"
REPLAY_COMMAND = "replay"
UPDATE_COMMAND = "update"
ASK_COMMAND = "ask"


def _run_mcp(argv: Sequence[str]) -> int:
    """``mcp [options]``: serve deep research to MCP clients until stopped (the server needs the ``mcp`` extra)."""
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


def _run_replay(argv: Sequence[str]) -> int:
    """``replay DIR [options]``: the recorded run again, from its recording."""
    needs = "the recording's directory: deep-research replay DIR"
    if isinstance(operands := _operands(REPLAY_COMMAND, argv, needs), int):
        return operands
    directory = Path(operands[0])
    try:
        question, _ = replay_options(directory)
        manifest = read_manifest(directory / MANIFEST_FILE)
        sources = replay_argv(directory, manifest)
    except (UsageError, OSError) as error:
        return _usage(str(error))
    prices = [arg for name, (i, o) in manifest.prices.items() for arg in ("--price", f"{name}={i!r},{o!r}")]
    # the recording's prices first: a --price given to replay wins
    return _main([*prices, *argv[1:], *sources, "--mode", "iterative", "--", question], replay=directory)


def _run_update(argv: Sequence[str]) -> int:
    """``update RUN_DIR [options]``: a finished iterative run researched again."""
    if isinstance(operands := _operands(UPDATE_COMMAND, argv, "the run directory: deep-research update RUN_DIR"), int):
        return operands
    directory = Path(operands[0])
    try:
        question = journaled_question(directory)
        given = update_argv(directory, argv[1:], research_parser())  # the run's own options, not the defaults
    except (UsageError, OSError) as error:
        return _usage(str(error))
    return _main([*given, "--mode", "iterative", "--run-dir", str(directory), "--", question], update=True)


def _run_ask(argv: Sequence[str]) -> int:
    """``ask RUN_DIR "question" [--research] [options]``: a question answered from a finished run's evidence."""
    needs = 'the run directory and a question: deep-research ask RUN_DIR "question"'
    if isinstance(operands := _operands(ASK_COMMAND, argv, needs, count=2), int):
        return operands
    directory, question, rest = Path(operands[0]), operands[1], list(argv[2:])
    research, given = "--research" in rest, [arg for arg in rest if arg != "--research"]
    try:
        run_question = journaled_question(directory)
        full = update_argv(directory, given, research_parser(), command=ASK_COMMAND)  # the run's own models, sources
        args = parse_configured(research_parser(), [*full, "--", run_question], command="research")
    except SystemExit as stop:  # --help, or a usage error already printed as one line
        return stop.code if isinstance(stop.code, int) else ExitCode.USAGE
    except (UsageError, OSError) as error:
        return _usage(str(error))
    try:
        agent, _ = _build(args, replay=None)
        check_model_server(args)
        answer = agent.ask(directory, question, research=research)
    except KeyboardInterrupt:
        say("deep-research: interrupted; nothing was answered.")
        return ExitCode.INTERRUPTED
    except Exception as error:  # a usage mistake, a run directory in use, a model that fails: one line
        say(error_line(error))
        return exit_code_of(error)
    for warning in answer["warnings"]:
        say(f"deep-research: warning: {in_words(str(warning))}")
    if args.json:
        print_stdout(json.dumps({**answer, "warnings": [in_words(str(w)) for w in answer["warnings"]]}, indent=2))
        return EXIT_REASON_CODES.get(answer["exit_reason"], ExitCode.OK)
    saved = save_outputs({"report": answer["answer"]}, output=args.output, sources=None)
    for failure in saved.failures:
        say(f"deep-research: error: {failure}")
    if saved.report_on_stdout:
        print_stdout(answer["answer"])
    return ExitCode.RUN_FAILED if saved.failures else EXIT_REASON_CODES.get(answer["exit_reason"], ExitCode.OK)


def _operands(command: str, argv: Sequence[str], needs: str, *, count: int = 1) -> list[str] | int:
    """The subcommand's first ``count`` arguments, or its exit status once it printed its help or what it needs."""
    if argv and argv[0] in ("-h", "--help"):
        subcommand_parser(command).print_help()
        return ExitCode.OK
    if len(argv) < count or any(arg.startswith("-") for arg in argv[:count]):
        return _usage(f"{command} needs {needs}")
    return list(argv[:count])


def _usage(message: str) -> int:
    say(f"deep-research: error: {message}")
    return ExitCode.USAGE


SUBCOMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    CHECK_COMMAND: run_check,
    SCAN_COMMAND: run_scan_command,
    MCP_COMMAND: _run_mcp,
    REPLAY_COMMAND: _run_replay,
    UPDATE_COMMAND: _run_update,
    ASK_COMMAND: _run_ask,
}
"""The commands chosen by the first argument; each takes the arguments after its name and returns the exit status."""


@dataclass
class Termination:
    """Whether a SIGTERM arrived while the command ran."""

    received: bool = False


_CURRENT: ContextVar[Termination] = ContextVar("termination")


@contextmanager
def sigterm_interrupts() -> Iterator[Termination]:
    """
    Turn SIGTERM into the interruption Ctrl-C causes while the block runs (a handler in the main thread that calls the
    current SIGINT handler); yields its :class:`Termination`.
    """
    termination = Termination()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        termination.received = True
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):  # asyncio's own handler (cancels the run's task) or Python's (KeyboardInterrupt)
            on_sigint(signal.SIGINT, frame)
        else:  # SIGINT ignored or left to the system: interrupt all the same
            raise KeyboardInterrupt

    handles = threading.current_thread() is threading.main_thread()  # signal handlers belong to the main thread
    previous = signal.signal(signal.SIGTERM, interrupt) if handles else None
    token = _CURRENT.set(termination)
    try:
        yield termination
    finally:
        _CURRENT.reset(token)
        if handles:
            signal.signal(signal.SIGTERM, previous)


@dataclass(frozen=True)
class RunOutcome:
    """How a run of the command ended."""

    result: dict[str, Any] | None  # None when it never finished
    run: ResearchRun | None  # None when it was stopped before it opened
    interrupted: bool = False  # by Ctrl-C or SIGTERM
    error: Exception | None = None
    terminated: bool = False  # the interruption was a SIGTERM

    def stopped_by(self) -> str:
        """:returns: What interrupted the run, as its lines say it: ``SIGTERM`` or ``Ctrl-C``."""
        return "SIGTERM" if self.terminated else "Ctrl-C"


def unfinished_result(outcome: RunOutcome) -> dict[str, Any]:
    """The result of a run that was interrupted or failed, with the notes it gathered as a verified partial report."""
    exit_reason = EXIT_INTERRUPTED if outcome.interrupted else EXIT_FAILED
    run = outcome.run
    if run is None:
        return {
            "report": "",
            "brief": "",
            "notes": [],
            "sources": [],
            "citations": {},
            "warnings": [],
            "exit_reason": exit_reason,
            "usage_by_phase": {},
            "cost": None,
            "token_usage": {},
        }
    error = outcome.error
    what = f"was interrupted ({outcome.stopped_by()})" if outcome.interrupted else f"failed ({type(error).__name__})"
    notes = run.notes()
    kept = "the report holds the notes gathered" if notes else "no note was gathered, so there is no report"
    run.warn(PHASE_RUN, f"the run {what} before its report was written; {kept}")
    report, citations = "", {}
    if notes:
        urls = allowed_urls(notes, run)
        cause = (
            f"was interrupted with {outcome.stopped_by()}"
            if outcome.interrupted
            else f"failed with {type(error).__name__}: {error}"
        )
        check = verify_report(run, fallback_report(run, f"it never ran: the run {cause}", notes, urls), urls)
        report, citations = check.report, citation_findings(check)
    return {
        "report": report,
        "brief": run.brief,
        "notes": notes,
        "sources": run.ledger.to_list(),
        "citations": citations,
        "warnings": run.warnings(),
        "exit_reason": exit_reason,
        "usage_by_phase": run.usage_report(),
        "cost": run.cost(),
        "token_usage": run.total_usage(),
    }


def _arguments(args: argparse.Namespace, *, models: bool = True) -> dict[str, Any]:
    quiet = args.quiet or args.progress == "none"
    return factory_arguments(args, quiet=quiet, quiet_skipped=args.quiet, models=models)


def _agent_options(args: argparse.Namespace) -> dict[str, Any]:
    """The factory arguments the options ask for; nothing for what was left at its default."""
    options = _arguments(args)
    budgets = Budgets(tokens=args.token_budget, seconds=args.time_budget, dollars=args.max_cost)
    options = with_budgets(options, budgets)
    if args.max_cost is not None:
        check_prices(options)
    if args.cache is not None:
        ttl = {"ttl": args.cache_ttl} if args.cache_ttl is not None else {}
        options["cache"] = ResearchCache(directory=args.cache, **ttl)
    if (style := report_style(args)) is not None:
        options["style"] = style
    return options


def _build(args: argparse.Namespace, *, replay: Path | None) -> tuple[Any, dict[str, Any]]:
    """The agent the options ask for, and (iterative mode) the arguments it was built with."""
    if replay is not None:  # the recorded sources, rebuilt from the options replay_argv gave, and the prices
        _, options = replay_options(replay)
        if prices := option_value(args, "prices"):
            options["budgets"] = Budgets(prices=dict(prices))
        sources = _arguments(args, models=False)
        return create_iterative_research_agent(**{**options, **sources}), options
    options = _agent_options(args)
    if args.mode == "iterative":
        built = iterative_options(args, options)
        return create_iterative_research_agent(**built), built
    agent = create_deep_research_agent(
        max_subtopics=args.max_subtopics,
        clarify=args.clarify,
        approve_plan=console_plan_review() if args.approve_plan else None,
        **with_grounding(options, args.grounding),
    )
    return agent, {}


def _finish(args: argparse.Namespace, question: str, outcome: RunOutcome, display: Display) -> int:
    """Save and print what the run gave, finished or not; the exit status."""
    finished = outcome.result is not None
    result = outcome.result if outcome.result is not None else unfinished_result(outcome)
    saved = save_outputs(result, output=args.output, sources=args.sources, run=outcome.run, finished=finished)
    if finished or outcome.run is not None:  # a run that never opened has nothing to sum up
        summary = RunSummary.of(
            result, display.tracker.progress(), saved=tuple(saved.lines), terminated=outcome.terminated
        )
        display.summarize(summary)
    error = error_line(outcome.error) if outcome.error is not None else None
    lines = [error] if error else []
    if outcome.interrupted and outcome.run is None:
        lines.append("deep-research: interrupted before the research began; nothing to save.")
    for line in lines + [f"deep-research: error: {failure}" for failure in saved.failures]:
        say(line)
    if args.json:
        print_stdout(result_json(result, question, error=error))
    elif saved.report_on_stdout:
        print_stdout(str(result["report"]))
    if outcome.interrupted:
        return ExitCode.INTERRUPTED
    if outcome.error is not None:
        return exit_code_of(outcome.error)
    failed = display.tracker.progress().failed
    return ExitCode.RUN_FAILED if saved.failures else outcome_code(result, researchers_failed=failed)


def _run(
    agent: Any,
    question: str,
    inputs: RunInputs,
    display: Display,
    *,
    messages: list[ChatMessage] | None = None,
    **run_options: bool,
) -> RunOutcome:
    """
    Run the agent (``run_async``) with the display live, on the question or on ``messages`` (a clarifying question
    answered), until it finishes, fails or is interrupted; ``run_options`` set go to ``run_async`` (``update=True``).
    """
    opened: list[ResearchRun] = []
    given = dataclasses.replace(inputs, on_run_opened=opened.append)
    messages = messages or [ChatMessage.from_user(question)]
    display.start()
    try:
        options = {name: value for name, value in run_options.items() if value}
        result = asyncio.run(agent.run_async(messages=messages, inputs=given, **options))
        return RunOutcome(result, opened[0] if opened else None)
    except KeyboardInterrupt:
        display.tracker.interrupt()  # the last frame shows the researchers Ctrl-C stopped
        return RunOutcome(
            None, opened[0] if opened else None, interrupted=True, terminated=_CURRENT.get(Termination()).received
        )
    except Exception as error:  # a provider or network failure: the caller keeps what was gathered and says why
        return RunOutcome(None, opened[0] if opened else None, error=error)
    finally:
        display.stop()


def _answer_on_terminal(asked: str) -> str | None:
    """The answer read on a terminal, cleaned; ``None`` when stdin is not a terminal or the answer is empty."""
    if not sys.stdin.isatty():
        return None
    say(f"deep-research needs one answer before it researches:\n  {terminal_text(asked, one_line=True)}")
    say("> ", end="")
    return clean_text(sys.stdin.readline()).strip() or None


def _research(args: argparse.Namespace, *, update: bool = False, replay: Path | None = None) -> int:
    try:
        question = check_research_args(args, replay=replay is not None)
        display = make_display(progress_mode(args))
        agent, built = _build(args, replay=replay)
        if replay is None:  # a replay asks no model
            check_model_server(args)
        if args.run_dir is not None:  # what update RUN_DIR researches with
            save_run_options(args.run_dir, run_options(args, {name: option_value(args, name) for name in ENVIRONMENT}))
    except KeyboardInterrupt:
        say("deep-research: interrupted before the research began; nothing to save.")
        return ExitCode.INTERRUPTED
    except Exception as error:  # a usage mistake, or a failure while indexing --docs: one line, no traceback
        say(error_line(error))
        if args.json:
            print_stdout(result_json({}, args.question, error=error_line(error)))
        return exit_code_of(error)
    inputs = RunInputs(on_event=display, run_dir=args.run_dir)
    outcome = _run(agent, question, inputs, display, update=update)
    result = outcome.result or {}
    asked = str(result.get(CLARIFICATION) or "") if result.get(EXIT_REASON) == EXIT_CLARIFICATION_NEEDED else ""
    if asked:  # --clarify: one question before the research, asked on a terminal, else printed
        answer = _answer_on_terminal(asked)
        if answer is None:
            print_stdout(result_json(result, question) if args.json else terminal_text(asked, one_line=True))
            say(
                "deep-research: the question needs a clarification (above); run again with the answer added to the "
                "question."
            )
            return ExitCode.CLARIFICATION_NEEDED
        display = make_display("none" if args.quiet else args.progress)
        inputs = dataclasses.replace(inputs, on_event=display)
        messages = [*result.get(MESSAGES, []), ChatMessage.from_user(answer)]
        outcome = _run(agent, question, inputs, display, messages=messages)
    if outcome.result is not None and built.get("record_to") is not None:
        sources = recorded_sources(args, option_value(args, "search"))
        write_manifest(Path(built["record_to"]), question, agent, built, sources=sources)
    return _finish(args, question, outcome, display)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (see :class:`~haystack_deep_research.options.exit_codes.ExitCode`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with sigterm_interrupts() as termination:  # SIGTERM takes Ctrl-C's path: the partial report is saved
        code = SUBCOMMANDS[argv[0]](argv[1:]) if argv[:1] and argv[0] in SUBCOMMANDS else _main(argv)
    return ExitCode.TERMINATED if termination.received and code == ExitCode.INTERRUPTED else code


def _main(argv: Sequence[str], *, update: bool = False, replay: Path | None = None) -> int:
    try:
        args = parse_configured(research_parser(), argv, command="research")
    except SystemExit as stop:  # --help, or a usage error already printed as one line
        return stop.code if isinstance(stop.code, int) else ExitCode.USAGE
    try:
        return _research(args, update=update, replay=replay)
    except KeyboardInterrupt:  # a second Ctrl-C while the first one's partial report was being saved
        say("deep-research: interrupted.")
        return ExitCode.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
