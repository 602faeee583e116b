"""
What one hostile page costs a reader, and what the guards cost a normal one.

The testing kit's loopback web server serves hostile pages (headers or a body trickled a byte per second, a body
just above the minimum transfer rate, attribute bombs, PDF decompression bombs) and healthy large documents at
realistic rates. Each case runs in a fresh interpreter that has already started its parser process, then fetches and
extracts the page with the default ``FetchLimits`` through the synchronous API and through the asynchronous one.

    python benchmarks/hostile_pages.py                 # every case; rewrites the figures in docs/safety.md
    python benchmarks/hostile_pages.py --cases pdf-bomb,attributes-0.7mb --no-write

Figures: the outcome, the wall time of fetch + extract, and the peak RSS above the idle size of the reading process
and of its parser process (both sampled every 10 ms). Linux only (it reads ``/proc``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pypdf

from haystack_deep_research.testing import LoopbackWebServer, make_pdf
from haystack_deep_research.testing.pdf import make_inflating_pdf

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- hostile-pages:begin -->", "<!-- hostile-pages:end -->"
PDF = "application/pdf"

CHILD = r"""
import asyncio, json, os, sys, threading, time
from haystack_deep_research.errors import FetchError
from haystack_deep_research.web import (FetchLimits, FetchedDocument, UrlPolicy, extract_text, extract_text_async,
    fetch, fetch_async)

url, mode = sys.argv[1], sys.argv[2]
policy, limits = UrlPolicy(allow_hosts=("127.0.0.1",)), FetchLimits()
tiny = FetchedDocument(url="u", final_url="u", status=200, content_type="text/html", charset=None,
                       body=b"<html><body><article><p>" + b"warm up " * 50 + b"</p></article></body></html>")
extract_text(tiny)  # the parser process is started and idle: its start is not part of the figures

def children():
    found = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as listing:
            found.update(int(pid) for pid in listing.read().split())
    return found

