"""
The typed events of a multi-item scan (see :mod:`haystack_deep_research.scans`), in the scan's own stream: each
carries the scan's id as its ``run_id`` and the phase ``scan``; the item events name their item.
"""

from __future__ import annotations

from haystack_deep_research.events.types import Event


class ScanStarted(Event, kind="scan_started", line="scan started: {total} item(s), {done} already done"):
    """
    A scan began.

    :param total: How many distinct items the provider listed.
    :param done: How many of them earlier scans already finished (they are skipped).
    """

    total: int
    done: int = 0


class ItemSkipped(Event, kind="item_skipped", line="skipped {item}: {reason}"):
    """An item is not researched. :param item: Its name. :param reason: Why."""

    item: str
    reason: str


class ItemStarted(Event, kind="item_started"):
    """An attempt at an item began. :param item: Its name. :param attempt: The attempt's number (1-based)."""

    item: str
    attempt: int = 1

    def describe(self) -> str:
        return f"researching {self.item}" + (f" (attempt {self.attempt})" if self.attempt > 1 else "")


class ItemDone(Event, kind="item_done", line="done {item} in {seconds:.1f} s"):
    """
    An item's row is written.

    :param item: Its name.
    :param attempt: The attempt that succeeded.
    :param seconds: How long that attempt took.
    """

    item: str
    attempt: int = 1
    seconds: float = 0.0


class ItemFailed(Event, kind="item_failed"):
    """
    An attempt at an item failed.

    :param item: Its name.
    :param attempt: The attempt's number.
    :param error: What went wrong, as ``Type: message``.
    :param final: Whether no attempt is left: the item is recorded as failed.
    """

    item: str
    attempt: int
    error: str
    final: bool = False

    def describe(self) -> str:
        outcome = "failed" if self.final else f"attempt {self.attempt} failed, retrying"
        return f"{self.item} {outcome}: {self.error}"


class ScanEnded(
    Event, kind="scan_ended", line="scan ended: {rows} row(s), {failed} failed, {skipped} skipped in {seconds:.1f} s"
):
    """
    A scan ended.

    :param rows: Rows written by this scan.
    :param failed: Items recorded as failed by this scan.
    :param skipped: Items skipped (done before, or listed twice).
    :param seconds: The scan's wall-clock time.
    """

    rows: int
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
