"""
The text the simulated model writes: briefs, page summaries, researcher summaries and reports.

Every piece is built from what is in the model's input (findings, URLs), so it carries the same facts both
libraries fed it. The only invention is deliberate: the writer can replace a citation with a made-up URL at a set
rate, decided by a hash of the citation, so both libraries get the same decision for the same note.
"""

from __future__ import annotations

import hashlib
import json
import re
from urllib.parse import urlsplit

FINDING = re.compile(r"Finding [A-Z]+-\d+-\d+-\d+: [^\n]*? sample\.")
URL = re.compile(r"https?://[^\s<>\"')\]]+")
ASPECTS = re.compile(r"Aspects to cover: ([^.\n]+)")
TOPIC = re.compile(r"evidence (?:says? )?about ([^?.\n]+)")
SOURCE_LINE = re.compile(r"\bSource: (https?://[^\s<>\"')\]]+)")


def unit_hash(*parts: object) -> float:
    """A number in ``[0, 1)`` decided only by ``parts``: the simulator's source of repeatable chance."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def urls_in(text: str) -> list[str]:
    """Every URL in ``text``, in order of first appearance, without trailing punctuation."""
    seen: dict[str, None] = {}
    for match in URL.findall(text):
        seen.setdefault(match.rstrip(".,;:"), None)
    return list(seen)


def findings_in(text: str) -> list[str]:
    """Every distinct finding sentence in ``text``, in order."""
    return list(dict.fromkeys(FINDING.findall(text)))


def topic_and_aspects(text: str) -> tuple[str, list[str]]:
    """
    The topic and the aspects named in a question or brief.

    :param text: The text to read.
    :returns: ``(topic, aspects)``; the topic falls back to the first line, the aspects to an empty list.
    """
    topic_match = TOPIC.search(text)
    topic = topic_match.group(1).strip() if topic_match else text.strip().splitlines()[0][:80] if text.strip() else ""
    aspects_match = ASPECTS.search(text)
    aspects = [a.strip() for a in aspects_match.group(1).split(";") if a.strip()] if aspects_match else []
    return topic, aspects


def brief(question: str) -> str:
    """The research brief the scope role writes for a question."""
    topic, aspects = topic_and_aspects(question)
    listed = "; ".join(aspects) if aspects else "the main dimensions of the question"
    return (
        f"Research brief. Objective: establish what the evidence says about {topic}. "
        f"Aspects to cover: {listed}. "
        "For each aspect, find measured figures from primary reports, note the sample and region they describe, "
        "and say where sources disagree or the evidence is thin. Prefer recent field studies and official "
        "statistics. A good report opens with an executive summary, gives one section per aspect, and cites every "
        "figure with the exact URL of the page it came from."
    )


def page_summary(document: str, limit: int = 5) -> str:
    """The summarizer's condensation of a page: its first findings and any URL it was given."""
    findings = findings_in(document)[:limit]
    urls = urls_in(document)
    lines = ["Relevant findings from the document:"] if findings else ["The document does not address the question."]
    lines.extend(f"- {f}" for f in findings)
    if urls:
        lines.append(f"Source: {urls[0]}")
    return "\n".join(lines)


def researcher_summary(
    subtopic: str, evidence: list[tuple[str, str]], per_source: int = 2, *, invent_rate: float = 0.0, seed: int = 0
) -> str:
    """
    The researcher's final answer: findings from each page it read, each cited with that page's exact URL.

    With ``invent_rate`` > 0 a finding's citation is replaced by a made-up URL on the same site when a hash of
    (seed, finding, url path) falls under the rate, the same decision for every library.

    :param subtopic: The sub-topic researched.
    :param evidence: ``(url, tool result)`` pairs for the pages read, in the order they were read.
    :param per_source: Findings kept per page.
    :param invent_rate: Share of citations to replace with invented URLs, 0 to 1.
    :param seed: Mixed into the hash.
    :returns: The summary with a ``Sources:`` list.
    """
    sentences: list[str] = []
    cited: list[str] = []
    for url, result in evidence:
        for finding in findings_in(result)[:per_source]:
            cite = url
            if invent_rate > 0 and unit_hash(seed, "research-invent", finding, urlsplit(url).path) < invent_rate:
                cite = _invented(url, f"{seed}:research:{finding}")
            cited.append(cite)
            sentences.append(f"{finding[:-1]} ([source]({cite})).")
    cited = list(dict.fromkeys(cited))
    if not cited:
        return f"Summary for {subtopic}: none of the pages read could be used, so this sub-topic remains open."
    body = " ".join(sentences)
    sources = "\n".join(f"- {u}" for u in cited)
    return f"Summary for {subtopic}. {body}\n\nSources:\n{sources}"


