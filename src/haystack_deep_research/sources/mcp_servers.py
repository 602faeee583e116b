"""
MCP servers as sources (see docs/sources.md): :class:`MCPServer`, a name and a stdio command or a streamable-HTTP URL;
:class:`MCPSession`, one run's connection to one server through the official SDK (the ``[mcp]`` extra); and
:class:`MCPToolset`, one per agent, of one :class:`MCPTool` per tool of its servers.

The SDK is async and its transports must be entered and left in one task, while a run's tools are called from the
Agent's worker threads and from event loops; so a session runs the connection on an event loop of its own, in a
daemon thread, and each tool call is a task there, waited for with the server's ``call_timeout``.

A server's tools are known only once a run connects to it, so the toolset lists them when bound to a run's view.
Each item of a result is recorded as read under ``mcp://<server>/<tool>/<id>`` (:func:`result_target`); a URL an
item names is no citation target but its ``named_url``, and must pass the run's URL policy.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx
from haystack.tools import Tool

from haystack_deep_research._prompts import DOCUMENT_RESULTS, fence, render_text
from haystack_deep_research._tooling.base import ResearchTool, RunToolset
from haystack_deep_research.errors import ConfigurationError, MCPServerError, MissingExtraError, URLRefusedError
from haystack_deep_research.events import SearchDone
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence.searches import SearchOutcome
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Call, Phase
from haystack_deep_research.settings.grouped import MCPServer
from haystack_deep_research.sources.datastore import MAX_DOCUMENT_CHARS
from haystack_deep_research.state import PHASE_RESEARCH
from haystack_deep_research.web.url_policy import UrlPolicy

if TYPE_CHECKING:
    from mcp import ClientSession

__all__ = [
    "MCPServer",
    "MCPSession",
    "MCPTool",
    "MCPToolset",
    "mcp_servers_from",
    "mcp_toolsets",
    "named_url",
    "result_items",
    "result_target",
]


def mcp_servers_from(servers: Any) -> list[MCPServer]:
    """``Sources.mcp_servers`` (``None``, or a list of :class:`MCPServer` of distinct names) checked, in order."""
    if servers is None:
        return []
    if isinstance(servers, MCPServer):
        servers = [servers]
    if not isinstance(servers, list | tuple) or not all(isinstance(server, MCPServer) for server in servers):
        raise ConfigurationError(
            "mcp_servers must be a list of MCPServer, for example [MCPServer(name='wiki', command=['wiki-mcp'])]; "
            f"got {type(servers).__name__}."
        )
    names = [server.name for server in servers]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"mcp_servers holds two servers of one name: {sorted(names)}.")
    return list(servers)


_CLOSE_TIMEOUT = 10.0
"""Seconds closing waits for the transport to end (the SDK gives a stdio server 2 s, then terminates it)."""


def _sdk() -> Any:
    try:
        import mcp
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client
    except ImportError as error:
        raise MissingExtraError("MCP servers as sources", extra="mcp", module="mcp") from error
    return mcp, StdioServerParameters, stdio_client, streamable_http_client


class MCPSession:
    """A connection to one MCP server, opened by :meth:`open` and closed by :meth:`close` (see the module docstring)."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._main: concurrent.futures.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._session: ClientSession | None = None
        self._tools: list[Any] | None = None
        self._failure: MCPServerError | None = None
        self._closed = False
        self._reported = False

    def open(self) -> list[Any]:
        """Connect, once, and return the server's tools (the SDK's); a failure to start is raised on every call."""
        with self._lock:
            if self._tools is None and self._failure is None:
                if self._closed:
                    raise MCPServerError(
                        f"the connection to MCP server {self.server.name!r} is closed (its run ended)."
                    )
                try:
                    self._tools = self._connect()
                except MCPServerError as error:
                    self._failure = error
                    self._shutdown()
            if self._failure is not None:
                raise self._failure
            return list(self._tools or [])

    def first_report(self) -> bool:
        """:returns: ``True`` the first time it is asked: whoever saw the failure first reports it."""
        with self._lock:
            first, self._reported = not self._reported, True
            return first

    def _connect(self) -> list[Any]:
        sdk = _sdk()
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name=f"mcp-{self.server.name}", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        ready: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()
        self._main = asyncio.run_coroutine_threadsafe(self._serve(sdk, ready), loop)
        try:
            return ready.result(timeout=self.server.connect_timeout)
        except concurrent.futures.TimeoutError:
            raise MCPServerError(
                f"MCP server {self.server.name!r} did not start and list its tools within "
                f"{self.server.connect_timeout:g} s; check its {self._target()}, or raise connect_timeout."
            ) from None
        except Exception as error:
            raise MCPServerError(
                f"MCP server {self.server.name!r} could not be started ({type(error).__name__}: {error}); check its "
                f"{self._target()}."
            ) from error

    def _target(self) -> str:
        if self.server.url is not None:
            return f"url {self.server.url}"
        return f"command {list(self.server.command or [])}"

    def _transport(self, sdk: Any) -> Any:
        _mcp, parameters, stdio_client, streamable_http_client = sdk
        if self.server.url is not None:
            return streamable_http_client(self.server.url)
        command = list(self.server.command or [])
        params = parameters(
            command=command[0], args=command[1:], env=dict(self.server.env or {}) or None, cwd=self.server.cwd
        )
        return stdio_client(params)

    async def _serve(self, sdk: Any, ready: concurrent.futures.Future[list[Any]]) -> None:
        self._stop = asyncio.Event()
        self._task = asyncio.current_task()
        try:
            async with contextlib.AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport(sdk))
                session = await stack.enter_async_context(sdk[0].ClientSession(streams[0], streams[1]))
                await session.initialize()
                tools: list[Any] = []
                cursor = None
                while True:
                    listed = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
                    tools.extend(listed.tools)
                    cursor = getattr(listed, "next_cursor", None)
                    if not cursor:
                        break
                self._session = session
                ready.set_result(tools)
                await self._stop.wait()
        except Exception as error:  # handed to the opener; after opening, closing is all that is left to do
            if not ready.done():
                ready.set_exception(_leaf(error))
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(MCPServerError(f"opening MCP server {self.server.name!r} was cancelled."))
        finally:
            self._session = None

    def _submit(self, name: str, arguments: dict[str, Any]) -> concurrent.futures.Future[Any]:
        self.open()
        loop, session = self._loop, self._session
        if loop is None or self._closed:
            raise MCPServerError(f"MCP server {self.server.name!r} is not connected (its run ended).")
        if session is None:
            raise MCPServerError(f"MCP server {self.server.name!r} is not connected (it failed, or its run ended).")
        call = session.call_tool(name, arguments, read_timeout_seconds=self.server.call_timeout)
        return asyncio.run_coroutine_threadsafe(call, loop)

    def _failed(self, name: str, error: BaseException) -> MCPServerError:
        if isinstance(error, MCPServerError):
            return error
        from mcp import MCPError
        from mcp.types import REQUEST_TIMEOUT

        timed_out = isinstance(error, MCPError) and error.code == REQUEST_TIMEOUT
        if timed_out or isinstance(error, TimeoutError | concurrent.futures.TimeoutError):
            return MCPServerError(
                f"the call of {name!r} on MCP server {self.server.name!r} took more than "
                f"{self.server.call_timeout:g} s (its call_timeout); try a narrower request."
            )
        return MCPServerError(
            f"the call of {name!r} on MCP server {self.server.name!r} failed: {type(error).__name__}: {error}"
        )

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """
        Call one tool of the server, waiting at most ``call_timeout``; returns the SDK's ``CallToolResult``.

        :raises MCPServerError: If the server is not connected, or the call failed or timed out.
        """
        future = self._submit(name, arguments)
        try:
            return future.result(timeout=self.server.call_timeout + 1)
        except Exception as error:
            future.cancel()
            raise self._failed(name, error) from error

    async def call_async(self, name: str, arguments: dict[str, Any]) -> Any:
        """Async variant of :meth:`call`."""
        future = await asyncio.to_thread(self._submit, name, arguments)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout=self.server.call_timeout + 1)
        except Exception as error:
            future.cancel()
            raise self._failed(name, error) from error

    def close(self) -> None:
        """End the connection (and a stdio server's process); harmless if it never opened or is already closed."""
        with self._lock:
            self._closed = True
            self._shutdown()

    def _shutdown(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = self._main = None
        if loop is None:
            return
        ending = asyncio.run_coroutine_threadsafe(self._end(cancel=self._tools is None), loop)
        with contextlib.suppress(concurrent.futures.TimeoutError):
            ending.result(timeout=_CLOSE_TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=_CLOSE_TIMEOUT)
        if not loop.is_running():
            loop.close()

    async def _end(self, *, cancel: bool) -> None:
        """Let the connection's task leave its transport: at once if it never opened (cancelled), else when told to."""
        task, stop = self._task, self._stop
        if task is None:
            return
        if cancel or stop is None:
            task.cancel()
        else:
            stop.set()
        await asyncio.wait([task], timeout=_CLOSE_TIMEOUT)


def _leaf(error: BaseException) -> BaseException:
    """The first error inside an exception group (the SDK's task groups wrap what failed), else the error itself."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]+")
_TITLE_KEYS = ("title", "name", "subject")
_URL_KEYS = ("url", "uri", "link")
_ID_KEYS = ("id", "key", "number")
_MAX_ITEMS = 20


def result_items(result: Any) -> list[dict[str, Any]]:
    """
    The items of an MCP ``CallToolResult``, one dict per content item: a text content holding a JSON object is that
    object, another text is ``{"text": ...}``, a resource link ``{"uri", "title", "text"}``, an embedded text resource
    ``{"uri", "text"}``.
    """
    items: list[dict[str, Any]] = []
    for content in getattr(result, "content", None) or []:
        kind = getattr(content, "type", "")
        if kind == "text":
            text = str(getattr(content, "text", "") or "")
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            items.append(parsed if isinstance(parsed, dict) else {"text": text})
        elif kind == "resource_link":
            items.append(
                {"uri": str(content.uri), "title": content.title or content.name, "text": content.description or ""}
            )
        elif kind == "resource" and isinstance(getattr(content.resource, "text", None), str):
            items.append({"uri": str(content.resource.uri), "text": content.resource.text})
    return [item for item in items if item][:_MAX_ITEMS]


def named_url(item: dict[str, Any]) -> str:
    """The ``http(s)`` URL an item names (``url``, ``uri``, ``link``), percent-encoded as sent, or ``""``."""
    for key in _URL_KEYS:
        value = item.get(key)
        if isinstance(value, str) and value.strip().lower().startswith(("http://", "https://")):
            try:  # percent-encoded as a URL is sent: no space or backtick can end the code span it is shown in
                return str(httpx.URL(value.strip()))
            except (httpx.InvalidURL, UnicodeError, ValueError):
                return ""
    return ""


def result_target(server: str, tool: str, arguments: dict[str, Any], item: dict[str, Any]) -> str:
    """
    The address an item of a tool result is cited by, whatever URL it names: ``mcp://<server>/<tool>/<id>`` with its
    ``id`` (or ``key``, ``number``), else with a hash of the arguments and the item (stable: the same call giving the
    same item has the same address).
    """
    found = next(
        (item[key] for key in _ID_KEYS if isinstance(item.get(key), str | int) and str(item[key]).strip()), None
    )
    if found is None:
        payload = json.dumps([arguments, item], sort_keys=True, ensure_ascii=False, default=str)
        found = hashlib.sha256(payload.encode()).hexdigest()[:16]
    return f"mcp://{server}/{quote(tool, safe='')}/{quote(str(found).strip(), safe='')}"


def _title(item: dict[str, Any], fallback: str) -> str:
    value = next((item[key] for key in _TITLE_KEYS if isinstance(item.get(key), str) and item[key].strip()), fallback)
    return " ".join(str(value).split())[:200]


def _text(item: dict[str, Any]) -> str:
    if set(item) <= {"text", "uri", "title"} and isinstance(item.get("text"), str):
        return item["text"]
    return json.dumps(item, ensure_ascii=False, indent=1, default=str)


class MCPTool(ResearchTool):
    """The tool ``spec`` (the SDK's) of an MCP server, named ``<server>_<tool>``, called through the run's session."""

    def __init__(
        self, *, server: MCPServer, spec: Any, session: MCPSession, url_policy: UrlPolicy | None = None
    ) -> None:
        self.server, self.remote_name, self.session = server, str(spec.name), session
        self.url_policy = url_policy
        schema = dict(getattr(spec, "input_schema", None) or {})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        about = f" ({server.description})" if server.description else ""
        description = f"[MCP server '{server.name}'{about}] {spec.description or spec.name}"
        name = f"{server.name}_{_TOOL_NAME.sub('_', self.remote_name)}"[:64]
        super().__init__(name=name, description=description, parameters=schema)

    def phase(self, view: RunView | None, **arguments: Any) -> Phase[str]:
        """Call the tool (an ``MCPServerError`` if it fails), record each item of its result as read, fence them."""
        name, session = self.remote_name, self.session
        query = ", ".join(f"{key}: {value}" for key, value in sorted(arguments.items())) or name
        [called] = yield [Call(lambda: session.call(name, arguments), lambda: session.call_async(name, arguments))]
        error = called.error
        if error is None and getattr(called.value, "is_error", False):
            detail = " ".join(item.get("text", "") for item in result_items(called.value))[:500]
            error = MCPServerError(f"MCP tool {name!r} of server {self.server.name!r} reported an error: {detail}")
        if error is not None:
            if view is not None:
                view.searches.record(
                    SearchOutcome(tool=self.name, query=query, error=f"{type(error).__name__}: {error}")
                )
            raise error
        shown = []
        for found in result_items(called.value):
            url = result_target(self.server.name, name, arguments, found)
            item, named = self._named(view, found)
            title = clean_text(_title(item, f"{self.server.name}/{name}"))
            text = clean_text(_text(item).strip()[:MAX_DOCUMENT_CHARS])
            if view is not None:
                view.ledger.record_document(
                    url=url, title=title, text=text, store=self.server.name, named_url=named, policy=self.url_policy
                )
            shown.append({"title": fence(title), "url": url, "text": fence(text)})
        if view is not None:
            view.searches.record(SearchOutcome(tool=self.name, query=query, results=len(shown)))
            view.emit(SearchDone(phase=PHASE_RESEARCH, query=f"{self.server.name}: {query}", results=len(shown)))
        return render_text(DOCUMENT_RESULTS, store=f"{self.server.name}/{name}", query=fence(query), documents=shown)

    def _named(self, view: RunView | None, item: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The item and the URL it names; a URL the policy refuses is dropped from the item, with a warning."""
        named = clean_text(named_url(item))
        if not named:
            return item, ""
        try:
            (view.ledger if view is not None else EvidenceLedger()).check_url(named, self.url_policy)
        except URLRefusedError as refused:
            if view is not None:
                view.warn(
                    PHASE_RESEARCH, f"{self.name}: an item named a URL the URL policy refuses, dropped: {refused}"
                )
            return {key: value for key, value in item.items() if key not in _URL_KEYS}, ""
        return item, named


class _RunPlaceholder(Tool):
    """Stands for an unbound :class:`MCPToolset` in the Agent's first listing, to take the run's view for it."""

    def __init__(self, toolset: MCPToolset) -> None:
        self._toolset = toolset
        super().__init__(
            name=f"mcp_servers_{'_'.join(s.name for s in toolset.servers)}"[:64],
            description="Connects the MCP servers of this run (listed instead of their tools outside a run).",
            parameters={"type": "object", "properties": {}},
            function=lambda: "The MCP servers connect when a run starts.",
        )

    def attach_run(self, view: RunView) -> bool:
        if not self._toolset.spawned:
            return False
        self._toolset.view = view
        return True


@dataclass
class MCPToolset(RunToolset):
    """The tools of some MCP servers, connected once per run; the URLs their results name must pass ``url_policy``."""

    servers: list[MCPServer] = field(default_factory=list)
    url_policy: UrlPolicy | None = None
    spawned: bool = field(default=False, repr=False, compare=False)
    view: RunView | None = field(default=None, repr=False, compare=False)
    listed: list[Tool] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.servers = mcp_servers_from(self.servers)
        if self.tools:
            raise ConfigurationError("an MCPToolset lists its tools from its servers; pass servers=[...] only.")
        if self.servers:
            _sdk()  # a missing SDK shows when the agent is built, not in the middle of a run
        super().__post_init__()

    def bind(self, view: RunView | None) -> list[Tool]:
        """Every tool of every server reached, bound to ``view`` (none without); one that was not is a run warning."""
        if view is None:
            return []
        tools: list[Tool] = []
        for server in self.servers:
            session = view.run.resource(
                f"mcp_session:{server.name}", partial(MCPSession, server), close=MCPSession.close
            )
            try:
                specs = session.open()
            except MCPServerError as error:
                if session.first_report():  # one warning per run and server
                    view.warn(PHASE_RESEARCH, f"{error} The run goes on without its tools.")
                continue
            tools += [
                MCPTool(server=server, spec=spec, session=session, url_policy=self.url_policy).bind(view)
                for spec in specs
            ]
        return tools

    def spawn(self, selected_tool_names: set[str] | None = None) -> MCPToolset:
        """A copy for one run (``selected_tool_names`` ignored); it lists its tools once it has the run's view."""
        return MCPToolset(servers=self.servers, url_policy=self.url_policy, spawned=True)

    def __iter__(self) -> Any:
        if self.view is None:
            return iter([_RunPlaceholder(self)] if self.spawned else [])
        if self.listed is None:  # this copy belongs to one run: its tools are listed once
            self.listed = self.bind(self.view)
        return iter(self.listed)

    def __len__(self) -> int:
        return len(list(iter(self)))

    def __contains__(self, item: Any) -> bool:
        names = {tool.name for tool in self}
        return (item if isinstance(item, str) else getattr(item, "name", None)) in names

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized toolset: its servers' settings and URL policy."""
        data: dict[str, Any] = {"servers": [server.to_dict() for server in self.servers]}
        if self.url_policy is not None:
            data["url_policy"] = self.url_policy.to_dict()
        return {"type": f"{type(self).__module__}.{type(self).__name__}", "data": data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MCPToolset:
        """Rebuild the toolset from what ``to_dict`` returned."""
        policy = data["data"].get("url_policy")
        return cls(
            servers=[MCPServer.from_dict(server) for server in data["data"]["servers"]],
            url_policy=UrlPolicy.from_dict(policy) if policy is not None else None,
        )


def mcp_toolsets(servers: Any, url_policy: UrlPolicy | None = None) -> list[MCPToolset]:
    """``Sources(mcp_servers=..., url_policy=...)`` as a researcher's tools: ``[]``, or one :class:`MCPToolset`."""
    checked = mcp_servers_from(servers)
    return [MCPToolset(servers=checked, url_policy=url_policy)] if checked else []