def rss(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0

me = os.getpid()
idle, mine = max((rss(pid) for pid in children()), default=0), rss(me)
peak, done = [idle, mine], threading.Event()
def sample():
    while not done.wait(0.01):
        peak[0] = max([peak[0], *(rss(pid) for pid in children())])
        peak[1] = max(peak[1], rss(me))
threading.Thread(target=sample, daemon=True).start()

async def read_async():
    return await extract_text_async(await fetch_async(url, policy=policy, limits=limits), limits=limits)

started = time.monotonic()
try:
    text = asyncio.run(read_async()) if mode == "async" else extract_text(fetch(url, policy=policy, limits=limits),
                                                                            limits=limits)
    outcome = f"read, {len(text.text):,} characters"
except FetchError as error:
    outcome = f"{type(error).__name__}: {error}"
elapsed = time.monotonic() - started
done.set()
print(json.dumps({"outcome": outcome, "seconds": elapsed, "reader_kib": peak[1] - mine, "parser_kib": peak[0] - idle}))
"""


def _words(count: int, seed: int) -> str:
    rng = random.Random(seed)
    vocabulary = [
        "the",
        "of",
        "and",
        "to",
        "in",
        "is",
        "was",
        "for",
        "on",
        "that",
        "with",
        "as",
        "by",
        "at",
        "from",
        "which",
        "are",
        "were",
        "be",
        "this",
        "have",
        "or",
        "had",
    ]
    return " ".join(rng.choice(vocabulary) for _ in range(count))


def _large_html(size: int) -> bytes:
    sections, total, number = [], 0, 0
    while total < size:
        number += 1
        section = (
            f"<div class='s'><h2>Section {number}</h2><p>{_words(90, number)}</p><p>{_words(90, -number)}</p></div>"
        )
        sections.append(section)
        total += len(section)
    return f"<html><head><title>Long</title></head><body><article>{''.join(sections)}</article></body></html>".encode()


def _large_pdf(size: int) -> bytes:
    """Fifty pages of text, and an attachment of random bytes standing in for the images of a real report."""
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(make_pdf([_words(500, n) for n in range(50)]))))
    writer.add_attachment("figures.bin", random.Random(7).randbytes(size - 300_000))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _attribute_bomb(attributes: int) -> bytes:
    names = " ".join(f'a{n}="v"' for n in range(attributes))
    return f"<html><body><article><p {names}>Text.</p></article></body></html>".encode()


def serve(web: LoopbackWebServer) -> dict[str, str]:
    """Add every case's route; returns the case names and what each one is."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Padding: " + b"x" * 100 + b"\r\n\r\n"
    web.add_raw("/trickle-headers", head, chunk_size=1, delay_per_chunk=1.0)
    web.add_slow("/trickle-body", b"<p>" * 100, delay_per_chunk=1.0)
    web.add_slow("/just-above-rate", b"x" * 5_000_000, delay_per_chunk=0.05, chunk_size=1_000)  # 20 KB/s
    web.add_page("/attributes-0.7mb", _attribute_bomb(70_000))
    web.add_page("/attributes-3.9mb", _attribute_bomb(400_000))
    web.add_page("/linked-paragraphs", b"<html><body><article>" + b"<p><a href='/x'>link</a> word</p>" * 120_000)
    web.add_page("/one-paragraph-of-links", b"<html><body><article><p>" + b"<a href='/x'>link</a> word " * 10_000)
    web.add_page("/pdf-bomb", make_inflating_pdf(74_000_000), content_type=PDF)
    web.add_page("/pdf-bomb-5-pages", make_inflating_pdf(74_000_000, pages=5), content_type=PDF)
    web.add_page("/pdf-dense-page", make_inflating_pdf(3_900_000), content_type=PDF)
    pdf, html = _large_pdf(4_900_000), _large_html(4_900_000)
    web.add_slow("/pdf-4.9mb-at-1mb-s", pdf, delay_per_chunk=0.0625, chunk_size=65_536, content_type=PDF)
    web.add_slow("/pdf-4.9mb-at-250kb-s", pdf, delay_per_chunk=0.25, chunk_size=65_536, content_type=PDF)
    web.add_slow("/html-4.9mb-at-1mb-s", html, delay_per_chunk=0.0625, chunk_size=65_536)
    web.add_page("/html-100kb", _large_html(100_000))
    return {
        "trickle-headers": "headers at 1 byte/s",
        "trickle-body": "headers at once, body at 1 byte/s",
        "just-above-rate": "5 MB body at 20 KB/s, just above the minimum rate",
        "attributes-0.7mb": "0.7 MB page, one element with 70,000 attributes",
        "attributes-3.9mb": "3.9 MB page, one element with 400,000 attributes",
        "linked-paragraphs": "4 MB page of 120,000 linked paragraphs (passes the checks; minutes of parsing)",
        "one-paragraph-of-links": "0.27 MB page, one paragraph of 10,000 links (passes the checks; quadratic)",
        "pdf-bomb": "110 KB PDF, one page inflating to 74 MB",
        "pdf-bomb-5-pages": "five such pages",
        "pdf-dense-page": "PDF page of 3.9 MB of text operators (under the byte budget)",
        "pdf-4.9mb-at-1mb-s": "healthy 4.9 MB PDF (50 pages) at 1 MB/s",
        "pdf-4.9mb-at-250kb-s": "the same PDF at 250 KB/s",
        "html-4.9mb-at-1mb-s": "healthy 4.9 MB HTML page at 1 MB/s",
        "html-100kb": "healthy 100 KB HTML page",
    }


def overhead(web: LoopbackWebServer, repeat: int) -> list[str]:
    """What a normal read costs: fetch per page, and extraction in the parser process against parsing in-process."""
    import asyncio
    import statistics
    import time

    from haystack_deep_research.web import FetchedDocument, FetchLimits, UrlPolicy, extract_text, fetch, fetch_async
    from haystack_deep_research.web._parsers import html_text, pdf_text  # the parsers themselves, for comparison
    from haystack_deep_research.web._pool import _pool

    policy, limits = UrlPolicy(allow_hosts=("127.0.0.1",)), FetchLimits()
    web.add_page("/page-54kb", _large_html(54_000))
    url = web.url("/page-54kb")

    def timed(call: Callable[[], object], runs: int) -> tuple[float, float]:
        """Median wall milliseconds, and mean CPU milliseconds of this process and its parser processes."""
        times = []
        cpu_before = time.process_time() + _children_cpu()
        for _ in range(runs):
            started = time.perf_counter()
            call()
            times.append(time.perf_counter() - started)
        cpu = time.process_time() + _children_cpu() - cpu_before
        return statistics.median(times) * 1000, cpu / runs * 1000

    async def fetch_many() -> float:
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            await fetch_async(url, policy=policy, limits=limits)
            times.append(time.perf_counter() - started)
        return statistics.median(times) * 1000

    timed(lambda: fetch(url, policy=policy, limits=limits), 20)
    wall, cpu = timed(lambda: fetch(url, policy=policy, limits=limits), repeat)
    rows = [f"| fetch, 54 KB page, sync | {wall:.2f} | {cpu:.2f} | | |"]
    rows.append(f"| fetch, 54 KB page, async | {asyncio.run(fetch_many()):.2f} | | | |")
    documents = {
        "HTML, 2 KB": (_large_html(1_500), "text/html"),
        "HTML, 100 KB": (_large_html(100_000), "text/html"),
        "PDF, 10 pages": (make_pdf([_words(400, n) for n in range(10)], compress=True), PDF),
    }
    for name, (body, content_type) in documents.items():
        document = FetchedDocument(
            url=url, final_url=url, status=200, content_type=content_type, charset=None, body=body
        )

        def in_process(body: bytes = body, content_type: str = content_type) -> object:
            if content_type == PDF:
                return pdf_text(body, url=url, max_pages=50, max_decompressed=limits.max_pdf_decompressed_bytes)
            return html_text(body, charset=None, url=url)

        def in_parser(document: FetchedDocument = document) -> object:
            return extract_text(document)

        timed(in_parser, 5)
        assert _pool()._idle, "the parser process is idle between documents"
        pooled, pooled_cpu = timed(in_parser, repeat)
        direct, direct_cpu = timed(in_process, repeat)
        rows.append(f"| extract, {name} | {pooled:.2f} | {pooled_cpu:.2f} | {direct:.2f} | {direct_cpu:.2f} |")
    for row in rows:
        print(row, flush=True)
    return rows


def _children_cpu() -> float:
    """CPU seconds of this process's living child processes (the parser processes)."""
    total = 0.0
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as listing:
            for pid in listing.read().split():
                try:
                    with open(f"/proc/{pid}/stat") as stat:
                        fields = stat.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _measure(url: str, mode: str) -> dict[str, object]:
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, url, mode], capture_output=True, text=True, timeout=180, check=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _short(outcome: str) -> str:
    outcome = re.sub(r"http://127\.0\.0\.1:\d+/[^\s,;)]+", "<url>", outcome)
    return outcome if len(outcome) <= 150 else outcome[:147] + "..."


