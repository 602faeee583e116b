"""MCP servers as sources: a real MCP server over stdio, its tools called by the researchers, its results cited."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from haystack import Document, component
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.tools import flatten_tools_or_toolsets
from haystack.tools.errors import ToolInvocationError

from haystack_deep_research import (
    ConfigurationError,
    MCPServer,
    ResearchRun,
    Sources,
    UrlPolicy,
    create_deep_agent,
    create_deep_research_agent,
    create_iterative_research_agent,
    create_research_workflow,
)
from haystack_deep_research.errors import MissingExtraError
from haystack_deep_research.report import export_html
from haystack_deep_research.research.subtopic import ResearchSubtopicTool
from haystack_deep_research.sources.mcp_servers import MCPToolset
from haystack_deep_research.testing import ScriptedChatGenerator
from haystack_deep_research.tools import ReadUrlTool

pytest.importorskip("mcp")

SERVER = Path(__file__).parent / "data" / "ticket_server.py"
QUESTION = "Why do EU customers fail to check out?"
INVENTED = "mcp://tickets/search_tickets/T-999"
_SOURCE = re.compile(r"^Source: (\S+)$", re.MULTILINE)
GONE_WITHIN_S = 30.0
"""How long a closed server may take to end (and to have written its PID file) on a loaded machine."""


def _server(tmp_path: Path, mode: str = "ok", **options: Any) -> MCPServer:
    env = {"TICKETS_MODE": mode, "TICKETS_PID_FILE": str(tmp_path / "server.pid")}
    return MCPServer(name="tickets", command=[sys.executable, str(SERVER)], env=env, **options)


def _gone(tmp_path: Path, within: float = GONE_WITHIN_S) -> bool:
    """Whether the server process has ended, waiting for it (and for its PID file) at most ``within`` seconds."""
    pid_file, deadline = tmp_path / "server.pid", time.monotonic() + within
    while time.monotonic() < deadline:
        if pid_file.is_file() and (text := pid_file.read_text().strip()):
            try:
                os.kill(int(text), 0)
            except ProcessLookupError:
                return True
        time.sleep(0.05)  # polling a condition, bounded by the deadline
    return False


@component
class TicketResearcher:
    """A model of this test: offered the ticket search (or a notes store) and not yet called, it calls it; otherwise
    it cites every Source it was ever shown, and one address it invents."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        results = [m.tool_call_result.result for m in messages if m.tool_call_result is not None]
        offered = [tool.name for tool in flatten_tools_or_toolsets(tools or [])]
        names = [name for name in offered if name in ("tickets_search_tickets", "search_notes")]
        if not results and names:
            calls = [ToolCall(tool_name=name, arguments={"query": "checkout EU"}) for name in names]
            return {"replies": [ChatMessage.from_assistant(tool_calls=calls)]}
        self.seen += [url for text in results for url in _SOURCE.findall(text) if url not in self.seen]
        lines = [f"- EU checkout requests time out after 30 seconds [ticket]({url})." for url in self.seen]
        lines.append(f"- A refund bug was reported too [ticket]({INVENTED}).")
        return {"replies": [ChatMessage.from_assistant("Findings:\n" + "\n".join(lines))]}


def _agent(server: MCPServer, datastores: Any = None, **options: Any) -> Any:
    models = {
        "scope_llm": ScriptedChatGenerator(role="scope"),
        "orchestrator_llm": ScriptedChatGenerator(role="orchestrator", subtopics=["checkout failures"]),
        "researcher_llm": TicketResearcher(),
        "summarizer_llm": ScriptedChatGenerator(role="summarizer"),
        "writer_llm": ScriptedChatGenerator(role="writer", invented_urls=[INVENTED]),
    }
    sources = Sources(mcp_servers=[server], datastores=datastores, web=False)
    return create_deep_research_agent(**{**models, **options}, sources=sources)


def test_a_run_cites_what_the_mcp_server_returned_and_drops_an_invented_address(tmp_path: Path) -> None:
    result = _agent(_server(tmp_path)).run(messages=[ChatMessage.from_user(QUESTION)])

    report = result["report"]
    assert "](mcp://tickets/search_tickets/T-101)" in report
    assert INVENTED not in report
    assert INVENTED in [entry["url"] for entry in result["citations"]["unverified"]]
    sources = {entry["url"]: entry for entry in result["sources"]}
    ticket = sources["mcp://tickets/search_tickets/T-101"]
    assert ticket["kind"] == "document"
    assert ticket["title"] == "Checkout times out for EU customers"
    assert "30 seconds" in ticket["text"]
    assert not [warning for warning in result["warnings"] if "MCP" in warning]
    assert _gone(tmp_path)  # the run closed its session, and the server process with it


