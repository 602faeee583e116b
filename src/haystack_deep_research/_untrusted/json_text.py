"""
Parsing JSON the library did not write itself (model replies, journal lines, recordings, scan rows) with its nesting
bounded first by a linear scan, so that deep nesting is a ``json.JSONDecodeError`` like any malformed text, never the
``RecursionError`` that would end the run (docs/safety.md). The standard parser stays, rather than
``pydantic_core.from_json``, because callers need its ``raw_decode`` and its error positions.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects accepted; nothing the library reads or asks for comes near it."""

# A whole JSON string (escapes included), or one bracket: the scan steps over strings without looking inside them.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_DECODER = json.JSONDecoder()


class JSONTooDeepError(json.JSONDecodeError):
    """A text nested deeper than :data:`MAX_JSON_DEPTH` (a ``JSONDecodeError``, so a malformed text like any other)."""


def _check_depth(text: str, start: int = 0, *, one_value: bool = False) -> None:
    depth = 0
    for token in _TOKENS.finditer(text, start):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise JSONTooDeepError(f"nested deeper than {MAX_JSON_DEPTH} levels", text, token.start())
        elif mark in "]}":
            depth -= 1
            if depth <= 0 and one_value:
                return  # the value that starts at ``start`` has ended: what follows is not part of it


def loads(text: str | bytes) -> Any:
    """``json.loads``, a :class:`JSONTooDeepError` for nesting deeper than :data:`MAX_JSON_DEPTH`."""
    body = text.decode("utf-8") if isinstance(text, bytes) else text
    _check_depth(body)
    try:
        return json.loads(body)
    except RecursionError:
        raise JSONTooDeepError("nested too deeply to parse", body, 0) from None


def raw_decode(text: str, start: int = 0) -> tuple[Any, int]:
    """``(value, end)`` of the JSON value that starts at ``start``, its nesting bounded as in :func:`loads`."""
    _check_depth(text, start, one_value=True)
    try:
        return _DECODER.raw_decode(text, start)
    except RecursionError:
        raise JSONTooDeepError("nested too deeply to parse", text, start) from None


_FENCED = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def extract_json_object(text: str) -> Any:
    """
    The JSON of a model's reply: all of it, else the first fenced block that parses, else the first JSON object
    embedded in prose; a ``ValueError`` when it holds none (JSON nested too deeply is none).
    """
    body = text.strip()
    candidates = [body, *(match.group(1).strip() for match in _FENCED.finditer(body))]
    for candidate in candidates:
        try:
            return loads(candidate)
        except ValueError:
            continue
    for start in (index for index, character in enumerate(body) if character == "{"):
        try:
            value, _ = raw_decode(body, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError("the reply holds no JSON object")
