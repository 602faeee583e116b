"""
The MCP server: the ``deep_research``, ``check_report`` and ``ask`` tools over stdio or streamable HTTP (the official
``mcp`` SDK, 2.x, the ``mcp`` extra). docs/mcp.md describes each tool, cancellation and the runs root; over streamable
HTTP every request passes the library's request guard first (the SDK alone lets a page on any ``localhost`` port in).
"""

import asyncio
import io
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from haystack import logging
from haystack.dataclasses import ChatMessage
from pydantic import Field

from haystack_deep_research._haystack_internals import telemetry_off_unless_asked
from haystack_deep_research._untrusted.files import checked_stat, write_file
from haystack_deep_research.errors import DeepResearchError, LocalFileRefusedError, MissingExtraError, RunDirError
from haystack_deep_research.events import UsageRecorded
from haystack_deep_research.options.check import run_check
from haystack_deep_research.options.exit_codes import MCP_WORDS, in_words
from haystack_deep_research.options.progress import outcome_line
from haystack_deep_research.report import ReportStyle
from haystack_deep_research.run import EventStream
from haystack_deep_research.run._journal import JOURNAL_FILE, MAX_JOURNAL_BYTES
from haystack_deep_research.serving import RequestGuard, RequestGuardMiddleware
from haystack_deep_research.serving import agent_factory as factory_from_environment
from haystack_deep_research.serving.agents import AgentFactory
from haystack_deep_research.serving.guard import ASGIApp, Message, Receive, Scope, Send
from haystack_deep_research.settings import Budgets

__all__ = ["SERVER_NAME", "build_server", "serve"]

logger = logging.getLogger(__name__)

SERVER_NAME = "haystack-deep-research"
_INSTRUCTIONS = (
    "deep_research researches a question on the web with parallel sub-researchers and returns a Markdown report "
    "whose every citation points to a page it read; it takes minutes and reports progress. check_report checks the "
    "citations of any Markdown report against a list of the URLs that were read. ask answers a question from the "
    "evidence of a finished run in the server's runs root, researching what is missing only with research=true."
)


def _summary(result: Mapping[str, Any]) -> dict[str, Any]:
    read = [entry["url"] for entry in result.get("sources") or [] if entry.get("kind") == "page"]
    return {
        "exit_reason": str(result.get("exit_reason") or ""),
        "cost": result.get("cost"),
        "warnings": list(result.get("warnings") or []),
        "sources": read,
        "notes": len(result.get("notes") or []),
        **({"clarification": result["clarification"]} if result.get("clarification") else {}),
    }


def _check(report: str, sources: list[Any] | None, judge: bool, judge_llm: Any = None) -> tuple[int, str]:
    """Run ``deep-research check`` on the given texts, in a temporary directory; returns its status and output."""
    with tempfile.TemporaryDirectory(prefix="deep-research-check-") as folder:
        path = Path(folder) / "report.md"
        write_file(path, report)
        argv = [str(path)]
        if sources is not None:
            sources_path = Path(folder) / "sources.json"
            write_file(sources_path, json.dumps(sources))
            argv += ["--sources", str(sources_path)]
        if judge:
            argv.append("--judge")
        out, err = io.StringIO(), io.StringIO()
        status = run_check(argv, out=out, err=err, judge_llm=judge_llm)  # a usage error is its status 2
        text = (out.getvalue() + err.getvalue()).replace(str(path), "report.md").replace(folder, ".")
    return status, text.strip()


def _answer_summary(answer: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "answered": answer["answered"],
        "exit_reason": answer["exit_reason"],
        "sources": list((answer["citations"] or {}).get("verified_urls") or []),
        "researched": answer["researched"],
        "warnings": [in_words(str(warning), MCP_WORDS) for warning in answer["warnings"]],
        "cost": answer["cost"],
    }


def _run_dir_under(root: Path, run_dir: str) -> Path:
    """The run directory ``run_dir`` names under ``root``; refused unless its journal is a regular file there."""
    directory = root / run_dir
    try:
        checked_stat(directory / JOURNAL_FILE, root=root, max_bytes=MAX_JOURNAL_BYTES)
    except FileNotFoundError:
        raise RunDirError(
            f"{run_dir!r} holds no run; pass the directory of a run, relative to the runs root."
        ) from None
    except LocalFileRefusedError as error:  # outside the root, or not a regular file: said without the real path
        raise RunDirError(
            f"{run_dir!r} is no run directory under the server's runs root ({error.reason}); pass one relative to it."
        ) from None
    except OSError as error:
        raise RunDirError(f"{run_dir!r} cannot be read ({error.strerror or error}).") from None
    return directory


