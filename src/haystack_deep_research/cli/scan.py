"""
``deep-research scan``: research every item of a list (a text file, or a provider class ``module:Class``), one
``create_research_workflow`` run each, on the models and sources the shared options choose; docs/scans.md.
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from haystack.tools import Tool, Toolset
from pydantic import BaseModel

from haystack_deep_research._untrusted.terminal import say
from haystack_deep_research.agents import ResearchWorkflow, create_research_workflow, default_chat_generator
from haystack_deep_research.agents.models import DEFAULT_SMALL_MODEL
from haystack_deep_research.cli.research_checks import check_model_server, check_sources
from haystack_deep_research.errors import DeepResearchError, MissingExtraError, UsageError
from haystack_deep_research.events import Event
from haystack_deep_research.options.arguments import factory_arguments, with_grounding
from haystack_deep_research.options.config import environment_options, parse_configured
from haystack_deep_research.options.exit_codes import ExitCode, error_line, exit_code_of
from haystack_deep_research.options.parsers import scan_parser
from haystack_deep_research.report import ResearchSummary
from haystack_deep_research.scans import KnowledgeProvider, ListProvider, RayExecutor, ScanRunner
from haystack_deep_research.scans.executors import LocalExecutor, ScanExecutor
from haystack_deep_research.settings import Sources
from haystack_deep_research.sources.selection import resolve_search
from haystack_deep_research.tools import ReadUrlTool

__all__ = ["run_scan_command", "scan_workflow"]


def scan_workflow(output_schema: type[BaseModel], options: argparse.Namespace | None = None) -> ResearchWorkflow:
    """
    The research of one item: the research workflow on the models and sources the shared ``options`` choose (``None``:
    their environment variables only); plain values, so the call pickles for Ray's workers.
    """
    arguments = factory_arguments(options or environment_options())
    model = arguments.get("researcher_llm") or default_chat_generator(DEFAULT_SMALL_MODEL)
    summarizer = arguments.get("summarizer_llm") or model
    chosen: Sources = arguments["sources"]
    tools: list[Tool | Toolset] = []
    if chosen.web:
        search = resolve_search("auto" if chosen.search is None else chosen.search)
        tools = [search, ReadUrlTool(summarizer_llm=summarizer, url_policy=chosen.url_policy)]
    return create_research_workflow(
        chat_generator=model,
        tools=tools,
        output_schema=output_schema,
        sources=Sources(datastores=chosen.datastores),
        grounding=with_grounding(arguments, True)["grounding"],  # the workflow always grounds
        budgets=arguments.get("budgets"),
    )


def _imported_class(spec: str, what: str, base: type, kind: str) -> Any:
    module, _, name = spec.partition(":")
    if not module or not name:
        raise UsageError(f"{what} must be given as module:Name; got {spec!r}.")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise UsageError(f"cannot import {what} {spec}: {error}") from error
    if not (isinstance(found, type) and issubclass(found, base)):
        raise UsageError(f"{spec} is not a {kind} class.")
    return found


def _provider(items: str) -> KnowledgeProvider:
    if Path(items).is_file() or ":" not in items:
        return ListProvider.from_file(items)
    return _imported_class(items, "the provider", KnowledgeProvider, "KnowledgeProvider")()


class _Lines:
    """One line per finished or failed item, and the scan's start and end."""

    def __call__(self, event: Event) -> None:
        if event.kind in ("scan_started", "item_done", "item_failed", "scan_ended"):
            say(f"[scan] {event.describe()}")

    def close(self) -> None:
        """Nothing to close."""


class _Bar:
    """A live progress bar (rich): items done of all, failures, items per minute, elapsed time."""

    def __init__(self) -> None:
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        except ImportError as error:
            raise MissingExtraError("Progress bars", extra="cli", module="rich") from error
        self._progress = Progress(
            TextColumn("scan"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed · {task.fields[rate]} items/min"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
        )
        self._task: Any = None
        self._researched = self._failed = 0
        self._started = time.monotonic()

    def __call__(self, event: Event) -> None:
        if event.kind == "scan_started":
            self._progress.start()
            total, done = getattr(event, "total", 0), getattr(event, "done", 0)
            self._task = self._progress.add_task("scan", total=total, completed=done, failed=0, rate="0.0")
            self._started = time.monotonic()
            return
        if self._task is None:
            return
        finished = event.kind == "item_done" or (event.kind == "item_failed" and getattr(event, "final", False))
        if finished:
            self._researched += 1
            self._failed += event.kind == "item_failed"
            minutes = max(time.monotonic() - self._started, 1e-9) / 60
            rate = f"{self._researched / minutes:.1f}"
            self._progress.update(self._task, advance=1, failed=self._failed, rate=rate)

    def close(self) -> None:
        """Stop the live display; its last frame stays."""
        self._progress.stop()


def _display(choice: str | None) -> _Lines | _Bar | None:
    if choice == "none":
        return None
    if choice == "lines":
        return _Lines()
    if choice == "bar":
        return _Bar()
    try:
        return _Bar()
    except MissingExtraError:
        return _Lines()


def run_scan_command(argv: Sequence[str]) -> int:
    """Run ``deep-research scan`` with the arguments after ``scan``; returns the exit status (docs/scans.md)."""
    try:
        args = parse_configured(scan_parser(), argv, command="scan")
    except SystemExit as stop:  # --help, or a usage error already printed as one line
        return stop.code if isinstance(stop.code, int) else ExitCode.USAGE
    display = None
    try:
        provider = _provider(args.items)
        schema = ResearchSummary
        if args.schema is not None:
            schema = _imported_class(args.schema, "the schema", BaseModel, "pydantic model")
        check_sources(args)
        factory_arguments(args, quiet=args.progress == "none")  # bad options, and the --docs indexes, before any item
        check_model_server(args)
        executor: ScanExecutor = (
            LocalExecutor() if args.ray is None else RayExecutor(address=None if args.ray == "local" else args.ray)
        )
        display = _display(args.progress)
        runner = ScanRunner(
            provider=provider,
            research=partial(scan_workflow, schema, options=args),
            results=args.out,
            executor=executor,
            max_concurrency=args.concurrency,
            max_attempts=args.attempts,
            on_event=display,
        )
        result = runner.run()
        if args.csv is not None:
            result.write_csv(args.csv)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (see .signals): the rows written so far stay, a rerun goes on
        say(f"deep-research scan: interrupted; the rows written so far are in {args.out}.")
        return ExitCode.INTERRUPTED
    except DeepResearchError as error:  # a usage mistake, or a failure the library names
        say(error_line(error, command="deep-research scan"))
        return exit_code_of(error)
    except Exception as error:  # a cluster or provider failure: one line, not a traceback
        say(f"deep-research scan: error: the scan failed: {type(error).__name__}: {error}")
        return ExitCode.RUN_FAILED
    finally:
        if display is not None:
            display.close()
    failures = f"; {len(result.failed)} failed, see {runner.results.failures_path}" if result.failed else ""
    say(f"[done] {len(result.rows)} row(s) in {args.out}{failures}")
    if not result.failed:
        return ExitCode.OK
    return ExitCode.PARTIAL if result.rows else ExitCode.RESEARCH_FAILED
