"""
Where a scan's items are researched: :class:`LocalExecutor` (this process, on the event loop; the default) or
:class:`~haystack_deep_research.scans.RayExecutor` (one Ray task per attempt). Both run the same research factory the
same way (:mod:`.research`); the scan runner bounds how many items are in flight and retries failed attempts.
"""

from __future__ import annotations

from typing import Any, Protocol

from haystack_deep_research.scans.research import ResearchFactory, research_item_async

__all__ = ["LocalExecutor", "ScanExecutor"]


class ScanExecutor(Protocol):
    """
    Researches the items of one scan at a time: :meth:`start` once, :meth:`research` per attempt, :meth:`stop` once.
    """

    name: str

    def start(self, research: ResearchFactory) -> None:
        """
        Get ready to research with this factory (blocking; the runner calls it in a worker thread).

        :param research: The research factory.
        """
        ...

    async def research(self, prompt: str) -> dict[str, Any]:
        """
        Research one item.

        :param prompt: The item's prompt.
        :returns: The outputs of its research run.
        """
        ...

    def stop(self) -> None:
        """Release what :meth:`start` took (blocking; called in a worker thread, also after a failure)."""
        ...


class LocalExecutor:
    """Research in this process: a Pipeline's or Agent's ``run_async`` on the event loop, a callable in a thread."""

    name = "local"

    def __init__(self) -> None:
        self._research: ResearchFactory | None = None

    def start(self, research: ResearchFactory) -> None:
        self._research = research

    async def research(self, prompt: str) -> dict[str, Any]:
        """:raises RuntimeError: If :meth:`start` was not called."""
        if self._research is None:
            raise RuntimeError("LocalExecutor.research was called before start")
        return await research_item_async(self._research, prompt)

    def stop(self) -> None:
        """Forget the factory."""
        self._research = None
