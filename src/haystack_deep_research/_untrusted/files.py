"""
The one door for local files the library reads (:func:`read_regular_file`: a regular file under its root and size
cap, checked before and after a non-blocking, non-following open) and writes (:func:`write_file`, replaced atomically,
and :func:`open_appending`); docs/safety.md ("Local files", "Writing files") holds the rules in full.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import tempfile
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from haystack_deep_research.errors import LocalFileRefusedError
from haystack_deep_research.evidence.text import clean_text

Content = str | bytes | Callable[[Path], object]
"""What :func:`write_file` writes: text (cleaned to be encodable as UTF-8), bytes, or a function that writes the
content to the path it is given (an exporter that only writes to paths)."""

_NO_LINK = getattr(os, "O_NOFOLLOW", 0)
_NO_WAIT = getattr(os, "O_NONBLOCK", 0)
_PLAIN = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)  # never inherited; no newline translation
_OPEN_FLAGS = os.O_RDONLY | _NO_WAIT | _NO_LINK | _PLAIN
_APPEND_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NO_WAIT | _NO_LINK | _PLAIN
_CHUNK = 1 << 20


def _refused(path: str | os.PathLike[str], what: str, reason: str) -> LocalFileRefusedError:
    return LocalFileRefusedError(f"{os.fspath(path)} was not {what}", path=os.fspath(path), reason=reason)


def _resolved(path: str | os.PathLike[str], root: str | os.PathLike[str] | None) -> Path:
    real = Path(os.path.realpath(os.path.expanduser(os.fspath(path))))
    if root is None:
        return real
    base = Path(os.path.realpath(os.path.expanduser(os.fspath(root))))
    if real != base and base not in real.parents:
        raise _refused(path, f"read: it leads outside {base} (through a symbolic link) to {real}.", "outside_root")
    return real


def _check(path: str | os.PathLike[str], status: os.stat_result, max_bytes: int) -> None:
    if not stat.S_ISREG(status.st_mode):
        raise _refused(path, "read: it is not a regular file (a FIFO, a device, a socket or a folder).", "not_regular")
    if status.st_size > max_bytes:
        _too_large(path, max_bytes)


def _too_large(path: str | os.PathLike[str], max_bytes: int) -> NoReturn:
    raise _refused(path, f"read: it is larger than the {max_bytes:,} bytes allowed.", "too_large")


def checked_stat(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None, max_bytes: int
) -> os.stat_result:
    """The status of a file :func:`read_regular_file` would read, checked as it checks it, without opening it."""
    status = os.stat(_resolved(path, root))
    _check(path, status, max_bytes)
    return status


def _link_refused(path: str | os.PathLike[str], doing: str) -> LocalFileRefusedError:
    return _refused(
        path,
        f"{doing}: it is a symbolic link, and this file is never used through one; replace it with a regular file.",
        "symlink",
    )


def read_regular_file(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None, max_bytes: int, links: bool = True
) -> bytes:
    """
    The bytes of a regular file that resolves under ``root``, at most ``max_bytes`` long, not a link unless ``links``;
    else a ``LocalFileRefusedError`` whose ``reason`` says why (``OSError`` when it cannot be read).
    """
    if not links and stat.S_ISLNK(os.lstat(path).st_mode):
        raise _link_refused(path, "read")
    real = _resolved(path, root)
    before = os.stat(real)
    _check(path, before, max_bytes)
    try:
        handle = os.open(real, _OPEN_FLAGS)
    except OSError as error:
        if os.path.islink(real):  # swapped for a link after it was resolved (O_NOFOLLOW refused it)
            raise _refused(
                path, "read: it was replaced by a symbolic link while being opened.", "outside_root"
            ) from error
        raise
    with os.fdopen(handle, "rb", buffering=0) as file:
        now = os.fstat(file.fileno())
        _check(path, now, max_bytes)
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise _refused(path, "read: it was replaced by another file while being opened.", "not_regular")
        chunks: list[bytes] = []
        size = 0
        while chunk := file.read(min(_CHUNK, max_bytes + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:  # it grew after it was checked
                _too_large(path, max_bytes)
    return b"".join(chunks)


def write_file(path: str | os.PathLike[str], content: Content, *, named: bool = False, exclusive: bool = False) -> bool:
    """
    Write a whole file, replaced atomically; every file the library writes passes here or :func:`open_appending`.

    :param named: The user named this path (``-o``, an export): a link is followed, what :func:`written_through`
        names is written to as it stands, and the file gets the user's usual permissions (else its owner's only).
    :param exclusive: Write only when nothing stands at the path yet (a key made once, by the first of processes).
    :returns: Whether the file was written (``False`` only when ``exclusive`` and something stood there already).
    :raises LocalFileRefusedError: The path holds a folder, a socket, a block device, or (not ``named``) a character
        device; nothing was changed. An ``OSError`` leaves the earlier file as it was.
    """
    target = Path(os.fspath(path))
    try:
        status: os.stat_result | None = os.lstat(target)
    except FileNotFoundError:
        status = None
    if status is not None and named and stat.S_ISLNK(status.st_mode):
        try:
            status = os.stat(target)
        except FileNotFoundError:  # a link to a file yet to be made: it is made where the link leads
            status = None
        if status is None or stat.S_ISREG(status.st_mode):
            target = Path(os.path.realpath(target))
    if status is not None and not exclusive:
        kind = status.st_mode
        if named and written_through(path, status):
            _write_through(Path(os.fspath(path)), content, kind)  # opened as named: /dev/stdout's link leads on
            return True
        if not (stat.S_ISREG(kind) or (not named and (stat.S_ISLNK(kind) or stat.S_ISFIFO(kind)))):
            raise _refused(
                path,
                f"written: it is {_what(kind)}, which is never replaced by a file; name a regular file.",
                "not_regular",
            )
    mode = 0o666 if named else 0o600
    if status is not None and stat.S_ISREG(status.st_mode):  # a file replaced keeps its permissions
        mode = stat.S_IMODE(status.st_mode)
    return _replace(target, content, mode=mode, exclusive=exclusive)


_STREAM_PATH = re.compile(r"/dev/(?:stdout|stderr|fd/\d+)|/proc/self/fd/\d+")


def written_through(path: str | os.PathLike[str], status: os.stat_result | None = None) -> bool:
    """
    Whether :func:`write_file` appends to it as it stands: a FIFO, a character device, or a file named by one of the
    process's own streams (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``...), as the shell's ``>`` left it.
    """
    try:
        kind = (status or os.stat(path)).st_mode
    except OSError:
        return False
    if stat.S_ISFIFO(kind) or stat.S_ISCHR(kind):
        return True
    return stat.S_ISREG(kind) and _STREAM_PATH.fullmatch(os.path.abspath(path)) is not None


def _what(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _data(content: str | bytes) -> bytes:
    # Cleaned first: a lone surrogate (a file name that is not UTF-8, a page's odd text) never aborts the write.
    return clean_text(content).encode("utf-8") if isinstance(content, str) else content


def _write_through(target: Path, content: Content, kind: int) -> None:
    """Append to a FIFO (it waits for a reader, as a shell's ``>`` does), a device or a stream's file as it stands."""
    if callable(content):
        with tempfile.TemporaryDirectory(prefix="deep-research-") as folder:
            made = Path(folder) / target.name
            content(made)
            data = made.read_bytes()
    else:
        data = _data(content)
    handle = os.open(target, os.O_WRONLY | os.O_APPEND | _PLAIN)
    try:
        if stat.S_IFMT(os.fstat(handle).st_mode) != stat.S_IFMT(kind):
            # swapped for another kind of file between the look and the open
            raise _refused(target, "written: it changed while being opened; write again.", "not_regular")
        write_all(handle, data)
    finally:
        os.close(handle)


def write_all(handle: int, data: bytes) -> None:
    """Write every byte of ``data`` to an open file descriptor (``os.write`` may write only part)."""
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view) :]


def _replace(target: Path, content: Content, *, mode: int, exclusive: bool) -> bool:
    """Write a temporary file beside ``target``, flushed, then rename (or, ``exclusive``, link) it there."""
    temporary = target.with_name(f".{target.name[:180]}.{secrets.token_hex(4)}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_LINK | _PLAIN, mode)
    try:
        if callable(content):
            os.close(handle)
            handle = -1
            content(temporary)
            handle = os.open(temporary, os.O_RDONLY | _NO_LINK | _PLAIN)
        else:
            write_all(handle, _data(content))
        os.fsync(handle)
        os.close(handle)
        handle = -1
        if exclusive:
            try:
                os.link(temporary, target)
            except FileExistsError:
                return False
        else:
            os.replace(temporary, target)
    finally:
        if handle != -1:
            os.close(handle)
        with contextlib.suppress(FileNotFoundError):  # gone once renamed
            os.unlink(temporary)
    sync_directory(target.parent)
    return True


def sync_directory(directory: Path) -> None:
    """Make a file's creation or renaming in ``directory`` durable (POSIX; a no-op elsewhere)."""
    if os.name != "posix":
        return
    handle = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def open_appending(path: str | os.PathLike[str]) -> int:
    """
    The descriptor (``O_APPEND``; the caller closes it) of a regular file, made when missing; a
    ``LocalFileRefusedError`` when a link, a FIFO, a device, a socket or a folder stands at the path.
    """
    try:
        handle = os.open(path, _APPEND_FLAGS, 0o644)
    except OSError as error:
        if os.path.islink(path):
            raise _link_refused(path, "written") from error
        if error.errno in (errno.ENXIO, errno.EISDIR, errno.ENODEV, errno.EOPNOTSUPP):  # a FIFO, a folder, a socket
            raise _not_appendable(path) from error
        raise
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise _not_appendable(path)
    return handle


def _not_appendable(path: str | os.PathLike[str]) -> LocalFileRefusedError:
    return _refused(
        path, "written: it is not a regular file (a FIFO, a device, a socket or a folder); remove it.", "not_regular"
    )


def cut_torn_line(path: str | os.PathLike[str], *, max_bytes: int) -> bytes:
    """
    The complete lines of an append-only file the library wrote, a last line a crash left unterminated cut off so the
    next one appended is not glued onto it; a ``LocalFileRefusedError``, nothing cut, for a link, a file that is not
    regular or one over ``max_bytes``.
    """
    data = read_regular_file(path, root=None, max_bytes=max_bytes, links=False)
    end = data.rfind(b"\n") + 1
    if end < len(data):
        handle = open_appending(path)
        try:
            os.ftruncate(handle, end)
        finally:
            os.close(handle)
    return data[:end]


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: Any) -> Any:
    """
    A cell for a CSV or XLSX file: text a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return first, after any spaces, in any width) gets a leading ``'``, so it is shown as text.
    """
    if not isinstance(value, str):
        return value
    # A spreadsheet reads past leading spaces, and a full-width equals sign as one.
    seen = unicodedata.normalize("NFKC", value).lstrip(" \u00a0")
    return f"'{value}" if value.startswith(_FORMULA_STARTS) or seen.startswith(_FORMULA_STARTS) else value
