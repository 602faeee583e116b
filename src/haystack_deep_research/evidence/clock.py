"""The library's clock: the date models are told and the times sources are recorded at, in UTC."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["now_iso", "parse_iso", "today"]


def today() -> str:
    """:returns: Today's date in UTC, ``YYYY-MM-DD``."""
    return datetime.now(UTC).strftime("%Y-%m-%d")


def now_iso() -> str:
    """:returns: The current time in UTC, ISO 8601 with its offset (``2026-11-30T13:05:00.123456+00:00``)."""
    return datetime.now(UTC).isoformat()


def parse_iso(text: str) -> datetime:
    """The ISO 8601 time ``text``, aware (one without an offset is taken as UTC); ``ValueError`` if it is none."""
    parsed = datetime.fromisoformat(text.strip())
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
