"""
The messages between the library and its parser processes: a JSON header and a raw payload, length-prefixed.

A frame is two big-endian 32-bit lengths (header, payload), the header as UTF-8 JSON, then the payload bytes. JSON
rather than pickle, so a parser process that a hostile document somehow took over cannot make the library run code
by answering.
"""

from __future__ import annotations

import json
import struct
from typing import IO, Any

__all__ = ["FrameError", "encode", "read"]

_PREFIX = struct.Struct(">II")
_MAX_HEADER = 1 << 20
_MAX_PAYLOAD = 1 << 30


class FrameError(Exception):
    """The stream ended inside a frame, or a frame is malformed."""


def encode(header: dict[str, Any], payload: bytes = b"") -> bytes:
    """One frame of a JSON-serialisable header and raw payload bytes."""
    data = json.dumps(header, ensure_ascii=False).encode("utf-8")
    return _PREFIX.pack(len(data), len(payload)) + data + payload


def read(stream: IO[bytes]) -> tuple[dict[str, Any], bytes] | None:
    """
    Read one frame from an unbuffered binary stream such as a pipe.

    :returns: The header and payload, or ``None`` when the stream ended before the frame began.
    :raises FrameError: The stream ended inside the frame, or the frame is malformed.
    """
    prefix = _read_exactly(stream, _PREFIX.size, at_start=True)
    if prefix is None:
        return None
    header_size, payload_size = _PREFIX.unpack(prefix)
    if header_size > _MAX_HEADER or payload_size > _MAX_PAYLOAD:
        raise FrameError(f"A frame announced {header_size} + {payload_size} bytes, more than allowed.")
    header_bytes = _read_exactly(stream, header_size) or b""
    payload = _read_exactly(stream, payload_size) or b""
    try:
        header = json.loads(header_bytes)
    except ValueError as exc:
        raise FrameError("A frame's header is not JSON.") from exc
    if not isinstance(header, dict):
        raise FrameError("A frame's header is not a JSON object.")
    return header, payload


def _read_exactly(stream: IO[bytes], size: int, *, at_start: bool = False) -> bytes | None:
    parts: list[bytes] = []
    missing = size
    while missing > 0:
        part = stream.read(missing)
        if not part:
            if at_start and missing == size:
                return None
            raise FrameError(f"The stream ended {missing} bytes before the end of a frame.")
        parts.append(part)
        missing -= len(part)
    return b"".join(parts)
