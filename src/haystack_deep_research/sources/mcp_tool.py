"""
The tools of MCP servers as research tools: :class:`MCPToolset`, one per agent, and :class:`MCPTool`, one per tool.

A server's tools are known only once a run connects to it, so the toolset lists them when bound to a run's view (a
sub-researcher's ``bind``, or a deep agent's run, whose ``before_run`` hook hands the view to the toolset's
placeholder). Each item of a result is recorded as read under ``mcp://<server>/<tool>/<id>`` (:func:`result_target`);
a URL an item names is no citation target but its ``named_url``, and must pass the run's URL policy (docs/sources.md).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
from haystack.tools import Tool

from haystack_deep_research._prompts import DOCUMENT_RESULTS, fence, render_text
from haystack_deep_research._tooling.base import ResearchTool, RunToolset
from haystack_deep_research.errors import ConfigurationError, MCPServerError, URLRefusedError
from haystack_deep_research.events import SearchDone
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence.searches import SearchOutcome
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Call, Phase
from haystack_deep_research.sources.datastore import MAX_DOCUMENT_CHARS
from haystack_deep_research.sources.mcp_servers import MCPServer, MCPSession, mcp_servers_from, require_sdk
from haystack_deep_research.state import PHASE_RESEARCH
from haystack_deep_research.web.url_policy import UrlPolicy

__all__ = ["MCPTool", "MCPToolset", "mcp_toolsets", "named_url", "result_items", "result_target"]

_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]+")
_TITLE_KEYS = ("title", "name", "subject")
_URL_KEYS = ("url", "uri", "link")
_ID_KEYS = ("id", "key", "number")
_MAX_ITEMS = 20


def _tool_name(server: str, tool: str) -> str:
    return f"{server}_{_TOOL_NAME.sub('_', tool)}"[:64]


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
    """
    :param item: An item of a tool result (see :func:`result_items`).
    :returns: The ``http(s)`` URL it names (``url``, ``uri``, ``link``), percent-encoded as it would be sent, or ``""``
        (none, or not a valid URL).
    """
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
    """
    One tool of an MCP server, named ``<server>_<tool>``, with the server's description and input schema.

    :param server: The server.
    :param spec: The SDK's ``Tool`` the server listed.
    :param session: The run's connection to the server.
    :param url_policy: The policy a URL an item names must pass; the run's by default.
    """

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
        super().__init__(name=_tool_name(server.name, self.remote_name), description=description, parameters=schema)

    def phase(self, view: RunView | None, **arguments: Any) -> Phase[str]:
        """
        Call the tool, record each item of its result as read under its ``mcp://`` address, and render them fenced.

        :param view: The researcher's view of the run, or ``None``.
        :param arguments: The model's arguments, passed to the server as they are.
        :returns: The phase; it returns the rendered items.
        :raises MCPServerError: (from the phase) If the call failed, timed out, or the server reported an error.
        """
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


def _session(view: RunView, server: MCPServer) -> MCPSession:
    return view.run.resource(f"mcp_session:{server.name}", lambda: MCPSession(server), close=MCPSession.close)


@dataclass
class MCPToolset(RunToolset):
    """
    The tools of some MCP servers, connected once per run (see the module docstring).

    :param servers: The servers.
    :param url_policy: The policy a URL their results name must pass (``Sources.url_policy``); the run's by default.
    """

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
            require_sdk()
        super().__post_init__()

    def bind(self, view: RunView | None) -> list[Tool]:
        """
        :param view: The view of the run the tools will work in (``None``: no run, no tools).
        :returns: Every tool of every server that could be reached, bound to ``view``; a server that could not is one
            warning of the run.
        """
        if view is None:
            return []
        tools: list[Tool] = []
        for server in self.servers:
            session = _session(view, server)
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
        """
        :param selected_tool_names: Ignored.
        :returns: A copy for one run; it lists its tools once it has the run's view.
        """
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
    """
    The ``Sources(mcp_servers=..., url_policy=...)`` of every factory as the tools to add to a researcher: ``[]``
    without servers, else one :class:`MCPToolset` of them, whose results' URLs must pass ``url_policy`` (the run's by
    default).

    :raises ConfigurationError: If ``servers`` is invalid.
    """
    checked = mcp_servers_from(servers)
    return [MCPToolset(servers=checked, url_policy=url_policy)] if checked else []
