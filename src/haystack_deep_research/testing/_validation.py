"""Argument checks shared by the loopback test servers; each raises ``ConfigurationError`` saying what to change."""

from __future__ import annotations

from collections.abc import Mapping

from haystack_deep_research.errors import ConfigurationError

__all__ = ["check_body", "check_content_type", "check_drip", "check_headers", "check_path", "check_status"]


def check_path(path: str) -> str:
    """A route path: absolute (one leading ``/``, no scheme or host) and without whitespace."""
    if not isinstance(path, str) or not path.startswith("/") or path.startswith("//"):
        raise ConfigurationError(f"path must start with a single '/', like '/docs/page.html'; got {path!r}.")
    if any(ch.isspace() for ch in path):
        raise ConfigurationError(f"path must not contain whitespace; percent-encode it (%20), got {path!r}.")
    return path


def check_status(status: int) -> int:
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise ConfigurationError(f"status must be an HTTP status code from 100 to 599, got {status!r}.")
    return status


def check_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Extra response headers, copied as a plain dict."""
    result = dict(headers or {})
    for name, value in result.items():
        if (
            not isinstance(name, str)
            or not isinstance(value, str)
            or not name
            or any(c in name + value for c in "\r\n")
        ):
            raise ConfigurationError(
                f"headers must map non-empty one-line str names to one-line str values; got {name!r}."
            )
    return result


def check_drip(
    body: bytes, delay_per_chunk: float, chunk_size: int, *, what: str, allow_zero_chunk: bool = False
) -> None:
    """The body and pacing of a slow or raw route; ``allow_zero_chunk`` admits ``chunk_size`` 0 (one write)."""
    if not isinstance(body, bytes):
        raise ConfigurationError(f"body must be bytes for {what}; encode it first, got {type(body).__name__}.")
    if isinstance(delay_per_chunk, bool) or not isinstance(delay_per_chunk, int | float) or not delay_per_chunk >= 0:
        raise ConfigurationError(f"delay_per_chunk must be 0 or more seconds, got {delay_per_chunk!r}.")
    smallest = 0 if allow_zero_chunk else 1
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < smallest:
        raise ConfigurationError(f"chunk_size must be an int of {smallest} or more, got {chunk_size!r}.")


def check_body(body: str | bytes) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    raise ConfigurationError(f"body must be str or bytes, got {type(body).__name__}.")


def check_content_type(content_type: str) -> str:
    if not isinstance(content_type, str) or not content_type.strip() or "\n" in content_type or "\r" in content_type:
        raise ConfigurationError(f"content_type must be a one-line media type like 'text/plain', got {content_type!r}.")
    return content_type
