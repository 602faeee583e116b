"""
Fault injection: one test per failure a run meets in the wild, each ending with a report, its brief, notes and
sources intact, and an ``exit_reason`` that says what happened.

Cases covered elsewhere, not repeated here: a sub-researcher that raises, malformed tool arguments and a failing
writer (tests/test_nothing_lost.py); budgets running out (tests/run/test_budgets.py); a run killed midway and resumed,
or killed while writing its run directory (tests/run/test_journal.py); a disk that fills up while a note is journaled
(tests/run/test_run_dir.py).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from haystack import component
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator, OpenAIResponsesChatGenerator
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.utils import Secret
from tests.support import SUMMARIZE_EVERY_PAGE

from haystack_deep_research import FetchLimits, RunInputs, Sources, UrlPolicy, WebSearchTool
from haystack_deep_research.run._journal import LEDGER_FILE, REPORT_FILE
from haystack_deep_research.testing import (
    LoopbackSearchServer,
    LoopbackWebServer,
    ScriptedChatGenerator,
    SearchDocument,
)

QUESTION = "How fast is solar power growing?"
API = "https://api.openai.test/v1"


def _run(agent: Agent) -> dict[str, Any]:
    return agent.run(messages=[ChatMessage.from_user(QUESTION)])


def _pages(result: dict[str, Any]) -> set[str]:
    return {entry["url"] for entry in result["sources"] if entry["kind"] == "page"}


def _researcher_saw(result: dict[str, Any], text: str) -> bool:
    """Whether a researcher's note, or the orchestrator's view of it, mentions ``text``."""
    return any(text in note for note in result["notes"])


def _openai(model: str, *, max_retries: int = 2) -> OpenAIResponsesChatGenerator:
    # http_client_kwargs makes the generator use an httpx client, which respx intercepts.
    return OpenAIResponsesChatGenerator(
        api_key=Secret.from_token("sk-test"),
        model=model,
        api_base_url=API,
        max_retries=max_retries,
        http_client_kwargs={"timeout": 5},
    )


def _openai_text(model: str, text: str) -> httpx.Response:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    message = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": content}
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": model,
        "status": "completed",
        "output": [message],
        "usage": usage,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    return httpx.Response(200, json=body)


def _report_citing(url: str) -> str:
    return f"# Solar\n\n## Executive summary\n\nSolar grew fast [Solar]({url}).\n\n## Sources\n\n- [Solar]({url})\n"


def _assert_intact(result: dict[str, Any], *, notes: int = 2) -> None:
    assert result["brief"].startswith("Research brief:")
    assert len(result["notes"]) == notes
    assert result["report"].startswith("# ")


# --- the models ---------------------------------------------------------------------------------------------------


def test_an_llm_429_is_retried_after_the_delay_its_retry_after_header_asks_for(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    attempts: list[tuple[float, bytes]] = []

    def openai(request: httpx.Request) -> httpx.Response:
        attempts.append((time.monotonic(), request.content))
        if len(attempts) == 1:
            return httpx.Response(429, headers={"retry-after-ms": "300"}, json={"error": {"message": "slow down"}})
        return _openai_text("writer-model", _report_citing(web.url("/solar.html")))

    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{API}/responses").mock(side_effect=openai)
        mock.route(host="127.0.0.1").pass_through()
        result = _run(make_agent(writer_llm=_openai("writer-model"), max_concurrent_researchers=1))

    assert len(attempts) == 1 + 3  # the refused call again, then the other two parts
    refused, *others = attempts
    [again] = [at for at, body in others if body == refused[1]]  # the parts run side by side: find the same call
    assert again - refused[0] >= 0.29  # Retry-After was honoured, not a blind immediate retry
    _assert_intact(result)
    assert result["report"].startswith("# Solar")
    assert web.url("/solar.html") in _pages(result)
    assert result["exit_reason"] == "text"


def test_llm_5xx_answers_are_retried_with_backoff_until_one_succeeds(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    attempts: list[tuple[float, bytes]] = []
    failed: list[bytes] = []

    def openai(request: httpx.Request) -> httpx.Response:
        attempts.append((time.monotonic(), request.content))
        if not failed or (request.content == failed[0] and len(failed) < 2):  # one call fails twice, then succeeds
            failed.append(request.content)
            status = 503 if len(failed) == 1 else 500
            return httpx.Response(status, headers={"retry-after-ms": "100"}, json={"error": {"message": "busy"}})
        return _openai_text("writer-model", _report_citing(web.url("/solar.html")))

    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{API}/responses").mock(side_effect=openai)
        mock.route(host="127.0.0.1").pass_through()
        agent = make_agent(writer_llm=_openai("writer-model", max_retries=2), max_concurrent_researchers=1)
        result = _run(agent)

    assert len(attempts) == 3 + 2  # one part's three tries, and the two other parts
    tries = [at for at, body in attempts if body == failed[0]]
    assert len(tries) == 3
    assert all(later - earlier >= 0.09 for earlier, later in itertools.pairwise(tries))
    _assert_intact(result)
    assert result["report"].startswith("# Solar")
    assert result["exit_reason"] == "text"
    assert result["usage_by_phase"]["write"]["total_tokens"] == 3 * 15  # three answered calls
    assert not [w for w in result["warnings"] if "writer" in w and "failed" in w]  # the client's retries, not ours


def test_an_llm_timeout_loses_only_the_page_it_was_summarizing(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    attempts = {"timed_out": 0}

    def summarizer(request: httpx.Request) -> httpx.Response:
        if "Battery storage" in json.dumps(json.loads(request.content)["input"]):
            attempts["timed_out"] += 1
            raise httpx.ReadTimeout("timed out", request=request)
        return _openai_text("summarizer-model", "Global solar capacity grew by 450 gigawatts in 2025.")

    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{API}/responses").mock(side_effect=summarizer)
        mock.route(host="127.0.0.1").pass_through()
        result = _run(
            make_agent(sources=SUMMARIZE_EVERY_PAGE, summarizer_llm=_openai("summarizer-model", max_retries=1))
        )

    assert attempts["timed_out"] >= 2  # the timeout was retried once, per read of the PDF
    _assert_intact(result)
    assert _pages(result) == {web.url("/solar.html")}  # the timed-out PDF is not a source; the page is
    assert result["exit_reason"] == "text"
    assert web.url("/solar.html") in result["report"]


# --- the search service -------------------------------------------------------------------------------------------


def test_a_search_service_that_is_down_leaves_notes_that_say_so(
    make_agent: Callable[..., Agent], make_search_tool: Callable[..., WebSearchTool], search: LoopbackSearchServer
) -> None:
    search.fail_next(503, count=4)

    result = _run(make_agent(sources=Sources(search=make_search_tool(max_results=2, max_retries=1))))

    searches = [r for r in search.requests.wait_for(4) if r.method == "POST"]
    assert [r.status for r in searches] == [503] * 4  # each of the two searches was tried twice
    _assert_intact(result)
    assert all("no readable sources were found" in note for note in result["notes"])
    assert result["sources"] == []
    # Search was down for the whole run: the report says so in its first lines, and why.
    assert result["exit_reason"] == "no_evidence"
    assert "**No evidence:**" in "\n".join(result["report"].splitlines()[:3])
    assert "(every search failed), so nothing in this report is backed by a source" in result["report"]
    assert "503" not in result["report"]  # the details go to the warnings
    assert any("no evidence: all 2 searches failed" in w and "503" in w for w in result["warnings"])


def test_a_search_service_answering_garbage_is_a_tool_error_not_a_crash(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    search.fail_next(200, garbage=True, count=2)

    result = _run(make_agent())

    _assert_intact(result)
    assert all("no readable sources were found" in note for note in result["notes"])
    assert result["sources"] == []
    assert result["exit_reason"] == "no_evidence"
    assert any("no evidence: all 2 searches failed" in w and "garbage" in w for w in result["warnings"])


# --- the web ------------------------------------------------------------------------------------------------------


def test_404_and_500_pages_are_skipped_and_their_snippets_kept(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    web.add_page("/solar.html", "<html><body>gone</body></html>", status=404)
    web.add_page("/storage.pdf", "<html><body>server error</body></html>", status=500)

    result = _run(make_agent())

    _assert_intact(result)
    assert _pages(result) == set()
    assert {entry["url"] for entry in result["sources"]} == {web.url("/solar.html"), web.url("/storage.pdf")}
    assert {entry["kind"] for entry in result["sources"]} == {"snippet"}
    # No page could be read, but what the search results' snippets say still backs the findings, marked as such.
    assert result["exit_reason"] == "text"
    assert "Grid battery storage doubled in 2025" in "\n".join(result["notes"])
    assert f"]({web.url('/storage.pdf')}) (search result snippet, not read)" in result["report"]
    assert {passage["kind"] for passage in result["citations"]["passages"]} == {"snippet"}


def test_a_slow_page_is_cut_at_the_total_timeout_and_the_others_are_read(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    web.add_slow("/solar.html", b"<html><body>" + b"x" * 200 + b"</body></html>", delay_per_chunk=0.1, chunk_size=20)
    limits = FetchLimits(total_timeout=0.5, read_timeout=2.0, connect_timeout=2.0)

    started = time.monotonic()
    result = _run(make_agent(sources=Sources(fetch_limits=limits)))

    assert time.monotonic() - started < 10
    _assert_intact(result)
    assert _pages(result) == {web.url("/storage.pdf")}
    assert "300 gigawatt hours" in "\n".join(result["notes"])
    assert result["exit_reason"] == "text"


def test_a_redirect_to_the_cloud_metadata_address_is_refused(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    web.add_redirect("/solar.html", "http://169.254.169.254/latest/meta-data/")

    result = _run(make_agent())

    _assert_intact(result)
    assert _pages(result) == {web.url("/storage.pdf")}
    assert all("169.254.169.254" not in entry["url"] for entry in result["sources"])
    assert result["exit_reason"] == "text"


def test_file_and_loopback_urls_a_model_picks_are_refused_under_the_default_policy(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    chosen = ["file:///etc/passwd", web.url("/solar.html"), f"http://localhost:{web.port}/storage.pdf"]
    seen: list[str] = []

    def researcher(messages: list[ChatMessage], tools: Any) -> ChatMessage | str:
        results = [m.tool_call_result for m in messages if m.tool_call_result is not None]
        if tools and not results:
            arguments = {"urls": chosen, "question": "solar growth"}
            return ChatMessage.from_assistant(tool_calls=[ToolCall(tool_name="read_url", arguments=arguments)])
        seen.extend(str(r.result) for r in results)
        return "Nothing could be read."

    agent = make_agent(
        researcher_llm=MockChatGenerator(response_fn=researcher),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["solar capacity"]),
        sources=Sources(url_policy=UrlPolicy()),  # the default policy: public addresses only
    )
    result = _run(agent)

    lines = "\n".join(seen)
    assert all(f"Could not read {url}" in lines for url in chosen)
    assert len(web.requests) == 0  # nothing reached the loopback server
    _assert_intact(result, notes=1)
    assert result["sources"] == []
    assert result["exit_reason"] == "no_evidence"


def test_a_malformed_pdf_is_skipped_and_the_html_page_is_read(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    web.add_page("/storage.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog broken", content_type="application/pdf")

    result = _run(make_agent())

    _assert_intact(result)
    assert _pages(result) == {web.url("/solar.html")}
    assert "450 gigawatts" in "\n".join(result["notes"])
    assert result["exit_reason"] == "text"


# --- the researchers ----------------------------------------------------------------------------------------------


def test_a_researcher_looping_on_the_same_call_is_warned_then_stopped_with_a_partial_note(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    def looper(messages: list[ChatMessage], tools: Any) -> ChatMessage | str:
        if tools:  # the same search, with the same arguments, every step
            return ChatMessage.from_assistant(
                tool_calls=[ToolCall(tool_name="web_search", arguments={"query": "solar"})]
            )
        return "Solar capacity grew in 2025, according to the search results."  # the final, tool-free summary

    agent = make_agent(
        researcher_llm=MockChatGenerator(response_fn=looper),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["solar capacity"]),
    )
    result = _run(agent)

    assert len(search.requests) == 2  # the third identical call was answered with a warning, the fourth stopped it
    note = result["notes"][0]
    assert "Solar capacity grew in 2025" in note
    assert "[Partial: the researcher kept repeating the same tool call and was stopped" in note
    assert any("kept calling web_search with the same arguments" in w for w in result["warnings"])
    _assert_intact(result, notes=1)
    assert result["exit_reason"] == "no_evidence"  # it only ever searched: nothing was read


# --- the run directory --------------------------------------------------------------------------------------------


def test_a_run_dir_that_cannot_take_the_ledger_or_the_report_costs_only_those_copies(
    make_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    (run_dir / LEDGER_FILE).mkdir(parents=True)  # writing either file fails with an OSError, as on a full disk
    (run_dir / REPORT_FILE).mkdir()
    context = RunInputs(run_dir=run_dir)

    first = make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=context)

    _assert_intact(first)
    assert first["exit_reason"] == "text"
    problems = [w for w in first["warnings"] if "run directory" in w]
    assert len(problems) == 2  # the notes were journaled: no warning says they would be researched again
    assert any(w.startswith(f"write: could not write {LEDGER_FILE}") for w in problems)
    assert any(w.endswith("the sources are in the result and in the journal") for w in problems)
    assert any(w.startswith(f"write: could not write {REPORT_FILE}") for w in problems)
    assert any(w.endswith("the report is in the result") for w in problems)

    (run_dir / LEDGER_FILE).rmdir()
    (run_dir / REPORT_FILE).rmdir()
    researched: list[str] = []
    scripted = ScriptedChatGenerator(role="researcher")

    def researcher(messages: list[ChatMessage], tools: Any) -> ChatMessage:
        researched.append(messages[1].text or "")
        return scripted.run(messages, tools)["replies"][0]

    resumed = make_agent(researcher_llm=MockChatGenerator(response_fn=researcher)).run(
        messages=[ChatMessage.from_user(QUESTION)], inputs=context
    )

    assert researched == []  # both notes were journaled
    assert resumed["sources"] == first["sources"]  # and came back with every source they were written from
    assert resumed["warnings"] == []


# --- pages that cannot be read: what their search results' snippets say -------------------------------------------

GONE_SNIPPET = (
    "Die Solarleistung wuchs 2025 weltweit um 450 Gigawatt, ein Rekord; Großspeicher für Batterien verdoppelten "
    "sich auf 300 Gigawattstunden, vor allem in China, Europa und den Vereinigten Staaten (solar capacity, "
    "battery storage, growing)."
)
DRIP_SNIPPET = "Battery storage and solar capacity keep growing: grid batteries doubled in 2025, Ökostrom-Anteil 62 %."
_ARTICLE = "<p>" + "Solarstrom wächst schnell, und Speicher für Ökostrom werden günstiger. " * 60 + "</p>"
"""A page of real size (some 4,000 characters), behind the 404 and the slow drip: never seen by anyone."""


@component
class SnippetReader:
    """A deep agent's model of this file: searches, reads the first result, then answers from what it was told."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        results = [m.tool_call_result for m in messages if m.tool_call_result is not None]
        if not results:
            call = ToolCall(tool_name="web_search", arguments={"query": "solar capacity battery storage"})
            return {"replies": [ChatMessage.from_assistant(tool_calls=[call])]}
        last = str(results[-1].result)
        if results[-1].origin.tool_name == "web_search":
            first = last.split("URL: ", 1)[1].split("\n", 1)[0].strip()
            call = ToolCall(tool_name="read_url", arguments={"urls": [first], "question": "How fast?"})
            return {"replies": [ChatMessage.from_assistant(tool_calls=[call])]}
        url = last.split("Could not read ", 1)[1].split(": ", 1)[0]
        said = last.split('">\n', 1)[1].split("\n</untrusted_snippet>", 1)[0]
        return {"replies": [ChatMessage.from_assistant(f"# Solar\n\n- {said} [gone]({url}).\n")]}


