"""
Datastores: your own documents behind any Haystack retriever (or component with a ``query`` input returning
``documents``), each a :class:`Datastore` searched by its ``search_<name>`` tool (:class:`DatastoreSearchTool`, built
by :func:`datastore_tools`) and named in the researchers' routing block (:func:`routing_prompt`). Each document
retrieved is recorded as read under a stable :func:`citation_target` and reaches the model fenced. A folder becomes a
store with :func:`index_folder` (:class:`FolderRetriever`, BM25 over its cached index, see :mod:`.indexing`), whose
files not indexed go into the run's ``warnings`` the first time the run searches it. See docs/sources.md.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from haystack import Document, component
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    DATASTORE_ROUTING,
    DATASTORE_SEARCH_DESCRIPTION,
    DATASTORE_TOOL_PREFIX,
    DOCUMENT_RESULTS,
    QUERY_PARAMETER,
    STORE_QUERY_MISSING,
    TOP_K_INVALID,
    TOP_K_PARAMETER,
    fence,
    render_text,
)
from haystack_deep_research._serialization import InitSerialized, init_parameters, restore_parameters
from haystack_deep_research._tooling.base import ResearchTool
from haystack_deep_research.errors import ConfigurationError, SearchError, ToolArgumentsError, URLRefusedError
from haystack_deep_research.events import SearchDone
from haystack_deep_research.evidence.searches import SearchOutcome
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Call, Phase, blocking
from haystack_deep_research.sources.indexing import FolderIndex, IndexProgress, build_index
from haystack_deep_research.sources.selection import accepts_input, is_component
from haystack_deep_research.state import PHASE_RESEARCH

__all__ = [
    "DEFAULT_TOP_K",
    "MAX_DOCUMENT_CHARS",
    "MAX_TOP_K",
    "Datastore",
    "DatastoreSearchTool",
    "FolderRetriever",
    "citation_target",
    "datastore_tools",
    "datastores_from",
    "folder_store_name",
    "index_folder",
    "routing_prompt",
    "title_of",
]

DEFAULT_TOP_K = 6
MAX_TOP_K = 50
MAX_DOCUMENT_CHARS = 8_000
"""Characters of one retrieved document shown to the model (and recorded as read)."""
_NAME = re.compile(r"^[a-z0-9][a-z0-9_]{0,40}$")
_SPEC_KEYS = frozenset({"retriever", "description", "top_k", "min_score"})
_URL_KEYS = ("url", "source_url", "link")


@dataclass(frozen=True)
class Datastore:
    """
    One named document store the researchers can search.

    :param name: Lower-case letters, digits and underscores (the tool is ``search_<name>``), at most 41 characters.
    :param retriever: A Haystack component with a ``query`` input returning ``documents``.
    :param description: What the store holds; the researchers route their queries by it.
    :param top_k: Passages per search, 1 to 50 (the model may ask for fewer or more, up to 50).
    :param min_score: Drop documents scored below this (documents without a score are kept); ``None`` keeps all.
    :raises ConfigurationError: If a field is invalid.
    """

    name: str
    retriever: Any
    description: str = ""
    top_k: int = DEFAULT_TOP_K
    min_score: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigurationError(
                "a datastore name must be lower-case letters, digits and underscores, starting with a letter or "
                f"digit, at most 41 characters (it becomes the tool name search_<name>); got {self.name!r}."
            )
        if not is_component(self.retriever):
            raise ConfigurationError(
                f"datastores[{self.name!r}]['retriever'] must be a Haystack retriever or component with a 'query' "
                f"input; got {type(self.retriever).__name__}."
            )
        if not accepts_input(self.retriever, "query"):
            raise ConfigurationError(
                f"datastores[{self.name!r}]['retriever'] ({type(self.retriever).__name__}) has no 'query' input; "
                "wrap it in a SuperComponent with input_mapping={'query': [...]} (for example an embedder's 'text')."
            )
        if not isinstance(self.description, str):
            raise ConfigurationError(f"datastores[{self.name!r}]['description'] must be a string.")
        _checks.int_in_range(f"datastores[{self.name!r}]['top_k']", self.top_k, 1, MAX_TOP_K)
        if self.min_score is not None:
            _checks.number_in_range(
                f"datastores[{self.name!r}]['min_score']", self.min_score, -1e9, 1e9, include_low=True
            )

    @property
    def tool_name(self) -> str:
        """The name of the store's search tool: ``search_<name>``."""
        return f"{DATASTORE_TOOL_PREFIX}{self.name}"


