"""How the scripted ``writer`` and ``judge`` roles answer: a report or one of its parts citing the allowed URLs, an
answer to a question about a finished run from the passages sharing its words, and verdicts by the words a source
holds."""

from __future__ import annotations

import json
import re
from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_deep_research._prompts import (
    NOT_ANSWERED_REPLY,
    OMITTED,
    PAGE_SEPARATOR,
    SUMMARY_HEADING,
    WRITER_PART_TEMPLATES,
)
from haystack_deep_research.testing._messages import last_user_text, named_prompt, words

__all__ = ["answer_reply", "judge_reply", "judge_variables", "writer_reply"]

_URL = re.compile(r"(?:https?|file|doc)://[^\s<>()\"'\]]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LONG_WORD = re.compile(r"[^\W\d_]{4,}")
_SOURCE = re.compile(r"<untrusted_source[^>]*>\n(.*?)\n</untrusted_source>", re.DOTALL)
_CLAIMS = re.compile(r"<untrusted_claims>\n(.*?)</untrusted_claims>", re.DOTALL)
_CLAIM = re.compile(r"^\d+\. (.*)$", re.MULTILINE)
_PAGE_SOURCE = re.compile(r"^Source: (\S+)$", re.MULTILINE)
_QUESTION = re.compile(r"<untrusted_question>\n(.*?)\n</untrusted_question>", re.DOTALL)
_PASSAGE = re.compile(r'<untrusted_passage source="(\d+)">\n(.*?)\n\n(.*?)\n</untrusted_passage>', re.DOTALL)
_COMMON = {"what", "which", "does", "about", "this", "that", "with", "from", "have", "were", "when", "where", "many"}


def judge_variables(text: str) -> dict[str, Any]:
    """
    The ``source`` and numbered ``claims`` of a judge prompt's text without its meta (over HTTP); ``{}`` when
    it has no such blocks.
    """
    source, claims = _SOURCE.search(text), _CLAIMS.search(text)
    if source is None or claims is None:
        return {}
    return {"source": source.group(1), "claims": _CLAIM.findall(claims.group(1))}


def writer_reply(messages: list[ChatMessage], invented_urls: list[str]) -> str:
    """The scripted writer's reply to any writer prompt (see :mod:`..generators`)."""
    if (answer := answer_reply(messages)) is not None:
        return answer
    name, given = named_prompt(messages, *WRITER_PART_TEMPLATES)
    if name.endswith("_section"):
        return _section(given)
    if name.endswith("_opening"):
        return _opening(given, invented_urls)
    # a prompt without its meta (over HTTP): a whole report citing every address the prompt holds
    urls = list(dict.fromkeys(_URL.findall(last_user_text(messages)))) + invented_urls
    findings = "\n".join(f"- Finding {i} is supported by [source {i}]({u})." for i, u in enumerate(urls, 1))
    sources = "\n".join(f"- [source {i}]({u})" for i, u in enumerate(urls, 1))
    return (
        f"# Research report\n\n## Executive summary\n\n{words(str(given.get('brief') or ''), 40)}\n\n"
        f"## Findings\n\n{findings or 'No findings.'}\n\n## Sources\n\n{sources or 'No sources.'}\n"
    )


def answer_reply(messages: list[ChatMessage]) -> str | None:
    """
    The reply of any writer role to a question about a finished run (also over HTTP), or ``None`` when the prompt
    is not one: for each passage, its first sentence sharing a word of four letters or more with the question, citing
    the passage by number; the fixed reply when no passage shares one.
    """
    text = last_user_text(messages)
    if (found := _QUESTION.search(text)) is None:
        return None
    question, passages = found.group(1), _PASSAGE.findall(text)
    asked = {w.casefold() for w in _LONG_WORD.findall(question)} - _COMMON
    lines = []
    for number, title, text in passages:
        sentences = re.split(r"(?<=[.!?\u3002])\s+", " ".join(text.split()))
        shared = [s for s in sentences if asked & {w.casefold() for w in _LONG_WORD.findall(s)}]
        if shared:
            lines.append(f"- {words(shared[0], 25).rstrip('.')} [{words(title, 6)}]({number}).")
    return "\n".join(lines) if lines else NOT_ANSWERED_REPLY


def _opening(given: dict[str, Any], invented_urls: list[str]) -> str:
    """
    A title (the brief, when the prompt asks for a lead-in to the findings as the iterative agent's does), the brief's
    first words as the summary, and one short part per further heading the prompt asks for.
    """
    brief = words(str(given.get("brief") or ""), 40)
    findings = " ".join(f"A key finding [source]({url})." for url in invented_urls)
    summary = str(given.get("summary") or SUMMARY_HEADING)
    title = " ".join(str(given.get("brief") or "").split()) if given.get("findings") else "Research report"
    text = f"# {title}\n\n## {summary}\n\n{brief} {findings}".strip() + "\n"
    if given.get("findings"):
        text += f"\n## {given['findings']}\n\nThe themes of the topics searched follow below.\n"
    return text + "".join(f"\n## {heading}\n\n-\n" for heading in given.get("closing") or [])


def _page_summaries(note: str) -> dict[str, str]:
    """The first words of each page summary a note holds (as a read_url result gives it), by the page's URL."""
    found = {}
    for block in note.split(PAGE_SEPARATOR):
        source = _PAGE_SOURCE.search(block)
        _, label, summary = block.partition("Summary:")
        if not label:  # a short page's passages, handed to the researcher as they are
            _, label, passages = block.partition("Passages:")
            lines = [line for line in passages.splitlines() if not line.lstrip().startswith("<")]  # its fence's tags
            summary = " ".join(lines).replace(OMITTED, " ")
        if source is not None and label:
            found[source.group(1)] = " ".join(summary.split()[:20]).rstrip(".")
    return found


def _section(given: dict[str, Any]) -> str:
    number = given.get("number") or 1
    notes = [str(note) for note in given.get("notes") or []]
    heading = words(notes[0].split("\n", 1)[0].lstrip("#"), 6) if notes else f"Part {number}"
    urls = [str(url) for url in given.get("urls") or []]
    pages = {url: text for note in notes for url, text in _page_summaries(note).items()}
    lines = [
        f"- {pages[u]} [source]({u})." if pages.get(u) else f"- Finding {number}.{i} is supported by [source {i}]({u})."
        for i, u in enumerate(urls, 1)
    ]
    findings = "\n".join(lines)
    return f"## {heading}\n\n{findings or 'No findings.'}\n"


def judge_reply(given: dict[str, Any]) -> str:
    """The scripted judge's verdicts: a claim is supported when the source holds its numbers and most of its words."""
    source = str(given.get("source") or "").lower()
    verdicts = []
    for number, claim in enumerate(given.get("claims") or [], 1):
        words = [w.lower() for w in _LONG_WORD.findall(str(claim))]
        numbers_found = all(n in source for n in _NUMBER.findall(str(claim)))
        words_found = sum(w in source for w in words) * 2 >= len(words)
        supported = numbers_found and words_found
        reason = "the source states it" if supported else "the source does not state it"
        verdicts.append({"id": number, "verdict": "supported" if supported else "unsupported", "reason": reason})
    return json.dumps({"verdicts": verdicts})
