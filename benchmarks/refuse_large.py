"""
Peak memory while refusing a 200 MB response: does the download cap keep memory bounded?

A loopback server offers a 200 MB body three ways: with an honest ``Content-Length`` (refused before the body is
read), with no ``Content-Length`` (the cap must cut the stream), and gzip-compressed with no length (the decoded size
must be capped, not only the bytes on the wire). Each case runs in a fresh interpreter that imports the library,
notes its peak RSS, fetches with the default ``FetchLimits`` (5 MB cap), and notes its peak RSS again.

    python benchmarks/refuse_large.py            # writes docs/memory.md

Figures: the error raised, the bytes the server managed to send before the client hung up, the time to refuse,
and the growth of the process's peak RSS (``ru_maxrss``) caused by the fetch.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOTAL = 200 * 1024 * 1024
CHUNK = 64 * 1024
CASES = {
    "/declared": "Content-Length: 200 MB",
    "/streamed": "no Content-Length, 200 MB streamed",
    "/gzipped": "gzip, no Content-Length, 200 MB once decoded",
}

CHILD = """
import json, resource, sys, time
from haystack_deep_research.web import FetchLimits, UrlPolicy, fetch, fetch_async
from haystack_deep_research.errors import FetchError
import asyncio
url, mode = sys.argv[1], sys.argv[2]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
policy, limits = UrlPolicy(allow_hosts=("127.0.0.1",)), FetchLimits()
started = time.monotonic()
try:
    if mode == "async":
        asyncio.run(fetch_async(url, policy=policy, limits=limits))
    else:
        fetch(url, policy=policy, limits=limits)
    outcome = "accepted"
except FetchError as error:
    outcome = type(error).__name__
elapsed = time.monotonic() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"outcome": outcome, "seconds": elapsed, "rss_before_kib": before, "rss_after_kib": after}))
"""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    sent: dict[str, int] = {}  # noqa: RUF012 - shared by the handler threads on purpose

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        path = self.path
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        if path == "/declared":
            self.send_header("Content-Length", str(TOTAL))
        if path == "/gzipped":
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        sent = 0
        try:
            if path == "/gzipped":
                compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
                block = b"<p>" + b"a" * (CHUNK - 7) + b"</p>"
                for _ in range(TOTAL // CHUNK):
                    data = compressor.compress(block)
                    if data:
                        self.wfile.write(data)
                        sent += len(data)
                data = compressor.flush()
                self.wfile.write(data)
                sent += len(data)
            else:
                block = b"a" * CHUNK
                for _ in range(TOTAL // CHUNK):
                    self.wfile.write(block)
                    sent += CHUNK
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up: that is the point
        finally:
            _Handler.sent[path] = sent


def _measure(url: str, mode: str) -> dict[str, object]:
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, url, mode], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Run every case, sync and async, and write the page."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "memory.md")
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    rows = []
    try:
        for path, title in CASES.items():
            for mode in ("sync", "async"):
                _Handler.sent.pop(path, None)
                figures = _measure(f"http://127.0.0.1:{server.server_address[1]}{path}", mode)
                server_sent = _Handler.sent.get(path, 0)
                growth = (int(figures["rss_after_kib"]) - int(figures["rss_before_kib"])) / 1024  # type: ignore[call-overload]
                rows.append(
                    f"| {title} | {mode} | {figures['outcome']} | {server_sent / 1024:,.0f} | "
                    f"{float(figures['seconds']):.2f} | {int(figures['rss_before_kib']) / 1024:.0f} | {growth:.1f} |"  # type: ignore[call-overload]
                )
                print(rows[-1], flush=True)
    finally:
        server.shutdown()
        server.server_close()
    page = [
        "# Memory while refusing a large response",
        "",
        "<!-- Generated by benchmarks/refuse_large.py; edit the generator, not this file. -->",
        "",
        "A loopback server offers a 200 MB body; `fetch` / `fetch_async` read it with the default `FetchLimits` "
        "(5,000,000-byte cap) in a fresh interpreter each time. *Sent* is what the server wrote before the client "
        "hung up (bytes on the wire; with gzip they decode to far more). *Peak RSS growth* is how much the "
        "process's peak resident memory (`ru_maxrss`) rose during the fetch.",
        "",
        "| response | API | result | sent (KiB) | seconds | peak RSS before (MiB) | peak RSS growth (MiB) |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Reproduce: `python benchmarks/refuse_large.py` (writes this page). Run with the library installed "
        "(`pip install -e .`); the server listens on 127.0.0.1 only.",
        "",
    ]
    args.doc.write_text("\n".join(page), encoding="utf-8")
    print(f"Wrote {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
