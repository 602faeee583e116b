"""How the scripted ``summarize`` and ``causal`` roles write: cited lines, one-sentence claims, a filled schema."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["cited", "fill_schema", "one_sentence"]

_URL = re.compile(r"https?://[^\s<>()\"'\]]+")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_CITED_LINE = re.compile(r"^\s*[-*]\s+(.*\[[^\]]*\]\((https?://[^)\s]+)\).*)$")


def fill_schema(schema: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """
    An object for a JSON schema, filled from a report.

    :param schema: The JSON schema of an object.
    :param given: The variables of a ``structured`` prompt: ``report`` and ``sources``.
    :returns: Strings from the report's first paragraph, lists of strings from its cited lines (for a property named
        like sources or urls, the sources' URLs), numbers 0.8 and integers 1 within their bounds, booleans true.
    """
    report = str(given.get("report") or "")
    paragraphs = [p.strip() for p in report.split("\n\n") if p.strip() and not p.lstrip().startswith(("#", "-"))]
    findings = [claim for text, _ in cited(report) if (claim := one_sentence(text))]
    sources = [found.group(0) for source in given.get("sources") or [] if (found := _URL.search(str(source)))]
    filled: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        kind = spec.get("type")
        if kind == "string":
            filled[name] = paragraphs[0] if paragraphs else "No summary."
        elif kind == "array":
            filled[name] = sources if any(key in name.lower() for key in ("source", "url")) else findings
        elif kind in ("number", "integer"):
            low, high = spec.get("minimum", 0), spec.get("maximum", 1 if kind == "number" else 10)
            filled[name] = min(max(0.8 if kind == "number" else 1, low), high)
        elif kind == "boolean":
            filled[name] = True
        else:
            filled[name] = {}
    return filled


def one_sentence(text: str) -> str:
    """
    :param text: A cited line.
    :returns: The line as one claim: its links and URLs removed, its sentences joined into one.
    """
    plain = _URL.sub("", _LINK.sub("", text))
    return _SENTENCE_END.sub(",", " ".join(plain.split())).rstrip(" .,;:!?")


def cited(text: str) -> list[tuple[str, str]]:
    """
    :param text: A text.
    :returns: Its list lines that cite a URL as a Markdown link: ``(line without its bullet, URL)`` each.
    """
    matches = (_CITED_LINE.match(line) for line in text.splitlines())
    return [(match.group(1).strip(), match.group(2)) for match in matches if match]
