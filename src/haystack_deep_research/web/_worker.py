"""
The parser process (docs/safety.md, "Extraction ends on time and within its memory"): it reads documents from stdin
and writes their text to stdout, one frame each (two big-endian 32-bit lengths, a UTF-8 JSON header, the payload),
capping its data segment before each document. It is started without the package's ``__init__`` (which imports
Haystack); Haystack's converters are imported on the first office or text file, outside that file's memory cap.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import struct
import sys
import warnings
from typing import IO, Any

from haystack_deep_research.errors import ExtractionError

try:
    import resource
except ImportError:  # not on Windows
    resource = None  # type: ignore[assignment]

#: The exit status of a process that quit after waiting :data:`_IDLE_SECONDS` for work.
IDLE_EXIT = 3
_IDLE_SECONDS = 300.0
_PREFIX = struct.Struct(">II")
_MAX_HEADER = 1 << 20
_MAX_PAYLOAD = 1 << 30


def main() -> None:
    """Serve documents until stdin closes, the process idles too long, or a document exhausts its memory."""
    logging.disable(logging.CRITICAL)  # the parsers log every oddity of a page; nobody reads this process's logs
    # It sends nothing anywhere: Haystack's telemetry is only sent from pipeline runs, but say so to its converters.
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    warnings.simplefilter("ignore")
    from haystack_deep_research.web._parsers import html_text, office_text, pdf_text
    from haystack_deep_research.web._text_files import text_file

    requests = os.fdopen(0, "rb", buffering=0)
    answers = os.fdopen(os.dup(1), "wb", buffering=0)
    with open(os.devnull, "wb") as devnull:  # a stray print() in a parser must not corrupt the frames
        os.dup2(devnull.fileno(), 1)
    answers.write(encode_frame({"ready": True}))
    idle_size = _data_size()
    parsers = {"html": html_text, "office": office_text, "pdf": pdf_text, "text": text_file}
    while _wait_for_work(requests):
        frame = read_frame(requests)
        if frame is None:
            return
        if frame[0].get("kind") in ("office", "text"):
            idle_size = _load(str(frame[0].get("kind")), str(frame[0].get("format")), idle_size)
        answer, payload = _answer(*frame, parsers=parsers, idle_size=idle_size)
        answers.write(encode_frame(answer, payload))
        if answer.get("out_of_memory") or answer.get("retire"):
            return
    sys.exit(IDLE_EXIT)


def _answer(
    header: dict[str, Any], body: bytes, *, parsers: dict[str, Any], idle_size: int | None
) -> tuple[dict[str, Any], bytes]:
    allowed = int(header["max_memory"])
    extra: dict[str, Any] = {}
    size_before, peak_before = _status_kib("VmSize"), _status_kib("VmPeak")
    _limit_memory(allowed)
    try:
        if header["kind"] == "pdf":
            title, text = parsers["pdf"](
                body,
                url=header["url"],
                max_pages=int(header["max_pdf_pages"]),
                max_decompressed=int(header["max_pdf_decompressed_bytes"]),
            )
        elif header["kind"] == "office":
            title, text = parsers["office"](body, kind=str(header["format"]), url=header["url"])
        elif header["kind"] == "text":
            title, text, extra["encoding"] = parsers["text"](body, name=str(header["name"]))
        else:
            title, text = parsers["html"](body, charset=header["charset"], url=header["url"])
    except MemoryError:
        return {"out_of_memory": True}, b""
    except Exception as exc:  # a parser's failure (or bug) is this document's failure; the process keeps serving
        if _came_near(size_before, peak_before, allowed):  # C code out of memory reports it as some other error
            return {"out_of_memory": True}, b""
        message = str(exc) if isinstance(exc, ExtractionError) else _failed(header, exc)
        return {"error": message}, b""
    # A document that came close to the memory limit may have hit it inside a parser that carried on, and memory
    # freed inside the process is not always given back: past half the allowance, hand over to a fresh process.
    retire = idle_size is not None and (_data_size() or 0) > idle_size + allowed // 2
    return {"title": title, "retire": retire, **extra}, text.encode("utf-8", "surrogatepass")


def _load(kind: str, office_format: str, idle_size: int | None) -> int | None:
    """
    Import an office or text converter with the memory cap lifted (Haystack and pandas are the parser's cost, not the
    file's); returns the size of the process at rest from now on.
    """
    from haystack_deep_research.web._parsers import load_office
    from haystack_deep_research.web._text_files import load as load_text

    _limit_memory(None)
    try:
        loaded = load_text() if kind == "text" else load_office(office_format)
    except ImportError:  # the file's answer says so: its parser imports the same converter, under the file's cap
        loaded = False
    return _data_size() if loaded else idle_size


def _came_near(size_before: int | None, peak_before: int | None, allowed: int) -> bool:
    """Whether this document raised the process's lifelong peak to within a quarter of ``allowed`` of the limit."""
    peak = _status_kib("VmPeak")
    if size_before is None or peak is None or peak_before is None or peak <= peak_before:
        return False
    return (peak - size_before) * 1024 >= allowed * 3 // 4


def _status_kib(field: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status``, or ``None`` off Linux."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith(f"{field}:"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _wait_for_work(requests: Any) -> bool:
    """``False`` after idling :data:`_IDLE_SECONDS` (POSIX only)."""
    return os.name != "posix" or bool(select.select([requests], [], [], _IDLE_SECONDS)[0])


def _data_size() -> int | None:
    """The bytes of this process's data segment (heap and private mappings), or ``None`` off Linux."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[5]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _limit_memory(extra: int | None) -> None:
    """Let the data segment grow by at most ``extra`` bytes from here (Linux); ``None`` lifts the cap."""
    size = _data_size()
    if resource is None or size is None:
        return  # not Linux: RLIMIT_DATA would not cover memory mappings there
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = hard if extra is None else size + extra
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    with contextlib.suppress(ValueError, OSError):  # a hard limit below what is in use: leave the limit as it is
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def _failed(header: dict[str, Any], exc: Exception) -> str:
    kind = {"pdf": "PDF", "office": "file", "text": "file"}.get(str(header.get("kind")), "page")
    return f"The {kind} at {header.get('url')} could not be read: the parser failed ({type(exc).__name__}: {exc})."


class FrameError(Exception):
    """The stream ended inside a frame, or a frame is malformed."""


def encode_frame(header: dict[str, Any], payload: bytes = b"") -> bytes:
    """One frame of a JSON-serialisable header and raw payload bytes."""
    data = json.dumps(header, ensure_ascii=False).encode("utf-8")
    return _PREFIX.pack(len(data), len(payload)) + data + payload


def read_frame(stream: IO[bytes]) -> tuple[dict[str, Any], bytes] | None:
    """One frame from an unbuffered binary stream such as a pipe; ``None`` when it ended before the frame began."""
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
