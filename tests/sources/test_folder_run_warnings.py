"""A run over a folder given as a datastore: its documents' own titles in the sources, its skipped files in warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from haystack.dataclasses import ChatMessage

from haystack_deep_research import Sources, create_deep_research_agent, create_iterative_research_agent
from haystack_deep_research.sources import index_folder
from haystack_deep_research.testing import ScriptedChatGenerator

pptx = pytest.importorskip("pptx")


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    root.mkdir()
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Manticore Sales Deck"
    slide.placeholders[1].text = "Manticore sales doubled in spring."
    presentation.save(str(root / "deck.pptx"))
    (root / "fake.docx").write_bytes(b"PK\x03\x04 this is no Word file")
    return root


def _skipped(desk: Path) -> str:
    uri = (desk / "fake.docx").as_uri()
    return f"research: desk: not indexed: fake.docx: The file at {uri} could not be read: it is not a valid .docx file."


def _deep_research(datastores: dict[str, Any]) -> Any:
    return create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["manticore sales", "manticore spring"]),
        researcher_llm=ScriptedChatGenerator(role="researcher"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=ScriptedChatGenerator(role="writer"),
        sources=Sources(datastores=datastores, web=False),
    )


def _iterative(datastores: dict[str, Any]) -> Any:
    return create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis", steps=["manticore sales", None]),
        writer_llm=ScriptedChatGenerator(role="writer"),
        sources=Sources(datastores=datastores, web=False),
    )


@pytest.mark.parametrize("build", [_deep_research, _iterative], ids=["deep_research_agent", "iterative_agent"])
def test_a_run_lists_the_files_not_indexed_once_and_titles_documents_by_themselves(
    build: Any, desk: Path, tmp_path: Path
) -> None:
    agent = build({"desk": index_folder(desk, cache_dir=tmp_path / "cache")})

    result = agent.run(messages=[ChatMessage.from_user("How did manticore sales go?")])

    [entry] = result["sources"]
    assert entry["url"] == (desk / "deck.pptx").as_uri()
    assert entry["title"] == "Manticore Sales Deck"
    assert result["warnings"].count(_skipped(desk)) == 1  # two researchers searched; the file is named once
