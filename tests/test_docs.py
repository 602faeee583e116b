"""The Python blocks of the docs pages listed here run, unless marked as needing API keys."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
NEEDS_KEYS = "<!-- needs keys -->"
_BLOCK = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)\n```", re.DOTALL)
PAGES = ["workflow.md", "scans.md"]


def _blocks() -> list[tuple[str, int, str]]:
    found = []
    for page in PAGES:
        for number, block in enumerate(_BLOCK.finditer((DOCS / page).read_text(encoding="utf-8")), 1):
            if block.group("before").strip() != NEEDS_KEYS:
                found.append((page, number, block.group("code")))
    return found


@pytest.mark.parametrize(("page", "number", "code"), _blocks(), ids=lambda value: str(value)[:20])
def test_a_docs_block_runs(page: str, number: int, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{page}:block{number}", "exec"), {"__name__": "__main__"})


def test_every_block_compiles_including_those_that_need_keys() -> None:
    for page in PAGES:
        text = (DOCS / page).read_text(encoding="utf-8")
        for block in _BLOCK.finditer(text):
            compile(block.group("code"), page, "exec")