def build_server(
    *, agent_factory: AgentFactory | None = None, judge_llm: Any = None, runs_root: str | os.PathLike[str] | None = None
) -> Any:
    """
    Build the MCP server.

    :param agent_factory: Builds each run's agent from the ``deep_research`` tool's options; by default
        ``create_deep_research_agent`` on the models and sources the environment chooses (their keys checked when a
        run starts).
    :param judge_llm: ``check_report``'s judge; ``None`` for the one ``deep-research check --judge`` uses.
    :param runs_root: The folder ``ask`` finds run directories in (``None``: the working folder).
    :returns: The server, the SDK's ``MCPServer``; run it with :func:`serve` or its own ``run``.
    :raises MissingExtraError: If the ``mcp`` SDK is not installed.
    :raises ConfigurationError: If ``DEEP_RESEARCH_AGENT_FACTORY`` is set but cannot be loaded.
    """
    try:
        from mcp.server.mcpserver import Context, MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import CallToolResult, ContentBlock, TextContent
    except ImportError as error:
        raise MissingExtraError("MCP servers", extra="mcp", module="mcp") from error
    factory = agent_factory or factory_from_environment()
    root = Path(runs_root if runs_root is not None else os.getcwd())
    server = MCPServer(SERVER_NAME, instructions=_INSTRUCTIONS)

    @server.tool(name="deep_research")
    async def deep_research(
        *,
        question: Annotated[str, Field(description="The research question.")],
        ctx: Context,
        max_subtopics: Annotated[int, Field(description="Sub-topics to research, 1 to 50.")] = 5,
        token_budget: Annotated[int | None, Field(description="Stop researching after this many tokens.")] = None,
        time_budget: Annotated[float | None, Field(description="Stop researching after this many seconds.")] = None,
        max_cost: Annotated[float | None, Field(description="Stop researching at this cost in US dollars.")] = None,
        grounding: Annotated[bool, Field(description="Judge each claim against what was read.")] = False,
        clarify: Annotated[
            bool, Field(description="May answer with one clarifying question instead of researching.")
        ] = False,
        clarifying_question: Annotated[
            str | None, Field(description="The clarifying question an earlier call returned (with answer).")
        ] = None,
        answer: Annotated[str | None, Field(description="The user's answer to clarifying_question.")] = None,
        report_type: Annotated[
            str | None,
            Field(description="research_report, detailed_report, outline, resource_list or executive_brief."),
        ] = None,
        tone: Annotated[str | None, Field(description="objective, formal, analytical, informal, or free text.")] = None,
        report_length: Annotated[
            int | str | None, Field(description="Target words (100 to 20000), or short, medium, long.")
        ] = None,
        outline: Annotated[
            list[str] | None, Field(description="The report's own headings, in order (up to 20).")
        ] = None,
        instructions: Annotated[
            str | None, Field(description="What the user asks of the writer besides, in their own words.")
        ] = None,
    ) -> CallToolResult:
        """
        Research a question on the web and return a Markdown report whose every citation was read. With clarify,
        the result may be one clarifying question instead: call again with it and the user's answer.
        """
        count = 0
        style = {
            "report_type": report_type,
            "tone": tone,
            "report_length": report_length,
            "outline": outline,
            "instructions": instructions,
        }
        messages = [ChatMessage.from_user(question)]
        if clarifying_question and answer:  # the second turn of a clarification
            messages += [ChatMessage.from_assistant(clarifying_question), ChatMessage.from_user(answer)]
        try:
            chosen: dict[str, Any] = {name: value for name, value in style.items() if value is not None}
            agent = factory(
                max_subtopics=max_subtopics,
                budgets=Budgets(tokens=token_budget, seconds=time_budget, dollars=max_cost),
                grounding=grounding,
                **({"clarify": True} if clarify else {}),
                **({"style": ReportStyle(**chosen)} if chosen else {}),
            )
            stream = EventStream(agent, messages=messages)
            async for event in stream:
                if isinstance(event, UsageRecorded):  # a count per model call: the result has the total
                    continue
                count += 1
                await ctx.report_progress(count, None, event.describe())
        except asyncio.CancelledError:
            logger.info("deep_research was cancelled by the client after {count} events; the run stops.", count=count)
            raise
        except DeepResearchError as error:  # a usage mistake or a run failure the library names: said as it is
            raise ToolError(in_words(str(error), MCP_WORDS)) from error
        except Exception as error:  # a provider or network failure: one line, as the command line says it
            raise ToolError(f"the run failed: {type(error).__name__}: {error}") from error
        result = stream.result or {}
        summary = _summary(result)
        status = "\n".join([outcome_line(result), *(f"warning: {warning}" for warning in summary["warnings"])])
        content: list[ContentBlock] = [
            TextContent(type="text", text=str(result.get("clarification") or result.get("report") or "")),
            TextContent(type="text", text=status),
        ]
        return CallToolResult(content=content, structured_content=summary)

    @server.tool(name="check_report")
    async def check_report(
        *,
        report: Annotated[str, Field(description="The Markdown report to check.")],
        sources: Annotated[
            list[Any] | None,
            Field(description="The URLs that were read, or an evidence ledger (the `sources` of a research run)."),
        ] = None,
        judge: Annotated[bool, Field(description="Also judge each claim with the server's judge model.")] = False,
    ) -> CallToolResult:
        """Check the citations of a Markdown report against the sources that were read, as `deep-research check`."""
        status, text = await asyncio.to_thread(_check, report, sources, judge, judge_llm)
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content={"status": status}, is_error=status == 2
        )

    @server.tool(name="ask")
    async def ask(
        *,
        run_dir: Annotated[str, Field(description="A finished run's directory, relative to the server's runs root.")],
        question: Annotated[str, Field(description="The question to answer from the run's evidence.")],
        research: Annotated[
            bool, Field(description="When the evidence does not answer, research the question into the run first.")
        ] = False,
    ) -> CallToolResult:
        """Answer a question from a finished run's evidence, cited as its report is; nothing is searched unless
        research is true."""
        try:
            directory = _run_dir_under(root, run_dir)
            answer = await asyncio.to_thread(factory().ask, directory, question, research=research)
        except DeepResearchError as error:
            raise ToolError(in_words(str(error), MCP_WORDS)) from error
        except Exception as error:  # a provider or network failure: one line
            raise ToolError(f"the answer failed: {type(error).__name__}: {error}") from error
        return CallToolResult(
            content=[TextContent(type="text", text=answer["answer"])], structured_content=_answer_summary(answer)
        )

    return server


