"""
Sections of docs/benchmarks.md written by other generators than benchmarks/run.py.

Each such section sits between ``<!-- NAME:start ... -->`` and ``<!-- NAME:end -->``; its generator replaces it in
place (:func:`write_section`), and benchmarks/run.py, which writes the rest of the page from scratch, carries every
such section over (:func:`kept_sections`).
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


def write_section(doc: Path, section: str) -> None:
    """
    Replace the page's section of the same name as ``section``, or append it; the rest stays as it is.

    :param doc: The page.
    :param section: The new section, markers included.
    :raises ValueError: If ``section`` is not one marked section.
    """
    found = _SECTION.fullmatch(section.strip())
    if found is None:
        raise ValueError("a section starts with <!-- NAME:start ... --> and ends with <!-- NAME:end -->")
    name = re.escape(found.group("name"))
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    pattern = re.compile(rf"<!-- {name}:start\b.*?-->.*?<!-- {name}:end -->", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section.strip(), text)
    else:
        text = text.rstrip("\n") + "\n\n" + section.strip() + "\n"
    doc.write_text(text, encoding="utf-8")
