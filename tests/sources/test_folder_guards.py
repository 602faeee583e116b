"""index_folder reads only regular files inside the folder, walks any depth, and parses PDF and HTML in the bounded
parser processes: every file it leaves out is named in ``FolderIndex.warnings`` with the reason."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from haystack_deep_research.sources import index_folder
from haystack_deep_research.testing import make_pdf
from haystack_deep_research.testing.pdf import make_inflating_pdf

_DEPTH = 1_100


def _index(folder: Path, cache: Path) -> tuple[list[str], list[str], tuple[str, ...]]:
    retriever = index_folder(folder, cache_dir=cache)["retriever"]
    assert retriever.index is not None
    texts = [d.content or "" for d in retriever.index.store.filter_documents()]
    paths = [d.meta["file_path"] for d in retriever.index.store.filter_documents()]
    return texts, paths, retriever.index.warnings


def test_a_link_to_a_file_outside_the_folder_is_not_indexed(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text("Harbour tides stayed low.\n")
    secret = tmp_path / "credentials.txt"
    secret.write_text("aws_secret_access_key = hunter2\n")
    (folder / "keys.txt").symlink_to(secret)
    (folder / "again.txt").symlink_to(folder / "notes.txt")  # a link inside the folder is fine

    texts, paths, warnings = _index(folder, tmp_path / "cache")

    assert not any("hunter2" in text for text in texts)
    assert str(folder / "again.txt") in paths
    [line] = warnings
    assert line.startswith("keys.txt: it leads outside ")
    assert str(secret) in line


def test_a_fifo_is_skipped_without_blocking(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text("Harbour tides stayed low.\n")
    os.mkfifo(folder / "pipe.txt")
    (folder / "zero.txt").symlink_to("/dev/zero")  # outside the folder, and a device

    started = time.monotonic()
    texts, _paths, warnings = _index(folder, tmp_path / "cache")

    assert time.monotonic() - started < 30
    assert texts == ["Harbour tides stayed low.\n"]
    assert warnings[0] == "pipe.txt: it is not a regular file (a FIFO, a device, a socket or a folder)."
    assert warnings[1].startswith("zero.txt: it leads outside")


def test_a_link_to_a_device_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("Harbour tides stayed low.\n")
    (tmp_path / "zero.md").symlink_to("/dev/zero")

    _texts, _paths, warnings = _index(tmp_path, tmp_path / ".cache")
    assert warnings == (f"zero.md: it leads outside {tmp_path} (through a symbolic link) to /dev/zero.",)


@pytest.fixture
def deep_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder with a file at the top and one 1,100 folders down, made and removed without recursion."""
    root = tmp_path / "deep"
    root.mkdir()
    (root / "top.txt").write_text("The top file mentions estuaries.\n")
    handles = [os.open(root, os.O_RDONLY)]
    for _ in range(_DEPTH):
        os.mkdir("d", dir_fd=handles[-1])
        handles.append(os.open("d", os.O_RDONLY, dir_fd=handles[-1]))
    bottom = os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=handles[-1])
    os.write(bottom, b"The bottom file mentions lagoons.\n")
    os.close(bottom)
    yield root
    os.unlink("bottom.txt", dir_fd=handles[-1])
    for parent, child in zip(reversed(handles[:-1]), reversed(handles[1:]), strict=True):
        os.close(child)
        os.rmdir("d", dir_fd=parent)
    os.close(handles[0])


def test_a_very_deep_folder_is_cut_with_a_warning(deep_folder: Path, tmp_path: Path) -> None:
    texts, _paths, warnings = _index(deep_folder, tmp_path / "cache")

    assert texts == ["The top file mentions estuaries.\n"]
    [line] = warnings
    assert line == "/".join(["d"] * 65) + "/: deeper than the 64 folders indexed"


def test_a_pdf_bomb_is_parsed_in_a_bounded_process(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "bomb.pdf").write_bytes(make_inflating_pdf(200_000_000))
    (folder / "storage.pdf").write_bytes(make_pdf(["Grid battery storage doubled in 2025."]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    started = time.monotonic()
    texts, _paths, warnings = _index(folder, tmp_path / "cache")

    assert time.monotonic() - started < 30
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 100 * 1024  # KiB: never inflated here
    assert texts == ["Grid battery storage doubled in 2025."]
    [line] = warnings
    assert line == (
        f"bomb.pdf: The PDF at {(folder / 'bomb.pdf').as_uri()} was not read: its pages decompress to more than the "
        "67108864 bytes of content allowed (FetchLimits.max_pdf_decompressed_bytes) before any text is found."
    )


def test_the_reasons_survive_a_reused_index_and_a_hostile_cache_is_rebuilt(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text("Harbour tides stayed low.\n")
    (folder / "empty.md").write_text("   \n")
    cache = tmp_path / "cache"
    first = index_folder(folder, cache_dir=cache)["retriever"].index
    assert first is not None
    assert first.warnings == ("empty.md: no text to index",)

    again = index_folder(folder, cache_dir=cache)["retriever"].index
    assert again is not None
    assert again.reused
    assert again.warnings == first.warnings

    (first.path / "index.json").unlink()
    os.mkfifo(first.path / "index.json")  # a cache entry that would block a plain open
    rebuilt = index_folder(folder, cache_dir=cache)["retriever"].index
    assert rebuilt is not None
    assert not rebuilt.reused
    assert [d.content for d in rebuilt.store.filter_documents()] == ["Harbour tides stayed low.\n"]


def test_a_pathological_markdown_file_is_parsed_in_a_bounded_process(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "list.md").write_bytes(b"- a\n" * (2 * 1024 * 1024 // 4))  # 2 MB of list items: gigabytes of tokens
    (folder / "marées.md").write_text("# Marées\n\nLes marées de vives-eaux ont atteint 4,2 mètres.\n")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    retriever = index_folder(folder, cache_dir=tmp_path / "cache")["retriever"]

    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 100 * 1024  # KiB: never parsed here
    assert retriever.index is not None
    [document] = retriever.index.store.filter_documents()
    assert document.meta["title"] == "Marées"
    assert "4,2 mètres" in (document.content or "")
    # Stopped at its memory cap: by the allocator's MemoryError, or killed by the watchdog first on a busy machine.
    [warning] = retriever.index.warnings
    assert warning.startswith("list.md: ")
    assert (folder / "list.md").as_uri() in warning
    assert warning.endswith("; the document was not read.")
    assert "more memory than allowed" in warning or "The parser process stopped" in warning
