"""
The scan runner: one research run per item of a provider, at most ``max_concurrency`` in flight, each failed attempt
retried with a doubling delay up to ``max_attempts``, rows appended to a locked results file that makes a rerun
research only what is left, every step an event. A run that returns with a failing ``exit_reason``
(``FAILED_EXIT_REASONS``) is a failed attempt, never a row. docs/scans.md describes it all.
"""

from __future__ import annotations

import asyncio
import collections
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError, ResearchFailedError
from haystack_deep_research.events import Event, ItemDone, ItemFailed, ItemSkipped, ItemStarted, ScanEnded, ScanStarted
from haystack_deep_research.events.bus import EventBus
from haystack_deep_research.scans.executors import LocalExecutor, RayExecutor, ResearchFactory, ScanExecutor
from haystack_deep_research.scans.items import ItemRef, KnowledgeProvider, KnowledgeRow, ListProvider, row_data
from haystack_deep_research.scans.results import ResultsFile, write_csv
from haystack_deep_research.state import EXIT_REASON, FAILED_EXIT_REASONS, PHASE_SCAN, WARNINGS

__all__ = ["ScanResult", "ScanRunner"]


@dataclass
class ScanResult:
    """
    What a scan gave.

    :param rows: Every finished item's row (this scan's and earlier scans'), in the provider's item order.
    :param researched: Rows this scan wrote.
    :param failed: Items this scan recorded as failed: name → last error.
    :param skipped: Items not researched (finished before, or listed twice).
    :param seconds: The scan's wall-clock time.
    :param results: The results file.
    """

    rows: list[KnowledgeRow]
    researched: int
    failed: dict[str, str] = field(default_factory=dict)
    skipped: int = 0
    seconds: float = 0.0
    results: ResultsFile | None = None

    def write_csv(self, path: str | Path) -> Path:
        """Write the rows to a CSV file (see :func:`~haystack_deep_research.scans.results.write_csv`); returns it."""
        return write_csv(self.rows, path)


def _error_text(error: BaseException) -> str:
    first = (str(error).strip().splitlines() or [""])[0]
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def _failed_run(result: Mapping[str, Any]) -> ResearchFailedError | None:
    """The failure a run's outputs report (a failing ``exit_reason``), or ``None`` for research that finished."""
    exit_reason = result.get(EXIT_REASON)
    if exit_reason not in FAILED_EXIT_REASONS:
        return None
    warnings = [str(text) for text in result.get(WARNINGS) or [] if "failed" in str(text)]
    partial = {key: value for key, value in row_data(result).items() if key != "grounding_score"}
    return ResearchFailedError(str(exit_reason), warnings[-1] if warnings else "", partial)


def _executor(executor: Any) -> ScanExecutor:
    if executor == "local":
        return LocalExecutor()
    if executor == "ray":
        return RayExecutor()
    if all(hasattr(executor, name) for name in ("start", "research", "stop")):
        return executor
    raise ConfigurationError(
        f"executor must be 'local', 'ray', or an executor such as RayExecutor(); got {executor!r}."
    )


