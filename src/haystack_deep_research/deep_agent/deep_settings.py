"""
The settings the deep agent's hooks share (:class:`DeepHook`, each hook keeping those its ``settings`` names), and the
two optional layers that call a model of their own between steps: :class:`Condenser` and :class:`Reflexion`.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole
from haystack.utils.deserialization import deserialize_component_inplace
from haystack.utils.type_serialization import deserialize_type, serialize_type
from pydantic import BaseModel

from haystack_deep_research import _checks
from haystack_deep_research._prompts import CONDENSE, CONDENSED, REFLECT, REFLECTION, fence, render_chat, render_user
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.deep_agent.turn_grounding import TurnGrounding
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.events import ConversationCondensed, Reflected
from haystack_deep_research.report.structured import parse_structured
from haystack_deep_research.research.exits import ExitCondition, TextReply, exit_condition_from_dict
from haystack_deep_research.research.loop_guard import DEFAULT_LOOP_THRESHOLD
from haystack_deep_research.research.tool_calls import step_results
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Phase, PhaseHook, UsesModels, ask_counted, failure
from haystack_deep_research.state import MESSAGES, PHASE_CONDENSE, PHASE_REFLECT, PLAN
from haystack_deep_research.tools.todos import TODOS_RESOURCE, TodoState

__all__ = ["Condenser", "DeepHook", "Reflection", "Reflexion"]

_COMPONENTS = ("chat_generator", "grounding", "reflexion", "condenser")


class DeepHook(PhaseHook):
    """
    A hook of the deep agent's loop, with the settings of ``create_deep_agent`` it uses (``settings`` names them):
    ``termination`` (default ``TextReply()``), the agent's own model, and the optional layers (``None`` for off).
    """

    settings: ClassVar[tuple[str, ...]] = (
        "termination",
        "chat_generator",
        "submit_tool",
        "min_confidence",
        "output_schema",
        "loop_threshold",
        "grounding",
        "reflexion",
        "condenser",
    )

    def __init__(
        self,
        *,
        termination: ExitCondition | None = None,
        chat_generator: Any = None,
        submit_tool: str | None = None,
        min_confidence: float = 0.0,
        output_schema: Any = None,
        loop_threshold: int = DEFAULT_LOOP_THRESHOLD,
        grounding: TurnGrounding | None = None,
        reflexion: Reflexion | None = None,
        condenser: Condenser | None = None,
    ) -> None:
        if termination is not None and not isinstance(termination, ExitCondition):
            raise ConfigurationError(f"termination must be an exit condition; got {type(termination).__name__}.")
        self.termination = termination or TextReply()
        self.chat_generator = chat_generator
        self.submit_tool = submit_tool
        self.min_confidence = min_confidence
        self.output_schema = output_schema
        self.loop_threshold = loop_threshold
        self.grounding = grounding
        self.reflexion = reflexion
        self.condenser = condenser

    def _used_models(self) -> list[Any]:
        return [getattr(self, name) for name in _COMPONENTS if name in self.settings and getattr(self, name)]

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized hook, with the settings it uses."""
        data: dict[str, Any] = {}
        for name in self.settings:
            value = getattr(self, name)
            if name == "termination":
                value = value.to_dict()
            elif name == "output_schema" and value is not None:
                value = serialize_type(value)
            elif name in _COMPONENTS and value is not None:
                value = component_to_dict(obj=value, name=name)
            data[name] = value
        return default_to_dict(self, **data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """:returns: The hook, rebuilt from what ``to_dict`` returned."""
        params = data.get("init_parameters") or {}
        if isinstance(params.get("termination"), dict):
            params["termination"] = exit_condition_from_dict(params["termination"])
        if isinstance(params.get("output_schema"), str):
            params["output_schema"] = deserialize_type(params["output_schema"])
        for name in _COMPONENTS:
            if params.get(name) is not None:
                deserialize_component_inplace(params, key=name)
        return default_from_dict(cls, data)


class _ModelLayer(UsesModels, InitSerialized):
    """A layer with an optional model of its own; ``None`` uses the agent's."""

    chat_generator: Any
    _model_attributes = ("chat_generator",)

    def _own_model(self, name: str, chat_generator: Any) -> None:
        if chat_generator is not None:
            _checks.chat_generator(name, chat_generator, needs_tools=False)
        self.chat_generator = chat_generator


LINE_CHARS = 2_000
"""The most characters of one message the summarizer reads."""


def _line(message: ChatMessage) -> str:
    if message.tool_call_result is not None:
        result = message.tool_call_result
        text = f"tool result of {result.origin.tool_name}{' (error)' if result.error else ''}: {result.result}"
    elif message.tool_calls:
        calls = "; ".join(
            f"{call.tool_name}({json.dumps(call.arguments, ensure_ascii=False, default=str)})"
            for call in message.tool_calls
        )
        text = f"{message.role.value} called: {calls}" + (f" — {message.text}" if message.text else "")
    else:
        text = f"{message.role.value}: {message.text or ''}"
    return fence(" ".join(text.split())[:LINE_CHARS])


class Condenser(_ModelLayer):
    """
    Conversation summarization: once the conversation (system messages aside) holds more than ``after_messages``
    messages, one model call (role ``summarizer``) condenses the older ones; the system prompt, the task, the todo list
    and the latest ``keep_recent`` messages are kept, and a tool call is never split from its results (see
    docs/deep-agent.md). Haystack's own ``CompactionHook`` sizes by the model's context window and calls its summarizer
    outside the run; this layer counts messages, as the deep agent's settings do, and its call is the run's (usage,
    budget, streaming, events).

    :param after_messages: Condense once the conversation holds more than this many messages (system messages
        aside), 4 to 10,000.
    :param keep_recent: The latest messages kept verbatim, 1 to fewer than ``after_messages``.
    :param chat_generator: The summarizing model; ``None`` uses the agent's own.
    :raises ConfigurationError: If a parameter is out of range.
    """

    def __init__(self, *, after_messages: int, keep_recent: int = 10, chat_generator: Any = None) -> None:
        self.after_messages = _checks.int_in_range("summarize_after_messages", after_messages, 4, 10_000)
        self.keep_recent = _checks.int_in_range("summarize_keep_recent", keep_recent, 1, 10_000)
        if self.keep_recent >= self.after_messages:
            raise ConfigurationError(
                f"summarize_keep_recent ({keep_recent}) must be smaller than summarize_after_messages "
                f"({after_messages}), or nothing would ever be condensed."
            )
        self._own_model("condense_llm", chat_generator)

    def condense(self, state: State, view: RunView, model: Any) -> Phase[None]:
        """Condense when the conversation is long; ``model`` (the agent's own) serves when this layer has none."""
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        system_end = 0
        while system_end < len(messages) and messages[system_end].is_from(ChatRole.SYSTEM):
            system_end += 1
        if len(messages) - system_end <= self.after_messages:
            return
        head = system_end + (1 if messages[system_end].is_from(ChatRole.USER) else 0)  # the task stays
        cut = len(messages) - self.keep_recent
        while cut > head and messages[cut].tool_call_result is not None:
            cut -= 1  # keep each kept result's call with it
        older = messages[head:cut]
        if len(older) < 2:
            return
        prompt = render_chat(CONDENSE, transcript=[_line(message) for message in older])
        model = self.chat_generator or model
        outcome = yield from ask_counted(view.run, PHASE_CONDENSE, model, prompt, view.researcher, role="summarizer")
        if not outcome.text:
            view.warn(
                PHASE_CONDENSE, f"condensing the conversation failed ({failure(outcome.error)}); it is kept whole"
            )
            return
        todos = view.run.resource(TODOS_RESOURCE, TodoState)
        summary = render_user(
            CONDENSED, count=len(older), summary=outcome.text, todos=todos.render() if todos.snapshot() else ""
        )
        condensed = [*messages[:head], summary, *messages[cut:]]
        state.set(MESSAGES, condensed, handler_override=replace_values)
        view.emit(ConversationCondensed(phase=PHASE_CONDENSE, condensed=len(older), kept=len(messages) - cut))


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


class Reflexion(_ModelLayer):
    """
    Reflexion: after each tool step one model call (role ``reflexion``) evaluates the step, with its results as
    untrusted data, and rewrites the plan when the step was wrong (see docs/deep-agent.md); a reply that cannot be read,
    or a failed call, changes nothing but a warning: reflexion never ends a run.

    :param chat_generator: The reflecting model; ``None`` uses the agent's own.
    :raises ConfigurationError: If it is not a chat generator.
    """

    def __init__(self, *, chat_generator: Any = None) -> None:
        self._own_model("reflexion_llm", chat_generator)

    def reflect(self, state: State, view: RunView, model: Any) -> Phase[None]:
        """Reflect on the step just taken; ``model`` (the agent's own) serves when this layer has none."""
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        calls = _last_step(messages)
        if not calls:
            return
        plan = str(state.data.get(PLAN) or "")
        prompt = render_chat(REFLECT, task=fence(_task(messages)), plan=plan, calls=calls)
        model = self.chat_generator or model
        outcome = yield from ask_counted(
            view.run, PHASE_REFLECT, model, prompt, role="reflexion", researcher=view.researcher, agent=view.researcher
        )
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
