"""
The URLs of a structured output are verified like the report's: none leaves the library unless the run read it.

A model fills an ``output_schema`` from the report, and nothing stops it from writing an invented URL into a
``sources`` list or any other URL field. :func:`verify_structured` walks the validated instance: every string that is
a URL (``http(s)``, ``doc``, ``file`` or ``mcp``) is kept only when the run's ledger holds it as read. An unverified URL
is dropped from its list, or its field is emptied (``None``, else the field's default); the result is validated
again, and the warning names each field. An instance that cannot hold without the URL is refused with
:class:`~haystack_deep_research.errors.StructuredOutputError`, as an instance that never validated: the report and
everything else the run gathered are still returned.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

from haystack_deep_research.errors import StructuredOutputError
from haystack_deep_research.evidence import normalize_url
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.state import PHASE_STRUCTURE

__all__ = ["verify_structured"]

_URL = re.compile(r"^\s*(?:https?|doc|file|mcp)://\S+\s*$", re.IGNORECASE)
_DROP = object()


def _clean(value: Any, read: set[str], path: str, removed: list[str]) -> Any:
    if isinstance(value, str):
        if _URL.match(value) and normalize_url(value.strip()) not in read:
            removed.append(f"{path or 'the output'}: {value.strip()}")
            return _DROP
        return value
    if isinstance(value, list):
        kept = [_clean(item, read, f"{path}[{index}]", removed) for index, item in enumerate(value)]
        return [item for item in kept if item is not _DROP]
    if isinstance(value, dict):
        cleaned = {key: _clean(item, read, f"{path}.{key}" if path else key, removed) for key, item in value.items()}
        return {key: (None if item is _DROP else item) for key, item in cleaned.items()}
    return value


def _without_none(value: Any, original: Any) -> Any:
    """Leave out the fields emptied to ``None`` that the schema does not allow to be ``None``: their defaults apply."""
    if isinstance(value, dict) and isinstance(original, dict):
        return {
            key: _without_none(item, original.get(key))
            for key, item in value.items()
            if not (item is None and original.get(key) is not None)
        }
    return value


def verify_structured(instance: BaseModel, run: ResearchRun, *, report: str = "") -> BaseModel:
    """
    Keep in ``instance`` only the URLs the run read (see the module docstring).

    :param instance: A validated structured output.
    :param run: The run, whose ledger lists what was read.
    :param report: The report the instance was written from (kept on the error).
    :returns: The instance, or a new one without the unverified URLs (a warning names them).
    :raises StructuredOutputError: If the schema cannot hold the instance without them.
    """
    read = {normalize_url(url) for url in run.ledger.read_urls()}
    data = instance.model_dump(mode="json")
    removed: list[str] = []
    cleaned = _clean(data, read, "", removed)
    if not removed:
        return instance
    schema = type(instance)
    try:
        verified = schema.model_validate(cleaned)
    except ValidationError:
        try:
            verified = schema.model_validate(_without_none(cleaned, data))
        except ValidationError as error:
            raise StructuredOutputError(
                f"the structured output ({schema.__name__}) holds URL(s) the run never read ({'; '.join(removed)}), "
                "and the schema cannot hold it without them",
                raw_text=instance.model_dump_json(),
                errors=[dict(e) for e in error.errors(include_url=False)],
                report=report,
            ) from error
    run.warn(
        PHASE_STRUCTURE,
        f"removed {len(removed)} URL(s) the run never read from the structured output: {'; '.join(removed)}",
    )
    return verified
