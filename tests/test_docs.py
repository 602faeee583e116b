"""The code blocks of the docs run: each page's Python blocks run in order in one namespace, except those marked as
needing API keys, which must still compile."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCK = re.compile(r"(<!-- needs keys -->\n)?```python\n(.*?)```", re.DOTALL)
RUN_PAGES = ["deep-agent.md"]


@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_code_blocks_of_the_page_run(page: str, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))
    namespace: dict[str, object] = {"__name__": f"docs_{page.replace('-', '_').removesuffix('.md')}"}

    assert blocks, f"{page} has no Python blocks"
    for number, (needs_keys, code) in enumerate(blocks, 1):
        compiled = compile(code, f"{page} block {number}", "exec")
        if not needs_keys:
            exec(compiled, namespace)
    assert "[completed] size the market" in capsys.readouterr().out
