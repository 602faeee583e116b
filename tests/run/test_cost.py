"""What a run costs: prices, cost per phase by the phase's model, an unknown price, and the cost budget."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from tests.support import SUMMARIZE_EVERY_PAGE

from haystack_deep_research import Budgets, ConfigurationError, Price
from haystack_deep_research.agents import ResearchAgent
from haystack_deep_research.research.scope import ScopeHook
from haystack_deep_research.run import usage_cost
from haystack_deep_research.run._budget import RunBudget
from haystack_deep_research.settings import DEFAULT_PRICES, PRICES_AS_OF
from haystack_deep_research.testing import LoopbackSearchServer, ScriptedChatGenerator

QUESTION = "How fast is solar power growing?"
ACME = Price(input_per_mtok=1_000.0, output_per_mtok=2_000.0)  # a token costs a tenth of a cent or more


def _named(generator: ScriptedChatGenerator, model: str) -> ScriptedChatGenerator:
    generator.model = model  # type: ignore[attr-defined]  # what model_name() reads, like a provider's generator
    return generator


def _acme_models(**orchestrator: Any) -> dict[str, Any]:
    return {
        "scope_llm": _named(ScriptedChatGenerator(role="scope"), "acme"),
        "orchestrator_llm": _named(ScriptedChatGenerator(role="orchestrator", **orchestrator), "acme"),
        "researcher_llm": _named(ScriptedChatGenerator(role="researcher"), "acme-mini"),
        "summarizer_llm": _named(ScriptedChatGenerator(role="summarizer"), "acme-mini"),
        "writer_llm": _named(ScriptedChatGenerator(role="writer"), "acme"),
    }


def _run(agent: Agent) -> dict[str, Any]:
    return agent.run(messages=[ChatMessage.from_user(QUESTION)])


def test_the_default_models_have_dated_prices() -> None:
    assert DEFAULT_PRICES["gpt-5.4"] == Price(input_per_mtok=2.5, output_per_mtok=15.0, cached_input_per_mtok=0.25)
    assert DEFAULT_PRICES["gpt-5.4-mini"] == Price(
        input_per_mtok=0.75, output_per_mtok=4.5, cached_input_per_mtok=0.075
    )
    assert len(PRICES_AS_OF) == 10
    assert PRICES_AS_OF[4] == "-"


def test_a_responses_usage_with_cached_input_is_priced_at_the_cached_rate() -> None:
    usage = {
        "input_tokens": 1_000_000,
        "input_tokens_details": {"cached_tokens": 400_000},
        "output_tokens": 100_000,
        "output_tokens_details": {"reasoning_tokens": 60_000},
        "total_tokens": 1_100_000,
    }
    # 600k input at $2.50, 400k cached at $0.25, 100k output (reasoning included) at $15.
    assert usage_cost(usage, DEFAULT_PRICES["gpt-5.4"]) == pytest.approx(1.5 + 0.1 + 1.5)


def test_a_chat_usage_without_a_cached_price_bills_cached_tokens_as_input() -> None:
    usage = {"prompt_tokens": 2_000, "completion_tokens": 500, "prompt_tokens_details": {"cached_tokens": 1_000}}
    assert usage_cost(usage, Price(input_per_mtok=1.0, output_per_mtok=4.0)) == pytest.approx(0.004)


@pytest.mark.parametrize(
    "usage",
    [
        {"total_tokens": 50},  # no split between input and output
        {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 90},  # another provider's cache counts
    ],
)
def test_a_usage_that_cannot_be_priced_right_has_no_cost(usage: dict[str, Any]) -> None:
    assert usage_cost(usage, DEFAULT_PRICES["gpt-5.4"]) is None


@pytest.mark.parametrize("field", ["input_per_mtok", "output_per_mtok", "cached_input_per_mtok"])
def test_a_negative_price_is_refused(field: str) -> None:
    values: dict[str, Any] = {"input_per_mtok": 1.0, "output_per_mtok": 1.0, field: -1.0}
    with pytest.raises(ConfigurationError, match=re.escape(f"Price.{field} must be a number from 0.0")):
        Price(**values)


def test_a_cost_budget_must_be_positive() -> None:
    with pytest.raises(ConfigurationError, match="cost_budget must be a number greater than 0"):
        RunBudget(cost_budget=0)


def test_a_run_reports_its_cost_per_phase_by_each_phases_model(make_agent: Callable[..., Agent]) -> None:
    models = _acme_models(subtopics=["solar capacity"])
    prices = {"acme": ACME, "acme-mini": Price(input_per_mtok=10.0, output_per_mtok=20.0)}

    result = _run(make_agent(sources=SUMMARIZE_EVERY_PAGE, **models, budgets=Budgets(prices=prices)))

    usage = result["usage_by_phase"]
    assert {phase: usage[phase]["model"] for phase in usage} == {
        "scope": "acme",
        "orchestrator": "acme",
        "research": "acme-mini",
        "summarize": "acme-mini",
        "write": "acme",
    }
    for phase, spent in usage.items():
        price = prices[spent["model"]]
        expected = spent["prompt_tokens"] * price.input_per_mtok + spent["completion_tokens"] * price.output_per_mtok
        assert spent["cost"] == pytest.approx(expected / 1_000_000), phase
    assert result["cost"] == pytest.approx(sum(spent["cost"] for spent in usage.values()))
    assert result["cost"] > 0
    assert result["warnings"] == []


def test_scripted_models_cost_nothing(make_agent: Callable[..., Agent]) -> None:
    result = _run(make_agent())

    assert result["cost"] == 0.0
    assert {spent["model"] for spent in result["usage_by_phase"].values()} == {"ScriptedChatGenerator"}


def test_an_unknown_price_makes_the_cost_unknown_and_is_said_once(make_agent: Callable[..., Agent]) -> None:
    models = _acme_models(subtopics=["solar capacity", "battery storage"])

    result = _run(make_agent(sources=SUMMARIZE_EVERY_PAGE, **models, budgets=Budgets(prices={"acme": ACME})))

    assert result["cost"] is None
    assert result["usage_by_phase"]["research"]["cost"] is None
    assert result["usage_by_phase"]["summarize"]["cost"] is None
    assert result["usage_by_phase"]["write"]["cost"] > 0
    unknown = [w for w in result["warnings"] if "cost is unknown" in w]
    assert len(unknown) == 1  # two phases and several researchers use the model; it is said once
    assert (
        "no price is known for model 'acme-mini'; pass budgets=Budgets(prices={'acme-mini': Price(...)})" in unknown[0]
    )
    assert result["exit_reason"] == "text"


def test_a_cost_budget_needs_every_models_price(make_agent: Callable[..., Agent]) -> None:
    with pytest.raises(ConfigurationError, match=re.escape("none is known for acme, acme-mini. Pass Budgets(prices=")):
        make_agent(**_acme_models(), budgets=Budgets(dollars=1.0))


def test_a_spent_cost_budget_stops_research_and_the_report_is_written(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    # At $1 per thousand tokens, scope and the orchestrator's first turn cost about $0.25 and the first researcher
    # soon passes $0.30.
    agent = make_agent(
        **_acme_models(subtopics=["solar capacity", "battery storage"]),
        budgets=Budgets(prices={"acme": ACME, "acme-mini": ACME}, dollars=0.3),
        max_concurrent_researchers=1,
    )

    result = _run(agent)

    assert result["exit_reason"] == "cost_budget"
    assert len(result["notes"]) == 1
    assert "[Partial: the run's cost budget was spent" in result["notes"][0]
    assert [r.json_body["query"] for r in search.requests if r.method == "POST"] == ["solar capacity"]
    assert any(w.startswith("orchestrator: the cost budget of $0.3 ($") for w in result["warnings"])
    assert result["report"].startswith("# Research report")
    assert result["cost"] > 0.3  # the closing calls (summary, writer) still ran


def test_cost_settings_survive_serialization(make_agent: Callable[..., Agent]) -> None:
    agent = make_agent(**_acme_models(), budgets=Budgets(prices={"acme": ACME, "acme-mini": ACME}, dollars=2.5))

    restored = ResearchAgent.from_dict(agent.to_dict())

    [hook] = restored.hooks["before_run"]
    assert isinstance(hook, ScopeHook)
    assert hook.cost_budget == 2.5
    assert hook.prices == {"acme": ACME, "acme-mini": ACME}
    assert hook.phase_models["research"] == "acme-mini"
