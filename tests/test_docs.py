"""The Python blocks of the documentation pages run, in order, offline, in a folder holding ./notes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from haystack_deep_research.testing import make_pdf

DOCS = Path(__file__).resolve().parent.parent / "docs"
_BLOCK = re.compile(r"(<!-- needs keys -->\n)?```python\n(.*?)```", re.DOTALL)


@pytest.mark.parametrize("page", ["providers.md", "sources.md", "testing.md"])
def test_the_python_blocks_of_a_page_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "tides.md").write_text("# Tides\n\nSpring tides come with the new and the full moon.\n")
    (notes / "moon.pdf").write_bytes(make_pdf(["The moon's pull drives the tides."]))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("SERPERDEV_API_KEY", "placeholder")  # built, never called
    blocks = [code for marker, code in _BLOCK.findall((DOCS / page).read_text(encoding="utf-8")) if not marker]
    assert blocks
    namespace: dict[str, object] = {}
    for code in blocks:
        exec(compile(code, f"{page} block", "exec"), namespace)
