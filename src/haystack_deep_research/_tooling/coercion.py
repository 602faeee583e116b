"""
Interop: tool arguments that a model's provider JSON-encoded as strings, turned back into what the tool's JSON schema
asks for before the tool runs.

Some providers send ``{"min_score": "0.5"}`` or ``{"confidence": "0.8"}`` for a ``number`` parameter, ``"3"`` for an
``integer``, ``"true"`` for a ``boolean``, or a whole object or array as a JSON string. :func:`coerce_arguments`
walks the arguments alongside the tool's parameters schema (``properties``, ``items``, ``additionalProperties``,
``anyOf`` / ``oneOf`` / ``allOf``, local ``$ref``\\ s into ``$defs``) and converts exactly those values; anything it
cannot convert is left as it was, for the tool to refuse with its own message. Every tool of the library goes
through it (:class:`~haystack_deep_research.tools.ResearchTool`), and the deep agent applies it to every tool call,
its users' tools included, before the tools run.

It is written here rather than taken from a validator: ``jsonschema`` validates but never converts, and pydantic
converts only for a model class, while a Haystack tool carries a plain JSON schema.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import haystack_deep_research._untrusted.json_text as _safe_json

__all__ = ["coerce_arguments"]

_INTEGER = re.compile(r"^[+-]?\d+$")
_MAX_DEPTH = 32


def _resolve(schema: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    for _ in range(_MAX_DEPTH):
        if not isinstance(schema, Mapping):
            return {}
        reference = schema.get("$ref")
        if not isinstance(reference, str) or not reference.startswith("#/"):
            return schema
        target: Any = root
        for part in reference[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        schema = target
    return {}


def _types(schema: Mapping[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    return [kind for kind in declared if isinstance(kind, str)] if isinstance(declared, list) else []


def _number(text: str, *, integer: bool) -> int | float | None:
    stripped = text.strip()
    if _INTEGER.match(stripped):
        return int(stripped)
    try:
        value = float(stripped)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    if integer:
        return int(value) if value.is_integer() else None
    return value


def _scalar(value: str, kinds: list[str]) -> Any:
    for kind in kinds:
        if kind in ("number", "integer"):
            number = _number(value, integer=kind == "integer")
            if number is not None:
                return number
        elif kind == "boolean" and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        elif kind in ("object", "array"):
            try:
                decoded = _safe_json.loads(value)
            except ValueError:
                continue
            if isinstance(decoded, dict if kind == "object" else list):
                return decoded
        elif kind == "string":
            return value
    return value


def _coerce(value: Any, schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    resolved = _resolve(schema, root)
    if depth > _MAX_DEPTH or not resolved:
        return value
    for combinator in ("anyOf", "oneOf", "allOf"):
        options = resolved.get(combinator)
        if isinstance(options, list):
            for option in options:
                coerced = _coerce(value, option, root, depth + 1)
                if coerced != value or type(coerced) is not type(value):  # this option converted something
                    return coerced
    kinds = _types(resolved)
    if isinstance(value, str) and kinds and "string" not in kinds:
        value = _scalar(value, kinds)
    if isinstance(value, dict):
        properties = resolved.get("properties")
        known: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        extra = resolved.get("additionalProperties")
        return {
            key: _coerce(item, known.get(key, extra if isinstance(extra, Mapping) else None), root, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list) and isinstance(resolved.get("items"), Mapping):
        return [_coerce(item, resolved["items"], root, depth + 1) for item in value]
    return value


def coerce_arguments(parameters: Mapping[str, Any] | None, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """
    Turn string-encoded numbers, booleans, objects and arrays in a tool call's arguments into the types the tool's
    parameters schema declares.

    >>> schema = {"type": "object", "properties": {"min_score": {"type": "number"}, "top_k": {"type": "integer"}}}
    >>> coerce_arguments(schema, {"min_score": "0.5", "top_k": "6", "query": "crm"})
    {'min_score': 0.5, 'top_k': 6, 'query': 'crm'}

    :param parameters: The tool's parameters JSON schema (``Tool.parameters``), or ``None``.
    :param arguments: The model's arguments.
    :returns: A new dict; values the schema does not describe, or that do not convert, are unchanged.
    """
    if not isinstance(parameters, Mapping):
        return dict(arguments)
    coerced = _coerce(dict(arguments), parameters, parameters, 0)
    return coerced if isinstance(coerced, dict) else dict(arguments)
