"""The base of the library's own tools: one place that turns a failure into a clean tool error."""

from __future__ import annotations

from typing import Any

from haystack.core.serialization import generate_qualified_class_name
from haystack.tools import Tool
from haystack.tools.errors import ToolInvocationError

from haystack_deep_research.errors import DeepResearchError


class ResearchTool(Tool):
    """
    A Haystack Tool whose failures reach the model as a short, actionable message.

    Haystack's default wording repeats every argument (including the run's shared context); this base reports the
    library's typed errors by their own message and anything else by its type and message. Either way the Agent turns
    the raised ``ToolInvocationError`` into a tool result marked as an error, and the run goes on.
    """

    def invoke(self, **kwargs: Any) -> Any:
        """
        Invoke the tool synchronously.

        :param kwargs: The tool arguments.
        :returns: The tool result.
        :raises ToolInvocationError: If the tool failed; the message says why.
        """
        if self.function is None:
            return super().invoke(**kwargs)
        try:
            return self.function(**kwargs)
        except Exception as error:
            raise self._tool_error(error) from error

    async def invoke_async(self, **kwargs: Any) -> Any:
        """
        Invoke the tool asynchronously.

        :param kwargs: The tool arguments.
        :returns: The tool result.
        :raises ToolInvocationError: If the tool failed; the message says why.
        """
        if self.async_function is None:
            return await super().invoke_async(**kwargs)
        try:
            return await self.async_function(**kwargs)
        except Exception as error:
            raise self._tool_error(error) from error

    def _serialized(self, data: dict[str, Any]) -> dict[str, Any]:
        """
        Wrap a tool's own parameters in Haystack's serialization envelope.

        :param data: The parameters ``from_dict`` needs to rebuild the tool.
        :returns: ``{"type": <qualified class name>, "data": data}``.
        """
        return {"type": generate_qualified_class_name(type(self)), "data": data}

    def _tool_error(self, error: Exception) -> ToolInvocationError:
        if isinstance(error, ToolInvocationError):
            return error
        if isinstance(error, DeepResearchError):
            return ToolInvocationError(f"{self.name} failed: {error}", tool_name=self.name)
        return ToolInvocationError(f"{self.name} failed: {type(error).__name__}: {error}", tool_name=self.name)
