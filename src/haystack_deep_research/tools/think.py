"""``think_tool``: a place for the model to reflect between actions. It does nothing but acknowledge."""

from __future__ import annotations

from haystack.tools import Tool

THINK_TOOL_NAME = "think_tool"


def think(reflection: str) -> str:
    """
    Acknowledge a reflection; the value is in the model writing it down.

    :param reflection: What the model has learned, what is missing and what it will do next.
    :returns: A short acknowledgement.
    """
    return "Reflection recorded."


def create_think_tool() -> Tool:
    """
    Create the ``think_tool`` both the orchestrator and the sub-researchers use.

    :returns: A Haystack Tool that records a reflection and changes nothing.
    """
    return Tool(
        name=THINK_TOOL_NAME,
        description=(
            "Reflect before acting: what the findings establish, what is missing, what to do next. Changes nothing."
        ),
        parameters={
            "type": "object",
            "properties": {"reflection": {"type": "string", "description": "Your reflection."}},
            "required": ["reflection"],
        },
        function=think,
    )
