"""A researcher that cites its documents the way it cites pages, with bare URIs, keeps every citation."""

from __future__ import annotations

import re
from typing import Any

from haystack import Document
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import ChatMessage
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_deep_research import Sources, create_deep_research_agent
from haystack_deep_research.testing import ScriptedChatGenerator

_LINK = re.compile(r"\[([^\]]+)\]\(((?:doc|file|https?)://[^)\s]+)\)")


class BareCitingGenerator(ScriptedChatGenerator):
    """The kit's model, but every ``[text](uri)`` it writes becomes ``text (uri)``: a bare URI, as many models cite."""

    def _answer(self, messages: list[ChatMessage], tools: Any) -> dict[str, list[ChatMessage]]:
        result = super()._answer(messages, tools)
        reply = result["replies"][0]
        if reply.text and not reply.tool_calls:
            bare = ChatMessage.from_assistant(_LINK.sub(r"\1 (\2)", reply.text), meta=reply.meta)
            result["replies"] = [bare]
        return result


def test_documents_cited_with_bare_doc_uris_are_kept() -> None:
    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(
                content="The night tram runs every 20 minutes after midnight.", meta={"file_path": "tram/night.html"}
            ),
            Document(
                content="The tram network carried 40 million riders in 2024.", meta={"file_path": "tram/riders.md"}
            ),
        ]
    )
    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["night tram service"]),
        researcher_llm=BareCitingGenerator(role="researcher"),
        summarizer_llm=BareCitingGenerator(role="summarizer"),
        writer_llm=BareCitingGenerator(role="writer"),
        sources=Sources(
            datastores={
                "corpus": {"retriever": InMemoryBM25Retriever(document_store=store), "description": "tram notes"}
            },
            web=False,
        ),
    )

    result = agent.run(messages=[ChatMessage.from_user("How often does the night tram run?")])

    read = {entry["url"] for entry in result["sources"]}
    assert read == {"doc://corpus/tram/night.html", "doc://corpus/tram/riders.md"}
    assert not [warning for warning in result["warnings"] if "never retrieved" in str(warning)]
    assert result["citations"]["unverified"] == []
    assert set(result["citations"]["verified_urls"]) == read
    assert all(f"({url})" in result["report"] for url in read)
    assert "No verified sources" not in result["report"]
