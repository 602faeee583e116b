"""
Topics already searched, and which proposed topics repeat them.

A proposed topic is refused when it repeats a topic searched before (or one proposed earlier in the same round) in
all but wording. Each topic is reduced to its content words: Unicode NFKC, case folded, punctuation dropped, common
English function words ("in", "the", "of", ...) dropped, each word once, sorted. Two topics repeat each other when
these agree, or when rapidfuzz's normalized Indel similarity (``fuzz.ratio``) of the two word lists is at least
``similarity`` (0.88 by default): word order, punctuation, case, filler words and small spelling differences
("cost" / "costs", "AI-based" / "AI") do not hide a repeat, while one more content word ("solar capacity growth"
after "solar capacity") makes a new topic. Text without spaces (Chinese) is compared character by character
("AI医疗诊断的最新进展" repeats "AI医疗诊断最新进展"). Two topics whose numbers differ are never repeats ("solar
capacity 2024" and "solar capacity 2025" are two searches). Paraphrases in other words ("recent" for "latest",
"breakthroughs in diagnostic AI") are not caught here; the analysis model sees every topic searched and is asked for
different ones.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["DEFAULT_SIMILARITY", "TopicFilter", "normalize_topic"]

DEFAULT_SIMILARITY = 0.88
"""The similarity (0 to 1) from which a proposed topic counts as a repeat."""

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# fmt: off
_FUNCTION_WORDS = frozenset({
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "in", "into", "is",
    "it", "its", "of", "on", "or", "the", "to", "what", "when", "where", "which", "who", "why", "with",
})
# fmt: on


def normalize_topic(topic: str) -> str:
    """
    :param topic: A search topic.
    :returns: Its comparison form: its content words (NFKC, case folded, punctuation and function words dropped),
        each once, sorted.
    """
    from rapidfuzz import utils  # imported when the iterative agent first compares topics

    words = utils.default_process(unicodedata.normalize("NFKC", topic).casefold()).split()
    return " ".join(sorted({word for word in words if word not in _FUNCTION_WORDS}))


class TopicFilter:
    """
    The topics a run searched, and the check of new proposals against them.

    :param searched: The topics already searched.
    :param similarity: From this similarity (0 to 1) on, a proposal counts as a repeat.
    """

    def __init__(self, searched: list[str] | tuple[str, ...], *, similarity: float = DEFAULT_SIMILARITY) -> None:
        self.similarity = similarity
        self._known = [normalize_topic(topic) for topic in searched]

    def repeats(self, topic: str) -> bool:
        """
        :param topic: A proposed topic.
        :returns: Whether it repeats a known topic (see the module docstring).
        """
        candidate = normalize_topic(topic)
        if not candidate:
            return True
        numbers = set(_NUMBER.findall(candidate))
        for known in self._known:
            if numbers != set(_NUMBER.findall(known)):
                continue
            if candidate == known or _similarity(candidate, known) >= self.similarity * 100:
                return True
        return False

    def split(self, proposed: list[str]) -> tuple[list[str], list[str]]:
        """
        Keep the new proposals and refuse the repeats; a kept one becomes known, so a later repeat of it in the same
        list is refused too.

        :param proposed: The proposed topics, in order.
        :returns: ``(new, refused)``, each in the proposed order.
        """
        new, refused = [], []
        for topic in proposed:
            if self.repeats(topic):
                refused.append(topic)
            else:
                new.append(topic)
                self._known.append(normalize_topic(topic))
        return new, refused


def _similarity(first: str, second: str) -> float:
    """rapidfuzz's normalized Indel similarity, 0 to 100."""
    from rapidfuzz import fuzz

    return float(fuzz.ratio(first, second))
