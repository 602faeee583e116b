"""The grouped settings: checked where they are written, combined per run, refused where a shape has no use."""

from __future__ import annotations

import json
from typing import Any

import pytest
from haystack.components.generators.chat import MockChatGenerator

from haystack_deep_research import (
    Budgets,
    ConfigurationError,
    Grounding,
    MCPServer,
    Price,
    Sources,
    create_iterative_research_agent,
)

CHEAP = Price(input_per_mtok=1.0, output_per_mtok=2.0)
DEAR = Price(input_per_mtok=5.0, output_per_mtok=9.0)


def test_a_runs_budgets_replace_the_limits_they_set_and_add_their_prices() -> None:
    factory = Budgets(tokens=10_000, seconds=60, prices={"a": CHEAP, "b": CHEAP})
    run = Budgets(seconds=5, dollars=0.5, prices={"b": DEAR})

    assert run.over(factory) == Budgets(tokens=10_000, seconds=5.0, dollars=0.5, prices={"a": CHEAP, "b": DEAR})
    assert Budgets().over(factory) == factory


def test_grounding_is_a_value_true_or_off() -> None:
    assert Grounding.of(True) == Grounding()
    assert Grounding.of(False) is None
    assert Grounding.of(None) is None
    tuned = Grounding(threshold=0.8, max_replans=0)
    assert Grounding.of(tuned) is tuned
    with pytest.raises(ConfigurationError, match="grounding must be a Grounding"):
        Grounding.of("on")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Sources(web="no"), r"Sources\(web=...\) must be True or False"),
        (lambda: Sources(passage_budget=100), "passage_budget must be 0 .the whole page. or an integer from 500"),
        (lambda: Sources(mcp_servers="notes"), r"Sources\(mcp_servers=...\) must be a list of MCPServer"),
        (lambda: Sources(web=False), r"Sources\(web=False\) leaves the researchers nothing to search"),
        (lambda: Sources(web=False, search="ddgs", datastores={"a": {}}), r"Sources\(web=False\) has no web search"),
        (lambda: Grounding(judge_llm="gpt-5.4"), r"Grounding\(judge_llm=...\) must be a Haystack chat generator"),
        (lambda: Budgets(prices={"m": (1, 2)}), r"Budgets\(prices=...\) must map model names to Price objects"),
    ],
)
def test_a_bad_value_fails_where_it_is_written(build: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        build()  # type: ignore[operator]


def test_mcp_servers_alone_are_enough_without_the_web() -> None:
    server = MCPServer(name="notes", command=["notes-server"])

    assert Sources(web=False, mcp_servers=[server]).mcp_servers == [server]


@pytest.mark.parametrize("field", [{"threshold": 0.9}, {"max_regenerations": 2}, {"max_replans": 1}])
def test_the_iterative_agent_refuses_the_repairs_it_does_not_make(field: dict[str, object]) -> None:
    model = MockChatGenerator()
    with pytest.raises(ConfigurationError, match="create_iterative_research_agent does not use Grounding"):
        create_iterative_research_agent(analysis_llm=model, writer_llm=model, grounding=Grounding(**field))


@pytest.mark.parametrize(
    "setting",
    [
        Price(input_per_mtok=0.5, output_per_mtok=1.5, cached_input_per_mtok=0.05),
        MCPServer(name="wiki", command=("wiki-mcp", "--lang", "français"), env={"TOKEN": "ü"}),
    ],
)
def test_a_setting_round_trips_as_plain_json(setting: Price | MCPServer) -> None:
    plain = json.loads(json.dumps(setting.to_dict()))

    assert type(setting).from_dict(plain) == setting
    assert type(setting).from_dict(plain).to_dict() == setting.to_dict()


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        (Price, {"input_per_mtok": 1, "output_per_mtok": 2, "currency": "EUR"}, r"unknown keys \['currency'\]"),
        (MCPServer, {"name": "wiki", "url": "http://127.0.0.1:1/mcp", "__class__": "os.system"}, "unknown keys"),
        (Price, ["input_per_mtok", 1], "needs a mapping"),
        (Price, {"input_per_mtok": -1, "output_per_mtok": 2}, "input_per_mtok"),
    ],
)
def test_a_serialized_setting_with_a_key_of_no_field_is_refused_by_name(kind: type, data: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        kind.from_dict(data)
