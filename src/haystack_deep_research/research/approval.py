"""
A person in the loop, through Haystack's own human-in-the-loop hooks: plan approval of the orchestrator's
``research_subtopic`` calls (:class:`PlanReview`; decisions are ``PlanReviewed`` events and journaled, so a resumed run
reuses them) and the deep agent's tool confirmation (:func:`confirmation_hooks`). See docs/plan-approval.md.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Collection, Mapping
from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.dataclasses import ChatMessage
from haystack.hooks.human_in_the_loop.dataclasses import ToolExecutionDecision
from haystack.hooks.human_in_the_loop.hooks import ConfirmationHook
from haystack.hooks.human_in_the_loop.types import ConfirmationStrategy
from haystack.hooks.protocol import Hook

from haystack_deep_research._prompts import RESEARCH_SUBTOPIC
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.events import PlanReviewed
from haystack_deep_research.research.tool_calls import with_tool_calls
from haystack_deep_research.run import RunView
from haystack_deep_research.run._journal import JournaledDecision, subtopic_key
from haystack_deep_research.run._phases import Call, Phase, blocking, drive, drive_async
from haystack_deep_research.state import MESSAGES, PHASE_RESEARCH, RUN_KEY

__all__ = ["CallIdHook", "PlanReview", "confirmation_hooks", "plan_review_hooks"]

ACCEPT, EDIT, DROP = "accept", "edit", "drop"
_DECISIONS_RESOURCE = "plan_decisions"
_EXAMPLE = "BlockingConfirmationStrategy(confirmation_policy=AlwaysAskPolicy(), confirmation_ui=RichConsoleUI())"


def _strategy(name: str, value: Any) -> ConfirmationStrategy:
    if isinstance(value, type) or not all(callable(getattr(value, m, None)) for m in ("run", "to_dict")):
        raise ConfigurationError(
            f"{name} must be a Haystack confirmation strategy, for example {_EXAMPLE}; got {type(value).__name__}."
        )
    return value


class CallIdHook(InitSerialized):
    """
    ``before_tool``, just before the ``ConfirmationHook``: give each pending tool call without an id one. Haystack
    matches a decision to its call by id, else by tool name, which cannot tell apart several calls of one tool in a
    turn (several sub-topics); some providers send calls without ids.
    """

    allowed_hook_points = ("before_tool",)

    def run(self, state: State) -> None:
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        if not messages or all(call.id for call in messages[-1].tool_calls):
            return
        last = messages[-1]
        calls = [
            call if call.id else dataclasses.replace(call, id=f"call_{uuid.uuid4().hex[:12]}")
            for call in last.tool_calls
        ]
        state.set(MESSAGES, [*messages[:-1], with_tool_calls(last, calls)], handler_override=replace_values)


class PlanReview(InitSerialized):
    """The confirmation strategy of ``research_subtopic`` calls: the person's ``strategy`` decides, the run records."""

    def __init__(self, *, strategy: ConfirmationStrategy) -> None:
        self.strategy = _strategy("approve_plan", strategy)

    def run(
        self,
        *,
        tool_name: str,
        tool_description: str,
        tool_params: dict[str, Any],
        tool_call_id: str | None = None,
        confirmation_strategy_context: dict[str, Any] | None = None,
    ) -> ToolExecutionDecision:
        """Decide one ``research_subtopic`` call: from this run's or the journal's decision, else by asking."""
        asked = {"tool_name": tool_name, "tool_description": tool_description, "tool_params": tool_params}
        return drive(self._review(asked, tool_call_id, confirmation_strategy_context), max_concurrency=1)

    async def run_async(
        self,
        *,
        tool_name: str,
        tool_description: str,
        tool_params: dict[str, Any],
        tool_call_id: str | None = None,
        confirmation_strategy_context: dict[str, Any] | None = None,
    ) -> ToolExecutionDecision:
        """The async form of :meth:`run` (the person's strategy is asked with its ``run_async``)."""
        asked = {"tool_name": tool_name, "tool_description": tool_description, "tool_params": tool_params}
        return await drive_async(self._review(asked, tool_call_id, confirmation_strategy_context), max_concurrency=1)

    def _review(
        self, asked: dict[str, Any], call_id: str | None, context: dict[str, Any] | None
    ) -> Phase[ToolExecutionDecision]:
        found = context.get(RUN_KEY) if isinstance(context, dict) else None
        view = found if isinstance(found, RunView) else None
        params: dict[str, Any] = asked["tool_params"]
        subtopic = params.get("subtopic")
        if view is None or not isinstance(subtopic, str) or not subtopic.strip():
            return (yield from self._ask(asked, call_id, context))  # outside a run, or a call the tool refuses
        subtopic = subtopic.strip()
        decided: dict[str, JournaledDecision] = view.run.resource(_DECISIONS_RESOURCE, dict)
        journal = view.run.journal
        known = decided.get(subtopic_key(subtopic))
        if known is None and journal is not None:
            known = journal.find_decision(subtopic)
            if known is not None:
                decided[subtopic_key(subtopic)] = known
                view.emit(_event(known, restored=True))
            elif journal.find_note(subtopic) is not None:  # researched before: nothing to ask, nothing to pay
                known = JournaledDecision(subtopic=subtopic, decision=ACCEPT)
        if known is not None:
            return _decision(asked["tool_name"], call_id, params, known)
        decision = yield from self._ask(asked, call_id, context)
        review = _review_of(subtopic, decision)
        decided[subtopic_key(subtopic)] = review
        if journal is not None:
            [written] = yield [blocking(journal.record_decision, review)]
            if written.error is not None:
                view.warn(
                    PHASE_RESEARCH,
                    f"could not write the review of '{subtopic}' to the run directory ({written.error}); a resumed "
                    "run would ask about it again",
                )
        view.emit(_event(review, restored=False))
        return decision

    def _ask(
        self, asked: dict[str, Any], call_id: str | None, context: dict[str, Any] | None
    ) -> Phase[ToolExecutionDecision]:
        inputs = {**asked, "tool_call_id": call_id, "confirmation_strategy_context": context}
        strategy: Any = self.strategy
        run_async = getattr(strategy, "run_async", None)
        [outcome] = yield [
            Call(
                lambda: strategy.run(**inputs),
                (lambda: run_async(**inputs)) if callable(run_async) else blocking(strategy.run, **inputs).run_async,
            )
        ]
        if outcome.error is not None:
            raise outcome.error
        decision: ToolExecutionDecision = outcome.value
        if decision.execute and decision.final_tool_params is None:  # "run it" with no arguments given: as asked
            decision = dataclasses.replace(decision, final_tool_params=dict(asked["tool_params"]))
        return decision


