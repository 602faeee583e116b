"""``think_tool``: a place for the model to reflect between actions. It does nothing but acknowledge."""

from __future__ import annotations

from haystack.tools import Tool

from haystack_deep_research._prompts import REFLECTION_PARAMETER, THINK, THINK_ACKNOWLEDGEMENT, THINK_DESCRIPTION

__all__ = ["create_think_tool", "think"]


def think(reflection: str) -> str:
    """
    Acknowledge a reflection; the value is in the model writing it down.

    :param reflection: What the model has learned, what is missing and what it will do next.
    :returns: A short acknowledgement.
    """
    return THINK_ACKNOWLEDGEMENT


def create_think_tool() -> Tool:
    """
    Create the ``think_tool`` both the orchestrator and the sub-researchers use.

    :returns: A Haystack Tool that records a reflection and changes nothing.
    """
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
