"""
A folder of documents as a datastore: :class:`FolderRetriever` (BM25 over the folder's cached index, see
:mod:`.indexing`; passages sharing no word with the query are never returned) and :func:`index_folder`, which returns
a ready datastore spec. See docs/sources.md.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from haystack import Document, component
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.sources.datastore import DEFAULT_TOP_K
from haystack_deep_research.sources.indexing import FolderIndex, IndexProgress, build_index

__all__ = ["FolderRetriever", "folder_store_name", "index_folder"]


@component
class FolderRetriever(InitSerialized):
    """
    BM25 search over the documents of a folder (PDF, HTML, Markdown, text, CSV, DOCX, PPTX, XLSX), indexed on first
    use (or at :meth:`warm_up`) and cached while the files are unchanged (see :mod:`.indexing`).

    :param folder: The folder.
    :param cache_dir: Where the index is kept; the user's cache folder by default.
    :param split_length: Words per passage.
    :param split_overlap: Words shared by neighbouring passages.
    """

    def __init__(
        self, *, folder: str, cache_dir: str | None = None, split_length: int = 200, split_overlap: int = 20
    ) -> None:
        self.folder = str(folder)
        self.cache_dir = str(cache_dir) if cache_dir is not None else None
        self.split_length = split_length
        self.split_overlap = split_overlap
        self.index: FolderIndex | None = None
        self._lock = threading.Lock()

    def warm_up(self, progress: IndexProgress | None = None) -> FolderIndex:
        """
        Index the folder, or load its cached index.

        :param progress: Called as ``progress(done, total, file)`` while indexing.
        :returns: The index.
        """
        with self._lock:
            if self.index is None:
                self.index = build_index(
                    self.folder,
                    cache_dir=self.cache_dir,
                    split_length=self.split_length,
                    split_overlap=self.split_overlap,
                    progress=progress,
                )
            return self.index

    @property
    def warnings(self) -> tuple[str, ...]:
        """One line per file or folder not indexed, saying why (:attr:`FolderIndex.warnings`); none before indexing."""
        index = self.index
        return index.warnings if index is not None else ()

    @component.output_types(documents=list[Document])
    def run(self, query: str, top_k: int = DEFAULT_TOP_K) -> dict[str, list[Document]]:
        """
        :param query: The query.
        :param top_k: The most passages to return.
        :returns: ``{"documents": [...]}``: the best passages, each sharing at least one word with the query.
        """
        index = self.warm_up()
        found = InMemoryBM25Retriever(document_store=index.store).run(query=query, top_k=top_k)["documents"]
        return {"documents": [document for document in found if (document.score or 0) > 0]}


def folder_store_name(folder: str | Path) -> str:
    """
    :param folder: A folder.
    :returns: A datastore name made from its name (lower-case letters, digits and underscores), "docs" if none is left.
    """
    name = re.sub(r"[^a-z0-9_]+", "_", Path(folder).expanduser().resolve().name.lower()).strip("_")[:41]
    return name or "docs"


def index_folder(
    folder: str | Path,
    *,
    description: str | None = None,
    top_k: int = DEFAULT_TOP_K,
    cache_dir: str | Path | None = None,
    progress: IndexProgress | None = None,
) -> dict[str, Any]:
    """
    Index a folder now (or load its cached index) and return a datastore spec for ``Sources(datastores=...)``.

    :param folder: The folder of documents (see :data:`~.indexing.FILE_TYPES`).
    :param description: What the folder holds, for the researchers' routing block; by default "documents in
        <folder name>".
    :param top_k: Passages per search.
    :param cache_dir: Where the index is kept; the user's cache folder by default.
    :param progress: Called as ``progress(done, total, file)`` while indexing.
    :returns: ``{"retriever": FolderRetriever, "description": ..., "top_k": ...}``.
    :raises ConfigurationError: If the folder does not exist or holds no supported file.
    """
    cache = str(cache_dir) if cache_dir is not None else None
    retriever = FolderRetriever(folder=str(Path(folder).expanduser().resolve()), cache_dir=cache)
    retriever.warm_up(progress=progress)
    return {
        "retriever": retriever,
        "description": description or f"documents in {Path(folder).expanduser().resolve().name}",
        "top_k": top_k,
    }