@pytest.mark.parametrize(
    ("mode", "options", "said"),
    [
        ("crash", {}, "could not be started"),
        ("hang", {"connect_timeout": 1.0}, "did not start and list its tools within 1 s"),
    ],
)
def test_a_server_that_does_not_start_is_a_warning_and_the_run_goes_on(
    tmp_path: Path, mode: str, options: dict[str, Any], said: str
) -> None:
    notes = InMemoryDocumentStore()
    notes.write_documents(
        [Document(content="EU checkout fails since release 3.2.", meta={"url": "https://notes.example/eu"})]
    )
    agent = _agent(
        _server(tmp_path, mode, **options),
        datastores={"notes": {"retriever": InMemoryBM25Retriever(document_store=notes)}},
    )

    result = agent.run(messages=[ChatMessage.from_user(QUESTION)])

    [warning] = [warning for warning in result["warnings"] if "MCP server 'tickets'" in warning]
    assert said in warning
    assert "The run goes on without its tools." in warning
    assert result["report"].strip()
    assert result["exit_reason"] == "text"
    assert [entry["url"] for entry in result["sources"]] == ["https://notes.example/eu"]
    assert "](https://notes.example/eu)" in result["report"]
    assert _gone(tmp_path)


def test_a_missing_command_is_a_warning_too(tmp_path: Path) -> None:
    server = MCPServer(name="tickets", command=[str(tmp_path / "no-such-server")])
    result = _agent(server).run(messages=[ChatMessage.from_user(QUESTION)])

    assert any("MCP server 'tickets' could not be started" in warning for warning in result["warnings"])


def test_results_are_fenced_and_cited_by_their_own_address_not_the_url_they_name(tmp_path: Path) -> None:
    run = ResearchRun()
    tools = {tool.name: tool for tool in MCPToolset(servers=[_server(tmp_path)]).bind(run.view())}
    try:
        text = tools["tickets_search_tickets"].invoke(query="invoice VAT")
        count = tools["tickets_ticket_count"].invoke()
    finally:
        run.close()

    assert "Source: mcp://tickets/search_tickets/T-102" in text
    assert "Source: https://tickets.example/T-102" not in text
    assert "</untrusted_documents>" not in text.removesuffix("</untrusted_documents>")
    assert text.startswith('<untrusted_documents store="tickets/search_tickets" query="query: invoice VAT">')
    [counted] = [url for url in run.ledger.read_urls() if url.startswith("mcp://tickets/ticket_count/")]
    assert re.fullmatch(r"mcp://tickets/ticket_count/[0-9a-f]{16}", counted)  # no id: a hash of call and result
    assert f"Source: {counted}" in count
    assert "https://tickets.example/T-102" not in run.ledger.read_urls()
    assert run.ledger.get("mcp://tickets/search_tickets/T-102").named_url == "https://tickets.example/T-102"
    assert _gone(tmp_path)


def test_a_call_past_its_timeout_is_a_tool_error_and_recorded(tmp_path: Path) -> None:
    run = ResearchRun()
    [export] = [
        t for t in MCPToolset(servers=[_server(tmp_path, call_timeout=0.5)]).bind(run.view()) if "export" in t.name
    ]
    try:
        with pytest.raises(ToolInvocationError, match=re.escape("took more than 0.5 s")):
            export.invoke()
    finally:
        run.close()

    [outcome] = run.searches.outcomes()
    assert outcome.tool == "tickets_export_tickets"
    assert "MCPServerError" in outcome.error
    assert _gone(tmp_path)


def test_an_agent_with_mcp_servers_round_trips(tmp_path: Path) -> None:
    server = _server(tmp_path)
    agent = _agent(server, researcher_llm=ScriptedChatGenerator(role="researcher"))
    restored = type(agent).from_dict(agent.to_dict())

    researcher = next(t for t in flatten_tools_or_toolsets(restored.tools) if isinstance(t, ResearchSubtopicTool))
    [toolset] = [tools for tools in researcher.researcher.tools if isinstance(tools, MCPToolset)]
    assert toolset.servers == [server]
    assert toolset.servers[0].env == server.env
    guarded = MCPToolset(servers=[server], url_policy=DENIED)
    assert MCPToolset.from_dict(guarded.to_dict()).url_policy == DENIED


