"""
Every Python block in README.md and docs/**/*.md runs as written, offline, or is marked as needing keys.

A block needs keys when the line before its opening fence is ``<!-- needs-keys -->``: it is only compiled. The other
blocks of a page run in order in one namespace (a page reads top to bottom), in a temporary directory holding
``./notes`` (a Markdown file and a PDF), with the network forbidden but loopback. Top-level ``await`` is allowed, as
in a notebook. New pages under docs/ are picked up without a change here.
"""

from __future__ import annotations

import ast
import asyncio
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from haystack_deep_research.testing import make_pdf

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
NEEDS_KEYS = "<!-- needs-keys -->"
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^\s`]*)")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    code: str
    needs_keys: bool

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def python_blocks(page: Path) -> list[Block]:
    """The fenced ``python`` blocks of a Markdown page, with the line each starts on."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        if opened is None:
            index += 1
            continue
        fence, start = opened.group("fence"), index
        index += 1
        body = []
        while index < len(lines) and not lines[index].strip().startswith(fence):
            body.append(lines[index])
            index += 1
        index += 1
        if opened.group("info").lower() in {"python", "py"}:
            marked = start > 0 and lines[start - 1].strip() == NEEDS_KEYS
            blocks.append(Block(page, start + 1, "\n".join(body) + "\n", marked))
    return blocks


WITH_BLOCKS = [page for page in PAGES if python_blocks(page)]


def test_the_docs_have_python_blocks_to_check() -> None:
    blocks = [block for page in PAGES for block in python_blocks(page)]
    assert len(blocks) >= 10
    assert any(not block.needs_keys for block in blocks)


@pytest.mark.parametrize("page", WITH_BLOCKS, ids=[str(page.relative_to(REPO)) for page in WITH_BLOCKS])
def test_the_python_blocks_of_a_page_run_as_written(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "tides.md").write_text("# Tides\n\nSpring tides come with the new and the full moon.\n")
    (notes / "moon.pdf").write_bytes(make_pdf(["The moon's pull drives the tides."]))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("SERPERDEV_API_KEY", "placeholder")  # built, never called
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in python_blocks(page):
        code = compile(block.code, block.name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        if block.needs_keys:
            continue  # it calls paid services: compiled only
        outcome = eval(code, namespace)  # the project's own documentation
        if asyncio.iscoroutine(outcome):
            asyncio.run(outcome)
