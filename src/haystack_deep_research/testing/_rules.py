"""
The rules of the scripted roles (see :mod:`~haystack_deep_research.testing.generators`), answered from the prompt's
template variables, never from its wording; over HTTP, where a prompt has no meta, from the prompt's text.
docs/testing.md states each rule.
"""

from __future__ import annotations

import json
import re
from typing import Any

from haystack.dataclasses import ChatMessage, ChatRole, ToolCall

from haystack_deep_research._prompts import (
    DATASTORE_TOOL_PREFIX,
    DOCUMENT_SEPARATOR,
    NOT_ANSWERED_REPLY,
    OMITTED,
    PAGE_SEPARATOR,
    READ_URL,
    SUMMARY_HEADING,
    WEB_SEARCH,
    WRITER_PART_TEMPLATES,
    prompt_of,
)


def last_user_text(messages: list[ChatMessage]) -> str:
    return next((m.text for m in reversed(messages) if m.is_from(ChatRole.USER) and m.text), "")


def named_prompt(messages: list[ChatMessage], *names: str) -> tuple[str, dict[str, Any]]:
    """The name and variables of the last user message rendered from one of the named templates."""
    for message in reversed(messages):
        found = prompt_of(message) if message.is_from(ChatRole.USER) else None
        if found is not None and (not names or found[0] in names):
            return found
    return "", {}


def prompt_variables(messages: list[ChatMessage], *names: str) -> dict[str, Any]:
    """The variables of the last user message rendered from one of the named templates (``{}`` if none)."""
    return named_prompt(messages, *names)[1]


def tool_results(messages: list[ChatMessage], *, errors: bool = True) -> list[tuple[str, str]]:
    return [
        (m.tool_call_result.origin.tool_name, str(m.tool_call_result.result))
        for m in messages
        if m.tool_call_result is not None and (errors or not m.tool_call_result.error)
    ]


def words(text: str, limit: int) -> str:
    return " ".join(text.split()[:limit])


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
    """The ``source`` and numbered ``claims`` of a judge prompt's text (over HTTP: no meta); ``{}`` if it has none."""
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
    """Any writer role's reply to a question about a finished run (also over HTTP); ``None`` for another prompt."""
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


_LABEL = re.compile(r"^[A-Z][a-z]*:$")


def _is_store_search(name: str) -> bool:
    return name.startswith(DATASTORE_TOOL_PREFIX)


def researcher_reply(
    messages: list[ChatMessage], offered: list[str], *, read_top_k: int, invented_urls: list[str]
) -> ChatMessage | str:
    """The researcher's next turn: the searches, then ``read_url`` on the top web results, then its findings."""
    given = prompt_variables(messages, "researcher_task", "execute_task", "replan_task")
    task = given.get("subtopic") or "; ".join(given.get("claims") or []) or given.get("question")
    subtopic = str(task or last_user_text(messages)).strip()
    if not tool_results(messages) and offered:
        names = [name for name in offered if name == WEB_SEARCH or _is_store_search(name)] or [WEB_SEARCH]
        calls = [ToolCall(tool_name=name, arguments={"query": subtopic}) for name in names]
        return ChatMessage.from_assistant(tool_calls=calls)
    last_reply = max((i for i, m in enumerate(messages) if m.is_from(ChatRole.ASSISTANT)), default=-1)
    searched = [text for name, text in tool_results(messages[last_reply + 1 :], errors=False) if name == WEB_SEARCH]
    if searched and offered:
        urls = list(dict.fromkeys(url for text in searched for url in _URL.findall(text)))[:read_top_k]
        if urls:
            arguments = {"urls": urls, "question": subtopic}
            return ChatMessage.from_assistant(tool_calls=[ToolCall(tool_name=READ_URL, arguments=arguments)])
    lines = []
    for tool, result in tool_results(messages, errors=False):  # a failed call gives nothing to cite
        if tool == READ_URL:
            blocks = result.split(PAGE_SEPARATOR)
        elif _is_store_search(tool):
            blocks = result.split(DOCUMENT_SEPARATOR)
        else:
            continue
        for part in blocks:
            block = part
            if part.startswith("Could not read "):  # the failure is no finding; the snippet it gives may be one
                block = part.partition("<untrusted_snippet")[2].partition("</untrusted_snippet>")[0]
            found = _URL.search(block)
            text = " ".join(line for line in block.splitlines() if not line.lstrip().startswith("<"))
            kept = [w for w in text.split() if not _URL.search(w) and not _LABEL.match(w)]
            if found and kept:
                lines.append(f"- {words(' '.join(kept), 30)} [source]({found.group(0)})")
    lines += [f"- A further claim [unverified]({url})" for url in invented_urls]
    if not lines:
        return f"Findings on {subtopic}: no readable sources were found."
    return f"Findings on {subtopic}:\n" + "\n".join(lines)


