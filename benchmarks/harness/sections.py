"""
Sections of docs/benchmarks.md written by other generators than benchmarks/run.py.

Each such section sits between ``<!-- NAME:start ... -->`` and ``<!-- NAME:end -->``; its generator replaces it in
place (:func:`write_section`), and benchmarks/run.py, which writes the rest of the page from scratch, carries every
such section over (:func:`kept_sections`).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"

__all__ = ["add_page_arguments", "kept_sections", "publish", "write_section"]

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


def add_page_arguments(parser: argparse.ArgumentParser) -> None:
    """A section generator's ``--doc`` (the page, docs/benchmarks.md by default) and ``--no-doc``."""
    parser.add_argument("--doc", type=Path, default=PAGE)
    parser.add_argument("--no-doc", action="store_true", help="Print the section; do not write the page.")


def publish(args: argparse.Namespace, section: str) -> int:
    """Print the section and, unless ``--no-doc``, write it into ``--doc``; the generator's exit code."""
    print(section)
    if not args.no_doc:
        write_section(args.doc, section)
    return 0
