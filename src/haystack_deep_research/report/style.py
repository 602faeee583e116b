"""
The form of a report: its type, tone, length, own outline and the user's instructions, honoured by the writer of
every shape and kept once the report is written (:func:`in_form`), whatever the writer made of the prompt
(docs/clarify-and-report-types.md gives the options and what each form looks like). The default style adds nothing
to the writer's prompts; any other adds one block to its system prompt (:meth:`ReportStyle.apply`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_deep_research._prompts import (
    OPENING_WORDS,
    REPORT_INSTRUCTIONS,
    REPORT_LENGTHS,
    REPORT_STYLE,
    REPORT_TYPES,
    SECTION_WORDS,
    TONES,
    fence,
    render_text,
)
from haystack_deep_research._serialization import FieldsSerialized
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence._markdown import reader
from haystack_deep_research.evidence._styles import is_title
from haystack_deep_research.evidence.citations import body_sentences
from haystack_deep_research.evidence.reading import headings
from haystack_deep_research.evidence.text import clean_text, plain_title
from haystack_deep_research.report.publish import cited_passages

__all__ = ["DEFAULT_REPORT_TYPE", "DEFAULT_TONE", "ReportStyle", "in_form", "outline_from_text", "word_count"]

DEFAULT_REPORT_TYPE = "research_report"
DEFAULT_TONE = "objective"
MAX_TONE_CHARS = 80
MIN_WORDS, MAX_WORDS = 100, 20_000
MAX_HEADINGS = 20
MAX_HEADING_CHARS = 120
MAX_INSTRUCTIONS_CHARS = 4_000
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
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
    """How many words a reader reads in Markdown: link targets and URLs left out, two CJK characters a word."""
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
    :param outline: The headings of the report's top-level sections, in order (up to 20, each one line of up to 120
        characters, no two alike, none naming the Sources list, which the library adds), kept as a tuple; empty for
        the sections the research finds.
    :param instructions: What the user asks of the writer besides, in their own words (up to 4,000 characters); they
        reach every part of the report, and cannot lift the citation rules.
    :raises ConfigurationError: If a value is not one of those accepted; the message names the field and what it
        accepts.
    """

    report_type: str = DEFAULT_REPORT_TYPE
    tone: str = DEFAULT_TONE
    report_length: int | str | None = None
    outline: Sequence[str] = ()
    instructions: str = ""

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
        object.__setattr__(self, "outline", _checked_outline(self.outline))
        object.__setattr__(self, "instructions", _checked_instructions(self.instructions))

    @property
    def is_default(self) -> bool:
        return self == ReportStyle()

    @property
    def words(self) -> int | None:
        length = self.report_length
        if length is None and self.report_type == "executive_brief":
            return BRIEF_WORDS
        return REPORT_LENGTHS[length] if isinstance(length, str) else length

    def part_words(self, sections: int) -> tuple[int, int]:
        """The most words asked of the opening and of each of ``sections`` sections."""
        if self.words is None:
            return _PART_WORDS.get(self.report_type, (OPENING_WORDS, SECTION_WORDS))
        opening = max(60, min(OPENING_WORDS * 2, self.words // 5))
        return opening, max(60, (self.words - opening) // max(sections, 1))

    def length_warning(self, report: str) -> str | None:
        """A warning when ``report`` misses its target length by more than :data:`LENGTH_TOLERANCE`, else ``None``."""
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
        Add the style's block to a rendered writer prompt's system message (nothing for the default style); the
        user's instructions come after the citation rules, which they cannot lift, marked as the user's.
        """
        if self.is_default or not messages or not messages[0].text:
            return messages
        blocks = [messages[0].text]
        if (self.report_type, self.tone, self.report_length) != (DEFAULT_REPORT_TYPE, DEFAULT_TONE, None):
            blocks.append(
                render_text(
                    REPORT_STYLE, types=REPORT_TYPES, report_type=self.report_type, tone=self.tone, words=self.words
                )
            )
        if self.instructions:
            blocks.append(render_text(REPORT_INSTRUCTIONS, instructions=fence(self.instructions)))
        return [ChatMessage.from_system("\n\n".join(blocks)), *messages[1:]]

    @classmethod
    def of(cls, value: ReportStyle | dict[str, Any] | None) -> ReportStyle:
        """A style, from a style, a serialized one or ``None`` (the default); ``ConfigurationError`` for others."""
        if value is None:
            return cls()
        if isinstance(value, ReportStyle):
            return value
        if isinstance(value, dict):
            return cls.from_dict(value)
        raise ConfigurationError(f"style must be a ReportStyle; got {type(value).__name__}.")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReportStyle:
        """The style from what ``to_dict`` returned; a key it does not know is ignored."""
        known = ("report_type", "tone", "report_length", "outline", "instructions")
        return cls(**{key: data[key] for key in known if key in data})


def _checked_outline(outline: object) -> tuple[str, ...]:
    if isinstance(outline, str) or not isinstance(outline, (list, tuple)):
        raise ConfigurationError(f"outline must be a list of headings; got {type(outline).__name__}.")
    if len(outline) > MAX_HEADINGS:
        raise ConfigurationError(f"outline may have at most {MAX_HEADINGS} headings; got {len(outline)}.")
    kept: list[str] = []
    for number, heading in enumerate(outline, 1):
        if not isinstance(heading, str):
            raise ConfigurationError(f"outline heading {number} must be text; got {type(heading).__name__}.")
        if _CONTROL.search(heading) or clean_text(heading) != heading:
            raise ConfigurationError(
                f"outline heading {number} holds a control character or a line break: {heading!r}; give one line."
            )
        text = " ".join(heading.split())
        if not text:
            raise ConfigurationError(f"outline heading {number} is empty.")
        if len(text) > MAX_HEADING_CHARS:
            raise ConfigurationError(
                f"outline heading {number} has {len(text)} characters; at most {MAX_HEADING_CHARS} are allowed."
            )
        name = text.rstrip(":").casefold()
        if is_title(text):  # the verifier's own rule: such a section would be read as the Sources list, and rebuilt
            raise ConfigurationError(
                f"outline heading {number} ({text!r}) reads as a Sources list (the library adds its own to every "
                "report, and would take that section for it); name it otherwise, e.g. 'Prior work' or 'Stand der "
                "Forschung'."
            )
        if name in (k.rstrip(":").casefold() for k in kept):
            raise ConfigurationError(f"outline heading {number} ({text!r}) repeats an earlier heading.")
        kept.append(text)
    return tuple(kept)


def _checked_instructions(instructions: object) -> str:
    if not isinstance(instructions, str):
        raise ConfigurationError(f"instructions must be text; got {type(instructions).__name__}.")
    text = clean_text(instructions).strip()
    if len(text) > MAX_INSTRUCTIONS_CHARS:
        raise ConfigurationError(
            f"instructions have {len(text)} characters; at most {MAX_INSTRUCTIONS_CHARS} are allowed."
        )
    return text


def outline_from_text(text: str) -> list[str]:
    """
    The headings of an outline written as text (an outline file's content), to check as :class:`ReportStyle`'s
    ``outline``: a Markdown document's ``#`` and ``##`` headings, in order, or, in a text without such headings, each
    line that is not blank (a leading list marker left out).
    """
    found = [heading.title for heading in headings(text) if heading.level <= 2]
    if found:
        return found
    lines = (line.strip() for line in text.splitlines())
    return [re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line) for line in lines if line]


def _bulleted(report: str) -> str:
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
    Keep a report rendered from its parts in its style's form: an outline's paragraphs become bullets, a resource
    list's items get their passages (from ``ledger``) quoted as plain text; other types keep the text.
    """
    if style.report_type == "outline":
        return _bulleted(report)
    if style.report_type == "resource_list":
        return _with_passages(report, ledger)
    return report
