"""Fill a tool's JSON-schema arguments from one piece of text, so a policy can call any library's tool of a kind."""

from __future__ import annotations

from typing import Any

from benchmarks.sim.conversation import ToolSpec


def _fill(schema: dict[str, Any], text: str | list[str]) -> Any:
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items") or {}
        if items.get("type") == "object" and {"role", "content"} <= set(items.get("properties", {})):
            value = text if isinstance(text, str) else "\n".join(text)
            return [{"role": "user", "content": value}]
        return list(text) if isinstance(text, list) else [text]
    return text if isinstance(text, str) else (text[0] if text else "")


def fill_arguments(tool: ToolSpec, values: dict[str, str | list[str]], default: str | list[str]) -> dict[str, Any]:
    """
    Build a tool call's arguments.

    Properties named in ``values`` get that value; every other required property gets ``default``. A value is
    shaped to the property's schema: a string, a list of strings, or a one-message chat list (``[{"role": "user",
    "content": ...}]``) for tools that wrap a whole agent.

    :param tool: The tool to call.
    :param values: Values by property name.
    :param default: The value for required properties not in ``values``.
    :returns: The arguments object.
    """
    properties: dict[str, Any] = tool.parameters.get("properties") or {}
    required = list(tool.parameters.get("required") or [])
    if not required and properties:
        required = [next(iter(properties))]
    args: dict[str, Any] = {}
    for name, schema in properties.items():
        if name in values:
            args[name] = _fill(schema, values[name])
        elif name in required:
            args[name] = _fill(schema, default)
    return args


def find_tool(tools: list[ToolSpec], names: tuple[str, ...], properties: tuple[str, ...] = ()) -> ToolSpec | None:
    """
    Find a tool by name, or else by the properties its schema has.

    :param tools: The tools offered.
    :param names: Names to look for, in order of preference.
    :param properties: Property names that identify the tool if no name matches.
    :returns: The tool, or ``None``.
    """
    for name in names:
        for tool in tools:
            if tool.name == name:
                return tool
    for tool in tools:
        if properties and any(p in (tool.parameters.get("properties") or {}) for p in properties):
            return tool
    return None
