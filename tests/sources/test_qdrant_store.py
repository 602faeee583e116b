"""
A research run over documents held in a real Qdrant store (qdrant-haystack's local mode, started here), searched
with keyword-style sparse vectors computed in this file: no model download, no server. Skips cleanly where
qdrant-haystack is not installed (``pip install haystack-deep-research[qdrant]``).
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

qdrant = pytest.importorskip("haystack_integrations.document_stores.qdrant")
retrievers = pytest.importorskip("haystack_integrations.components.retrievers.qdrant")

from haystack import Document, Pipeline, SuperComponent, component  # noqa: E402
from haystack.dataclasses import ChatMessage, SparseEmbedding  # noqa: E402

from haystack_deep_research import Sources, create_deep_research_agent  # noqa: E402
from haystack_deep_research.testing import ScriptedChatGenerator  # noqa: E402

_WORD = re.compile(r"[a-z0-9]+")


def sparse(text: str) -> SparseEmbedding:
    """Keyword vector: each word's CRC32 is its index, its count the value."""
    counts = Counter(zlib.crc32(word.encode()) for word in _WORD.findall(text.lower()))
    indices = sorted(counts)
    return SparseEmbedding(indices=indices, values=[float(counts[i]) for i in indices])


@component
class KeywordSparseEmbedder:
    """Turns a query into the same keyword vector the documents were stored with."""

    @component.output_types(sparse_embedding=SparseEmbedding)
    def run(self, text: str) -> dict[str, Any]:
        return {"sparse_embedding": sparse(text)}


def _retriever(path: str | None) -> SuperComponent:
    store = qdrant.QdrantDocumentStore(
        location=None if path else ":memory:",
        path=path,
        use_sparse_embeddings=True,
        embedding_dim=4,
        recreate_index=True,
    )
    documents = [
        Document(
            content="The 2024 tidal survey recorded spring tides of 4.2 metres at the northern gauge.",
            meta={"url": "https://archive.example/survey-2024", "title": "Tidal survey 2024"},
        ),
        Document(
            content="Harbour neap tides stayed below 1.5 metres during the whole survey period.",
            meta={"file_path": "/archive/harbour-notes.txt"},
        ),
        Document(
            content="Canteen menu: soup of the day and fresh bread.", meta={"url": "https://archive.example/menu"}
        ),
    ]
    store.write_documents([replace(d, sparse_embedding=sparse(d.content or "")) for d in documents])
    pipeline = Pipeline()
    pipeline.add_component("embedder", KeywordSparseEmbedder())
    pipeline.add_component("retriever", retrievers.QdrantSparseEmbeddingRetriever(document_store=store))
    pipeline.connect("embedder.sparse_embedding", "retriever.query_sparse_embedding")
    return SuperComponent(
        pipeline=pipeline,
        input_mapping={"query": ["embedder.text"], "top_k": ["retriever.top_k"]},
        output_mapping={"retriever.documents": "documents"},
    )


@pytest.mark.parametrize("on_disk", [False, True], ids=["memory", "path"])
def test_a_run_over_a_qdrant_store_cites_its_documents(on_disk: bool, tmp_path: Any) -> None:
    retriever = _retriever(str(tmp_path / "qdrant") if on_disk else None)
    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["spring tides survey", "harbour neap"]),
        researcher_llm=ScriptedChatGenerator(role="researcher"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=ScriptedChatGenerator(role="writer"),
        sources=Sources(
            datastores={"archive": {"retriever": retriever, "description": "the tidal archive", "top_k": 1}}, web=False
        ),
    )

    result = agent.run(messages=[ChatMessage.from_user("What did the tidal archive record?")])

    assert "](https://archive.example/survey-2024)" in result["report"]
    assert "](file:///archive/harbour-notes.txt)" in result["report"]
    assert "menu" not in result["report"]
    kinds = {entry["url"]: entry["kind"] for entry in result["sources"]}
    assert kinds == {"https://archive.example/survey-2024": "document", "file:///archive/harbour-notes.txt": "document"}
    assert result["citations"]["unverified"] == []
    assert result["exit_reason"] == "text"
