"""
The deep agent's answer: the arguments of its submit tool (or its final text), read as text for grounding, and as
an instance of ``output_schema`` when the submit tool takes one.

A submit tool *takes the schema* when its parameters are the schema's fields (``submit(summary=..., ...)``) or one
object parameter with those fields (``submit(result: ResearchResult)``). Then a submission whose arguments do not
validate is refused before the tool runs, with pydantic's errors for the model to fix (:func:`payload`), and the
accepted submission *is* the structured output, without another model call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from haystack_deep_research.report.structured import parse_structured

__all__ = ["answer_text", "drop_sentences", "payload", "takes_schema"]


def _fields(schema: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        schema = (root.get("$defs") or {}).get(reference.rsplit("/", 1)[-1]) or {}
    properties = schema.get("properties")
    return set(properties) if isinstance(properties, Mapping) else set()


def takes_schema(parameters: Mapping[str, Any] | None, schema: type[BaseModel]) -> bool:
    """
    :param parameters: The submit tool's parameters JSON schema.
    :param schema: The output schema.
    :returns: Whether the tool's arguments are the schema's fields, directly or as its one object parameter.
    """
    if not isinstance(parameters, Mapping):
        return False
    wanted = set(schema.model_fields)
    if _fields(parameters, parameters) == wanted:
        return True
    properties = parameters.get("properties")
    if isinstance(properties, Mapping) and len(properties) == 1:
        [only] = properties.values()
        return isinstance(only, Mapping) and _fields(only, parameters) == wanted
    return False


def payload(arguments: Mapping[str, Any], schema: type[BaseModel]) -> tuple[BaseModel | None, list[dict[str, Any]]]:
    """
    Validate a submission against the output schema.

    :param arguments: The submit call's arguments.
    :param schema: The output schema.
    :returns: ``(instance, [])``, or ``(None, errors)`` with pydantic's errors of the closest reading.
    """
    candidates: list[Any] = [dict(arguments)]
    if len(arguments) == 1:
        [only] = arguments.values()
        candidates.insert(0, only)
    errors: list[dict[str, Any]] = []
    for candidate in candidates:
        if not isinstance(candidate, Mapping):
            continue
        instance, found = parse_structured(schema, json.dumps(candidate, default=str))
        if instance is not None:
            return instance, []
        errors = errors or found
    return None, errors


def answer_text(value: Any) -> str:
    """
    :param value: A submission's arguments, or a text answer.
    :returns: Its text: every string in it, one per line, in order.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(text for item in value.values() if (text := answer_text(item)))
    if isinstance(value, list | tuple):
        return "\n".join(text for item in value if (text := answer_text(item)))
    return ""


def drop_sentences(value: Any, sentences: set[str]) -> Any:
    """
    :param value: A submission's arguments, or a text answer.
    :param sentences: Sentences to remove, exactly as they appear.
    :returns: The same structure with those sentences removed from every string (whitespace left tidy).
    """
    if isinstance(value, str):
        text = value
        for sentence in sentences:
            text = text.replace(sentence, "")
        lines = [" ".join(line.split()) for line in text.splitlines()]
        return "\n".join(line for line in lines if line.strip(" -*")).strip() if text != value else value
    if isinstance(value, Mapping):
        return {key: drop_sentences(item, sentences) for key, item in value.items()}
    if isinstance(value, list):
        kept = [drop_sentences(item, sentences) for item in value]
        return [new for old, new in zip(value, kept, strict=True) if not (isinstance(old, str) and old and not new)]
    return value
