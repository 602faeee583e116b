"""
Sections of docs/benchmarks.md written by other generators than benchmarks/run.py.

Each such section sits between ``<!-- NAME:start ... -->`` and ``<!-- NAME:end -->``; its generator replaces it in
place, and benchmarks/run.py, which writes the rest of the page from scratch, carries every such section over.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["kept_sections", "write_section"]

_SECTION = re.compile(r"<!-- (?P<name>[a-z0-9-]+):start\b.*?-->.*?<!-- (?P=name):end -->", re.DOTALL)


def kept_sections(text: str) -> list[str]:
    """
    :param text: A page.
    :returns: Its generated sections, markers included, in page order.
    """
    return [found.group(0) for found in _SECTION.finditer(text)]


def write_section(doc: Path, start: str, end: str, section: str) -> None:
    """
    Replace a section of the page (between its markers), or append it; the rest stays as it is.

    :param doc: The page.
    :param start: The section's start marker.
    :param end: Its end marker.
    :param section: The new section, markers included.
    """
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    found = pattern.search(text)
    text = pattern.sub(lambda _: section, text) if found else text.rstrip("\n") + "\n\n" + section + "\n"
    doc.write_text(text, encoding="utf-8")
