"""
``python -m haystack_deep_research.testing serve``: the loopback chat, search and web servers over a small corpus, and
the ``deep-research`` command lines that use them, from the shell or in Python (docs/testing.md, "The kit from the
shell").
"""

from __future__ import annotations

import argparse
import html
import shlex
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from haystack_deep_research._untrusted.files import read_regular_file, write_file
from haystack_deep_research.errors import UsageError
from haystack_deep_research.testing.chat_server import KIT_MODEL, LoopbackChatServer
from haystack_deep_research.testing.search_server import LoopbackSearchServer, SearchDocument
from haystack_deep_research.testing.web_server import LoopbackWebServer

__all__ = ["SAMPLE_PAGES", "KitServers", "corpus_pages", "kit_commands", "main", "serve_kit"]


@dataclass(frozen=True)
class CorpusPage:
    """One page of a kit corpus: its path on the web server (``/solar.html``), title and text (a paragraph a line)."""

    path: str
    title: str
    text: str


SAMPLE_QUESTION = "How fast is solar power growing, and what limits it?"
"""A question the sample corpus answers."""

SAMPLE_PAGES = (
    CorpusPage(
        "/solar-growth.html",
        "Solar power growth",
        "Solar power is the fastest growing source of electricity. Installed solar capacity grew by about a third "
        "in 2023, led by utility-scale plants.\nFalling module prices keep solar growing fast in most markets.",
    ),
    CorpusPage(
        "/grid-limits.html",
        "What limits solar power",
        "Grid connections limit how fast solar power can grow: projects wait years in interconnection queues.\n"
        "Curtailment rises where solar output outgrows local demand at midday.",
    ),
    CorpusPage(
        "/battery-storage.html",
        "Battery storage and solar",
        "Battery storage moves solar power from midday to the evening peak. Storage installations doubled in 2023 "
        "as battery prices fell.\nStorage eases the limits that grids put on solar growth.",
    ),
)
"""The pages served by default."""

CORPUS_SUFFIXES = (".html", ".htm", ".md", ".txt")
"""The files of a ``--corpus`` folder that become pages."""
MAX_CORPUS_FILES = 200
MAX_CORPUS_FILE_BYTES = 1024 * 1024


def corpus_pages(folder: Path | None) -> tuple[CorpusPage, ...]:
    """
    The pages of a folder (``None``: the samples): each file's name is its path, its title an HTML page's ``<title>``,
    else the first non-blank line. A missing folder, no page or too many, a page over 1 MiB or a link out of the
    folder is a :class:`UsageError`.
    """
    if folder is None:
        return SAMPLE_PAGES
    if not folder.is_dir():
        raise UsageError(f"--corpus {folder}: not a folder; give a folder of .html, .md or .txt files.")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in CORPUS_SUFFIXES)
    if not files or len(files) > MAX_CORPUS_FILES:
        raise UsageError(f"--corpus {folder}: holds {len(files)} pages; give 1 to {MAX_CORPUS_FILES}.")
    pages = []
    for file in files:
        try:
            raw = read_regular_file(file, root=folder, max_bytes=MAX_CORPUS_FILE_BYTES)
        except OSError as error:  # LocalFileRefusedError too: a link out of the folder, a FIFO, over 1 MiB
            raise UsageError(f"--corpus {folder}: {file.name} is not served ({error}).") from None
        text = raw.decode("utf-8", errors="replace")
        if file.suffix.lower() in (".html", ".htm"):
            title, text = _html_text(text, file.stem)
        else:
            title = next((line.strip("# ").strip() for line in text.splitlines() if line.strip()), file.stem)
        pages.append(CorpusPage(f"/{file.stem}.html", title[:200], text))
    return tuple(pages)


def _html_text(page: str, name: str) -> tuple[str, str]:
    import lxml.html

    try:
        root = lxml.html.fromstring(page)
    except (ValueError, lxml.etree.ParserError):
        return name, page
    title = (root.findtext(".//title") or "").strip() or name
    for hidden in root.xpath("//script|//style|//title"):
        hidden.drop_tree()
    return title, "\n".join(line.strip() for line in root.text_content().splitlines() if line.strip())


def _html(page: CorpusPage) -> str:
    paragraphs = "".join(f"<p>{html.escape(line)}</p>" for line in page.text.splitlines() if line.strip())
    title = html.escape(page.title)
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{paragraphs}</body></html>"


