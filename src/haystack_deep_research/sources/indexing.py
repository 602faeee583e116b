"""
Indexing a folder of documents with Haystack's own parts, and keeping the index while the files are unchanged (see
docs/sources.md). :func:`folder_files` keeps only regular files inside the folder, as
:mod:`haystack_deep_research._untrusted.files` guards them; :func:`convert` parses every file in the web reader's
parser processes under :data:`DOCUMENT_LIMITS` (docs/safety.md); what was left out, and why, is in
:attr:`FolderIndex.warnings`.
"""

from __future__ import annotations

import hashlib
import importlib.util
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
from haystack_deep_research._untrusted.files import checked_stat, read_regular_file, write_file
from haystack_deep_research.errors import ConfigurationError, ExtractionError, LocalFileRefusedError, MissingExtraError
from haystack_deep_research.evidence.text import plain_title
from haystack_deep_research.web import FetchedDocument, FetchLimits, extract_text
from haystack_deep_research.web._text_files import TEXT_TYPES
from haystack_deep_research.web.extract import extract_text_file

logger = logging.getLogger(__name__)

__all__ = ["DOCUMENT_LIMITS", "FILE_TYPES", "FolderIndex", "IndexProgress", "build_index", "folder_files"]

IndexProgress = Callable[[int, int, str], Any]
"""``progress(done, total, file)``: called before each file is indexed and once more when all are done."""

# 2: files found and read under the guards of folder_files; PDF and HTML parsed in processes.
# 3: office files and CSV; text in any encoding; documents titled by their own title.
_FORMAT = 3
_INDEX_FILE = "index.json"
_MAX_INDEX_BYTES = 1024 * 1024 * 1024
_MANIFEST_FILE = "manifest.json"
_OFFICE = "application/vnd.openxmlformats-officedocument."
# Each office suffix: its content type, and the modules its Haystack converter imports (and the package of each).
_OFFICE_TYPES: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    ".docx": (f"{_OFFICE}wordprocessingml.document", (("docx", "python-docx"),)),
    ".pptx": (f"{_OFFICE}presentationml.presentation", (("pptx", "python-pptx"),)),
    ".xlsx": (f"{_OFFICE}spreadsheetml.sheet", (("openpyxl", "openpyxl"), ("pandas", "pandas"))),
}
OFFICE_EXTRA = "office"
"""The extra of haystack-deep-research that installs the packages Word, PowerPoint and Excel files are read with."""

FILE_TYPES = (".pdf", ".html", ".htm", *TEXT_TYPES, *_OFFICE_TYPES)
"""The file suffixes indexed (case-insensitive)."""

MAX_DEPTH = 64
"""The deepest folder indexed, counted from the folder given; deeper folders are skipped with a warning."""

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""The largest file indexed; a larger one is skipped with a warning."""

DOCUMENT_LIMITS = FetchLimits(
    max_bytes=MAX_DOCUMENT_BYTES,
    max_pdf_pages=2_000,
    max_pdf_decompressed_bytes=64 * 1024 * 1024,
    extraction_timeout=120.0,
    max_extraction_memory=512 * 1024 * 1024,
)
"""What parsing one file may cost (PDF, HTML, office, text, Markdown or CSV alike): a local document may be a whole
book, so more than a web page."""


@dataclass(frozen=True)
class FolderFile:
    """A file to index: its path under the folder (it may be a link to another file of the folder), size and mtime."""

    path: Path
    size: int
    mtime_ns: int


def _name(path: str | Path, root: Path) -> str:
    return Path(path).relative_to(root).as_posix()


def folder_files(root: Path) -> tuple[list[FolderFile], list[str]]:
    """
    The files to index, depth first in name order, hidden files and folders left out, and one line per file or
    folder skipped saying why.
    """
    files: list[FolderFile] = []
    skipped: list[str] = []
    stack: list[tuple[Path, int]] = [(root, 0)]  # no recursion: os.walk's ends a deep tree in a RecursionError
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            skipped.append(f"{_name(folder, root)}/: the folder could not be listed ({error.strerror or error})")
            continue
        subfolders: list[Path] = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth + 1 > MAX_DEPTH:
                    skipped.append(f"{_name(entry.path, root)}/: deeper than the {MAX_DEPTH} folders indexed")
                else:
                    subfolders.append(Path(entry.path))
                continue
            if entry.is_symlink() and entry.is_dir():
                skipped.append(f"{_name(entry.path, root)}/: a link to a folder (links to folders are not followed)")
                continue
            if Path(entry.name).suffix.lower() not in FILE_TYPES:
                continue
            try:
                status = checked_stat(entry.path, root=root, max_bytes=MAX_DOCUMENT_BYTES)
            except OSError as error:  # LocalFileRefusedError included: a link out, a FIFO, a device, too large
                skipped.append(f"{_name(entry.path, root)}: {_reason(error)}")
                continue
            files.append(FolderFile(path=Path(entry.path), size=status.st_size, mtime_ns=status.st_mtime_ns))
        stack.extend((folder, depth + 1) for folder in reversed(subfolders))
    return files, skipped


def _reason(error: OSError) -> str:
    if isinstance(error, LocalFileRefusedError):
        return str(error).partition(" was not read: ")[2] or str(error)
    return f"could not be read ({type(error).__name__}: {error.strerror or error})"


def read_documents(file: FolderFile, root: Path) -> tuple[list[Document], str]:
    """``(documents, "")``, or ``([], why)`` with one line saying why the file gave nothing to index."""
    try:
        documents = convert(file, root)
    except MissingExtraError as error:
        suffix = file.path.suffix.lower()
        reason = f"install haystack-deep-research[{error.extra}] to read {suffix} files ({error.module} is missing)"
        return [], f"{_name(file.path, root)}: {reason}"
    except (OSError, ExtractionError) as error:  # refused, unreadable, or not parsed within DOCUMENT_LIMITS
        reason = _reason(error) if isinstance(error, OSError) else str(error)
        return [], f"{_name(file.path, root)}: {reason}"
    return documents, "" if documents else f"{_name(file.path, root)}: no text to index"


def _missing_module(suffix: str) -> str | None:
    """The package an office suffix's converter needs that cannot be imported, or ``None``."""
    for module, package in _OFFICE_TYPES[suffix][1]:
        try:
            found = importlib.util.find_spec(module)  # looked up, not imported: the parser processes import it
        except (ImportError, ValueError):
            found = None
        if found is None:
            return package
    return None