def _review_of(subtopic: str, decision: ToolExecutionDecision) -> JournaledDecision:
    if not decision.execute:
        return JournaledDecision(subtopic=subtopic, decision=DROP, feedback=decision.feedback)
    final = (decision.final_tool_params or {}).get("subtopic")
    if isinstance(final, str) and final.strip() and final.strip() != subtopic:
        return JournaledDecision(subtopic=subtopic, decision=EDIT, edited_to=final.strip(), feedback=decision.feedback)
    return JournaledDecision(subtopic=subtopic, decision=ACCEPT)


def _decision(
    tool: str, call_id: str | None, params: dict[str, Any], known: JournaledDecision
) -> ToolExecutionDecision:
    if known.decision == DROP:
        return ToolExecutionDecision(tool_name=tool, execute=False, tool_call_id=call_id, feedback=known.feedback)
    final = {**params, "subtopic": known.edited_to} if known.decision == EDIT and known.edited_to else dict(params)
    feedback = known.feedback if final != params else None
    return ToolExecutionDecision(
        tool_name=tool, execute=True, tool_call_id=call_id, feedback=feedback, final_tool_params=final
    )


def _event(review: JournaledDecision, *, restored: bool) -> PlanReviewed:
    return PlanReviewed(phase=PHASE_RESEARCH, restored=restored, **dataclasses.asdict(review))


def plan_review_hooks(approve_plan: ConfirmationStrategy | None) -> list[Hook]:
    """The orchestrator's first ``before_tool`` hooks for ``approve_plan``: :class:`CallIdHook` and Haystack's
    ``ConfirmationHook`` over ``research_subtopic`` with :class:`PlanReview`, or none without a strategy."""
    if approve_plan is None:
        return []
    review = PlanReview(strategy=approve_plan)
    return [CallIdHook(), ConfirmationHook(confirmation_strategies={RESEARCH_SUBTOPIC: review})]


def confirmation_hooks(confirm_tools: Any, tool_names: Collection[str]) -> list[Hook]:
    """The agent's first ``before_tool`` hooks for ``confirm_tools`` (see ``create_deep_agent``): :class:`CallIdHook`
    and one ``ConfirmationHook``, or none; ``ConfigurationError`` for a name that is not one of ``tool_names``."""
    if confirm_tools is None:
        return []
    if not isinstance(confirm_tools, Mapping):
        everything = _strategy("confirm_tools", confirm_tools)
        return [CallIdHook(), ConfirmationHook(confirmation_strategies={"*": everything})]
    strategies: dict[str | tuple[str, ...], ConfirmationStrategy] = {}
    for key, strategy in confirm_tools.items():
        names = key if isinstance(key, tuple) else (key,)
        unknown = [name for name in names if name != "*" and name not in tool_names]
        if unknown or not names:
            raise ConfigurationError(
                f"confirm_tools names {unknown[0] if unknown else key!r}, which is not one of the agent's tools "
                f"({', '.join(sorted(tool_names))}); name a tool, a tuple of tools, or '*' for every tool."
            )
        strategies[key] = _strategy(f"confirm_tools[{key!r}]", strategy)
    return [CallIdHook(), ConfirmationHook(confirmation_strategies=strategies)] if strategies else []
