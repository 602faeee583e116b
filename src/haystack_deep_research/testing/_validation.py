"""Argument checks shared by the loopback test servers; each raises ``ConfigurationError`` saying what to change."""

from __future__ import annotations

from collections.abc import Mapping

from haystack_deep_research.errors import ConfigurationError

__all__ = ["check_headers", "check_path", "check_status"]


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
