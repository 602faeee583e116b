"""The one reader of local files others may have placed: regular files only, inside their root, within a size cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from haystack_deep_research._local_files import read_regular_file
from haystack_deep_research.errors import LocalFileRefusedError


def test_a_regular_file_inside_its_root_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"0123456789")
    (tmp_path / "link.txt").symlink_to(tmp_path / "a.txt")

    assert read_regular_file(tmp_path / "a.txt", root=tmp_path, max_bytes=10) == b"0123456789"
    assert read_regular_file(tmp_path / "link.txt", root=tmp_path, max_bytes=10) == b"0123456789"


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (os.mkfifo, "not_regular"),
        (lambda path: path.symlink_to("/dev/zero"), "outside_root"),
        (lambda path: path.mkdir(), "not_regular"),
        (lambda path: path.write_bytes(b"x" * 11), "too_large"),
        (lambda path: path.symlink_to(path.parent.parent / "elsewhere.txt"), "outside_root"),
    ],
)
def test_anything_else_is_refused_with_its_reason(make: object, reason: str, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.txt").write_text("secret")
    root = tmp_path / "root"
    root.mkdir()
    make(root / "file")  # type: ignore[operator]

    with pytest.raises(LocalFileRefusedError) as caught:
        read_regular_file(root / "file", root=root, max_bytes=10)
    assert caught.value.reason == reason
    assert isinstance(caught.value, OSError)


def test_without_a_root_a_device_is_still_refused(tmp_path: Path) -> None:
    with pytest.raises(LocalFileRefusedError, match="is not a regular file"):
        read_regular_file("/dev/zero", root=None, max_bytes=10)
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "missing", root=None, max_bytes=10)
