"""
The Python blocks of the documentation pages run, in order, offline, in a folder holding ./notes; blocks marked as
needing API keys (``<!-- needs keys -->`` on the line before) must still compile.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from haystack_deep_research.testing import make_pdf

DOCS = Path(__file__).resolve().parent.parent / "docs"
_BLOCK = re.compile(r"(<!-- needs keys -->\n)?```python\n(.*?)```", re.DOTALL)


@pytest.mark.parametrize(
    "page", ["deep-agent.md", "providers.md", "scans.md", "sources.md", "testing.md", "workflow.md"]
)
def test_the_python_blocks_of_a_page_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "tides.md").write_text("# Tides\n\nSpring tides come with the new and the full moon.\n")
    (notes / "moon.pdf").write_bytes(make_pdf(["The moon's pull drives the tides."]))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("SERPERDEV_API_KEY", "placeholder")  # built, never called
    blocks = _BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))
    assert blocks, f"{page} has no Python blocks"
    namespace: dict[str, object] = {"__name__": f"docs_{page.replace('-', '_').removesuffix('.md')}"}
    for number, (needs_keys, code) in enumerate(blocks, 1):
        compiled = compile(code, f"{page} block {number}", "exec")
        if not needs_keys:
            exec(compiled, namespace)
