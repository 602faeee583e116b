"""Numbers a provider sent as strings reach tools as numbers, by each tool's JSON schema."""

from __future__ import annotations

from typing import Any

import pytest
from haystack.tools import tool
from pydantic import BaseModel

from haystack_deep_research.tools import coerce_arguments

SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "min_score": {"type": "number"},
        "top_k": {"type": "integer"},
        "exact": {"type": "boolean"},
        "years": {"type": "array", "items": {"type": "integer"}},
        "filters": {"type": "object", "properties": {"since": {"anyOf": [{"type": "null"}, {"type": "integer"}]}}},
    },
}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"min_score": "0.5"}, {"min_score": 0.5}),
        ({"min_score": "1"}, {"min_score": 1}),
        ({"top_k": "6"}, {"top_k": 6}),
        ({"top_k": "6.0"}, {"top_k": 6}),
        ({"exact": "True"}, {"exact": True}),
        ({"exact": "false"}, {"exact": False}),
        ({"years": ["2024", 2025]}, {"years": [2024, 2025]}),
        ({"years": '["2024", "2025"]'}, {"years": [2024, 2025]}),
        ({"filters": {"since": "2020"}}, {"filters": {"since": 2020}}),
        ({"filters": '{"since": "2020"}'}, {"filters": {"since": 2020}}),
        ({"query": "0.5"}, {"query": "0.5"}),  # a string parameter stays a string
    ],
)
def test_string_encoded_values_become_what_the_schema_declares(given: dict[str, Any], expected: dict[str, Any]) -> None:
    assert coerce_arguments(SEARCH, given) == expected


@pytest.mark.parametrize(
    "given",
    [{"min_score": "high"}, {"top_k": "6.5"}, {"min_score": "nan"}, {"exact": "yes"}, {"unknown": "0.5"}],
)
def test_values_that_do_not_convert_are_left_for_the_tool_to_refuse(given: dict[str, Any]) -> None:
    assert coerce_arguments(SEARCH, given) == given


class Result(BaseModel):
    summary: str
    confidence: float


@tool
def submit(result: Result) -> str:
    """Submit."""
    return "ok"


def test_a_pydantic_parameter_is_followed_through_its_reference() -> None:
    coerced = coerce_arguments(submit.parameters, {"result": {"summary": "s", "confidence": "0.8"}})

    assert coerced == {"result": {"summary": "s", "confidence": 0.8}}


def test_no_schema_leaves_the_arguments_as_they_are() -> None:
    assert coerce_arguments(None, {"min_score": "0.5"}) == {"min_score": "0.5"}