def _invented(url: str, salt: str) -> str:
    parts = urlsplit(url)
    folder = parts.path.rsplit("/", 1)[0]
    number = 90 + int(unit_hash(salt, parts.path) * 900)
    return f"{parts.scheme}://{parts.netloc}{folder}/{number}.html"


def sourced_findings(text: str) -> list[tuple[str, str]]:
    """
    The findings the input ties to a URL, as ``(finding without its full stop, url)`` pairs, in order.

    A finding is tied to a URL by a citation right after it (``... ([source](url))``, as notes cite) or, where the
    input holds no such citation, by the ``Source: URL`` line above the passage it sits in (as a context laid out
    one retrieved passage per source gives it; a context may run such blocks on from one line).

    :param text: The writer's input.
    :returns: The pairs, each once.
    """
    cited = re.findall(r"(Finding [A-Z]+-\d+-\d+-\d+: [^(\n]*?)\s*\(\[source\]\((\S+?)\)\)", text)
    if cited:
        return list(dict.fromkeys(cited))
    parts = SOURCE_LINE.split(text)  # text before the first source, then (url, passage) after each
    under = [
        (finding[:-1], url.rstrip(".,;:"))
        for url, passage in zip(parts[1::2], parts[2::2], strict=True)
        for finding in findings_in(passage)
    ]
    return list(dict.fromkeys(under))


def _cited_findings(
    text: str, invent_rate: float, seed: int, style: str = "source"
) -> tuple[dict[str, list[str]], dict[str, None], int]:
    """The findings the input ties to a URL, as bullets grouped by the URL's folder, and the URLs cited."""
    pairs = sourced_findings(text)
    sections: dict[str, list[str]] = {}
    cited: dict[str, None] = {}
    for finding, real_url in pairs:
        url = real_url
        # Hash the path, not the host and port, so both libraries' runs (on different ports) decide alike.
        if invent_rate > 0 and unit_hash(seed, "invent", finding, urlsplit(url).path) < invent_rate:
            url = _invented(url, f"{seed}:{finding}")
        cited.setdefault(url, None)
        folder = urlsplit(url).path.rsplit("/", 2)[-2] if url.count("/") > 3 else "findings"
        bullet = f"- {finding} ([in-text citation]({url}))." if style == "in-text" else f"- {finding}. [source]({url})"
        sections.setdefault(folder.replace("-", " ").capitalize(), []).append(bullet)
    return sections, cited, len(pairs)


def section(text: str, *, invent_rate: float, seed: int) -> str:
    """
    One section of a report, as a writer asked for a single section writes it: a ``## `` heading named after the
    first aspect its findings come from, the findings as cited bullets (further aspects under ``### `` headings),
    and nothing else.

    :param text: Everything the writer was sent for this section.
    :param invent_rate: Share of citations to replace with invented URLs, 0 to 1.
    :param seed: Mixed into the hash.
    :returns: The section.
    """
    sections, _, count = _cited_findings(text, invent_rate, seed)
    if not count:
        return "## Findings\n\nThe notes for this section hold no cited findings."
    lines: list[str] = []
    for index, (title, bullets) in enumerate(sections.items()):
        lines += [*([""] if lines else []), f"{'##' if index == 0 else '###'} {title}", "", *bullets]
    return "\n".join(lines)