def test_without_the_extra_the_error_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(MissingExtraError, match=re.escape("pip install haystack-deep-research[mcp]")):
        _agent(_server(tmp_path))


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"name": "my_wiki", "command": ["wiki"]}, "hyphens"),
        ({"name": "wiki"}, "exactly one of command"),
        ({"name": "wiki", "command": ["wiki"], "url": "http://127.0.0.1:1/mcp"}, "exactly one of command"),
        ({"name": "wiki", "command": "wiki --stdio"}, "non-empty list of strings"),
        ({"name": "wiki", "url": "ftp://127.0.0.1/mcp"}, "http"),
        ({"name": "wiki", "command": ["wiki"], "call_timeout": 0}, "call_timeout"),
    ],
)
def test_a_bad_server_is_refused_with_the_fix(options: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigurationError, match=said):
        MCPServer(**options)


def _deep_agent(server: MCPServer) -> Any:
    return create_deep_agent(
        chat_generator=TicketResearcher(), tools=[], sources=Sources(mcp_servers=[server]), system_prompt="Answer."
    )


def _workflow(server: MCPServer) -> Any:
    model = TicketResearcher()
    return create_research_workflow(
        chat_generator=model, tools=[], sources=Sources(mcp_servers=[server]), output_schema=None
    )


@component
class CitingWriter:
    """A writer of this test: it cites every MCP address it was shown, and one it invents."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        shown = "\n".join(m.text or "" for m in messages)
        urls = list(dict.fromkeys(_SOURCE.findall(shown)))
        lines = [f"EU checkout requests time out ([ticket]({url}))." for url in urls]
        report = "# Checkout\n\n" + "\n\n".join([*lines, f"A refund bug was reported ([ticket]({INVENTED}))."])
        return {"replies": [ChatMessage.from_assistant(report)]}


def _iterative(server: MCPServer) -> Any:
    return create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis", steps=["checkout EU", None]),
        writer_llm=CitingWriter(),
        sources=Sources(mcp_servers=[server], web=False),
        depth=1,
    )


@pytest.mark.parametrize(
    "build", [_deep_agent, _workflow, _iterative], ids=["deep_agent", "research_workflow", "iterative_agent"]
)
def test_every_agent_shape_cites_the_server_and_closes_it(tmp_path: Path, build: Any) -> None:
    result = build(_server(tmp_path)).run(messages=[ChatMessage.from_user(QUESTION)])

    assert "](mcp://tickets/search_tickets/T-101)" in result["report"]
    assert INVENTED not in result["report"]
    assert "mcp://tickets/search_tickets/T-101" in {entry["url"] for entry in result["sources"]}
    assert not [warning for warning in result["warnings"] if "MCP" in warning]
    assert _gone(tmp_path)


NAMED = {
    "mcp://tickets/search_tickets/T-201": "https://status.third-party.example/eu",
    "mcp://tickets/search_tickets/T-202": "https://mirror.blocked.example/fix",
    "mcp://tickets/search_tickets/T-203": "http://169.254.169.254/latest/meta-data",
}
DENIED = UrlPolicy(deny_domains=("blocked.example",))
_WEB_URL = re.compile(r"https?://[^\s\"'<>)\]]+")


@component
class BelievingResearcher:
    """A model of this test that takes what a tool names at its word: it cites every address it was shown and every
    web URL the results name, as if it had read those pages (in every later reply too)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        results = [m.tool_call_result.result for m in messages if m.tool_call_result is not None]
        offered = [tool.name for tool in flatten_tools_or_toolsets(tools or [])]
        if not results and "tickets_search_tickets" in offered:
            call = ToolCall(tool_name="tickets_search_tickets", arguments={"query": "checkout EU"})
            return {"replies": [ChatMessage.from_assistant(tool_calls=[call])]}
        shown = [url for text in results for url in (*_SOURCE.findall(text), *_WEB_URL.findall(text))]
        self.seen = list(dict.fromkeys([*self.seen, *shown]))
        lines = [f"- EU checkout is degraded since the 3.2 release [ticket]({url})." for url in self.seen]
        return {"replies": [ChatMessage.from_assistant("# Checkout\n\nFindings:\n" + "\n".join(lines))]}


