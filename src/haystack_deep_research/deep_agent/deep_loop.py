"""
The hooks of the deep agent's tool loop, one per hook point, wiring over the layers that hold the logic (see
docs/deep-agent.md): :class:`StepStartHook` (``before_llm``), :class:`ToolStepHook` (``before_tool``),
:class:`StepReviewHook` (``after_tool``) and :class:`AnswerHook` (``on_exit``). A submission to a submit tool that
takes ``output_schema`` is validated before the tool runs (:func:`takes_schema`, :func:`payload`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from haystack.components.agents.state import State
from haystack.dataclasses import ChatMessage, ToolCall
from pydantic import BaseModel

from haystack_deep_research._prompts import (
    GROUNDING_SEND_BACK,
    LOW_CONFIDENCE,
    NOT_RUN_WITH_INVALID_SUBMISSION,
    SUBMISSION_INVALID,
    SUBMIT_REMINDER,
    fence,
    render_text,
    render_user,
)
from haystack_deep_research.deep_agent.deep_settings import DeepHook
from haystack_deep_research.deep_agent.turn_grounding import TRAIL_RESOURCE, EvidenceTrail
from haystack_deep_research.report.assessment import unjudged_claims
from haystack_deep_research.report.structured import parse_structured
from haystack_deep_research.research.exits import StepCall, StepFacts, confidence_of
from haystack_deep_research.research.loop_guard import LoopGuard
from haystack_deep_research.research.tool_calls import (
    announce_calls,
    announce_results,
    answer_without_running,
    coerce_pending_calls,
    step_results,
)
from haystack_deep_research.run import RunView
from haystack_deep_research.run._lifecycle import counted_view, view_of
from haystack_deep_research.run._phases import Phase
from haystack_deep_research.state import (
    CONTINUE_RUN,
    EXIT_MAX_ITERATIONS,
    EXIT_REASON,
    EXIT_TIME_BUDGET,
    EXIT_TOKEN_BUDGET,
    GROUNDING,
    GROUNDING_ROUNDS,
    GROUNDING_SCORE,
    GROUNDING_UNJUDGED,
    MESSAGES,
    REPORT,
    STEP_COUNT,
    STOP_RUN,
    SUBMISSION,
    TOKEN_USAGE,
    TOOLS,
)

__all__ = [
    "AnswerHook",
    "StepReviewHook",
    "StepStartHook",
    "ToolStepHook",
    "answer_text",
    "drop_sentences",
    "payload",
    "takes_schema",
]


def _fields(schema: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        schema = (root.get("$defs") or {}).get(reference.rsplit("/", 1)[-1]) or {}
    properties = schema.get("properties")
    return set(properties) if isinstance(properties, Mapping) else set()


def takes_schema(parameters: Mapping[str, Any] | None, schema: type[BaseModel]) -> bool:
    """Whether the submit tool's arguments are the schema's fields, directly or as its one object parameter."""
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
    """A submission validated against the output schema: ``(instance, [])``, or ``(None, errors)`` with pydantic's
    errors of the closest reading."""
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
    """The text of a submission's arguments (every string in it, one per line, in order), or of a text answer."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(text for item in value.values() if (text := answer_text(item)))
    if isinstance(value, list | tuple):
        return "\n".join(text for item in value if (text := answer_text(item)))
    return ""


def drop_sentences(value: Any, sentences: set[str]) -> Any:
    """A submission's arguments (or a text answer) with these exact sentences removed from every string."""
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


_OUT_OF_BUDGET = (EXIT_MAX_ITERATIONS, EXIT_TOKEN_BUDGET, EXIT_TIME_BUDGET)


def _ground(hook: DeepHook, state: State, view: RunView, answer: Any) -> Phase[Any | None]:
    """Ground an answer: ``None`` when it was sent back (with a message), else the answer with claims dropped."""
    if hook.grounding is None:
        return answer
    rounds = int(state.data.get(GROUNDING_ROUNDS) or 0)
    grounded = yield from hook.grounding.review(view, answer_text(answer), rounds, hook.chat_generator)
    state.set(GROUNDING_SCORE, grounded.judgement.score)
    state.set(GROUNDING_UNJUDGED, unjudged_claims(grounded.judgement))
    verdicts = grounded.judgement.verdicts
    state.set(GROUNDING, [{**v.to_dict(), "dropped": v.claim.sentence in grounded.dropped} for v in verdicts])
    if grounded.send_back:
        state.set(GROUNDING_ROUNDS, rounds + 1)
        claims = [fence(claim.text) for claim in grounded.judgement.unsupported]
        score, threshold = f"{grounded.judgement.score:.2f}", f"{hook.grounding.threshold:g}"
        state.set(MESSAGES, [render_user(GROUNDING_SEND_BACK, claims=claims, score=score, threshold=threshold)])
        return None
    return drop_sentences(answer, set(grounded.dropped))


