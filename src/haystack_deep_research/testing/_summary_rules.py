"""How the scripted ``summarize`` and ``causal`` roles write: the summary's parts (cited lines, one-sentence claims), a
causal chain, a filled schema."""

from __future__ import annotations

import json
import re
from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_deep_research._prompts import SUMMARY_HEADING, WRITER_PART_TEMPLATES
from haystack_deep_research.testing._messages import last_user_text, named_prompt, prompt_variables, words
from haystack_deep_research.testing._report_rules import answer_reply

__all__ = ["causal_reply", "cited", "fill_schema", "one_sentence", "summarize_reply"]

_URL = re.compile(r"https?://[^\s<>()\"'\]]+")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_CITED_LINE = re.compile(r"^\s*[-*]\s+(.*\[[^\]]*\]\((https?://[^)\s]+)\).*)$")
_STRUCTURED_TEXT = re.compile(
    r"^JSON schema:\n(?P<schema>.*?)\n\n<untrusted_report>\n(?P<report>.*)\n</untrusted_report>\n\n"
    r"Sources of the report:\n<untrusted_sources>\n(?P<sources>.*?)</untrusted_sources>",
    re.DOTALL,
)


def fill_schema(schema: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """
    An object for a JSON schema, filled from the ``report`` and ``sources`` of a ``structured`` prompt.

    Strings come from the report's first paragraph, lists of strings from its cited lines (for a property named like
    sources or urls, the sources' URLs), numbers are 0.8 and integers 1 within their bounds, booleans true.
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
    """A cited line as one claim: its links and URLs removed, its sentences joined into one."""
    plain = _URL.sub("", _LINK.sub("", text))
    return _SENTENCE_END.sub(",", " ".join(plain.split())).rstrip(" .,;:!?")


def cited(text: str) -> list[tuple[str, str]]:
    """The list lines of a text that cite a URL as a Markdown link: ``(line without its bullet, URL)`` each."""
    matches = (_CITED_LINE.match(line) for line in text.splitlines())
    return [(match.group(1).strip(), match.group(2)) for match in matches if match]


def causal_reply(given: dict[str, Any]) -> str:
    """A numbered chain for a ``causal`` prompt, one step per cited line of the findings."""
    lines = [line for finding in given.get("findings") or [] for line in cited(finding)]
    if not lines:
        return "No causal chain: the findings cite no sources."
    return "\n".join(f"{number}. {text}" for number, (text, _) in enumerate(lines, 1))


def summarize_reply(
    messages: list[ChatMessage], unsupported_claims: list[str], corrects: str, invented_urls: list[str]
) -> str:
    """
    The scripted ``summarize`` role's reply: a structured-output JSON, or a part of the summary.

    A section restates each cited line of its note whose URL is allowed, one claim each. The opening (title and
    executive summary) gives the question's first words, how many steps of the causal chain it considered, each of
    ``unsupported_claims`` citing the first allowed URL (until ``corrects``, "never", "on_rewrite" or
    "on_new_evidence", says not) and each of ``invented_urls`` (URLs no note holds).
    """
    if (answer := answer_reply(messages)) is not None:  # a question about a finished run
        return answer
    structured = prompt_variables(messages, "structured", "structured_retry") or _structured_text(messages)
    if structured:
        return json.dumps(fill_schema(json.loads(str(structured.get("schema") or "{}")), structured))
    name, given = named_prompt(messages, *WRITER_PART_TEMPLATES)
    urls = [str(url) for url in given.get("urls") or []]
    numbered = dict(zip((str(key) for key in given.get("keys") or []), urls, strict=False))
    notes = [_numbers_to_urls(str(note), numbered) for note in given.get("notes") or []]
    if name.endswith("_section"):
        heading = words(notes[0].split("\n", 1)[0].lstrip("#"), 8) if notes else f"Part {given.get('number')}"
        allowed = [(text, url) for note in notes for text, url in cited(note) if url in urls]
        lines = list(dict.fromkeys(f"- {one_sentence(text)} [source]({url})." for text, url in allowed))
        return f"## {heading}\n\n" + ("\n".join(lines) or "No findings.") + "\n"
    flagged = [str(c) for c in given.get("unsupported") or []]
    lines = [
        f"- {claim} [source]({urls[0]})."
        for claim in unsupported_claims
        if urls and _states(claim, corrects, name, notes, flagged)
    ]
    lines += [f"- A further claim [unverified]({url})." for url in invented_urls]
    chain = str(given.get("causal_chain") or "")
    steps = sum(1 for line in chain.splitlines() if line[:1].isdigit())
    return (
        f"# Summary\n\n## {given.get('summary') or SUMMARY_HEADING}\n\n"
        f"This summary covers the question: {words(str(given.get('brief') or ''), 30)}\n\n"
        + (f"This summary follows a causal chain of {steps} step(s).\n\n" if chain else "")
        + "\n".join(lines)
    ).strip() + "\n"


def _structured_text(messages: list[ChatMessage]) -> dict[str, Any]:
    """The variables of a ``structured`` prompt read back from its text (over HTTP a prompt's meta does not travel)."""
    found = _STRUCTURED_TEXT.match(last_user_text(messages))
    if found is None:
        return {}
    sources = [line.removeprefix("- ") for line in found["sources"].splitlines() if line.startswith("- ")]
    return {"schema": found["schema"], "report": found["report"], "sources": sources}


def _numbers_to_urls(note: str, numbered: dict[str, str]) -> str:
    """A note the writer reads cites its sources by number (see ``report.sections``): read them as their URLs."""
    return re.sub(r"\]\((\d+)\)", lambda match: f"]({numbered.get(match[1], match[1])})", note)


def _states(claim: str, corrects: str, template: str, notes: list[str], unsupported: list[str]) -> bool:
    if corrects == "on_rewrite":
        return not (template.startswith("rewrite_") and any(claim in text for text in unsupported))
    if corrects == "on_new_evidence":
        return not any(claim in note for note in notes)
    return True
