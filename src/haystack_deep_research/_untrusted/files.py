"""
Reading a local file that someone else may have put there: only a regular file, only inside its folder, only up to
a size cap.

Folder indexing, memory files, cache entries and folder indexes all read files the library did not write itself (or
that others could replace). :func:`read_regular_file` is the one way they do it:

* The path is resolved (symbolic links followed) and must stay under ``root``: a link to a credentials file
  elsewhere is refused, a link to another file of the same folder is not.
* The resolved file must be a regular file, checked with ``stat`` before it is opened: a FIFO (which would block
  ``open`` forever), a device such as ``/dev/zero`` (which never ends) or a socket is never opened.
* It is opened with ``O_NONBLOCK`` and ``O_NOFOLLOW``, and checked again on the open descriptor (the same file,
  still regular), so a file swapped for a FIFO or a link between the check and the open cannot block or escape.
* At most ``max_bytes`` are read; a larger file is refused, not cut.

Every refusal is a :class:`~haystack_deep_research.errors.LocalFileRefusedError` (an ``OSError``) whose ``reason``
says why; a missing file is the usual ``FileNotFoundError``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NoReturn

from haystack_deep_research.errors import LocalFileRefusedError

__all__ = ["checked_stat", "read_regular_file"]

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_CHUNK = 1 << 20


def _resolved(path: str | os.PathLike[str], root: str | os.PathLike[str] | None) -> Path:
    real = Path(os.path.realpath(os.path.expanduser(os.fspath(path))))
    if root is None:
        return real
    base = Path(os.path.realpath(os.path.expanduser(os.fspath(root))))
    if real != base and base not in real.parents:
        raise LocalFileRefusedError(
            f"{os.fspath(path)} was not read: it leads outside {base} (through a symbolic link) to {real}.",
            path=os.fspath(path),
            reason="outside_root",
        )
    return real


def _check(path: str | os.PathLike[str], status: os.stat_result, max_bytes: int) -> None:
    if not stat.S_ISREG(status.st_mode):
        raise LocalFileRefusedError(
            f"{os.fspath(path)} was not read: it is not a regular file (a FIFO, a device, a socket or a folder).",
            path=os.fspath(path),
            reason="not_regular",
        )
    if status.st_size > max_bytes:
        _too_large(path, max_bytes)


def _too_large(path: str | os.PathLike[str], max_bytes: int) -> NoReturn:
    raise LocalFileRefusedError(
        f"{os.fspath(path)} was not read: it is larger than the {max_bytes:,} bytes allowed.",
        path=os.fspath(path),
        reason="too_large",
    )


def checked_stat(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None, max_bytes: int
) -> os.stat_result:
    """
    Check, without opening it, that a file could be read by :func:`read_regular_file`.

    :param path: The file.
    :param root: The folder it must resolve under, or ``None`` for no such folder.
    :param max_bytes: The largest size accepted.
    :returns: The resolved file's status.
    :raises LocalFileRefusedError: It leads outside ``root``, is not a regular file, or is larger than ``max_bytes``.
    :raises OSError: It cannot be looked at (``FileNotFoundError`` when it does not exist).
    """
    status = os.stat(_resolved(path, root))
    _check(path, status, max_bytes)
    return status


def read_regular_file(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None, max_bytes: int) -> bytes:
    """
    Read a regular file that resolves under ``root``, at most ``max_bytes`` long (see the module docstring).

    :param path: The file.
    :param root: The folder it must resolve under, or ``None`` when any place will do (it must still be a regular
        file within the size cap).
    :param max_bytes: The largest size read; a larger file is refused.
    :returns: The file's bytes.
    :raises LocalFileRefusedError: It leads outside ``root``, is not a regular file, or is larger than ``max_bytes``.
    :raises OSError: It cannot be opened or read (``FileNotFoundError`` when it does not exist).
    """
    real = _resolved(path, root)
    before = os.stat(real)
    _check(path, before, max_bytes)
    try:
        handle = os.open(real, _OPEN_FLAGS)
    except OSError as error:
        if os.path.islink(real):  # swapped for a link after it was resolved (O_NOFOLLOW refused it)
            raise LocalFileRefusedError(
                f"{os.fspath(path)} was not read: it was replaced by a symbolic link while being opened.",
                path=os.fspath(path),
                reason="outside_root",
            ) from error
        raise
    with os.fdopen(handle, "rb", buffering=0) as file:
        now = os.fstat(file.fileno())
        _check(path, now, max_bytes)
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise LocalFileRefusedError(
                f"{os.fspath(path)} was not read: it was replaced by another file while being opened.",
                path=os.fspath(path),
                reason="not_regular",
            )
        chunks: list[bytes] = []
        size = 0
        while chunk := file.read(min(_CHUNK, max_bytes + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:  # it grew after it was checked
                _too_large(path, max_bytes)
    return b"".join(chunks)