def opening(text: str, *, invent_rate: float, seed: int) -> str:
    """
    The opening of a report, as a writer asked only for it writes it: the title and the executive summary.

    :param text: Everything the writer was sent (the brief and the notes).
    :param invent_rate: Share of citations to replace with invented URLs, 0 to 1.
    :param seed: Mixed into the hash.
    :returns: The title and the executive summary.
    """
    topic, _ = topic_and_aspects(text)
    sections, cited, count = _cited_findings(text, invent_rate, seed)
    title = f"# {topic.capitalize() or 'Research report'}"
    return "\n".join([title, "", "## Executive summary", "", _summary(sections, cited, count)])


def _summary(sections: dict[str, list[str]], cited: dict[str, None], count: int) -> str:
    if not count:
        return "No cited findings were available."
    return (
        f"The evidence gathered covers {len(sections)} aspects with {count} cited findings from "
        f"{len(cited)} sources. Figures differ by region and sample; each is cited to its page below."
    )


def report(text: str, *, invent_rate: float, seed: int, style: str = "source") -> str:
    """
    The writer's Markdown report over its whole input.

    Each finding that the input ties to a URL (see :func:`sourced_findings`) becomes a bullet citing that URL;
    findings are grouped by the URL's folder (one folder per aspect in the corpus). With ``invent_rate`` > 0 a
    citation is replaced by a made-up URL on the same site when a hash of (seed, finding, url) falls under the rate.

    :param text: Everything the writer was sent.
    :param invent_rate: Share of citations to replace with invented URLs, 0 to 1.
    :param seed: Mixed into the hash.
    :param style: ``"source"``: each bullet ends ``[source](url)`` and a ``## Sources`` list of bare URLs closes
        the report; ``"in-text"``: each bullet ends ``([in-text citation](url)).`` and a ``## References`` list of
        ``[url](url)`` links closes it (what a request for in-text hyperlink citations and a reference list asks).
    :returns: The report.
    """
    topic, _ = topic_and_aspects(text)
    sections, cited, count = _cited_findings(text, invent_rate, seed, style)
    if not count:
        return (
            f"# {topic.capitalize() or 'Research report'}\n\n## Executive summary\n\nNo cited findings were available."
        )
    lines = [f"# {topic.capitalize()}", "", "## Executive summary", "", _summary(sections, cited, count)]
    for title, bullets in sections.items():
        lines += ["", f"## {title}", "", *bullets]
    if style == "in-text":
        lines += ["", "## References", "", *(f"- [{u}]({u})" for u in cited)]
    else:
        lines += ["", "## Sources", "", *(f"- {u}" for u in cited)]
    return "\n".join(lines)


def sub_queries(text: str, count: int) -> list[str]:
    """
    The search queries a planner writes for the task in ``text``: one per aspect it names, ``topic: aspect``.

    :param text: The planning request.
    :param count: How many queries are asked for.
    :returns: At most ``count`` queries (generic aspects fill in where the task names fewer).
    """
    topic, aspects = topic_and_aspects(text)
    aspects += [f"aspect {i + 1}" for i in range(len(aspects), count)]
    return [f"{topic}: {aspect}" for aspect in aspects[:count]]


def agent_choice(text: str) -> str:
    """
    The JSON a model answers when asked which research agent (a name and a role prompt) suits a task.

    :param text: The request, with the task.
    :returns: ``{"server": ..., "agent_role_prompt": ...}`` as JSON.
    """
    topic, _ = topic_and_aspects(text)
    role = (
        f"You are a meticulous research analyst AI assistant. Your goal is to write thorough, impartial and "
        f"well-cited research reports on {topic or 'the task'}, grounded in the figures of the sources provided."
    )
    return json.dumps({"server": "🔎 Research Analyst Agent", "agent_role_prompt": role}, ensure_ascii=False)
