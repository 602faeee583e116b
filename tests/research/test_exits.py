"""Exit conditions are small objects: each, and each combination, is checked here without a model."""

from __future__ import annotations

import pytest

from haystack_deep_research import ConfigurationError
from haystack_deep_research.agents.deep_agent import default_termination
from haystack_deep_research.research import (
    ConfidenceMet,
    ExitCondition,
    MaxIterations,
    StepCall,
    StepFacts,
    TextReply,
    TokenLimit,
    ToolUsed,
)
from haystack_deep_research.research.exits import exit_condition_from_dict

SUBMIT = "submit_research"


def _submitted(confidence: object = 0.9, *, succeeded: bool = True, nested: bool = True) -> StepFacts:
    arguments = {"result": {"summary": "s", "confidence": confidence}} if nested else {"confidence": confidence}
    return StepFacts(steps=3, tokens=100, calls=(StepCall(SUBMIT, arguments, succeeded),))


def test_tool_called_fires_on_a_successful_call_only_by_default() -> None:
    assert ToolUsed(SUBMIT).fired(_submitted()) == SUBMIT
    assert ToolUsed(SUBMIT).fired(_submitted(succeeded=False)) is None
    assert ToolUsed(SUBMIT, require_success=False).fired(_submitted(succeeded=False)) == SUBMIT
    assert ToolUsed("other").fired(_submitted()) is None
    assert ToolUsed(SUBMIT).fired(StepFacts(text_reply=True)) is None


@pytest.mark.parametrize(
    ("confidence", "nested", "fires"),
    [(0.9, True, True), (0.85, True, True), (0.84, True, False), ("0.9", True, True), (0.9, False, True)],
)
def test_confidence_met_reads_the_confidence_of_the_step_call(confidence: object, nested: bool, fires: bool) -> None:
    fired = ConfidenceMet(0.85).fired(_submitted(confidence, nested=nested))

    assert (fired == "confidence_met") is fires


def test_a_call_without_a_confidence_meets_only_a_minimum_of_zero() -> None:
    facts = StepFacts(calls=(StepCall(SUBMIT, {"answer": "x"}),))

    assert ConfidenceMet(0.0).fired(facts) == "confidence_met"
    assert ConfidenceMet(0.5).fired(facts) is None
    assert ConfidenceMet(0.5).fired(_submitted("high")) is None  # an unreadable confidence is none


def test_token_limit_and_max_iterations_fire_at_their_limits() -> None:
    assert TokenLimit(1_000).fired(StepFacts(tokens=999)) is None
    assert TokenLimit(1_000).fired(StepFacts(tokens=1_000)) == "token_budget"
    assert MaxIterations(5).fired(StepFacts(steps=4)) is None
    assert MaxIterations(5).fired(StepFacts(steps=5)) == "max_iterations"
    assert TextReply().fired(StepFacts(text_reply=True)) == "text"


def test_and_needs_both_and_reports_the_first_reason() -> None:
    condition = ToolUsed(SUBMIT) & ConfidenceMet(0.85)

    assert condition.fired(_submitted(0.9)) == SUBMIT
    assert condition.fired(_submitted(0.5)) is None
    assert condition.fired(_submitted(0.9, succeeded=False)) is None


def test_or_reports_the_condition_that_fired() -> None:
    condition = (ToolUsed(SUBMIT) & ConfidenceMet(0.85)) | TokenLimit(500) | MaxIterations(10)

    assert condition.fired(_submitted(0.9)) == SUBMIT
    assert condition.fired(StepFacts(steps=2, tokens=600)) == "token_budget"
    assert condition.fired(StepFacts(steps=10, tokens=10)) == "max_iterations"
    assert condition.fired(StepFacts(steps=2, tokens=10)) is None
    assert condition.tools() == {SUBMIT}


def test_the_default_termination_is_the_documented_composition() -> None:
    with_budget = default_termination(
        submit_tool=SUBMIT, min_confidence=0.85, max_iterations=20, total_token_budget=5_000
    )
    without = default_termination(submit_tool=SUBMIT, min_confidence=0.85, max_iterations=20, total_token_budget=None)
    plain = default_termination(submit_tool=None, min_confidence=0.0, max_iterations=20, total_token_budget=None)

    assert with_budget == (ToolUsed(SUBMIT) & ConfidenceMet(0.85)) | TokenLimit(5_000) | MaxIterations(20)
    assert without == (ToolUsed(SUBMIT) & ConfidenceMet(0.85)) | MaxIterations(20)
    assert plain == TextReply() | MaxIterations(20)
    assert "submit_research was called and succeeded" in with_budget.describe()


def test_the_serialized_form_of_each_condition_is_the_documented_one() -> None:
    condition = ToolUsed(SUBMIT) & (ConfidenceMet(0.5) | TextReply())

    assert condition.to_dict() == {
        "type": "all_of",
        "parts": [
            {"type": "tool_used", "tool": SUBMIT, "require_success": True},
            {"type": "any_of", "parts": [{"type": "confidence_met", "minimum": 0.5}, {"type": "text_reply"}]},
        ],
    }
    assert exit_condition_from_dict({"type": "tool_used", "tool": SUBMIT}) == ToolUsed(SUBMIT, require_success=True)


def test_conditions_round_trip_through_dicts() -> None:
    condition = (ToolUsed(SUBMIT, require_success=False) & ConfidenceMet(0.7)) | TokenLimit(900) | MaxIterations(9)

    restored = exit_condition_from_dict(condition.to_dict())

    assert restored == condition
    assert isinstance(restored, ExitCondition)
    assert restored.fired(_submitted(0.8)) == SUBMIT
    assert restored.fired(_submitted(0.8, succeeded=False)) is None  # a failed call carries no confidence


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ToolUsed(""), "ToolUsed needs the name of a tool"),
        (lambda: ConfidenceMet(1.5), "min_confidence must be a number from 0.0 to 1.0"),
        (lambda: TokenLimit(0), r"TokenLimit\(tokens=\.\.\.\) must be an integer from 1"),
        (lambda: MaxIterations(0), "max_iterations must be an integer from 1"),
        (lambda: ToolUsed(SUBMIT) | "max", "exit conditions compose only with exit conditions"),
        (lambda: exit_condition_from_dict({"type": "nope"}), "not a serialized exit condition"),
        (lambda: exit_condition_from_dict(["token_limit"]), "not a serialized exit condition"),  # type: ignore[arg-type]
        (lambda: exit_condition_from_dict({"type": "token_limit"}), "not a serialized exit condition"),
        (lambda: exit_condition_from_dict({"type": "max_iterations", "steps": 3, "étapes": 4}), "not a serialized"),
        (lambda: exit_condition_from_dict({"type": "any_of", "parts": [{"type": "x.Evil"}]}), "not a serialized"),
        (lambda: exit_condition_from_dict({"type": "token_limit", "tokens": -1}), "must be an integer from 1"),
    ],
)
def test_bad_conditions_are_refused_with_the_fix(build: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        build()  # type: ignore[operator]