class KitServers:
    """The three running servers of the kit: ``chat``, ``search`` and ``web``; ``folder`` holds the scan's items."""

    def __init__(
        self, chat: LoopbackChatServer, search: LoopbackSearchServer, web: LoopbackWebServer, folder: Path
    ) -> None:
        self.chat, self.search, self.web, self.folder = chat, search, web, folder


@contextmanager
def serve_kit(corpus: Path | None = None) -> Iterator[KitServers]:
    """
    Start the chat, search and web servers over a corpus; stop them on leaving::

        with serve_kit() as kit:
            cli.main(kit_commands(kit)["iterative"][1:])

    :param corpus: A folder of ``.html``, ``.md`` and ``.txt`` pages (each file's first line is its title), or
        ``None`` for the sample pages.
    :returns: A context manager giving the running :class:`KitServers`.
    :raises UsageError: If the folder is missing, holds no page or too many, or a page over 1 MiB.
    """
    pages = corpus_pages(corpus)
    with ExitStack() as stack:
        web = stack.enter_context(LoopbackWebServer())
        search = stack.enter_context(LoopbackSearchServer())
        chat = stack.enter_context(LoopbackChatServer())
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="deep-research-kit-")))
        for page in pages:
            web.add_page(page.path, _html(page))
            search.add_document(SearchDocument(url=web.url(page.path), title=page.title, content=page.text))
        yield KitServers(chat, search, web, folder)


def kit_commands(servers: KitServers, question: str = SAMPLE_QUESTION) -> dict[str, list[str]]:
    """
    :param servers: The running kit.
    :param question: The question the command lines ask.
    :returns: The ``deep-research`` argument lists that run each mode (``deep``, ``iterative``) against the kit, and
        ``scan``: a scan of the question (written as the one item of ``items.txt`` in the kit's folder) into
        ``rows.jsonl`` of the working folder.
    """
    common = ["--base-url", servers.chat.openai_base_url, "--model", KIT_MODEL, "--search", "tavily"]
    common += ["--search-url", servers.search.base_url, "--allow-host", "127.0.0.1"]
    items = servers.folder / "items.txt"
    write_file(items, " ".join(question.split()) + "\n")
    return {
        "deep": ["deep-research", question, *common, "--max-subtopics", "2"],
        "iterative": ["deep-research", question, *common, "--mode", "iterative", "--depth", "2"],
        "scan": ["deep-research", "scan", str(items), "--out", "rows.jsonl", *common],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """
    :param argv: The arguments (without the program name); ``sys.argv[1:]`` by default.
    :returns: 0 once stopped by Ctrl-C, SIGTERM or ``--stop-after``; 2 for a usage error.
    """
    parser = argparse.ArgumentParser(
        prog="python -m haystack_deep_research.testing",
        description="The testing kit: loopback chat, search and web servers for deep-research, with no key.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", help="Serve the kit and print the deep-research command lines for it (deep, iterative and scan)."
    )
    serve.add_argument("--corpus", type=Path, metavar="DIR", help="Serve these .html, .md and .txt files instead.")
    serve.add_argument("--question", default=SAMPLE_QUESTION, help="The question of the printed command lines.")
    serve.add_argument("--stop-after", type=float, metavar="SECONDS", help="Stop serving after this many seconds.")
    args = parser.parse_args(argv)
    stop = threading.Event()
    # Ctrl-C and SIGTERM both stop serving, even where the shell started the kit with SIGINT ignored (a job run
    # with & in a script).
    previous = {signum: signal.signal(signum, lambda *_: stop.set()) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        with serve_kit(args.corpus) as servers:
            pages = servers.search.documents
            print(f"kit: chat {servers.chat.openai_base_url} (model {KIT_MODEL})", flush=True)
            print(f"kit: search {servers.search.base_url}, web {servers.web.base_url} ({len(pages)} pages)")
            for mode, command in kit_commands(servers, args.question).items():
                print(f"{mode}: {shlex.join(command)}")
            print("kit: serving until Ctrl-C", flush=True)
            stop.wait(args.stop_after)
    except UsageError as error:
        print(f"kit: error: {error}", file=sys.stderr)
        return 2
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    print("kit: stopped", flush=True)
    return 0
