"""
The settings the deep agent's hooks share, and their serialization.

Each hook of the deep agent's loop (:mod:`.deep_loop`) is a :class:`DeepHook` that keeps the settings it uses
(``settings`` names them): the exit conditions, the submit tool and minimum confidence, the output schema, the loop
threshold, the agent's own model (the default for its reflexion, summaries and judge) and the optional layers
(grounding, reflexion, condensing).
"""

from __future__ import annotations

from typing import Any, ClassVar

from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.utils.deserialization import deserialize_component_inplace
from haystack.utils.type_serialization import deserialize_type, serialize_type

from haystack_deep_research.deep_agent.condense import Condenser
from haystack_deep_research.deep_agent.reflexion import Reflexion
from haystack_deep_research.deep_agent.turn_grounding import TurnGrounding
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.research.exits import ExitCondition, TextReply, exit_condition_from_dict
from haystack_deep_research.research.loop_guard import DEFAULT_LOOP_THRESHOLD
from haystack_deep_research.run._phases import PhaseHook

__all__ = ["DeepHook"]

_COMPONENTS = ("chat_generator", "grounding", "reflexion", "condenser")


class DeepHook(PhaseHook):
    """
    A hook of the deep agent's loop.

    :param termination: When the loop ends.
    :param chat_generator: The agent's own model.
    :param submit_tool: The submit tool's name, or ``None``.
    :param min_confidence: The confidence a submission needs (for the message telling the model it fell short).
    :param output_schema: The pydantic model of the result, or ``None``.
    :param loop_threshold: Identical calls in a row that make a loop.
    :param grounding: Per-turn grounding, or ``None``.
    :param reflexion: Reflexion, or ``None``.
    :param condenser: Conversation summarization, or ``None``.
    :raises ConfigurationError: If ``termination`` is not an exit condition.
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
        """
        :param data: What ``to_dict`` returned.
        :returns: The hook.
        """
        params = data.get("init_parameters") or {}
        if isinstance(params.get("termination"), dict):
            params["termination"] = exit_condition_from_dict(params["termination"])
        if isinstance(params.get("output_schema"), str):
            params["output_schema"] = deserialize_type(params["output_schema"])
        for name in _COMPONENTS:
            if params.get(name) is not None:
                deserialize_component_inplace(params, key=name)
        return default_from_dict(cls, data)
