"""The headings a report is cut at are those a CommonMark reader shows."""

from __future__ import annotations

import random

from markdown_it import MarkdownIt

from haystack_deep_research.evidence.reading import headings

ATOMS = [
    "# ", "## ", "### ", "#", "Title", " text ", "\n", "\n\n", "===", "---", "> ", "- ", "1. ", "```", "~~~", "    ",
    "[a]: http://x", "[a]", "<div>", "</div>", "| a | b |\n|---|---|\n", "*", "_", "`", "\\#", "&#35;", "<!--", "-->",
    " #", "Ünïcødé 東京", "\r\n", "\r", "\t", "\0", "**bold** [link](http://e.example)",
]  # fmt: skip


def _shown(text: str) -> list[tuple[int, str, int, int]]:
    """The top-level headings markdown-it's own CommonMark parse finds: level, inline text as written, lines."""
    tokens = MarkdownIt("gfm-like").parse(text)
    return [
        (int(token.tag[1:]), tokens[index + 1].content.strip(), *token.map)
        for index, token in enumerate(tokens)
        if token.type == "heading_open" and token.level == 0 and token.map
    ]


def test_the_headings_found_are_those_a_full_commonmark_parse_finds() -> None:
    rng = random.Random(11)
    texts = ["".join(rng.choice(ATOMS) for _ in range(rng.randint(0, 40))) for _ in range(4000)]
    texts.append("# Wärmepumpen **im** [Test](http://e.example)\n\nText\n\nSetext\n===\n\n```\n# not one\n```\n")

    found = {text: [(h.level, h.title, h.line, h.end) for h in headings(text)] for text in texts}

    assert found == {text: _shown(text) for text in texts}
    assert found[texts[-1]] == [(1, "Wärmepumpen **im** [Test](http://e.example)", 0, 1), (1, "Setext", 4, 6)]