def serve(
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    agent_factory: AgentFactory | None = None,
    judge_llm: Any = None,
    runs_root: str | os.PathLike[str] | None = None,
) -> None:
    """
    Build the server and run it until it is stopped, with Haystack's telemetry off unless asked for.

    :param transport: ``"stdio"`` (a client starts the server) or ``"http"`` (streamable HTTP at ``/mcp``, behind the
        request guard).
    :param host: The address the HTTP server listens on.
    :param port: The port the HTTP server listens on.
    :param agent_factory: Builds each run's agent (see :func:`build_server`).
    :param judge_llm: ``check_report``'s judge (see :func:`build_server`).
    :param runs_root: The folder ``ask`` finds run directories in (see :func:`build_server`).
    """
    telemetry_off_unless_asked()
    server = build_server(agent_factory=agent_factory, judge_llm=judge_llm, runs_root=runs_root)
    if transport == "stdio":
        server.run("stdio")  # the SDK cancels the requests in flight when the client's end closes
        return
    import uvicorn  # a dependency of the mcp SDK's HTTP transport

    guard = RequestGuard.from_env(listen_host=host)
    app = RequestGuardMiddleware(CancelOnDisconnect(server.streamable_http_app(host=host)), guard)  # the SDK's app
    uvicorn.run(app, host=host, port=port, log_level=server.settings.log_level.lower())


_KEPT_HEADERS = {b"host", b"origin", b"authorization", b"mcp-session-id", b"mcp-protocol-version"}
_CANCEL_SECONDS = 5.0


def _request_ids(body: bytes) -> list[Any]:
    """The ids of the JSON-RPC requests in a POST body (one message or a batch); none for anything else."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return []
    messages = parsed if isinstance(parsed, list) else [parsed]
    return [m["id"] for m in messages if isinstance(m, dict) and "method" in m and m.get("id") is not None]


class CancelOnDisconnect:
    """
    ASGI middleware: cancel the requests of a POST whose client went away before their answer.

    Over streamable HTTP the SDK does not (over stdio it does), so a dropped connection would leave a paid run going to
    a report no one can receive (the server keeps no event store). This hands the SDK, in the same session, the
    ``notifications/cancelled`` the client would have sent for each request of that POST.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body: list[bytes] = []
        answered = False

        async def receiving() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                body.append(message.get("body", b""))
            return message

        async def sending(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        finally:
            if not answered and (ids := _request_ids(b"".join(body))):
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_SECONDS):
                    for request_id in ids:
                        await self._cancel(scope, request_id)

    async def _cancel(self, scope: Scope, request_id: Any) -> None:
        logger.info(
            "The client of request {request_id} went away before its answer: cancelling it.", request_id=request_id
        )
        notice = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": "the client went away"},
        }
        payload = json.dumps(notice).encode()
        headers = [(name, value) for name, value in scope["headers"] if name.lower() in _KEPT_HEADERS]
        headers += [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]
        delivered = False

        async def receive_notice() -> Message:
            nonlocal delivered
            if delivered:
                return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": payload, "more_body": False}

        async def discard(message: Message) -> None:
            """The SDK's answer to the notice (202) goes nowhere: its client is gone."""

        await self.app({**scope, "headers": headers}, receive_notice, discard)
