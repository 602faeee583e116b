"""
The pages one research run has already summarized, so that no researcher of the run reads a URL again for the same
question.

Sub-researchers run in parallel and never see each other's context, so two of them may pick the same search
result and ask the same thing of it. With a :class:`ReadCache` the first one fetches and summarizes the page; any
other that asks for the same URL with the same question meanwhile waits for that summary, and any that asks later
gets it at once. A read that fails is not kept: whoever asks next reads the page itself.

One cache belongs to one run (its :class:`~haystack_deep_research.run.ResearchRun`, never the agent or the tool). It is
thread-safe, and a wait works from a worker thread and from an asyncio task alike.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from haystack_deep_research.evidence import normalize_url

__all__ = ["CachedRead", "ReadCache", "ReadClaim"]


@dataclass(frozen=True)
class CachedRead:
    """
    A page summary that one researcher made and the run's other researchers may share.

    :param title: The page title.
    :param summary: The summarizer's summary of the page toward the question.
    :param partial: Whether the page was cut to the length limit before it was summarized.
    """

    title: str
    summary: str
    partial: bool


class ReadClaim:
    """
    The answer to :meth:`ReadCache.claim`: either the right to read the page (``owner``) or a place to wait.

    The owner must call :meth:`settle` exactly once, with the summary or with ``None`` when the read failed;
    anyone else calls :meth:`wait` or :meth:`wait_async`.
    """

    def __init__(self, future: Future[CachedRead | None], *, owner: bool, forget: Callable[[], None]) -> None:
        self._future = future
        self._forget = forget
        self.owner = owner

    def settle(self, read: CachedRead | None) -> None:
        """
        Publish the owner's result to everyone waiting; ``None`` (a failed read) is not kept for later askers.

        :param read: The summary, or ``None``.
        """
        if read is None:
            self._forget()
        self._future.set_result(read)

    def wait(self) -> CachedRead | None:
        """
        Block until the owner settles.

        :returns: The shared summary, or ``None`` when the owner's read failed (then read the page yourself).
        """
        return self._future.result()

    async def wait_async(self) -> CachedRead | None:
        """
        Await the owner's result without blocking the event loop.

        :returns: The shared summary, or ``None`` when the owner's read failed.
        """
        # Shielded: a cancelled waiter must not cancel the read that the owner and the other waiters share.
        return await asyncio.shield(asyncio.wrap_future(self._future))


class ReadCache:
    """
    Page summaries of one run, by URL (compared by :func:`~haystack_deep_research.evidence.normalize_url`) and
    question (compared without case and extra whitespace).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], Future[CachedRead | None]] = {}

    def claim(self, url: str, question: str) -> ReadClaim:
        """
        Ask for a page: the first asker of a URL and question owns the read, later askers share its result.

        :param url: The URL to read.
        :param question: What the researcher wants to learn from it.
        :returns: A claim; read the page when ``claim.owner`` is true, otherwise wait for the owner's summary.
        """
        key = (normalize_url(url), " ".join(question.split()).casefold())
        with self._lock:
            future = self._entries.get(key)
            owner = future is None
            if future is None:
                future = self._entries[key] = Future()
        return ReadClaim(future, owner=owner, forget=functools.partial(self._forget, key, future))

    def __len__(self) -> int:
        """
        :returns: How many page summaries are kept (reads still under way included).
        """
        with self._lock:
            return len(self._entries)

    def _forget(self, key: tuple[str, str], future: Future[CachedRead | None]) -> None:
        with self._lock:
            if self._entries.get(key) is future:
                del self._entries[key]
