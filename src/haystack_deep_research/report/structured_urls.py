"""
The URLs of a structured output are verified like the report's: none leaves the library unless the run read it (or
holds its search result's snippet).

A model fills an ``output_schema`` from the report, and nothing stops it from writing an invented URL into a ``sources``
list or any other URL field. :func:`verify_structured` walks the validated instance: every URL in any string (read as
the report's citations are: bare, autolinks, ``www.``, Markdown links, in prose or alone) and in any key is kept only
when the run's ledger holds it as citable (read, or a search result's snippet). An unverified link is removed from its
text as the report's repair removes it; a value that was only that URL is dropped from its list, or its field is emptied
(``None``, else the field's default); the result is validated again, and the warning names each field. An instance that
cannot hold without the URL is refused with :class:`~haystack_deep_research.errors.StructuredOutputError`, as an
instance that never validated: the report and everything else the run gathered are still returned.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from haystack_deep_research.errors import StructuredOutputError
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.evidence.verification import verify_citations
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.state import PHASE_STRUCTURE

__all__ = ["verify_structured"]

_DROP = object()


def _repaired(text: str, read: set[str], path: str, removed: list[str]) -> Any:
    """``text`` without its links to URLs the run never read (the report's repair), or ``_DROP`` if nothing is left."""
    unverified = [c.url for c in extract_citations(text) if normalize_url(c.url) not in read]
    if not unverified:
        return text
    removed.extend(f"{path or 'the output'}: {url}" for url in dict.fromkeys(unverified))
    repaired = verify_citations(text, sorted(read)).report
    if "## Sources" not in text:  # the repair rebuilds a Sources list; a field never had one
        repaired = repaired.split("\n\n## Sources\n", 1)[0]
    return repaired.strip() or _DROP


def _clean(value: Any, read: set[str], path: str, removed: list[str]) -> Any:
    if isinstance(value, str):
        return _repaired(value, read, path, removed)
    if isinstance(value, list):
        kept = [_clean(item, read, f"{path}[{index}]", removed) for index, item in enumerate(value)]
        return [item for item in kept if item is not _DROP]
    if isinstance(value, dict):
        cleaned = {}
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _repaired(key, read, where, removed) is not key:
                continue  # a key naming a URL the run never read goes with its value
            cleaned[key] = _clean(item, read, where, removed)
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
    read = {normalize_url(url) for url in run.ledger.citable_urls()}
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