class ScanRunner:
    """
    Research every item of a provider, one research run each (see the module docstring).

    :param provider: A :class:`KnowledgeProvider`, or a list of strings (a :class:`ListProvider`).
    :param research: A research factory: a callable with no arguments returning a fresh Pipeline, Agent or callable
        for one item (see :mod:`haystack_deep_research.scans.executors`).
    :param results: The JSONL results file; rows already in it are not researched again.
    :param executor: ``"local"`` (default), ``"ray"`` (a local Ray instance), or an executor such as
        ``RayExecutor(address="auto")``.
    :param max_concurrency: Items in flight at once, 1 to 256.
    :param max_attempts: Attempts per item, 1 to 10.
    :param retry_delay: Seconds before the second attempt, doubling for each further one, 0 to 600.
    :param on_event: Receives every event of the scan.
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(
        self,
        *,
        provider: KnowledgeProvider | Iterable[str],
        research: ResearchFactory,
        results: str | Path | ResultsFile,
        executor: Literal["local", "ray"] | ScanExecutor = "local",
        max_concurrency: int = 4,
        max_attempts: int = 3,
        retry_delay: float = 1.0,
        on_event: Callable[[Event], Any] | None = None,
    ) -> None:
        self.provider = provider if isinstance(provider, KnowledgeProvider) else ListProvider(provider)
        if not callable(research):
            raise ConfigurationError("research must be a callable returning a Pipeline, an Agent or a callable.")
        if on_event is not None and not callable(on_event):
            raise ConfigurationError(f"on_event must be a callable on_event(event); got {type(on_event).__name__}.")
        self.research = research
        self.results = results if isinstance(results, ResultsFile) else ResultsFile(results)
        self.executor = _executor(executor)
        self.max_concurrency = _checks.int_in_range("max_concurrency", max_concurrency, 1, 256)
        self.max_attempts = _checks.int_in_range("max_attempts", max_attempts, 1, 10)
        self.retry_delay = _checks.number_in_range("retry_delay", retry_delay, 0.0, 600.0, include_low=True)
        self.on_event = on_event

    def run(self) -> ScanResult:
        """Run the scan to its end and return its result (in a notebook or a server, ``await run_async()``)."""
        return asyncio.run(self.run_async())

    async def run_async(self) -> ScanResult:
        """Run the scan on the running event loop and return its result."""
        await asyncio.to_thread(self.results.lock)
        try:
            return await self._scan()
        finally:
            self.results.unlock()

    async def _scan(self) -> ScanResult:
        started = time.monotonic()
        bus = EventBus(uuid.uuid4().hex, [self.on_event] if self.on_event is not None else [])
        items = await asyncio.to_thread(self.provider.list_items)
        # A row is finished unless an older version wrote a failed run's fallback as a row.
        rows_read = await asyncio.to_thread(self.results.rows)
        finished = {ref.key: row for ref, row in rows_read if row.data.get(EXIT_REASON) not in FAILED_EXIT_REASONS}
        order: dict[tuple[str, str], int] = {}
        todo: collections.deque[ItemRef] = collections.deque()
        skips: list[ItemSkipped] = []
        for ref in items:
            if ref.key in order:
                skips.append(ItemSkipped(phase=PHASE_SCAN, item=ref.name, reason="listed more than once"))
                continue
            order[ref.key] = len(order)
            if ref.key in finished:
                skips.append(ItemSkipped(phase=PHASE_SCAN, item=ref.name, reason="done in an earlier scan"))
            else:
                todo.append(ref)
        bus.emit(ScanStarted(phase=PHASE_SCAN, total=len(order), done=len(order) - len(todo)))
        for skip in skips:
            bus.emit(skip)
        new: dict[tuple[str, str], KnowledgeRow] = {}
        failed: dict[str, str] = {}
        if todo:
            await asyncio.to_thread(self.executor.start, self.research)
            try:
                workers = [
                    asyncio.ensure_future(self._work(todo, bus, new, failed))
                    for _ in range(min(self.max_concurrency, len(todo)))
                ]
                try:
                    await asyncio.gather(*workers)
                finally:
                    for worker in workers:
                        worker.cancel()
            finally:
                await asyncio.to_thread(self.executor.stop)
        rows = {**{key: row for key, row in finished.items() if key in order}, **new}
        seconds = time.monotonic() - started
        bus.emit(ScanEnded(phase=PHASE_SCAN, rows=len(new), failed=len(failed), skipped=len(skips), seconds=seconds))
        return ScanResult(
            rows=[rows[key] for key in sorted(rows, key=order.__getitem__)],
            researched=len(new),
            failed=failed,
            skipped=len(skips),
            seconds=seconds,
            results=self.results,
        )

    async def _work(
        self,
        todo: collections.deque[ItemRef],
        bus: EventBus,
        new: dict[tuple[str, str], KnowledgeRow],
        failed: dict[str, str],
    ) -> None:
        while todo:
            ref = todo.popleft()
            for attempt in range(1, self.max_attempts + 1):
                bus.emit(ItemStarted(phase=PHASE_SCAN, item=ref.name, attempt=attempt))
                began = time.monotonic()
                try:
                    row = await self._attempt(ref)
                except Exception as error:  # recorded per item: the scan goes on with the other items
                    final = attempt == self.max_attempts
                    text = _error_text(error)
                    bus.emit(ItemFailed(phase=PHASE_SCAN, item=ref.name, attempt=attempt, error=text, final=final))
                    if final:
                        failed[ref.name] = text
                        run = error if isinstance(error, ResearchFailedError) else None
                        await asyncio.to_thread(
                            self.results.add_failure,
                            ref,
                            text,
                            attempt,
                            exit_reason=None if run is None else run.exit_reason,
                            partial=None if run is None else run.partial,
                        )
                    elif self.retry_delay:
                        await asyncio.sleep(self.retry_delay * 2 ** (attempt - 1))
                    continue
                await asyncio.to_thread(self.results.add_row, ref, row)
                new[ref.key] = row
                bus.emit(ItemDone(phase=PHASE_SCAN, item=ref.name, attempt=attempt, seconds=time.monotonic() - began))
                break

    async def _attempt(self, ref: ItemRef) -> KnowledgeRow:
        prompt = await asyncio.to_thread(self.provider.describe_item, ref)
        result = await self.executor.research(prompt)
        if (failure := _failed_run(result)) is not None:
            raise failure
        row = await asyncio.to_thread(self.provider.to_row, ref, result)
        if not isinstance(row, KnowledgeRow):
            raise ConfigurationError(f"to_row must return a KnowledgeRow; it returned {type(row).__name__}.")
        return row
