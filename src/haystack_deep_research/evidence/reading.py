"""What a reader reads in a cited sentence: its words, with link text kept and URLs and citation markers dropped."""

from __future__ import annotations

import re
from collections.abc import Callable

from haystack_deep_research.evidence._reader import plain_text, reference_env
from haystack_deep_research.evidence._styles import marker_like

__all__ = ["sentence_reader"]

_URL_TEXT = re.compile(r"(?:https?:)?//[^\s<>]+|www\.[^\s<>]+", re.IGNORECASE)
_MARKERS = re.compile(
    r"\s*(?:\[\s*\^?\d{1,4}(?:\s*[,;\-\u2013]\s*\^?\d{1,4})*\s*\]|\[\^[^\[\]\s]{1,30}\]|\u3010[^\u3010\u3011]{1,80}\u3011)"
)


def sentence_reader(report: str) -> Callable[[str], str]:
    """
    A function that turns a sentence of ``report`` into what a reader reads in it (the claim a judge is shown).

    :param report: The Markdown report the sentences come from (its reference definitions resolve ``[text][label]``).
    :returns: ``read(sentence) -> text``: link text kept, URLs and citation markers (``[1]``, ``[^2]``, ``【3】``)
        dropped, whitespace collapsed.
    """
    env = reference_env(report)

    def read(sentence: str) -> str:
        text = plain_text(sentence, env, is_marker=marker_like)
        return " ".join(_MARKERS.sub("", _URL_TEXT.sub("", text)).split())

    return read
