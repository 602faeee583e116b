"""Argument checks shared by the loopback test servers; each raises ``ConfigurationError`` saying what to change."""

from __future__ import annotations

from collections.abc import Mapping

from haystack_deep_research.errors import ConfigurationError

__all__ = ["check_body", "check_content_type", "check_drip", "check_headers", "check_path", "check_status"]


def check_path(path: str) -> str:
    """
    Check that a route path is absolute and has no scheme or host.

    :param path: The path to check.
    :returns: ``path`` unchanged.
    :raises ConfigurationError: If it does not start with a single ``/`` or holds whitespace.
    """
    if not isinstance(path, str) or not path.startswith("/") or path.startswith("//"):
        raise ConfigurationError(f"path must start with a single '/', like '/docs/page.html'; got {path!r}.")
    if any(ch.isspace() for ch in path):
        raise ConfigurationError(f"path must not contain whitespace; percent-encode it (%20), got {path!r}.")
    return path


def check_status(status: int) -> int:
    """
    Check an HTTP status code.

    :param status: The code to check.
    :returns: ``status`` unchanged.
    :raises ConfigurationError: If it is not an int from 100 to 599.
    """
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise ConfigurationError(f"status must be an HTTP status code from 100 to 599, got {status!r}.")
    return status


def check_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """
    Check extra response headers.

    :param headers: Header names and values, or ``None``.
    :returns: A copy as a plain dict.
    :raises ConfigurationError: If a name is empty, or a name or value is not a one-line string.
    """
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
    """
    Check the body and pacing of a slow or raw route.

    :param body: The body (or the whole response) to send.
    :param delay_per_chunk: Seconds to wait before each chunk.
    :param chunk_size: Bytes per chunk.
    :param what: The route, as error messages name it.
    :param allow_zero_chunk: Whether ``chunk_size`` 0 (the body in one write) is allowed.
    :raises ConfigurationError: If one of them is not what a route takes.
    """
    if not isinstance(body, bytes):
        raise ConfigurationError(f"body must be bytes for {what}; encode it first, got {type(body).__name__}.")
    if isinstance(delay_per_chunk, bool) or not isinstance(delay_per_chunk, int | float) or not delay_per_chunk >= 0:
        raise ConfigurationError(f"delay_per_chunk must be 0 or more seconds, got {delay_per_chunk!r}.")
    smallest = 0 if allow_zero_chunk else 1
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < smallest:
        raise ConfigurationError(f"chunk_size must be an int of {smallest} or more, got {chunk_size!r}.")


def check_body(body: str | bytes) -> bytes:
    """
    :param body: A route's body.
    :returns: It as bytes (a ``str`` encoded as UTF-8).
    :raises ConfigurationError: If it is neither text nor bytes.
    """
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    raise ConfigurationError(f"body must be str or bytes, got {type(body).__name__}.")


def check_content_type(content_type: str) -> str:
    """
    :param content_type: A route's media type.
    :returns: ``content_type`` unchanged.
    :raises ConfigurationError: If it is not a one-line, non-empty string.
    """
    if not isinstance(content_type, str) or not content_type.strip() or "\n" in content_type or "\r" in content_type:
        raise ConfigurationError(f"content_type must be a one-line media type like 'text/plain', got {content_type!r}.")
    return content_type
