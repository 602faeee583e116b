"""A writer of our own, citing by number with a non-ASCII title, over documents instead of pages."""

from __future__ import annotations

import re

from haystack import Document
from haystack.components.generators.chat import MockChatGenerator
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import ChatMessage
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_deep_research import Sources, create_deep_research_agent
from haystack_deep_research.testing import ScriptedChatGenerator

TITLE = "Gezeiten — 潮汐"
_NUMBERED = re.compile(r"^(\d+)\. \S+$", re.MULTILINE)


def _writer(messages: list[ChatMessage]) -> str:
    """Cites every numbered source the part is given, under one non-ASCII title, and one number no source has."""
    numbers = _NUMBERED.findall(messages[-1].text or "")
    cited = " ".join(f"Die Nachttram fährt alle 20 Minuten [{TITLE}]({n})." for n in numbers)
    opening = "'# ' title" in (messages[0].text or "")
    head = "# Nachttram\n\n## Executive summary\n\n" if opening else "## Takt\n\n"
    return f"{head}{cited} Eine Behauptung ohne Quelle [erfunden](99).\n"


def test_a_writer_citing_documents_by_number_gets_their_uris_and_keeps_its_titles() -> None:
    store = InMemoryDocumentStore()
    store.write_documents(
        [Document(content="Die Nachttram fährt alle 20 Minuten nach Mitternacht.", meta={"file_path": "tram/nacht.md"})]
    )
    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["Nachttram"]),
        researcher_llm=ScriptedChatGenerator(role="researcher"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=MockChatGenerator(response_fn=_writer),
        sources=Sources(
            datastores={"corpus": {"retriever": InMemoryBM25Retriever(document_store=store), "description": "Tram"}},
            web=False,
        ),
    )

    result = agent.run(messages=[ChatMessage.from_user("Wie oft fährt die Nachttram?")])

    assert f"[{TITLE}](doc://corpus/tram/nacht.md)" in result["report"]
    assert result["citations"]["verified_urls"] == ["doc://corpus/tram/nacht.md"]
    assert "(99)" not in result["report"]  # an unknown number keeps its text only
    assert "erfunden" in result["report"]
