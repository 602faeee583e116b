"""
The files of a folder to index, found and read as guardedly as a web page.

:func:`folder_files` walks the folder without recursion (``os.walk`` recurses in Python 3.11, so a deep enough tree
ends in a ``RecursionError``) and keeps only regular files that resolve inside the folder (see
:mod:`haystack_deep_research._untrusted.files`): a symbolic link to a file elsewhere, a FIFO, a device, a file over
:data:`MAX_DOCUMENT_BYTES` or a folder deeper than :data:`MAX_DEPTH` is skipped, with one line saying why.
:func:`convert` reads one file the same way and turns it into text: PDF and HTML in the web reader's parser
processes, under :data:`DOCUMENT_LIMITS` of time, memory and decompressed size (a PDF bomb costs at most those,
never the indexing process's own memory); Word, PowerPoint and Excel files (ZIP archives that may unpack into much
more) in the same processes under the same limits, with Haystack's converters, when the ``office`` extra is
installed (without it such a file is skipped with a line naming the extra); text, Markdown and CSV files in any
common encoding with Haystack's converters (see :mod:`._text_files`), in the same processes under the same limits (a
Markdown file can cost Markdown parsing minutes and gigabytes). A file that exceeds them is skipped with a line
saying which limit it passed.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from haystack import Document

from haystack_deep_research._untrusted.files import checked_stat, read_regular_file
from haystack_deep_research.errors import ExtractionError, LocalFileRefusedError, MissingExtraError
from haystack_deep_research.web import FetchedDocument, FetchLimits, extract_text
from haystack_deep_research.web._text_files import TEXT_TYPES
from haystack_deep_research.web.extract import extract_text_file

__all__ = [
    "DOCUMENT_LIMITS",
    "FILE_TYPES",
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "OFFICE_EXTRA",
    "FolderFile",
    "convert",
    "folder_files",
    "office_readers",
    "read_documents",
]

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
    stack: list[tuple[Path, int]] = [(root, 0)]
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


def office_readers() -> tuple[str, ...]:
    """:returns: The office suffixes that can be read here: those whose converter's packages are installed."""
    return tuple(suffix for suffix in _OFFICE_TYPES if _missing_module(suffix) is None)


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
    Read one file (which must stay in ``root``) and turn it into documents with its text.

    :returns: Its documents (``meta["file_path"]`` is the full path, ``meta["title"]`` its own title when it has one:
        an HTML page's, a PDF's or an office file's, a Markdown file's first heading); none when it holds no text.
    :raises OSError: It cannot be read, or is refused (:class:`~haystack_deep_research.errors.LocalFileRefusedError`).
    :raises MissingExtraError: It is an office file and the packages of the ``office`` extra are not installed.
    :raises ExtractionError: A PDF, HTML or office file is malformed or holds no text, a text file is not text in
        any encoding recognised, or any file costs more than :data:`DOCUMENT_LIMITS` allow.
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