def _unreadable_shapes(search: WebSearchTool, limits: FetchLimits) -> dict[str, Any]:
    from haystack_deep_research import (
        Grounding,
        ReadUrlTool,
        ResearchSummary,
        create_deep_agent,
        create_deep_research_agent,
        create_iterative_research_agent,
        create_research_workflow,
    )

    policy = UrlPolicy(allow_hosts=("127.0.0.1",))
    sources = Sources(search=search, url_policy=policy, fetch_limits=limits)

    def read_url() -> ReadUrlTool:
        return ReadUrlTool(
            summarizer_llm=ScriptedChatGenerator(role="summarizer"), url_policy=policy, fetch_limits=limits
        )

    return {
        "deep_research_agent": lambda: create_deep_research_agent(
            scope_llm=ScriptedChatGenerator(role="scope"),
            orchestrator_llm=ScriptedChatGenerator(
                role="orchestrator", subtopics=["solar capacity", "battery storage"]
            ),
            researcher_llm=ScriptedChatGenerator(role="researcher", read_top_k=1),
            summarizer_llm=ScriptedChatGenerator(role="summarizer"),
            writer_llm=ScriptedChatGenerator(role="writer"),
            sources=sources,
        ),
        "research_workflow": lambda: create_research_workflow(
            chat_generator=ScriptedChatGenerator(role="researcher", read_top_k=1),
            tools=[search, read_url()],
            output_schema=ResearchSummary,
            causal_llm=ScriptedChatGenerator(role="causal"),
            summary_llm=ScriptedChatGenerator(role="summarize"),
            grounding=Grounding(judge_llm=ScriptedChatGenerator(role="judge")),
        ),
        "iterative_agent": lambda: create_iterative_research_agent(
            analysis_llm=ScriptedChatGenerator(role="analysis", steps=["solar capacity battery storage", None]),
            writer_llm=ScriptedChatGenerator(role="writer"),
            summarizer_llm=ScriptedChatGenerator(role="summarizer"),
            read_top_k=1,
            sources=sources,
        ),
        "deep_agent": lambda: create_deep_agent(
            chat_generator=SnippetReader(), tools=[search, read_url()], system_prompt="Answer the question."
        ),
    }