def convert(file: FolderFile, root: Path) -> list[Document]:
    """
    Read one file (which must stay in ``root``) into documents with its full path as ``meta["file_path"]`` and its own
    title, if any, as ``meta["title"]``; none when it holds no text. Raises ``OSError`` (a refusal too),
    ``MissingExtraError`` (an office file without the extra) or ``ExtractionError`` (unparsable, or over the limits).
    """
    suffix = file.path.suffix.lower()
    missing = _missing_module(suffix) if suffix in _OFFICE_TYPES else None
    if missing is not None:
        raise MissingExtraError(f"{suffix} files", extra=OFFICE_EXTRA, module=missing)
    data = read_regular_file(file.path, root=root, max_bytes=MAX_DOCUMENT_BYTES)
    meta = {"file_path": str(file.path)}
    address = file.path.absolute().as_uri()
    if suffix in TEXT_TYPES:
        name = os.fsencode(file.path.name).decode("utf-8", "replace")  # a name that is not UTF-8 goes as text
        text, title, encoding = extract_text_file(data, name=name, url=address, limits=DOCUMENT_LIMITS)
        meta.update({"encoding": encoding, **({"title": title} if title else {})})
        documents = [Document(content=text, meta=meta)]
    else:
        content_type = _OFFICE_TYPES[suffix][0] if suffix in _OFFICE_TYPES else "text/html"
        content_type = "application/pdf" if suffix == ".pdf" else content_type
        fetched = FetchedDocument(
            url=address, final_url=address, status=200, content_type=content_type, charset=None, body=data
        )
        extracted = extract_text(fetched, limits=DOCUMENT_LIMITS)
        documents = [Document(content=extracted.text, meta={**meta, "title": extracted.title})]
    return [document for document in documents if (document.content or "").strip()]


@dataclass(frozen=True)
class FolderIndex:
    """
    The index of one folder.

    :param store: The document store holding the passages.
    :param files: The files indexed.
    :param skipped: Files (and folders) not indexed: ``len(warnings)``.
    :param reused: Whether the index was loaded from the cache instead of built.
    :param path: Where the index is kept.
    :param warnings: One line per file or folder not indexed, saying why (docs/sources.md lists the reasons).
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
    Index a folder (sub-folders included, hidden ones not), or load its index from ``cache_dir``
    (:func:`default_cache_dir`) when the files are unchanged: passages of ``split_length`` words (20 to 2,000)
    sharing ``split_overlap`` (up to half). A missing or empty folder or a setting out of range is a
    ``ConfigurationError``.
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
    office = [suffix for suffix in _OFFICE_TYPES if _missing_module(suffix) is None]  # the office files readable here
    settings = {"split_length": split_length, "split_overlap": split_overlap, "office": office}
    entries = [[file.path.relative_to(root).as_posix(), file.size, file.mtime_ns] for file in files]
    manifest = {"format": _FORMAT, "folder": str(root), "settings": settings, "files": entries}
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