def datastores_from(datastores: Any) -> list[Datastore]:
    """``Sources.datastores`` (``None``, or name to a spec or a :class:`Datastore`) checked, in the mapping's order;
    a ``ConfigurationError`` names the store and the key that is wrong."""
    if datastores is None:
        return []
    if not isinstance(datastores, Mapping):
        raise ConfigurationError(
            "datastores must be a mapping of name to {'retriever': ..., 'description': ..., 'top_k': ...}; "
            f"got {type(datastores).__name__}."
        )
    stores = []
    for name, spec in datastores.items():
        if isinstance(spec, Datastore):
            if spec.name != name:
                raise ConfigurationError(f"datastores[{name!r}] holds a Datastore named {spec.name!r}.")
            stores.append(spec)
            continue
        if not isinstance(spec, Mapping) or "retriever" not in spec:
            raise ConfigurationError(
                f"datastores[{name!r}] must be a mapping with a 'retriever' (and optionally 'description', 'top_k', "
                f"'min_score'); got {type(spec).__name__}."
            )
        unknown = sorted(set(spec) - _SPEC_KEYS)
        if unknown:
            raise ConfigurationError(f"datastores[{name!r}] has unknown keys {unknown}; allowed: {sorted(_SPEC_KEYS)}.")
        stores.append(Datastore(name=name, **dict(spec)))
    return stores


def citation_target(store: str, document: Document, *, by_url: bool = True) -> str:
    """
    The stable address a document is cited by (see the module docstring): an ``http(s)`` URL (unless ``by_url`` is
    ``False``: the URL policy refused it), a ``file://`` URI or a ``doc://<store>/...`` URI.
    """
    meta = document.meta or {}
    for key in _URL_KEYS if by_url else ():
        value = meta.get(key)
        if isinstance(value, str) and value.strip().lower().startswith(("http://", "https://", "file://")):
            return value.strip()
    path = meta.get("file_path")
    if isinstance(path, str | PurePath) and str(path).strip():
        if Path(path).is_absolute():
            return Path(path).as_uri()
        return f"doc://{store}/{quote(os.fsencode(PurePath(path).as_posix()))}"  # undecodable bytes as %XX
    return f"doc://{store}/{quote(str(document.id), safe='')}"


def title_of(document: Document) -> str:
    """
    A document's ``meta["title"]``, else the name of its file, else its id; always encodable as UTF-8 (a file name
    that is not UTF-8 gets U+FFFD for its undecodable bytes).
    """
    meta = document.meta or {}
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return clean_text(" ".join(title.split()))
    path = meta.get("file_path")
    if isinstance(path, str | PurePath) and str(path).strip():
        return os.fsencode(PurePath(path).name).decode("utf-8", "replace")
    return clean_text(str(document.id))


def routing_prompt(datastores: Any, *, web: bool = True) -> str:
    """
    The routing block of a researcher's system prompt: one line per store, its tool and its description.

    :param datastores: The ``datastores`` mapping, or a list of :class:`Datastore`.
    :param web: Whether the researcher also searches the web.
    :returns: The block; ``""`` without datastores.
    """
    stores = datastores if isinstance(datastores, list) else datastores_from(datastores)
    if not stores:
        return ""
    lines = [{"tool": store.tool_name, "description": store.description or store.name} for store in stores]
    return render_text(DATASTORE_ROUTING, web=web, stores=lines)


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
        """Index the folder, or load its cached index, calling ``progress(done, total, file)`` while indexing."""
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
        """:returns: ``{"documents": [...]}``: the ``top_k`` best passages sharing at least one word with the query."""
        index = self.warm_up()
        found = InMemoryBM25Retriever(document_store=index.store).run(query=query, top_k=top_k)["documents"]
        return {"documents": [document for document in found if (document.score or 0) > 0]}


def folder_store_name(folder: str | Path) -> str:
    """A datastore name from a folder's name (lower-case letters, digits and underscores), "docs" if none is left."""
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
    """Search one :class:`Datastore`: the tool ``search_<name>``, taking ``query`` and an optional ``top_k``."""

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
        """Retrieve ``top_k`` passages (the store's by default), record each as read, and render them fenced."""
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
        """:returns: The serialized tool: its store's fields, the retriever serialized by Haystack."""
        return self._serialized(init_parameters(self.datastore))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DatastoreSearchTool:
        """Rebuild the tool from what ``to_dict`` returned."""
        return cls(datastore=Datastore(**restore_parameters(Datastore, data["data"])))


def datastore_tools(datastores: Any) -> list[DatastoreSearchTool]:
    """
    One ``search_<name>`` tool per datastore, for any agent shape (put them in a
    :class:`~haystack_deep_research.tools.RunToolset` so they record into each run).

    :param datastores: The ``datastores`` mapping (name to ``{"retriever", "description", "top_k", "min_score"}``)
        or a list of :class:`Datastore`.
    :returns: The tools, in the stores' order.
    :raises ConfigurationError: If a store is invalid.
    """
    stores = datastores if isinstance(datastores, list) else datastores_from(datastores)
    return [DatastoreSearchTool(datastore=store) for store in stores]
