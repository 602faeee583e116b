"""
Indexing a folder of documents with Haystack's own parts, and keeping the index while the files are unchanged.

:func:`build_index` walks a folder for PDF, HTML, Markdown and text files, converts each with Haystack's converter
for its type (``PyPDFToDocument``, ``HTMLToDocument``, ``MarkdownToDocument``, ``TextFileToDocument``, keeping the
full file path in ``meta["file_path"]``), splits the text into passages of ``split_length`` words with Haystack's
``DocumentSplitter`` (by word: splitting by sentence needs an nltk download at run time), and writes the passages
into an ``InMemoryDocumentStore``, searched with BM25.

The index is saved in ``cache_dir`` (by default ``$XDG_CACHE_HOME/haystack-deep-research/indexes`` or
``~/.cache/...``, one sub-folder per indexed folder) with a manifest of every file's path, size and modification
time. The next call with the same folder and settings loads it instead of indexing again, as long as no file was
added, removed or changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.types import DuplicatePolicy

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError

__all__ = ["FILE_TYPES", "FolderIndex", "IndexProgress", "build_index", "default_cache_dir"]

FILE_TYPES = (".pdf", ".html", ".htm", ".md", ".markdown", ".txt", ".text")
"""The file suffixes indexed (case-insensitive)."""

IndexProgress = Callable[[int, int, str], Any]
"""``progress(done, total, file)``: called before each file is indexed and once more when all are done."""

_FORMAT = 1
_INDEX_FILE = "index.json"
_MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True)
class FolderIndex:
    """
    The index of one folder.

    :param store: The document store holding the passages.
    :param files: The files indexed.
    :param skipped: Files that gave no text (empty, or unreadable by their converter).
    :param reused: Whether the index was loaded from the cache instead of built.
    :param path: Where the index is kept.
    """

    store: InMemoryDocumentStore
    files: int
    skipped: int
    reused: bool
    path: Path


def default_cache_dir() -> Path:
    """:returns: ``$XDG_CACHE_HOME/haystack-deep-research/indexes``, or ``~/.cache/...`` without that variable."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "haystack-deep-research" / "indexes"


def _files(folder: Path) -> list[Path]:
    found = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [
            Path(root) / n for n in sorted(names) if not n.startswith(".") and Path(n).suffix.lower() in FILE_TYPES
        ]
    return found


def _manifest(folder: Path, files: list[Path], settings: dict[str, Any]) -> dict[str, Any]:
    entries = []
    for path in files:
        stat = path.stat()
        entries.append([str(path.relative_to(folder)), stat.st_size, stat.st_mtime_ns])
    return {"format": _FORMAT, "folder": str(folder), "settings": settings, "files": entries}


def _converter(suffix: str) -> Any:
    from haystack.components.converters.html import HTMLToDocument
    from haystack.components.converters.markdown import MarkdownToDocument
    from haystack.components.converters.pypdf import PyPDFToDocument
    from haystack.components.converters.txt import TextFileToDocument

    if suffix == ".pdf":
        return PyPDFToDocument(store_full_path=True)
    if suffix in (".html", ".htm"):
        return HTMLToDocument(store_full_path=True)
    if suffix in (".md", ".markdown"):
        return MarkdownToDocument(store_full_path=True, progress_bar=False)
    return TextFileToDocument(store_full_path=True)


def _convert(path: Path) -> list[Document]:
    converted = _converter(path.suffix.lower()).run(sources=[path])["documents"]
    return [document for document in converted if (document.content or "").strip()]


def _load(where: Path, manifest: dict[str, Any]) -> InMemoryDocumentStore | None:
    try:
        stored = json.loads((where / _MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if stored.get("manifest") != manifest:
        return None
    try:
        return InMemoryDocumentStore.load_from_disk(str(where / _INDEX_FILE))
    except (OSError, ValueError, KeyError):
        return None


def build_index(
    folder: str | Path,
    *,
    cache_dir: str | Path | None = None,
    split_length: int = 200,
    split_overlap: int = 20,
    progress: IndexProgress | None = None,
) -> FolderIndex:
    """
    Index a folder, or load its index when the files are unchanged (see the module docstring).

    :param folder: The folder; its sub-folders are included, hidden files and folders are not.
    :param cache_dir: Where indexes are kept; :func:`default_cache_dir` by default.
    :param split_length: Words per passage, 20 to 2,000.
    :param split_overlap: Words shared by neighbouring passages, 0 to half of ``split_length``.
    :param progress: Called as ``progress(done, total, file)`` while building.
    :returns: The index.
    :raises ConfigurationError: If the folder does not exist, holds no file of a supported type, or a setting is out
        of range.
    """
    from haystack.components.preprocessors.document_splitter import DocumentSplitter

    root = Path(folder).expanduser().resolve()
    if not root.is_dir():
        raise ConfigurationError(f"{folder} is not a folder; pass a folder of PDF, HTML, Markdown or text files.")
    _checks.int_in_range("split_length", split_length, 20, 2_000)
    _checks.int_in_range("split_overlap", split_overlap, 0, split_length // 2)
    files = _files(root)
    if not files:
        raise ConfigurationError(f"{folder} holds no file to index; supported: {', '.join(FILE_TYPES)}.")
    settings = {"split_length": split_length, "split_overlap": split_overlap}
    manifest = _manifest(root, files, settings)
    key = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:16]
    where = Path(cache_dir).expanduser().resolve() / key if cache_dir is not None else default_cache_dir() / key
    loaded = _load(where, manifest)
    if loaded is not None:
        return FolderIndex(store=loaded, files=len(files), skipped=0, reused=True, path=where)
    splitter = DocumentSplitter(split_by="word", split_length=split_length, split_overlap=split_overlap)
    store = InMemoryDocumentStore()
    skipped = 0
    for done, path in enumerate(files):
        if progress is not None:
            progress(done, len(files), str(path.relative_to(root)))
        documents = _convert(path)
        if not documents:
            skipped += 1
            continue
        for document in documents:
            # A name that is not UTF-8 (Python decodes its bytes to lone surrogates) becomes a title with U+FFFD.
            document.meta.setdefault("title", os.fsencode(path.name).decode("utf-8", "replace"))
        store.write_documents(splitter.run(documents=documents)["documents"], policy=DuplicatePolicy.OVERWRITE)
    if progress is not None:
        progress(len(files), len(files), "")
    where.mkdir(parents=True, exist_ok=True)
    store.save_to_disk(str(where / _INDEX_FILE))
    (where / _MANIFEST_FILE).write_text(json.dumps({"manifest": manifest}), encoding="utf-8")
    return FolderIndex(store=store, files=len(files), skipped=skipped, reused=False, path=where)
