"""
Indexing a folder of documents with Haystack's own parts, and keeping the index while the files are unchanged.

:func:`build_index` walks a folder for PDF, HTML, Markdown, text, CSV, Word, PowerPoint and Excel files (regular
files inside the folder only, see :mod:`._folder_files`), turns each into text (PDF, HTML and office files in the web
reader's bounded parser processes, the office files with Haystack's ``DOCXToDocument``, ``PPTXToDocument`` and
``XLSXToDocument``; Markdown, text and CSV in any common encoding with Haystack's ``MarkdownToDocument``,
``TextFileToDocument`` and ``CSVToDocument``), keeping the full file path in ``meta["file_path"]`` and the document's
own title in ``meta["title"]`` (the file name when it has none), splits the text into passages of ``split_length``
words with Haystack's ``DocumentSplitter`` (by word: splitting by sentence needs an nltk download at run time), and
writes the passages into an ``InMemoryDocumentStore``, searched with BM25.

The index is saved in ``cache_dir`` (by default ``$XDG_CACHE_HOME/haystack-deep-research/indexes`` or
``~/.cache/...``, one sub-folder per indexed folder) with a manifest of every file's path, size and modification
time. The next call with the same folder and settings loads it instead of indexing again, as long as no file was
added, removed or changed and the same office formats can be read (installing the ``office`` extra re-indexes).
What was not indexed, and why, is in :attr:`FolderIndex.warnings` (and logged).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haystack import Document, logging
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.types import DuplicatePolicy

from haystack_deep_research import _checks
from haystack_deep_research._untrusted.files import read_regular_file, write_file
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence.text import plain_title
from haystack_deep_research.sources._folder_files import (
    FILE_TYPES,
    FolderFile,
    folder_files,
    office_readers,
    read_documents,
)

logger = logging.getLogger(__name__)

__all__ = ["FILE_TYPES", "FolderIndex", "IndexProgress", "build_index", "default_cache_dir"]

IndexProgress = Callable[[int, int, str], Any]
"""``progress(done, total, file)``: called before each file is indexed and once more when all are done."""

# 2: files found and read under the guards of _folder_files; PDF and HTML parsed in processes.
# 3: office files and CSV; text in any encoding; documents titled by their own title.
_FORMAT = 3
_INDEX_FILE = "index.json"
_MAX_INDEX_BYTES = 1024 * 1024 * 1024
_MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True)
class FolderIndex:
    """
    The index of one folder.

    :param store: The document store holding the passages.
    :param files: The files indexed.
    :param skipped: Files (and folders) not indexed: ``len(warnings)``.
    :param reused: Whether the index was loaded from the cache instead of built.
    :param path: Where the index is kept.
    :param warnings: One line per file or folder not indexed, saying why: a link leading out of the folder, a FIFO
        or device, a file over the size cap, a folder too deep, an office file whose extra is not installed (the line
        names it), a file that gave no text, is not text in any encoding, or could not be parsed within the limits.
    """

    store: InMemoryDocumentStore
    files: int
    skipped: int
    reused: bool
    path: Path
    warnings: tuple[str, ...] = ()


def default_cache_dir() -> Path:
    """:returns: ``$XDG_CACHE_HOME/haystack-deep-research/indexes``, or ``~/.cache/...`` without that variable."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "haystack-deep-research" / "indexes"


def _manifest(folder: Path, files: list[FolderFile], settings: dict[str, Any]) -> dict[str, Any]:
    entries = [[file.path.relative_to(folder).as_posix(), file.size, file.mtime_ns] for file in files]
    return {"format": _FORMAT, "folder": str(folder), "settings": settings, "files": entries}


def _read_json(path: Path, root: Path) -> Any:
    return json.loads(read_regular_file(path, root=root, max_bytes=_MAX_INDEX_BYTES).decode("utf-8"))


def _load(where: Path, manifest: dict[str, Any]) -> tuple[InMemoryDocumentStore, list[str]] | None:
    """The cached index and the lines of what it skipped, when it was made from these very files."""
    try:
        stored = _read_json(where / _MANIFEST_FILE, where)
        if not isinstance(stored, dict) or stored.get("manifest") != manifest:
            return None
        data = _read_json(where / _INDEX_FILE, where)
        documents = [Document.from_dict(document) for document in data.pop("documents")]
        store = InMemoryDocumentStore.from_dict(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # a refused or broken cache is rebuilt
        return None
    store.write_documents(documents, policy=DuplicatePolicy.OVERWRITE)
    return store, [str(line) for line in stored.get("skipped", [])]


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
        raise ConfigurationError(f"{folder} is not a folder; pass a folder of documents ({', '.join(FILE_TYPES)}).")
    _checks.int_in_range("split_length", split_length, 20, 2_000)
    _checks.int_in_range("split_overlap", split_overlap, 0, split_length // 2)
    files, refused = folder_files(root)
    if not files:
        found = f" ({len(refused)} skipped: {'; '.join(refused[:3])})" if refused else ""
        raise ConfigurationError(f"{folder} holds no file to index{found}; supported: {', '.join(FILE_TYPES)}.")
    settings = {"split_length": split_length, "split_overlap": split_overlap, "office": list(office_readers())}
    manifest = _manifest(root, files, settings)
    key = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:16]
    where = Path(cache_dir).expanduser().resolve() / key if cache_dir is not None else default_cache_dir() / key
    loaded = _load(where, manifest)
    if loaded is not None:
        store, unread = loaded
        return _index(store, files, refused + unread, reused=True, path=where)
    splitter = DocumentSplitter(split_by="word", split_length=split_length, split_overlap=split_overlap)
    store = InMemoryDocumentStore()
    unread = []
    for done, file in enumerate(files):
        if progress is not None:
            progress(done, len(files), file.path.relative_to(root).as_posix())
        documents, why = read_documents(file, root)
        if why:
            unread.append(why)
            continue
        for document in documents:
            # A document's own title is cleaned as the ledger cleans every title (no link, image or HTML), here
            # already, since the researchers see it in each search result.
            title = document.meta.get("title")
            title = plain_title(title) if isinstance(title, str) else ""
            # A name that is not UTF-8 (Python decodes its bytes to lone surrogates) becomes a title with U+FFFD.
            document.meta["title"] = title or os.fsencode(file.path.name).decode("utf-8", "replace")
        store.write_documents(splitter.run(documents=documents)["documents"], policy=DuplicatePolicy.OVERWRITE)
    if progress is not None:
        progress(len(files), len(files), "")
    _save(where, store, {"manifest": manifest, "skipped": unread})
    return _index(store, files, refused + unread, reused=False, path=where)


def _save(where: Path, store: InMemoryDocumentStore, manifest: dict[str, Any]) -> None:
    """Write the index, then its manifest, each atomically: whatever stood at their paths (a FIFO) is replaced."""
    data = store.to_dict()
    data["documents"] = [document.to_dict(flatten=False) for document in store.filter_documents()]
    where.mkdir(parents=True, exist_ok=True)
    write_file(where / _INDEX_FILE, json.dumps(data))
    write_file(where / _MANIFEST_FILE, json.dumps(manifest))


def _index(
    store: InMemoryDocumentStore, files: list[FolderFile], skipped: list[str], *, reused: bool, path: Path
) -> FolderIndex:
    for line in skipped:
        logger.warning("Not indexed: {line}", line=line)
    return FolderIndex(
        store=store, files=len(files), skipped=len(skipped), reused=reused, path=path, warnings=tuple(skipped)
    )
