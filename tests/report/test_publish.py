"""What a report may cite: only what the run really read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research import Sources, UrlPolicy, create_iterative_research_agent
from haystack_deep_research.testing import LoopbackSearchServer, ScriptedChatGenerator

INVENTED = "https://invented.example/claim"


def test_a_run_that_read_nothing_verifies_nothing(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    search.fail_next(400, count=10)  # every search fails: nothing is read, nothing is recorded
    agent = make_agent(researcher_llm=ScriptedChatGenerator(role="researcher", invented_urls=[INVENTED]))

    result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    assert any(INVENTED in note for note in result["notes"])  # the researchers did write it down
    assert result["citations"]["verified_urls"] == []
    assert f"]({INVENTED})" not in result["report"]
    assert result["exit_reason"] == "no_evidence"


UNCITED = "Solar power grows quickly, analysts say, and storage follows it closely."


def test_a_report_that_cites_none_of_the_sources_read_says_so(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    # A writer that ignores every source it was given: each part of the report is the same uncited sentence.
    agent = make_agent(writer_llm=MockChatGenerator(responses=UNCITED))

    result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    read = len({s["url"] for s in result["sources"] if s["kind"] in ("page", "document")})
    assert read >= 1
    assert result["citations"]["verified_urls"] == []
    assert f"write: the run read {read} sources and the report cites none" in result["warnings"]


def test_an_iterative_report_that_cites_none_of_the_sources_read_says_so(
    make_search_tool: Callable[..., Any],
) -> None:
    agent = create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis", steps=["solar capacity", None]),
        writer_llm=MockChatGenerator(responses=f"# Report\n\n{UNCITED}"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        sources=Sources(search=make_search_tool(max_results=2), url_policy=UrlPolicy(allow_hosts=("127.0.0.1",))),
        read_top_k=1,
    )

    result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    assert [s["url"] for s in result["sources"] if s["kind"] == "page"]  # the page was read
    assert result["citations"]["verified_urls"] == []
    assert "write: the run read 1 source and the report cites none" in result["warnings"]


ERROR_SUBTOPIC = "HTTP 400 Bad Request: the search service refused the query"


def test_an_error_text_is_never_a_sub_topic_and_the_no_evidence_notice_holds_no_error_text(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    search.fail_next(400, count=10)  # every search fails with an HTTP 400
    # A weak orchestrator that delegates the error it saw as if it were a sub-topic.
    agent = make_agent(
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["solar capacity", ERROR_SUBTOPIC])
    )

    result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    report = result["report"]
    assert "400" not in report
    assert "Bad Request" not in report
    assert not any("400" in note for note in result["notes"])
    assert len(result["notes"]) == 1
    [notice] = [line for line in report.splitlines() if line.startswith("> **No evidence:**")]
    assert notice == (
        "> **No evidence:** this run read no web page and no document (every search failed), so nothing in this "
        "report is backed by a source; treat it as unverified."
    )
    assert any(w.startswith("research: no evidence: all ") and "400" in w for w in result["warnings"])  # the details
    refused = [
        str(m.tool_call_result.result)
        for m in result["messages"]
        if m.tool_call_result is not None and m.tool_call_result.error
    ]
    assert any("is an error message, not something to research" in text for text in refused)


def test_an_error_text_is_never_an_iterative_topic_nor_a_report_heading(
    make_search_tool: Callable[..., Any],
) -> None:
    agent = create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis", steps=["solar capacity", ERROR_SUBTOPIC, None]),
        writer_llm=ScriptedChatGenerator(role="writer"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        sources=Sources(search=make_search_tool(max_results=2), url_policy=UrlPolicy(allow_hosts=("127.0.0.1",))),
        read_top_k=1,
        depth=3,
    )

    result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    assert result["topics"] == ["solar capacity"]
    assert "400" not in result["report"]
    assert "Bad Request" not in result["report"]
    assert "analyze: the analysis proposed 1 error message(s) as topics; refused" in result["warnings"]
