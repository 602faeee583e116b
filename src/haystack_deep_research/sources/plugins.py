"""
Plugging Haystack's own search components (:class:`ComponentSearch`: a ``query`` input, ``documents`` and/or ``links``
out) and tools (:class:`ToolSearch`: a ``query`` argument) into the one search path; :func:`search_backend` picks the
wrapper for an object, so ``Sources(search=...)`` takes any of them.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections import abc
from typing import Any

from haystack.tools import Tool
from haystack.tools.errors import ToolInvocationError

from haystack_deep_research._haystack_internals import input_names, output_names
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.errors import ConfigurationError, SearchError, SearchShapeError
from haystack_deep_research.sources.search import SearchBackend, SearchScope

__all__ = ["ComponentSearch", "ToolSearch", "accepts_input", "is_component", "search_backend"]


def is_component(obj: Any) -> bool:
    """:returns: Whether ``obj`` is a Haystack component instance."""
    return input_names(obj) is not None and callable(getattr(obj, "run", None))


def accepts_input(obj: Any, name: str) -> bool:
    """Whether a Haystack component takes an input of that name."""
    names = input_names(obj)
    if names is not None:
        return name in names
    return name in inspect.signature(obj.run).parameters


_READABLE = (str, list, tuple, abc.Mapping)
_RESULT_OUTPUTS = ("documents", "links", "results")


def _readable(hint: Any) -> bool:
    """Whether a declared return type may hold an answer :func:`~.hits.normalize_hits` reads (unknown ones may)."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_readable(arg) for arg in typing.get_args(hint) if arg is not type(None))
    kind = origin or hint
    if hint is None or kind is type(None):
        return False
    if not isinstance(kind, type) or kind.__module__ == "collections.abc" or kind is object:
        return True  # Any, a TypeVar, an abstract collection: decided by what it answers
    return issubclass(kind, _READABLE)


def _check_declared_return(tool: Tool) -> None:
    function = tool.function or tool.async_function
    if function is None:
        return
    try:
        declared = typing.get_type_hints(function).get("return", inspect.Signature.empty)
    except (NameError, TypeError):
        return  # an annotation that cannot be resolved says nothing
    if declared is inspect.Signature.empty:
        return
    if inspect.iscoroutinefunction(function) and typing.get_origin(declared) is abc.Coroutine:
        declared = typing.get_args(declared)[-1]
    if not _readable(declared):
        raise SearchShapeError(f"{getattr(declared, '__name__', declared)} (the declared return of {tool.name!r})")


def _check_outputs(component: Any) -> None:
    names = output_names(component) or []
    if names and not any(name in names for name in _RESULT_OUTPUTS):
        raise SearchShapeError(
            f"outputs named {', '.join(sorted(names))} (the outputs {type(component).__name__} declares)"
        )


class ComponentSearch(InitSerialized):
    """
    A Haystack component with a ``query`` input, as a search backend. Its output's ``documents`` (URL in
    ``meta["link"]``, ``meta["url"]`` or ``meta["source_url"]``) and ``links`` become hits.

    :param component: The component; it is warmed up with the agent.
    :raises ConfigurationError: If it is not a component with a ``query`` input.
    :raises SearchShapeError: If it declares outputs and none is ``documents``, ``links`` or ``results``.
    """

    def __init__(self, *, component: Any) -> None:
        if not is_component(component):
            raise ConfigurationError(
                f"component must be a Haystack component (decorated with @component); got {type(component).__name__}."
            )
        if not accepts_input(component, "query"):
            raise ConfigurationError(
                f"{type(component).__name__} has no 'query' input; a search component must take the query as "
                "'query' (wrap another one in a SuperComponent with input_mapping={'query': [...]})."
            )
        _check_outputs(component)
        self.component = component

    def warm_up(self) -> None:
        """Warm up the component."""
        if hasattr(self.component, "warm_up"):
            self.component.warm_up()

    def search(self, query: str, *, max_results: int, scope: SearchScope | None = None) -> Any:
        """
        :param query: The query.
        :param max_results: Unused: the component's own ``top_k`` applies, and the tool keeps ``max_results``.
        :param scope: Domains and a recency window, passed as the inputs of those names the component takes
            (``include_domains``, ``exclude_domains``, ``time_range``, ``start_date``, ``since``).
        :returns: The component's output.
        """
        options = scope.arguments(lambda name: accepts_input(self.component, name)) if scope else {}
        return self.component.run(query=query, **options)


class ToolSearch(InitSerialized):
    """
    A Haystack Tool taking a ``query`` argument, as a search backend; its result (a component's output, a list of
    documents or dictionaries) becomes hits.

    :param tool: The tool.
    :raises ConfigurationError: If it is not a Tool with a ``query`` parameter.
    :raises SearchShapeError: If its function declares a return type no accepted answer has (``int``, ``None``, ...).
    """

    def __init__(self, *, tool: Tool) -> None:
        if not isinstance(tool, Tool):
            raise ConfigurationError(f"tool must be a Haystack Tool; got {type(tool).__name__}.")
        if "query" not in (tool.parameters.get("properties") or {}):
            raise ConfigurationError(
                f"the tool {tool.name!r} has no 'query' parameter; a search tool must take the query as 'query'."
            )
        _check_declared_return(tool)
        self.tool = tool

    def search(self, query: str, *, max_results: int, scope: SearchScope | None = None) -> Any:
        """
        :param query: The query.
        :param max_results: Unused: the tool's own limit applies, and the search tool keeps ``max_results``.
        :param scope: Domains and a recency window, passed as the tool's parameters of those names, if it has any.
        :returns: The tool's result.
        :raises SearchError: If the tool failed.
        """
        properties = self.tool.parameters.get("properties") or {}
        options = scope.arguments(lambda name: name in properties) if scope else {}
        try:
            return self.tool.invoke(query=query, **options)
        except ToolInvocationError as error:
            raise SearchError(f"the search tool {self.tool.name!r} failed: {error}") from error


def search_backend(source: Any) -> SearchBackend:
    """
    The search backend for ``source``: a backend (an object with ``search(query, *, max_results)``), a Haystack
    component with a ``query`` input, or a Haystack Tool with a ``query`` parameter.

    :raises ConfigurationError: If ``source`` is none of these.
    """
    if isinstance(source, Tool):
        return ToolSearch(tool=source)
    if is_component(source):
        return ComponentSearch(component=source)
    if callable(getattr(source, "search", None)) and callable(getattr(source, "to_dict", None)):
        return source
    raise ConfigurationError(
        "search must be 'tavily', 'ddgs', 'auto', a search backend (an object with search(query, *, max_results) and "
        "to_dict), a Haystack component with a 'query' input, or a Haystack Tool with a 'query' parameter; "
        f"got {type(source).__name__}."
    )
