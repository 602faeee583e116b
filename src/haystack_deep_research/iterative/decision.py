"""
The analysis model's decision, as the seed names it: ``{"nextSearchTopic": str | null, "shouldContinue": bool}``.

:func:`parse_decision` finds the JSON object in the reply (the whole reply, a fenced ```json block, or the first
object embedded in prose) and validates it with pydantic (:class:`SearchDecision`). ``nextSearchTopic`` may also be a
list of topics, searched side by side in one round. A reply that is not a valid decision gives the validation errors
instead, which the decide step shows the model in its one retry.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from haystack_deep_research._untrusted.json_text import extract_json_object

__all__ = ["SearchDecision", "extract_json_object", "parse_decision"]


class SearchDecision(BaseModel):
    """One decision of the analysis model."""

    model_config = ConfigDict(extra="ignore")

    nextSearchTopic: str | list[str] | None = None
    """The next topic to search, a list of topics to search at once, or ``None``."""
    shouldContinue: bool
    """Whether to search again; when ``True`` at least one non-blank topic is required."""

    @field_validator("nextSearchTopic")
    @classmethod
    def _clean(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list):
            return [" ".join(topic.split()) for topic in value if topic.strip()]
        return " ".join(value.split()) if isinstance(value, str) else None

    @model_validator(mode="after")
    def _topic_when_continuing(self) -> SearchDecision:
        if self.shouldContinue and not self.topics:
            raise ValueError("shouldContinue is true, so nextSearchTopic must name at least one non-empty topic")
        return self

    @property
    def topics(self) -> list[str]:
        """The topics to search (none when the decision is to stop)."""
        value = self.nextSearchTopic
        topics = value if isinstance(value, list) else [value] if value else []
        return [topic for topic in topics if topic]


def parse_decision(text: str) -> tuple[SearchDecision | None, list[dict[str, Any]]]:
    """
    Read a decision from the analysis model's reply.

    :param text: The reply.
    :returns: ``(decision, [])``, or ``(None, errors)`` with pydantic's list of errors (or one error saying that the
        reply holds no JSON object).
    """
    try:
        data = extract_json_object(text)
    except ValueError as error:
        return None, [{"type": "json_invalid", "loc": [], "msg": f"{error}; reply with one JSON object"}]
    try:
        return SearchDecision.model_validate(data), []
    except ValidationError as error:
        return None, json.loads(error.json(include_url=False, include_input=False))
