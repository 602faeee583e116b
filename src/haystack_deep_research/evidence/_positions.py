"""
Where a block's inline content stands in the report.

markdown-it gives each block the lines it spans (``token.map``) and its inline content: those lines less their
container prefixes (indentation, ``>``, a list marker), the closing ``#`` of a heading and outer blanks. So each
content line is found in its source line from the right; a table cell is found from the left of its row, after the
cells before it, skipping the backslash of an escaped ``|``. Every character of the content then has an offset in
the report, and every span of the content a span of the report.
"""

from __future__ import annotations

__all__ = ["align", "check", "plain_segments", "span"]


def align(lines: list[str], starts: list[int], content: str, first: int, cell: list[int] | None) -> list[int] | None:
    """
    Map each character of a block's inline content, and its end, to an offset in the report.

    :returns: ``len(content) + 1`` offsets, or ``None`` when the content is not where it should be.
    """
    offsets: list[int] = []
    for number, piece in enumerate(content.split("\n")):
        row = first + number
        if number:  # the line break before this piece
            offsets.append(starts[row - 1] + len(lines[row - 1]))
        if row >= len(lines):
            if piece:
                return None
            continue
        source, base = lines[row], starts[row]
        if cell is not None:
            at = cell[0]
            for char in piece:
                while at < len(source) and source[at] != char and source[at] in " \t|\\":
                    at += 1
                if at >= len(source) or source[at] != char:
                    return None
                offsets.append(base + at)
                at += 1
            cell[0] = at
            continue
        stripped = piece.strip()
        lead = len(piece) - len(piece.lstrip())
        at = source.rfind(stripped) if stripped else len(source.rstrip())
        if at < 0:
            return None
        offsets += [base + min(at + max(0, index - lead), len(source)) for index in range(len(piece))]
    offsets.append(offsets[-1] + 1 if offsets else starts[min(first, len(starts) - 1)])
    return offsets


def span(offsets: list[int], start: int, end: int) -> tuple[int, int]:
    """:returns: The span of the report holding the content's ``[start, end)``."""
    return (offsets[start], offsets[end - 1] + 1) if end > start else (offsets[start], offsets[start])


def check(text: str, offsets: list[int], content: str, start: int, end: int) -> bool:
    """:returns: Whether every character of ``content[start:end]`` (but line breaks) is where ``offsets`` puts it."""
    return all(
        content[index] == "\n" or (offsets[index] < len(text) and text[offsets[index]] == content[index])
        for index in range(start, end)
    )


def plain_segments(offsets: list[int], length: int, opaque: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of the report, each within one line and contiguous, that hold the rest: plain text."""
    covered = [False] * length
    for start, end in opaque:
        covered[start:end] = [True] * (end - start)
    segments: list[tuple[int, int]] = []
    begin: int | None = None
    for index in range(length + 1):
        breaks = index == length or covered[index] or (begin is not None and offsets[index] != offsets[index - 1] + 1)
        if breaks and begin is not None:
            segments.append((offsets[begin], offsets[index - 1] + 1))
            begin = None
        if index < length and not covered[index] and begin is None:
            begin = index
    return segments
