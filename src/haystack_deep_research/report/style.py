"""
The form of a report: its type, its tone and its length, honoured by the writer of every shape.

:class:`ReportStyle` is a small value object, checked when it is made. The default (a ``research_report``, objective,
of the writer's usual length) is the report as the library always wrote it, and adds nothing to the writer's
prompts; any other style adds one block to the writer's system prompt (:data:`~haystack_deep_research._prompts.
REPORT_STYLE`, rendered with the style's values as template variables) and, for the report written in parts, sets
the words asked of each part. Citation rules and their verification are the same for every style.

The form is also kept once the report is written (:func:`in_form`), whatever the writer made of the prompt: an
``outline`` has no prose (each paragraph outside a list becomes one bullet per sentence, under the same headings), a
``resource_list`` shows under each item that cites a source the run read that source's passage behind it (the
window of its stored text that best matches the item, chosen by the library, as a plain-text quote: see
:mod:`.passages`), and an ``executive_brief`` without a length aims at :data:`BRIEF_WORDS` words.

A target length is checked once the report is written: a report that runs to less than half its target, or more
than half as long again, gets a warning saying how many words it has (:meth:`ReportStyle.length_warning`; words
are counted by :func:`word_count`, link targets and URLs left out, a run of CJK characters counting one word per two
characters).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_deep_research._prompts import (
    OPENING_WORDS,
    REPORT_LENGTHS,
    REPORT_STYLE,
    REPORT_TYPES,
    SECTION_WORDS,
    TONES,
    render_text,
)
from haystack_deep_research._serialization import FieldsSerialized
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence._reader import reader
from haystack_deep_research.evidence.citations import body_sentences
from haystack_deep_research.evidence.text import clean_text, plain_title
from haystack_deep_research.report.passages import cited_passages

__all__ = ["DEFAULT_REPORT_TYPE", "DEFAULT_TONE", "ReportStyle", "in_form", "word_count"]

DEFAULT_REPORT_TYPE = "research_report"
DEFAULT_TONE = "objective"
MAX_TONE_CHARS = 80
MIN_WORDS, MAX_WORDS = 100, 20_000
_PART_WORDS = {"detailed_report": (OPENING_WORDS, 2 * SECTION_WORDS), "executive_brief": (OPENING_WORDS, 150)}
"""The words asked of the opening and of each section by type, when no length is given (else the defaults)."""
BRIEF_WORDS = 500
"""The target length of an ``executive_brief`` given no ``report_length``."""
LENGTH_TOLERANCE = 0.5
"""How far from its target length, as a share of the target, a report may run before a warning says so."""
_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|(?:https?|doc|file|mcp)://\S+", re.IGNORECASE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_WORD = re.compile(r"[^\W_]")


def word_count(text: str) -> int:
    """
    :param text: Markdown text.
    :returns: How many words a reader reads in it: link targets and URLs left out, a run of CJK characters counting
        one word per two characters.
    """
    plain = _LINK_TARGET.sub(" ", text)
    cjk = sum((len(run) + 1) // 2 for run in _CJK.findall(plain))
    return cjk + sum(1 for token in _CJK.sub(" ", plain).split() if _WORD.search(token))


@dataclass(frozen=True)
class ReportStyle(FieldsSerialized):
    """
    The form of a report.

    :param report_type: One of :data:`~haystack_deep_research._prompts.REPORT_TYPES`: "research_report" (default),
        "detailed_report", "outline", "resource_list", "executive_brief".
    :param tone: "objective" (default), "formal", "analytical", "informal", or a short free text (up to 80
        characters, one line), for example "plain language for a general audience".
    :param report_length: The report's target length: words (100 to 20,000), "short", "medium" or "long", or
        ``None`` for the writer's usual length.
    :raises ConfigurationError: If a value is not one of those accepted; the message names them.
    """

    report_type: str = DEFAULT_REPORT_TYPE
    tone: str = DEFAULT_TONE
    report_length: int | str | None = None

    def __post_init__(self) -> None:
        if self.report_type not in REPORT_TYPES:
            raise ConfigurationError(f"report_type must be one of {', '.join(REPORT_TYPES)}; got {self.report_type!r}.")
        tone = " ".join(clean_text(self.tone).split()) if isinstance(self.tone, str) else ""
        if not tone or len(tone) > MAX_TONE_CHARS:
            raise ConfigurationError(
                f"tone must be one of {', '.join(TONES)}, or a short description of up to {MAX_TONE_CHARS} "
                f"characters; got {self.tone!r}."
            )
        object.__setattr__(self, "tone", tone)
        length = self.report_length
        words = isinstance(length, int) and not isinstance(length, bool) and MIN_WORDS <= length <= MAX_WORDS
        if length is not None and not words and length not in REPORT_LENGTHS:
            raise ConfigurationError(
                f"report_length must be a number of words from {MIN_WORDS} to {MAX_WORDS}, or one of "
                f"{', '.join(REPORT_LENGTHS)}; got {length!r}."
            )

    @property
    def is_default(self) -> bool:
        """Whether this is the report as the library always wrote it (nothing is added to the prompts)."""
        return self == ReportStyle()

    @property
    def words(self) -> int | None:
        """The target length in words, or ``None`` for the writer's usual length."""
        length = self.report_length
        if length is None and self.report_type == "executive_brief":
            return BRIEF_WORDS
        return REPORT_LENGTHS[length] if isinstance(length, str) else length

    def part_words(self, sections: int) -> tuple[int, int]:
        """
        :param sections: How many sections the report written in parts has.
        :returns: The most words asked of the opening and of each section.
        """
        if self.words is None:
            return _PART_WORDS.get(self.report_type, (OPENING_WORDS, SECTION_WORDS))
        opening = max(60, min(OPENING_WORDS * 2, self.words // 5))
        return opening, max(60, (self.words - opening) // max(sections, 1))

    def length_warning(self, report: str) -> str | None:
        """
        :param report: The report as written.
        :returns: A warning when it misses its target length by more than :data:`LENGTH_TOLERANCE` (see the module
            docstring), else ``None`` (also without a target).
        """
        target = self.words
        if target is None:
            return None
        words = word_count(report)
        if abs(words - target) <= LENGTH_TOLERANCE * target:
            return None
        missed = "short of" if words < target else "well past"
        length = f"report_length={self.report_length!r}"
        return f"the report runs to {words} words, {missed} its target of about {target} ({length})"

    def apply(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """
        Add the style's block to a writer prompt's system message (nothing for the default style).

        :param messages: A rendered writer prompt: a system message, then the user message.
        :returns: The prompt the writer is sent.
        """
        if self.is_default or not messages or not messages[0].text:
            return messages
        block = render_text(
            REPORT_STYLE, types=REPORT_TYPES, report_type=self.report_type, tone=self.tone, words=self.words
        )
        return [ChatMessage.from_system(f"{messages[0].text}\n\n{block}"), *messages[1:]]

    @classmethod
    def of(cls, value: ReportStyle | dict[str, Any] | None) -> ReportStyle:
        """
        :param value: A style, a serialized one (``to_dict``), or ``None`` for the default.
        :returns: The style.
        :raises ConfigurationError: If ``value`` is none of these.
        """
        if value is None:
            return cls()
        if isinstance(value, ReportStyle):
            return value
        if isinstance(value, dict):
            return cls.from_dict(value)
        raise ConfigurationError(f"style must be a ReportStyle; got {type(value).__name__}.")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReportStyle:
        """
        :param data: What ``to_dict`` returned.
        :returns: The style.
        """
        known = ("report_type", "tone", "report_length")
        return cls(**{key: data[key] for key in known if key in data})


def _bulleted(report: str) -> str:
    """The report with each top-level paragraph turned into one bullet per sentence."""
    lines = report.split("\n")
    paragraphs = [
        token.map
        for token in reader().parse(report)
        if token.type == "paragraph_open" and token.level == 0 and token.map is not None
    ]
    for first, end in reversed(paragraphs):
        text = " ".join(line.strip() for line in lines[first:end])
        bullets = [f"- {sentence.text}" for sentence in body_sentences(text)] or [f"- {text}"]
        lines[first:end] = bullets
    return "\n".join(lines)


def _with_passages(report: str, ledger: EvidenceLedger) -> str:
    """The report with the passage behind each list item's first citation of a source read, quoted under it."""
    lines = report.split("\n")
    quoted: dict[int, str] = {}
    for found in cited_passages(report, ledger):
        number = next((i for i, line in enumerate(lines) if found["sentence"] in line), -1)
        passage = plain_title(found["passage"])
        if number >= 0 and lines[number].lstrip().startswith(("- ", "* ", "+ ")) and passage:
            quoted.setdefault(number, passage)
    for number, passage in sorted(quoted.items(), reverse=True):
        if number + 1 < len(lines) and lines[number + 1].lstrip().startswith(">"):
            continue  # quoted already (a rewrite keeps the parts it did not write)
        indent = " " * (len(lines[number]) - len(lines[number].lstrip()) + 2)
        lines.insert(number + 1, f"{indent}> {passage}")
    return "\n".join(lines)


def in_form(style: ReportStyle, report: str, ledger: EvidenceLedger) -> str:
    """
    Keep a written report in its style's form (see the module docstring).

    :param style: The report's style.
    :param report: The report as rendered from its parts.
    :param ledger: The run's evidence ledger, holding the passages a resource list quotes.
    :returns: The report in its form (the same text for the other types).
    """
    if style.report_type == "outline":
        return _bulleted(report)
    if style.report_type == "resource_list":
        return _with_passages(report, ledger)
    return report