@pytest.fixture
def unreadable_first(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every search's first result answers 404, its second drips too slowly; each has a non-ASCII snippet."""
    with LoopbackWebServer() as web:
        web.add_page("/gone.html", f"<html><body>{_ARTICLE}</body></html>", status=404)
        web.add_slow("/drip.html", _ARTICLE.encode(), delay_per_chunk=0.2, chunk_size=16)
        documents = [
            SearchDocument(web.url("/gone.html"), "Solar und Speicher 2025", GONE_SNIPPET),
            SearchDocument(web.url("/drip.html"), "Battery storage", DRIP_SNIPPET),
        ]
        with LoopbackSearchServer(documents, require_api_key="test-key") as server:
            monkeypatch.setenv("LOOPBACK_TAVILY_KEY", "test-key")
            key = Secret.from_env_var("LOOPBACK_TAVILY_KEY")
            yield web, WebSearchTool(api_key=key, api_base_url=server.base_url, max_results=2)


SHAPE_NAMES = ("deep_research_agent", "research_workflow", "iterative_agent", "deep_agent")


@pytest.mark.parametrize("shape", SHAPE_NAMES)
def test_a_page_that_cannot_be_read_never_erases_the_findings_its_snippet_backs(
    unreadable_first: Any, shape: str
) -> None:
    web, search = unreadable_first
    limits = FetchLimits(total_timeout=0.5, read_timeout=2.0, connect_timeout=2.0)
    agent = _unreadable_shapes(search, limits)[shape]()

    result = agent.run(messages=[ChatMessage.from_user("How fast are solar capacity and battery storage growing?")])

    gone = web.url("/gone.html")
    kinds = {entry["url"]: entry["kind"] for entry in result["sources"]}
    assert kinds[gone] == "snippet"  # seen in every search, never read
    assert "page" not in kinds.values()
    assert result["exit_reason"] != "no_evidence"
    assert "Gigawatt" in "\n".join(result["notes"]) or "Gigawatt" in result["report"]
    assert gone in result["citations"]["verified_urls"]
    assert f"]({gone}) (search result snippet, not read)" in result["report"]
    cited = [passage for passage in result["citations"]["passages"] if passage["url"] == gone]
    assert cited
    assert all(passage["kind"] == "snippet" and passage["passage"] in GONE_SNIPPET for passage in cited)
    assert all(passage["named"] == "search result snippet, not read" for passage in cited)
