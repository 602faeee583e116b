"""
What a run directory's journal says was read is trusted only when this library wrote it.

A resumed run restores the journal's sources as read, so whoever can edit ``journal.jsonl`` could add a page the run
never read and have it cited as verified. Each source that counts as read (a page or a document) is therefore sealed
when journaled: an HMAC-SHA256 of the entry under a key kept outside the run directory (``journal.key`` in the
user's cache directory, ``$XDG_CACHE_HOME/haystack-deep-research``, created readable by its owner only, and read
only when it is a regular file of at most 4 KiB: a FIFO or a link to a device there is refused, never opened). When the
journal is read again, an entry whose seal does not verify (forged, edited, or sealed on another machine) is restored
as a search result only: its URL is known, nothing counts as read, so nothing cites it as verified; the note that
cited it is researched again only if it has no other verified source.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from haystack_deep_research._untrusted.files import read_regular_file, write_file
from haystack_deep_research.errors import RunDirError

__all__ = ["KEY_ENV", "seal", "unseal"]

KEY_ENV = "DEEP_RESEARCH_JOURNAL_KEY_FILE"
"""An environment variable naming another file for the key (tests, or a key shared by the machines of one team)."""

_SEALED_KINDS = ("page", "document")
_MAX_KEY_BYTES = 4096
_SEAL = "seal"


def _key_file() -> Path:
    given = os.environ.get(KEY_ENV)
    if given:
        return Path(given)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "haystack-deep-research" / "journal.key"


def _key() -> bytes:
    path = _key_file()
    try:
        with contextlib.suppress(FileNotFoundError):
            return _read_key(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, secrets.token_bytes(32), exclusive=True)  # made once: a second process reads the first's
        return _read_key(path)
    except OSError as error:  # LocalFileRefusedError included: a FIFO, a device, a file far larger than a key
        raise RunDirError(
            f"the key that seals journaled sources cannot be kept at {path} ({error}); set {KEY_ENV} to a file in a "
            "writable folder."
        ) from error


def _read_key(path: Path) -> bytes:
    """The key, read as a regular file of at most :data:`_MAX_KEY_BYTES` (a link is followed to what it leads to)."""
    key = read_regular_file(path, root=None, max_bytes=_MAX_KEY_BYTES)
    if len(key) < 32:
        raise RunDirError(
            f"the journal key {path} is damaged (shorter than 32 bytes); delete it (sources journaled under it "
            f"are then read again) or set {KEY_ENV} to another file."
        )
    return key


def _mac(entry: dict[str, Any]) -> str:
    body = json.dumps({k: v for k, v in entry.items() if k != _SEAL}, sort_keys=True, ensure_ascii=False)
    return hmac.new(_key(), body.encode("utf-8", "replace"), hashlib.sha256).hexdigest()


def seal(entry: dict[str, Any]) -> dict[str, Any]:
    """
    :param entry: A ledger entry as journaled.
    :returns: The entry, with its seal when it counts as read.
    """
    return {**entry, _SEAL: _mac(entry)} if entry.get("kind") in _SEALED_KINDS else dict(entry)


def unseal(entry: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """
    :param entry: A ledger entry as read back from the journal.
    :returns: The entry without its seal, and whether it was trusted as it was (``False``: a page or document whose
        seal does not verify, restored as a bare search result).
    """
    given = entry.get(_SEAL)
    plain = {k: v for k, v in entry.items() if k != _SEAL}
    if plain.get("kind") not in _SEALED_KINDS:
        return plain, True
    if isinstance(given, str) and hmac.compare_digest(given, _mac(plain)):
        return plain, True
    return {**plain, "kind": "search_result", "text": "", "content_hash": "", "summary": ""}, False
