"""
Applying the edits of a repair to a run of lines, in time linear in their length.

An edit replaces a span with new text, or *cuts* it: removes it with the blank before it (when what follows is a
blank, punctuation or the line's end) and a pair of parentheses it leaves empty, and with the blanks after it when
only blanks precede it on its line. Either way a line break inside the span stays, so the text keeps its lines.
The edits must not overlap; they are applied from the right, each seeing the text as the edits on its right left
it, kept as a stack of pieces rather than one string, so many edits on one long line stay cheap.
"""

from __future__ import annotations

import re

__all__ = ["Edit", "apply_edits"]

Edit = tuple[int, int, str | None]
"""``(start, end, replacement)``; a replacement of ``None`` cuts the span."""

_LEADING_BLANKS = re.compile(r"[^\S\n]*")
_AFTER_A_CUT = frozenset(" \t.,;:!?)")


def _first(right: list[str], *, solid: bool) -> str:
    """The first character of the line in ``right`` (the first non-blank one if ``solid``); ``""`` at its end."""
    for piece in reversed(right):
        for char in piece:
            if char == "\n":
                return ""
            if not (solid and char.isspace()):
                return char
    return ""


def _drop_blanks(right: list[str]) -> None:
    """Remove the blanks at the start of ``right``, up to a line break."""
    while right:
        blanks = _LEADING_BLANKS.match(right[-1])
        right[-1] = right[-1][blanks.end() if blanks else 0 :]
        if right[-1]:
            return
        right.pop()


def _drop_first(right: list[str]) -> None:
    """Remove the first character of ``right``."""
    while right and not right[-1]:
        right.pop()
    if right:
        right[-1] = right[-1][1:]


def _cut(before: str, right: list[str], *, starts_text: bool) -> str:
    """
    Cut a span by the module's rule, given the text ``before`` it (unedited) and the pieces of the text after it
    (``right``, last piece first; updated). :returns: ``before`` as the cut leaves it.
    """
    head, line = before[: before.rfind("\n") + 1], before[before.rfind("\n") + 1 :]
    if line.rstrip().endswith("(") and _first(right, solid=True) == ")":
        line = line.rstrip()[:-1]
        _drop_blanks(right)
        _drop_first(right)
    if line[-1:].isspace() and (_first(right, solid=False) or " ") in _AFTER_A_CUT:
        line = line.rstrip()
    if not line.strip() and (head or starts_text):  # nothing but blanks before it on its line
        _drop_blanks(right)
    return head + line


def apply_edits(text: str, edits: list[Edit]) -> str:
    """The edited text, with as many lines as ``text``."""
    right: list[str] = []  # the edited text on the right of the edit at hand, last piece first
    _push(right, text[edits[-1][1] :] if edits else text)
    for number in reversed(range(len(edits))):
        start, end, new = edits[number]
        before = text[edits[number - 1][1] if number else 0 : start]
        breaks = text.count("\n", start, end)
        if new is None:
            _push(right, "\n" * breaks)
            before = _cut(before, right, starts_text=number == 0)
        else:
            _push(right, new + "\n" * max(0, breaks - new.count("\n")))
        _push(right, before)
    return "".join(reversed(right))


def _push(right: list[str], piece: str) -> None:
    if piece:  # no empty piece, so that the start of the text on the right is found at once
        right.append(piece)