class StepStartHook(DeepHook):
    """``before_llm``: count usage; end the loop when an exit condition fires or the budget is spent, else condense."""

    allowed_hook_points = ("before_llm",)
    settings = ("termination", "chat_generator", "condenser")

    def phase(self, state: State) -> Phase[None]:
        view = counted_view(state)
        if view is None:
            return
        if state.data.get(STOP_RUN) is not None:
            return
        facts = StepFacts(steps=int(state.data.get(STEP_COUNT) or 0), tokens=view.run.tokens_used())
        reason = self.termination.fired(facts) or view.spent()
        if reason is not None:
            state.set(STOP_RUN, reason)
        elif self.condenser is not None:
            yield from self.condenser.condense(state, view, self.chat_generator)


class ToolStepHook(DeepHook):
    """``before_tool``: coerce arguments, refuse an invalid submission, guard against loops, announce the calls."""

    allowed_hook_points = ("before_tool",)
    settings = ("submit_tool", "output_schema", "loop_threshold")

    def run(self, state: State) -> None:
        calls = coerce_pending_calls(state)
        if self._refuse_invalid_submission(state, calls):
            return
        if not LoopGuard(threshold=self.loop_threshold).check(state, calls):
            announce_calls(view_of(state), calls)

    async def run_async(self, state: State) -> None:
        self.run(state)

    def _refuse_invalid_submission(self, state: State, calls: list[ToolCall]) -> bool:
        schema: type[BaseModel] | None = self.output_schema
        submits = [call for call in calls if call.tool_name == self.submit_tool]
        if schema is None or not submits:
            return False
        tool = next((t for t in state.data.get(TOOLS) or [] if getattr(t, "name", None) == self.submit_tool), None)
        if tool is None or not takes_schema(getattr(tool, "parameters", None), schema):
            return False
        errors = next((found for call in submits if (found := payload(call.arguments, schema)[1])), None)
        if errors is None:
            return False
        problems = "\n".join(f"- {'.'.join(map(str, e.get('loc', ())))}: {e.get('msg', '')}" for e in errors)
        refused = render_text(SUBMISSION_INVALID, tool=self.submit_tool, schema=schema.__name__, errors=problems)
        held = render_text(NOT_RUN_WITH_INVALID_SUBMISSION, tool=self.submit_tool)
        answer_without_running(state, [(call, refused if call in submits else held) for call in calls])
        return True


class StepReviewHook(DeepHook):
    """``after_tool``: record the results; ground a submission that ends the loop (or send it back), else reflect."""

    allowed_hook_points = ("after_tool",)
    settings = ("termination", "chat_generator", "submit_tool", "min_confidence", "grounding", "reflexion")

    def phase(self, state: State) -> Phase[None]:
        view = view_of(state)
        if view is None:
            return
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        step = step_results(messages)
        announce_results(view, messages)
        trail = view.run.resource(TRAIL_RESOURCE, EvidenceTrail)
        for result in step:
            if not result.error and result.origin.tool_name != self.submit_tool:
                trail.add(result.origin.tool_name, dict(result.origin.arguments), str(result.result))
        view.count_usage(state.data.get(TOKEN_USAGE))
        calls = tuple(StepCall(r.origin.tool_name, dict(r.origin.arguments), not r.error) for r in step)
        facts = StepFacts(steps=int(state.data.get(STEP_COUNT) or 0) + 1, tokens=view.run.tokens_used(), calls=calls)
        reason = self.termination.fired(facts)
        submitted = next((c for c in reversed(calls) if c.tool == self.submit_tool and c.succeeded), None)
        if reason is not None:
            answer: Any = dict(submitted.arguments) if submitted is not None else None
            if answer is not None and reason not in _OUT_OF_BUDGET:
                answer = yield from _ground(self, state, view, answer)
                if answer is None:
                    return  # sent back for more research
            if answer is not None:
                state.set(SUBMISSION, answer)
                state.set(REPORT, answer_text(answer))
            state.set(STOP_RUN, reason)
            return
        confidence = confidence_of(submitted.arguments) if submitted is not None else None
        if confidence is not None and confidence < self.min_confidence:
            note = render_user(
                LOW_CONFIDENCE, confidence=confidence, minimum=self.min_confidence, tool=self.submit_tool
            )
            state.set(MESSAGES, [note])
        if self.reflexion is not None:
            yield from self.reflexion.reflect(state, view, self.chat_generator)


class AnswerHook(DeepHook):
    """``on_exit``: a text reply is grounded and accepted when the exit conditions fire, else the loop goes on."""

    allowed_hook_points = ("on_exit",)
    settings = ("termination", "chat_generator", "submit_tool", "grounding")

    def phase(self, state: State) -> Phase[None]:
        view = counted_view(state)
        if view is None:
            return
        facts = StepFacts(steps=int(state.data.get(STEP_COUNT) or 0), tokens=view.run.tokens_used(), text_reply=True)
        reason = self.termination.fired(facts)
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        text = (messages[-1].text or "").strip() if messages else ""
        if reason is None:
            if self.submit_tool:
                state.set(MESSAGES, [render_user(SUBMIT_REMINDER, tool=self.submit_tool)])
                state.set(CONTINUE_RUN, True)
            return
        answer: Any = text
        if reason not in _OUT_OF_BUDGET:
            answer = yield from _ground(self, state, view, text)
            if answer is None:
                state.set(CONTINUE_RUN, True)
                return
        state.set(REPORT, answer)
        state.set(EXIT_REASON, reason)
