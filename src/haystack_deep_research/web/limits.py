"""The limits on one fetch: download size, timeouts, redirects and PDF pages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError

__all__ = ["FetchLimits"]

_MAX_REDIRECTS_CEILING = 20


@dataclass(frozen=True, kw_only=True)
class FetchLimits:
    """
    Limits on one fetch.

    :param max_bytes: The largest body accepted, in bytes (after gzip/deflate decoding).
    :param connect_timeout: Seconds to wait for a connection.
    :param read_timeout: Seconds to wait for each read from the connection.
    :param total_timeout: Seconds the whole fetch may take: connecting, every redirect and the body. The
        synchronous :func:`fetch` checks it between reads, so it can run over by at most one read.
    :param max_redirects: The most redirects followed (0 to 20); 0 refuses any redirect.
    :param max_pdf_pages: The most PDF pages turned into text.
    :raises ConfigurationError: A value is out of range.
    """

    max_bytes: int = 5_000_000
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 30.0
    max_redirects: int = 5
    max_pdf_pages: int = 50

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_pdf_pages"):
            _checks.int_in_range(f"FetchLimits.{name}", getattr(self, name), 1)
        _checks.int_in_range("FetchLimits.max_redirects", self.max_redirects, 0, _MAX_REDIRECTS_CEILING)
        for name in ("connect_timeout", "read_timeout", "total_timeout"):
            object.__setattr__(self, name, _checks.number_in_range(f"FetchLimits.{name}", getattr(self, name), 0))

    def to_dict(self) -> dict[str, Any]:
        """
        Serialise the limits to a plain, JSON-compatible dictionary.

        :returns: A dictionary with one key per field.
        """
        return {item.name: getattr(self, item.name) for item in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FetchLimits:
        """
        Build limits from the output of :meth:`to_dict`; missing keys keep their defaults.

        :param data: A mapping of field names to values.
        :returns: The limits.
        :raises ConfigurationError: A key is unknown or a value is out of range.
        """
        known = {item.name for item in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigurationError(
                f"FetchLimits.from_dict got unknown keys {unknown}; the allowed keys are {sorted(known)}."
            )
        return cls(**dict(data))