def _assert_named_not_read(result: dict[str, Any]) -> None:
    """What a server merely names is cited by the server's address, shown as named, and never verified as read."""
    verified = result["citations"]["verified_urls"]
    assert "mcp://tickets/search_tickets/T-201" in verified
    assert not [url for url in verified if not url.startswith("mcp://")]
    sources = {entry["url"]: entry for entry in result["sources"]}
    assert not [url for url in sources if not url.startswith("mcp://")]
    assert sources["mcp://tickets/search_tickets/T-201"]["named_url"] == NAMED["mcp://tickets/search_tickets/T-201"]
    assert sources["mcp://tickets/search_tickets/T-201"]["title"] == "Zahlungsfehler für EU-Kunden"
    for refused in ("mcp://tickets/search_tickets/T-202", "mcp://tickets/search_tickets/T-203"):
        assert sources[refused]["named_url"] == ""
        assert NAMED[refused] not in sources[refused]["text"]  # dropped from the item, not only from the address
    report = result["report"]
    assert "](mcp://tickets/search_tickets/T-201)" in report
    assert "(named by tickets, not read: `https://status.third-party.example/eu`)" in report
    assert "](https://status.third-party.example" not in report
    assert "blocked.example" not in report
    assert "169.254.169.254" not in report
    refusals = [warning for warning in result["warnings"] if "an item named a URL the URL policy refuses" in warning]
    assert len(refusals) == 2
    assert any("blocked.example is on the deny list" in warning for warning in refusals)
    assert any("169.254.169.254" in warning for warning in refusals)


def test_a_url_an_mcp_item_names_is_shown_as_named_not_read_in_the_main_shape(tmp_path: Path) -> None:
    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["checkout failures"]),
        researcher_llm=BelievingResearcher(),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=ScriptedChatGenerator(role="writer", invented_urls=list(NAMED.values())),
        sources=Sources(mcp_servers=[_server(tmp_path, "named")], web=False, url_policy=DENIED),
    )

    result = agent.run(messages=[ChatMessage.from_user(QUESTION)])

    _assert_named_not_read(result)
    unverified = {entry["url"] for entry in result["citations"]["unverified"]}
    assert set(NAMED.values()) <= unverified  # the writer cited them all: each was removed
    page = export_html(result)
    assert "named by tickets, not read: https://status.third-party.example/eu" in page
    assert 'href="https://status.third-party.example' not in page
    assert _gone(tmp_path)


def test_a_url_an_mcp_item_names_is_shown_as_named_not_read_in_the_workflow(tmp_path: Path) -> None:
    workflow = create_research_workflow(
        chat_generator=BelievingResearcher(),
        tools=[ReadUrlTool(summarizer_llm=ScriptedChatGenerator(role="summarizer"), url_policy=DENIED)],
        sources=Sources(mcp_servers=[_server(tmp_path, "named")]),
        output_schema=None,
    )

    result = workflow.run(messages=[ChatMessage.from_user(QUESTION)])

    _assert_named_not_read(result)
    assert _gone(tmp_path)


def test_a_named_url_passes_the_default_policy_without_a_run_policy(tmp_path: Path) -> None:
    run = ResearchRun()  # no policy handed over: public addresses only, so the metadata address is refused
    [search] = [t for t in MCPToolset(servers=[_server(tmp_path, "named")]).bind(run.view()) if "search" in t.name]
    try:
        text = search.invoke(query="checkout")
    finally:
        run.close()

    assert "169.254.169.254" not in text
    assert run.ledger.read_urls() == set(NAMED)
    assert run.ledger.named_notes() == {
        "mcp://tickets/search_tickets/T-201": "named by tickets, not read: https://status.third-party.example/eu",
        "mcp://tickets/search_tickets/T-202": "named by tickets, not read: https://mirror.blocked.example/fix",
    }
    [warning] = run.warnings()
    assert "169.254.169.254 is" in warning


def test_a_named_url_is_kept_as_it_would_be_sent_so_it_cannot_leave_its_code_span() -> None:
    from haystack_deep_research.sources.mcp_servers import named_url

    assert named_url({"url": "https://evil.example/login: x"}) == "https://evil.example/login:%20x"
    assert named_url({"link": "https://evil.example/a b`c"}) == "https://evil.example/a%20b%60c"
    assert named_url({"url": "https://[::1/x"}) == ""  # not a URL at all: nothing is named
