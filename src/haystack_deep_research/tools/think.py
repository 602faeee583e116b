"""``think_tool``: a place for the model to reflect between actions. It does nothing but acknowledge."""

from __future__ import annotations

from haystack.tools import Tool

from haystack_deep_research._prompts import REFLECTION_PARAMETER, THINK, THINK_ACKNOWLEDGEMENT, THINK_DESCRIPTION

__all__ = ["create_think_tool", "think"]


def think(reflection: str) -> str:
    """Acknowledge a reflection; the value is in the model writing it down."""
    return THINK_ACKNOWLEDGEMENT


def create_think_tool() -> Tool:
    """The ``think_tool`` the orchestrator and the sub-researchers use: it records a reflection, changes nothing."""
    return Tool(
        name=THINK,
        description=THINK_DESCRIPTION,
        parameters={
            "type": "object",
            "properties": {"reflection": {"type": "string", "description": REFLECTION_PARAMETER}},
            "required": ["reflection"],
        },
        function=think,
    )
