"""The iterative agent over datastores: retrieved documents are read sources the report cites and updates keep."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from haystack.dataclasses import ChatMessage

from haystack_deep_research import MCPServer, RunInputs, Sources, create_iterative_research_agent
from haystack_deep_research.agents import IterativeResearchAgent
from haystack_deep_research.iterative.search import SearchStep
from haystack_deep_research.sources import index_folder
from haystack_deep_research.sources.datastore import DatastoreSearchTool
from haystack_deep_research.testing import ScriptedChatGenerator

QUESTION = "How much tidal power is installed?"


@pytest.fixture
def notes(tmp_path: Path) -> dict[str, Any]:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tides.md").write_text("# Tidal power\n\nTidal power capacity reached 600 megawatts in 2025.\n")
    (folder / "waves.md").write_text("# Wave energy\n\nWave converters produced 40 megawatts in Portugal.\n")
    return index_folder(folder, cache_dir=tmp_path / "index")


def _agent(notes: dict[str, Any], **options: Any) -> IterativeResearchAgent:
    return create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis", steps=["tidal power", None]),
        writer_llm=ScriptedChatGenerator(role="writer"),
        sources=Sources(web=False, datastores={"notes": notes}),
        **options,
    )


def _run(agent: IterativeResearchAgent, run_dir: Path, **kwargs: Any) -> dict[str, Any]:
    return agent.run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=str(run_dir)), **kwargs)


def _cited_documents(result: dict[str, Any]) -> list[str]:
    return [url for url in result["citations"]["verified_urls"] if url.startswith(("file://", "doc://"))]


def test_documents_retrieved_without_the_web_are_cited_and_listed(notes: dict[str, Any], tmp_path: Path) -> None:
    result = _run(_agent(notes), tmp_path / "run")

    tides = next(s["url"] for s in result["sources"] if s["url"].endswith("/tides.md"))
    assert _cited_documents(result) == [tides]
    assert f"]({tides})" in result["report"]
    assert result["citations"]["unverified"] == []
    assert result["exit_reason"] == "analysis_stopped"


def test_an_update_keeps_a_topic_whose_documents_are_fresh(notes: dict[str, Any], tmp_path: Path) -> None:
    first = _run(_agent(notes), tmp_path / "run")

    updated = _run(_agent(notes), tmp_path / "run", update=True)

    assert updated["changes"]["kept_topics"] == ["tidal power"]
    assert updated["changes"]["rechecked_topics"] == []
    assert _cited_documents(updated) == _cited_documents(first)


def test_a_recorded_run_over_documents_replays_with_its_citations(notes: dict[str, Any], tmp_path: Path) -> None:
    recorded = _run(_agent(notes, record_to=tmp_path / "tape"), tmp_path / "run")

    replayed = _run(_agent(notes, replay_from=tmp_path / "tape"), tmp_path / "replay")

    assert replayed["report"] == recorded["report"]
    assert _cited_documents(replayed) == _cited_documents(recorded) != []


def test_a_search_step_over_documents_and_an_mcp_server_round_trips(notes: dict[str, Any]) -> None:
    server = MCPServer(name="wiki", url="http://127.0.0.1:9/mcp", description="Ünïcode wiki")
    agent = create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis"),
        writer_llm=ScriptedChatGenerator(role="writer"),
        sources=Sources(web=False, datastores={"notes": notes}, mcp_servers=[server]),
    )
    data = agent.to_dict()

    restored = IterativeResearchAgent.from_dict(copy.deepcopy(data))

    assert restored.to_dict() == data
    step = restored.step(SearchStep)
    assert (step.search, step.read_url, step.mcp_servers) == (None, None, [server])
    assert [type(store) for store in step.datastores] == [DatastoreSearchTool]
    assert [store.name for store in step.datastores] == [store.name for store in agent.step(SearchStep).datastores]