def main(argv: list[str] | None = None) -> int:
    """Run the cases, print the rows, and (unless --no-write) put the table into docs/safety.md."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="", help="comma-separated case names; all by default")
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "safety.md")
    parser.add_argument("--no-write", action="store_true", help="print the rows only")
    parser.add_argument("--repeat", type=int, default=200, help="runs per normal-read figure (default 200)")
    args = parser.parse_args(argv)
    rows = []
    with LoopbackWebServer() as web:
        costs = overhead(web, args.repeat)
        cases = serve(web)
        chosen = [name for name in args.cases.split(",") if name] or list(cases)
        for name in chosen:
            for mode in ("sync", "async"):
                figures = _measure(web.url(f"/{name}"), mode)
                rows.append(
                    f"| {cases[name]} | {mode} | {_short(str(figures['outcome']))} | {float(figures['seconds']):.2f} | "  # type: ignore[arg-type]
                    f"{int(figures['reader_kib']) / 1024:.1f} | {int(figures['parser_kib']) / 1024:.1f} |"  # type: ignore[call-overload]
                )
                print(rows[-1], flush=True)
    if args.no_write:
        return 0
    load = os.getloadavg()[0]
    table = [
        BEGIN,
        "",
        f"Measured with `python benchmarks/hostile_pages.py` on Linux, {os.cpu_count()} CPUs (load average "
        f"{load:.1f} at the end of the run), default `FetchLimits`. *Reader* and *parser* are the peak RSS above "
        "the idle size of the reading process and of its parser process.",
        "",
        "| page | API | outcome | seconds | reader MiB | parser MiB |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        f"What a normal read costs ({args.repeat} runs each): wall time (median) and CPU time (mean, the reading "
        "process and its parser processes together), against the same parse run inside the reading process.",
        "",
        "| read | wall ms | CPU ms | in-process wall ms | in-process CPU ms |",
        "|---|---|---|---|---|",
        *costs,
        "",
        END,
    ]
    text = args.doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        print(f"{args.doc} has no {BEGIN} ... {END} block to fill", file=sys.stderr)
        return 1
    start, end = text.index(BEGIN), text.index(END) + len(END)
    args.doc.write_text(text[:start] + "\n".join(table) + text[end:], encoding="utf-8")
    print(f"Wrote the figures into {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
