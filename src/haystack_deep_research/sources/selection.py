"""
Choosing the web search: by name (``"tavily"``, ``"ddgs"``, ``"auto"``: Tavily with ``TAVILY_API_KEY``, else the
keyless ddgs, said once per run as a warning), or any backend, Haystack search component (:class:`ComponentSearch`:
a ``query`` input, ``documents`` and/or ``links`` out) or Tool (:class:`ToolSearch`: a ``query`` argument), each
plugged into the one search path by :func:`search_backend`.
"""

from __future__ import annotations

import inspect
import os
import types
import typing
from collections.abc import Coroutine, Mapping
from typing import Any

from haystack.tools import Tool
from haystack.tools.errors import ToolInvocationError

from haystack_deep_research._haystack_internals import input_names, output_names
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.errors import ConfigurationError, SearchError, SearchShapeError
from haystack_deep_research.sources.ddgs import DdgsSearch
from haystack_deep_research.sources.search import SearchBackend, SearchScope, SearchTool
from haystack_deep_research.sources.tavily import WebSearchTool

__all__ = [
    "KEYLESS_NOTICE",
    "SEARCH_NAMES",
    "ComponentSearch",
    "ToolSearch",
    "accepts_input",
    "default_search_name",
    "is_component",
    "resolve_search",
    "search_backend",
]

SEARCH_NAMES = ("auto", "tavily", "ddgs")
"""The search engines known by name."""

KEYLESS_NOTICE = (
    "TAVILY_API_KEY is not set, so the web is searched with the keyless ddgs metasearch "
    "(set TAVILY_API_KEY, or pass search='tavily', for Tavily)"
)
"""What a run says once when ``"auto"`` picked the keyless search."""


def default_search_name(environ: Mapping[str, str] | None = None) -> str:
    """``"tavily"`` when ``TAVILY_API_KEY`` is set (not blank) in ``environ`` (``os.environ``), else ``"ddgs"``."""
    env = os.environ if environ is None else environ
    return "tavily" if env.get("TAVILY_API_KEY", "").strip() else "ddgs"


def resolve_search(
    search: Any = "auto",
    *,
    max_results: int = 10,
    environ: Mapping[str, str] | None = None,
    scope: SearchScope | None = None,
) -> SearchTool:
    """
    The researchers' ``web_search`` tool (always a :class:`SearchTool`) for a search named, a :class:`SearchTool`
    (copied with ``scope``: the caller's keeps its own), a backend, a Haystack component or a Tool; anything else is a
    ``ConfigurationError``. ``environ`` is where ``"auto"`` looks (``os.environ``).
    """
    if isinstance(search, SearchTool):
        if not scope:
            return search
        scoped = search.spawn()  # a copy, as for a cache: the caller's tool keeps its own scope
        scoped.scope = scope
        return scoped
    if isinstance(search, str):
        name = search.strip().lower()
        if name not in SEARCH_NAMES:
            raise ConfigurationError(f"search must be one of {', '.join(SEARCH_NAMES)}; got {search!r}.")
        auto = name == "auto"
        name = default_search_name(environ) if auto else name
        if name == "tavily":
            return WebSearchTool(max_results=max_results, scope=scope)
        notice = KEYLESS_NOTICE if auto else ""  # ddgs, chosen for want of a key
        return SearchTool(backend=DdgsSearch(), max_results=max_results, notice=notice, scope=scope)
    if search is not None:  # a backend, a Haystack component or a Tool
        return SearchTool(backend=search_backend(search), max_results=max_results, scope=scope)
    raise ConfigurationError("search must not be None; pass 'auto' for the default.")


def is_component(obj: Any) -> bool:
    return input_names(obj) is not None and callable(getattr(obj, "run", None))


def accepts_input(obj: Any, name: str) -> bool:
    names = input_names(obj)
    if names is not None:
        return name in names
    return name in inspect.signature(obj.run).parameters


_READABLE = (str, list, tuple, Mapping)
_RESULT_OUTPUTS = ("documents", "links", "results")


def _readable(hint: Any) -> bool:
    """Whether a declared return type may hold an answer :func:`~.search.normalize_hits` reads (unknown ones may)."""
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
    if inspect.iscoroutinefunction(function) and typing.get_origin(declared) is Coroutine:
        declared = typing.get_args(declared)[-1]
    if not _readable(declared):
        raise SearchShapeError(f"{getattr(declared, '__name__', declared)} (the declared return of {tool.name!r})")


def _qualified(thing: Any) -> str:
    return f"{getattr(thing, '__module__', '')}.{getattr(thing, '__qualname__', type(thing).__qualname__)}"


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
        names = output_names(component) or []
        if names and not any(name in names for name in _RESULT_OUTPUTS):
            raise SearchShapeError(
                f"outputs named {', '.join(sorted(names))} (the outputs {type(component).__name__} declares)"
            )
        self.component = component

    @property
    def cache_name(self) -> str:
        """What names it in cache keys: the component's class, so two components never share a cached answer."""
        return _qualified(type(self.component))

    def warm_up(self) -> None:
        if hasattr(self.component, "warm_up"):
            self.component.warm_up()

    def search(self, query: str, *, max_results: int, scope: SearchScope | None = None) -> Any:
        """The component's output; ``max_results`` is the tool's to keep, the scope goes as inputs of its names."""
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

    @property
    def cache_name(self) -> str:
        """What names it in cache keys: the tool's name and function, so two tools never share a cached answer."""
        return f"{self.tool.name}:{_qualified(self.tool.function)}"

    def search(self, query: str, *, max_results: int, scope: SearchScope | None = None) -> Any:
        """The tool's result (a ``SearchError`` if it failed); the scope goes as its parameters of those names."""
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
