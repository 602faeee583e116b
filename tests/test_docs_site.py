"""The documentation site shows every page, and shows tables and API reference text as written."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
# A table row holding a code span with an escaped pipe: GitHub shows `a \| b` as "a | b", the site as "a \| b".
_ESCAPED_PIPE_IN_CODE = re.compile(r"^\|.*`[^`\n]*\\\|[^`\n]*`", re.M)


def _nav_pages(entries: Any) -> list[str]:
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, list):
        return [page for entry in entries for page in _nav_pages(entry)]
    if isinstance(entries, dict):
        return [page for value in entries.values() for page in _nav_pages(value)]
    return []


def test_every_page_of_the_docs_is_in_the_nav() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = {page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")}

    assert pages - set(_nav_pages(config["nav"])) == set()
    assert config["validation"]["omitted_files"] == "warn"  # with strict: true, mkdocs build fails on a page left out


def test_no_table_shows_an_escaped_pipe() -> None:
    found = [
        f"{page.relative_to(REPO)}: {match.group(0)}"
        for page in [*DOCS.rglob("*.md"), REPO / "README.md"]
        for match in _ESCAPED_PIPE_IN_CODE.finditer(page.read_text(encoding="utf-8"))
    ]
    assert found == []


def _hooks() -> ModuleType:
    pytest.importorskip("griffe")
    pytest.importorskip("mkdocs")
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", REPO / "mkdocs_hooks.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rest_roles_become_code_spans_and_inline_fields_start_a_line() -> None:
    rest_to_markdown = _hooks().rest_to_markdown

    assert rest_to_markdown(
        "Exit codes (:class:`~haystack_deep_research.options.exit_codes.ExitCode`), see :mod:`.clarify` "
        "and :meth:`run`."
    ) == ("Exit codes (`ExitCode`), see `.clarify` and `run`.")
    assert rest_to_markdown("A page could not be read. :param url: The URL. :param reason: Why.") == (
        "A page could not be read.\n:param url: The URL.\n:param reason: Why."
    )
    assert rest_to_markdown("Fields in prose stay: ``:param x:`` and `:returns:`.") == (
        "Fields in prose stay: ``:param x:`` and `:returns:`."
    )
