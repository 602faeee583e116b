"""
``search_<name>``: a researcher's search of one datastore (:func:`datastore_tools` builds one per store). Each
document retrieved is recorded as read under its citation target and reaches the model fenced; a folder's store puts
the files it did not index into the run's ``warnings`` the first time the run searches it.
"""

from __future__ import annotations

from typing import Any

from haystack import Document
from haystack.core.serialization import component_to_dict
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research._prompts import (
    DATASTORE_SEARCH_DESCRIPTION,
    DOCUMENT_RESULTS,
    QUERY_PARAMETER,
    STORE_QUERY_MISSING,
    TOP_K_INVALID,
    TOP_K_PARAMETER,
    fence,
    render_text,
)
from haystack_deep_research._tooling.base import ResearchTool
from haystack_deep_research.errors import ConfigurationError, SearchError, ToolArgumentsError, URLRefusedError
from haystack_deep_research.events import SearchDone
from haystack_deep_research.evidence.searches import SearchOutcome
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Call, Phase, blocking
from haystack_deep_research.sources.datastore import MAX_TOP_K, Datastore, citation_target, datastores_from, title_of
from haystack_deep_research.sources.folder import FolderRetriever
from haystack_deep_research.sources.plugins import accepts_input
from haystack_deep_research.state import PHASE_RESEARCH

__all__ = ["MAX_DOCUMENT_CHARS", "DatastoreSearchTool", "datastore_tools"]

MAX_DOCUMENT_CHARS = 8_000
"""Characters of one retrieved document shown to the model (and recorded as read)."""


def _top_k(tool: str, value: Any, default: int) -> int:
    if value is None or value == "":
        return default
    number = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if isinstance(number, float) and number.is_integer():
        number = int(number)
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= MAX_TOP_K:
        raise ToolArgumentsError(render_text(TOP_K_INVALID, tool=tool, limit=MAX_TOP_K, got=repr(value)))
    return number


class DatastoreSearchTool(ResearchTool):
    """
    Search one datastore: the tool ``search_<name>``, taking ``query`` and an optional ``top_k``.

    :param datastore: The store.
    :raises ConfigurationError: If ``datastore`` is not a :class:`~.datastore.Datastore`.
    """

    def __init__(self, *, datastore: Datastore) -> None:
        if not isinstance(datastore, Datastore):
            raise ConfigurationError(f"datastore must be a Datastore; got {type(datastore).__name__}.")
        self.datastore = datastore
        super().__init__(
            name=datastore.tool_name,
            description=render_text(
                DATASTORE_SEARCH_DESCRIPTION,
                name=datastore.name,
                description=datastore.description,
                top_k=datastore.top_k,
            ),
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": QUERY_PARAMETER},
                    "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "description": TOP_K_PARAMETER},
                },
                "required": ["query"],
            },
        )

    def _used_models(self) -> list[Any]:
        return [self.datastore.retriever]

    def _call(self, query: str, top_k: int) -> Call:
        retriever = self.datastore.retriever
        inputs: dict[str, Any] = {"query": query}
        if accepts_input(retriever, "top_k"):
            inputs["top_k"] = top_k
        if callable(getattr(retriever, "run_async", None)):
            return Call(lambda: retriever.run(**inputs), lambda: retriever.run_async(**inputs))
        return blocking(retriever.run, **inputs)

    def _documents(self, output: Any, top_k: int) -> list[Document]:
        found = output.get("documents") if isinstance(output, dict) else None
        if not isinstance(found, list):
            raise SearchError(f"the retriever of {self.datastore.name!r} answered without a 'documents' list.")
        minimum = self.datastore.min_score
        kept = [
            document
            for document in found
            if isinstance(document, Document)
            and (document.content or "").strip()
            and (minimum is None or document.score is None or document.score >= minimum)
        ]
        return kept[:top_k]

    def phase(self, view: RunView | None, query: Any = None, top_k: Any = None, **_: Any) -> Phase[str]:
        """
        Retrieve, record each document as read, and render the documents fenced.

        :param view: The researcher's view of the run, or ``None``.
        :param query: The model's query.
        :param top_k: How many passages the model wants (a number or a numeric string); the store's ``top_k`` by
            default.
        :returns: The phase; it returns the rendered documents.
        :raises ToolArgumentsError: (from the phase) If the arguments are missing or malformed.
        """
        if not isinstance(query, str) or not query.strip():
            raise ToolArgumentsError(render_text(STORE_QUERY_MISSING, tool=self.name, got=repr(query)))
        text = query.strip()
        limit = _top_k(self.name, top_k, self.datastore.top_k)
        [retrieved] = yield [self._call(text, limit)]
        if view is not None and isinstance(self.datastore.retriever, FolderRetriever):
            for line in self.datastore.retriever.warnings:  # once per run, whichever researcher searches first
                view.warn(PHASE_RESEARCH, f"{self.datastore.name}: not indexed: {line}", once=True)
        if retrieved.error is not None:
            if view is not None:
                error = f"{type(retrieved.error).__name__}: {retrieved.error}"
                view.searches.record(SearchOutcome(tool=self.name, query=text, error=error))
            raise retrieved.error
        shown = []
        for document in self._documents(retrieved.value, limit):
            url = citation_target(self.datastore.name, document)
            title = title_of(document)
            content = clean_text((document.content or "").strip()[:MAX_DOCUMENT_CHARS])
            if view is not None:
                url = self._record(view, document, url, title, content)
            shown.append({"title": fence(title), "url": url, "text": fence(content)})
        if view is not None:
            view.searches.record(SearchOutcome(tool=self.name, query=text, results=len(shown)))
            view.emit(SearchDone(phase=PHASE_RESEARCH, query=f"{self.datastore.name}: {text}", results=len(shown)))
        return render_text(DOCUMENT_RESULTS, store=self.datastore.name, query=fence(text), documents=shown)

    def _record(self, view: RunView, document: Document, url: str, title: str, content: str) -> str:
        """Record a document as read; one whose URL the URL policy refuses is cited by its store address instead."""
        store = self.datastore.name
        try:
            view.ledger.record_document(url=url, title=title, text=content, store=store)
        except URLRefusedError as refused:
            view.warn(PHASE_RESEARCH, f"{self.name}: a document's URL was refused, cited by its store: {refused}")
            url = citation_target(store, document, by_url=False)
            view.ledger.record_document(url=url, title=title, text=content, store=store)
        return url

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized tool, the retriever serialized by Haystack.
        """
        store = self.datastore
        return self._serialized(
            {
                "name": store.name,
                "retriever": component_to_dict(obj=store.retriever, name="retriever"),
                "description": store.description,
                "top_k": store.top_k,
                "min_score": store.min_score,
            }
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DatastoreSearchTool:
        """Rebuild the tool from what ``to_dict`` returned."""
        params = dict(data["data"])
        deserialize_component_inplace(params, key="retriever")
        return cls(datastore=Datastore(**params))


def datastore_tools(datastores: Any) -> list[DatastoreSearchTool]:
    """
    One ``search_<name>`` tool per datastore, for any agent shape (put them in a
    :class:`~haystack_deep_research.tools.RunToolset` so they record into each run).

    :param datastores: The ``datastores`` mapping (name to ``{"retriever", "description", "top_k", "min_score"}``)
        or a list of :class:`~.datastore.Datastore`.
    :returns: The tools, in the stores' order.
    :raises ConfigurationError: If a store is invalid.
    """
    stores = datastores if isinstance(datastores, list) else datastores_from(datastores)
    return [DatastoreSearchTool(datastore=store) for store in stores]
