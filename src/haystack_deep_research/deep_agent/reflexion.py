"""
Reflexion: after each tool step the deep agent evaluates that step and rewrites its plan when the step was wrong.

One model call per step (role ``reflexion``) reads the task, the current plan and the step's tool calls with what
they returned (as untrusted data), and answers ``{"step_ok": ..., "critique": ..., "plan": ...}``. When the step was
wrong, the plan in the ``plan`` output is replaced and the conversation gets a message with the critique and the
revised plan, which the agent reads before its next step; when it was right, a first plan is kept without a message.
Every reflection emits ``Reflected``. A reply that is not the JSON asked for, or a failed call, changes nothing and
leaves a warning: reflexion never ends a run.
"""

from __future__ import annotations

import json
from typing import Any

from haystack.components.agents.state import State
from haystack.dataclasses import ChatMessage, ChatRole
from pydantic import BaseModel

from haystack_deep_research import _checks
from haystack_deep_research._prompts import REFLECT, REFLECTION, fence, render_chat, render_user
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.events import Reflected
from haystack_deep_research.report.structured import parse_structured
from haystack_deep_research.research.tool_calls import step_results
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Phase, UsesModels, ask
from haystack_deep_research.state import MESSAGES, PHASE_REFLECT, PLAN

__all__ = ["Reflection", "Reflexion"]

RESULT_CHARS = 2_000
"""The most characters of each tool result the reflection reads."""


class Reflection(BaseModel):
    """What the reflexion model answers."""

    step_ok: bool
    critique: str = ""
    plan: str = ""


def _task(messages: list[ChatMessage]) -> str:
    return next((m.text or "" for m in messages if m.is_from(ChatRole.USER) and m.text), "")


def _last_step(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    return [
        {
            "tool": result.origin.tool_name,
            "arguments": fence(json.dumps(result.origin.arguments, ensure_ascii=False, default=str)),
            "result": fence(str(result.result)[:RESULT_CHARS]),
            "error": bool(result.error),
        }
        for result in step_results(messages)
    ]


class Reflexion(UsesModels, InitSerialized):
    """
    Evaluate the last step and rewrite the plan when it was wrong (see the module docstring).

    :param chat_generator: The reflecting model; ``None`` uses the agent's own.
    :raises ConfigurationError: If it is not a chat generator.
    """

    def __init__(self, *, chat_generator: Any = None) -> None:
        if chat_generator is not None:
            _checks.chat_generator("reflexion_llm", chat_generator, needs_tools=False)
        self.chat_generator = chat_generator

    def _used_models(self) -> list[Any]:
        return [self.chat_generator] if self.chat_generator is not None else []

    def reflect(self, state: State, view: RunView, model: Any) -> Phase[None]:
        """Reflect on the step just taken; ``model`` (the agent's own) serves when this layer has none."""
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        calls = _last_step(messages)
        if not calls:
            return
        plan = str(state.data.get(PLAN) or "")
        prompt = render_chat(REFLECT, task=fence(_task(messages)), plan=plan, calls=calls)
        streaming = view.run.streaming_callback
        [outcome] = yield [
            ask(
                self.chat_generator or model,
                prompt,
                role="reflexion",
                streaming_callback=streaming,
                agent=view.researcher,
                budget=view.run.budget,
            )
        ]
        if outcome.reply is not None:
            view.record_usage(PHASE_REFLECT, outcome.reply.meta.get("usage"))
        reflection, _ = parse_structured(Reflection, outcome.text) if outcome.error is None else (None, [])
        if not isinstance(reflection, Reflection):
            why = f"{type(outcome.error).__name__}: {outcome.error}" if outcome.error else "not the JSON asked for"
            view.warn(PHASE_REFLECT, f"a reflection could not be read ({why}); the plan is unchanged")
            return
        revised = reflection.plan.strip()
        rewritten = not reflection.step_ok and bool(revised)
        if rewritten or (revised and not plan):
            state.set(PLAN, revised)
        if rewritten:
            state.set(MESSAGES, [render_user(REFLECTION, critique=reflection.critique.strip(), plan=revised)])
        view.emit(
            Reflected(
                phase=PHASE_REFLECT,
                step_ok=reflection.step_ok,
                critique=reflection.critique.strip(),
                plan=str(state.data.get(PLAN) or ""),
                plan_rewritten=rewritten,
            )
        )