_HTTP_URL = re.compile(r"https?://[^\s<>()\"'\]]+")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_CITED_LINE = re.compile(r"^\s*[-*]\s+(.*\[[^\]]*\]\((https?://[^)\s]+)\).*)$")
_STRUCTURED_TEXT = re.compile(
    r"^JSON schema:\n(?P<schema>.*?)\n\n<untrusted_report>\n(?P<report>.*)\n</untrusted_report>\n\n"
    r"Sources of the report:\n<untrusted_sources>\n(?P<sources>.*?)</untrusted_sources>",
    re.DOTALL,
)


def fill_schema(schema: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """An object for a JSON schema, filled from the ``report`` and ``sources`` of a ``structured`` prompt."""
    report = str(given.get("report") or "")
    paragraphs = [p.strip() for p in report.split("\n\n") if p.strip() and not p.lstrip().startswith(("#", "-"))]
    findings = [claim for text, _ in cited(report) if (claim := one_sentence(text))]
    sources = [found.group(0) for source in given.get("sources") or [] if (found := _HTTP_URL.search(str(source)))]
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
    plain = _HTTP_URL.sub("", _LINK.sub("", text))
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
    """The scripted ``summarize`` role's reply: a structured-output JSON, or a part of the summary."""
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
    """A note the writer reads cites its sources by number (see ``report.source_keys``): read them as their URLs."""
    return re.sub(r"\]\((\d+)\)", lambda match: f"]({numbered.get(match[1], match[1])})", note)


def _states(claim: str, corrects: str, template: str, notes: list[str], unsupported: list[str]) -> bool:
    if corrects == "on_rewrite":
        return not (template.startswith("rewrite_") and any(claim in text for text in unsupported))
    if corrects == "on_new_evidence":
        return not any(claim in note for note in notes)
    return True


ASPECTS = ("overview", "recent developments", "open questions", "applications", "risks", "outlook")
_ANALYSIS_QUESTION = re.compile(r"Research question:\n(.+?)\n\nSearch round (\d+) of (\d+)\.", re.DOTALL)


def analysis_variables(text: str) -> dict[str, Any]:
    """The ``question``, ``round`` and ``depth`` of an analysis prompt's text (over HTTP); ``{}`` if it has none."""
    found = _ANALYSIS_QUESTION.search(text)
    if found is None:
        return {}
    return {"question": found.group(1).strip(), "round": int(found.group(2)), "depth": int(found.group(3))}


def _decision(step: Any) -> str:
    if isinstance(step, dict):
        if "reply" in step:
            return str(step["reply"])
        return _decision(step.get("topic"))
    if step is None:
        return json.dumps({"nextSearchTopic": None, "shouldContinue": False})
    return json.dumps({"nextSearchTopic": step, "shouldContinue": True}, ensure_ascii=False)


def analysis_reply(name: str, given: dict[str, Any], steps: list[Any]) -> str:
    """The analysis model's reply to a prompt (``analysis`` or ``analysis_retry``), by the scripted steps."""
    number = int(given.get("round") or 1)
    if not steps:
        if number > int(given.get("depth") or 3):
            return _decision(None)
        return _decision(f"{given.get('question')} ({ASPECTS[(number - 1) % len(ASPECTS)]})")
    step = steps[number - 1] if number - 1 < len(steps) else None
    if isinstance(step, dict):
        if name == "analysis_retry" and "retry" in step:
            return _decision(step["retry"])
        if given.get("refused") and "instead" in step:
            return _decision(step["instead"])
    return _decision(step)
