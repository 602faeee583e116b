"""
The base of the library's own tools: :class:`ResearchTool` (one phase, driven sync or async, working inside a run
through the view its ``bind`` or the run's ``before_run`` hook gives it, alone outside a run), the :class:`RunToolset`
that gives each run its own copies, and :func:`coerce_arguments` for arguments a provider sent as strings (see
docs/deep-agent.md). Coercion is written here because ``jsonschema`` validates but never converts, and pydantic
converts only for a model class, while a Haystack tool carries a plain JSON schema.
"""

from __future__ import annotations

import contextlib
import copy
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Self

from haystack.core.serialization import generate_qualified_class_name
from haystack.tools import Tool, Toolset
from haystack.tools.errors import ToolInvocationError

from haystack_deep_research._prompts import TOOL_ERROR_ADVICE, TOOL_FAILED, render_text
from haystack_deep_research._serialization import init_parameters, restore_parameters
from haystack_deep_research._untrusted import json_text
from haystack_deep_research.errors import DeepResearchError, SearchShapeError
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Phase, UsesModels, drive, drive_async


@dataclass
class _Slot:
    """The run a tool copy works in; ``spawned`` copies belong to one run."""

    view: RunView | None = None
    spawned: bool = False


class ResearchTool(UsesModels, Tool):
    """
    A Haystack Tool of this library: one phase, driven sync or async, working inside a run.

    Subclasses call ``super().__init__(name=..., description=..., parameters=..., **tool_options)`` and implement
    :meth:`phase`. ``max_concurrency`` bounds the calls of one batch of the phase.
    """

    max_concurrency: int = 5

    def __init__(self, **tool_options: Any) -> None:
        self._slot = _Slot()
        super().__init__(function=self._invoke, async_function=self._invoke_async, **tool_options)

    def phase(self, view: RunView | None, **arguments: Any) -> Phase[Any]:
        """
        The tool's work.

        :param view: The view of the run the tool works in, or ``None`` outside a run.
        :param arguments: The model's arguments.
        :returns: The phase; it returns the tool result.
        """
        raise NotImplementedError

    def _prepared(self, streaming_callback: Any, arguments: dict[str, Any]) -> dict[str, Any]:
        # Haystack hands a tool the Agent's callback (tool_streaming_callback_passthrough): the run adopts it.
        if streaming_callback is not None and self._slot.view is not None:
            self._slot.view.run.adopt_streaming(streaming_callback)
        return coerce_arguments(self.parameters, arguments)

    def _invoke(self, streaming_callback: Any = None, **arguments: Any) -> Any:
        prepared = self._prepared(streaming_callback, arguments)
        return drive(self.phase(self._slot.view, **prepared), max_concurrency=self.max_concurrency)

    async def _invoke_async(self, streaming_callback: Any = None, **arguments: Any) -> Any:
        prepared = self._prepared(streaming_callback, arguments)
        return await drive_async(self.phase(self._slot.view, **prepared), max_concurrency=self.max_concurrency)

    def _copy(self, slot: _Slot) -> Self:
        clone = copy.copy(self)
        clone._slot = slot
        clone.function = clone._invoke
        clone.async_function = clone._invoke_async
        return clone

    def bind(self, view: RunView | None) -> Self:
        """
        A copy of this tool that works in a run.

        :param view: The view of the run (a sub-researcher's view, or the run's own), or ``None`` for no run.
        :returns: The bound copy; this tool is unchanged.
        """
        _adopt_policy(self, view)
        return self._copy(_Slot(view, spawned=True))

    def spawn(self) -> Self:
        """:returns: A copy for one run, to be handed the run's view by the run's ``before_run`` hook."""
        return self._copy(_Slot(spawned=True))

    def attach_run(self, view: RunView) -> bool:
        """
        Take the run's view, if this copy belongs to one run.

        :param view: The view.
        :returns: Whether the view was taken (a tool shared by several runs takes none).
        """
        if not self._slot.spawned:
            return False
        _adopt_policy(self, view)
        self._slot.view = view
        return True

    def invoke(self, **kwargs: Any) -> Any:
        """
        Invoke the tool synchronously.

        :param kwargs: The tool arguments.
        :returns: The tool result.
        :raises ToolInvocationError: If the tool failed; the message says why and what to do.
        """
        with self._as_tool_errors():
            return self._invoke(**kwargs)

    async def invoke_async(self, **kwargs: Any) -> Any:
        """Async variant of :meth:`invoke`."""
        with self._as_tool_errors():
            return await self._invoke_async(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        """:returns: The tool in Haystack's Tool envelope, its ``__init__`` parameters as ``data``."""
        return self._serialized(init_parameters(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """
        :param data: What ``to_dict`` returned.
        :returns: The tool.
        """
        return cls(**restore_parameters(cls, data["data"]))

    def _serialized(self, data: dict[str, Any]) -> dict[str, Any]:
        """Haystack's Tool envelope: ``{"type": <qualified class name>, "data": data}``."""
        return {"type": generate_qualified_class_name(type(self)), "data": data}

    @contextlib.contextmanager
    def _as_tool_errors(self) -> Iterator[None]:
        try:
            yield
        except (SearchShapeError, ToolInvocationError):
            raise  # the caller's own search answers what no run can read: stopping is the only fix
        except Exception as error:
            # The library's typed errors speak for themselves; anything else is named by its type.
            detail = str(error) if isinstance(error, DeepResearchError) else f"{type(error).__name__}: {error}"
            advice = next((text for kind, text in TOOL_ERROR_ADVICE.items() if isinstance(error, kind)), "")
            message = render_text(TOOL_FAILED, tool=self.name, error=detail, advice=advice)
            raise ToolInvocationError(message, tool_name=self.name) from error


def _adopt_policy(tool: Tool, view: RunView | None) -> None:
    """A tool that carries a URL policy (``read_url``) hands it to the run's evidence ledger, the door it passes."""
    policy = getattr(tool, "url_policy", None)
    if view is not None and policy is not None:
        view.ledger.adopt_policy(policy)


@dataclass
class RunToolset(Toolset):
    """
    A Toolset whose tools of this library get fresh copies for every run (Haystack's ``Toolset.spawn``), so that one
    agent serves many runs at once and each run's tools record into that run only.
    """

    def spawn(self, selected_tool_names: set[str] | None = None) -> RunToolset:
        """:returns: A copy for one run (``selected_tool_names`` is ignored: the Agent applies a selection itself)."""
        return RunToolset(tools=[tool.spawn() if isinstance(tool, ResearchTool) else tool for tool in self.tools])

    def bind(self, view: RunView | None) -> list[Tool]:
        """:returns: The tools, those of this library bound to ``view``, the run they will work in."""
        return [tool.bind(view) if isinstance(tool, ResearchTool) else tool for tool in self.tools]


def bind_tools(tools: Any, view: RunView | None) -> list[Tool | Toolset]:
    """An agent's tools for one run (the Agent's ``tools`` of ``run``): a :class:`RunToolset` unpacked into its tools,
    the library's bound to ``view``, anything else kept as it is."""
    bound: list[Tool | Toolset] = []
    for item in [tools] if isinstance(tools, Toolset) else list(tools or []):
        if isinstance(item, RunToolset):
            bound.extend(item.bind(view))
        elif isinstance(item, ResearchTool):
            bound.append(item.bind(view))
        else:
            bound.append(item)
    return bound


_INTEGER = re.compile(r"^[+-]?\d+$")
_MAX_DEPTH = 32


def _resolve(schema: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    for _ in range(_MAX_DEPTH):
        if not isinstance(schema, Mapping):
            return {}
        reference = schema.get("$ref")
        if not isinstance(reference, str) or not reference.startswith("#/"):
            return schema
        target: Any = root
        for part in reference[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        schema = target
    return {}


def _types(schema: Mapping[str, Any]) -> list[str]:
    declared = schema.get("type")
    declared = [declared] if isinstance(declared, str) else declared
    return [kind for kind in declared if isinstance(kind, str)] if isinstance(declared, list) else []


def _number(text: str, *, integer: bool) -> int | float | None:
    stripped = text.strip()
    if _INTEGER.match(stripped):
        return int(stripped)
    try:
        value = float(stripped)
    except ValueError:
        return None
    if not math.isfinite(value) or (integer and not value.is_integer()):
        return None
    return int(value) if integer else value


def _scalar(value: str, kinds: list[str]) -> Any:
    for kind in kinds:
        if kind in ("number", "integer"):
            number = _number(value, integer=kind == "integer")
            if number is not None:
                return number
        elif kind == "boolean" and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        elif kind in ("object", "array"):
            try:
                decoded = json_text.loads(value)
            except ValueError:
                continue
            if isinstance(decoded, dict if kind == "object" else list):
                return decoded
        elif kind == "string":
            return value
    return value


def _coerce(value: Any, schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    resolved = _resolve(schema, root)
    if depth > _MAX_DEPTH or not resolved:
        return value
    for combinator in ("anyOf", "oneOf", "allOf"):
        options = resolved.get(combinator)
        if isinstance(options, list):
            for option in options:
                coerced = _coerce(value, option, root, depth + 1)
                if coerced != value or type(coerced) is not type(value):  # this option converted something
                    return coerced
    kinds = _types(resolved)
    if isinstance(value, str) and kinds and "string" not in kinds:
        value = _scalar(value, kinds)
    if isinstance(value, dict):
        properties = resolved.get("properties")
        known: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        extra = resolved.get("additionalProperties")
        return {
            key: _coerce(item, known.get(key, extra if isinstance(extra, Mapping) else None), root, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list) and isinstance(resolved.get("items"), Mapping):
        return [_coerce(item, resolved["items"], root, depth + 1) for item in value]
    return value


def coerce_arguments(parameters: Mapping[str, Any] | None, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """
    Turn string-encoded numbers, booleans, objects and arrays in a tool call's arguments into the types the tool's
    parameters schema declares.

    >>> schema = {"type": "object", "properties": {"min_score": {"type": "number"}, "top_k": {"type": "integer"}}}
    >>> coerce_arguments(schema, {"min_score": "0.5", "top_k": "6", "query": "crm"})
    {'min_score': 0.5, 'top_k': 6, 'query': 'crm'}

    :param parameters: The tool's parameters JSON schema (``Tool.parameters``), or ``None``.
    :param arguments: The model's arguments.
    :returns: A new dict; values the schema does not describe, or that do not convert, are unchanged.
    """
    if not isinstance(parameters, Mapping):
        return dict(arguments)
    coerced = _coerce(dict(arguments), parameters, parameters, 0)
    return coerced if isinstance(coerced, dict) else dict(arguments)
