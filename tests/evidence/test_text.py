"""clean_text: text from outside the library becomes encodable and free of control characters, and nothing else."""

from __future__ import annotations

import json

import pytest

from haystack_deep_research.evidence.text import clean_text


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("solar \ud800 power", "solar \ufffd power"),  # a lone high surrogate
        ("\udcff at the start", "\ufffd at the start"),  # a lone low surrogate (what surrogateescape decoding leaves)
        ("two \ud83d\ude00 halves", "two \ufffd\ufffd halves"),  # a pair left unjoined is still two lone halves
        ("NUL\x00byte", "NULbyte"),
        ("\x1b[2Jclear screen", "[2Jclear screen"),  # an escape sequence loses its ESC
        ("C1\x9b31m control", "C131m control"),  # the one-byte CSI of some terminals
        ("bell\x07 and delete\x7f", "bell and delete"),
    ],
)
def test_what_cannot_be_encoded_or_shown_safely_is_replaced_or_dropped(text: str, cleaned: str) -> None:
    assert clean_text(text) == cleaned
    clean_text(text).encode("utf-8")  # never raises


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Solar capacity grew by 450 GW in 2025.",
        "lines\nand\ttabs\r\n",
        "日本語のテキスト, العربية, emoji 😀 and a real replacement character \ufffd",
        "\u00a0no-break space, \u200bzero width space, \u2028line separator",
    ],
)
def test_clean_text_comes_back_unchanged(text: str) -> None:
    assert clean_text(text) == text


def test_a_lone_surrogate_decoded_from_json_is_cleaned() -> None:
    snippet = json.loads('{"content": "grew \\ud800 fast"}')["content"]  # valid JSON, not encodable as UTF-8

    with pytest.raises(UnicodeEncodeError):
        snippet.encode("utf-8")
    assert clean_text(snippet).encode("utf-8") == "grew \ufffd fast".encode()


HOSTILE_LINES = [
    "see https://evil.example/login now",
    "Zahlung unter http://www.evil.example/pay — 94 %",
    "mailto:boss@evil.example or javascript:alert(1) or WWW.EVIL.EXAMPLE",
    "![t](https://evil.example/track.png) <img src=x onerror=alert(1)> [x](https://evil.example)",
    "访问 https://evil.example/登录 获取",
]


@pytest.mark.parametrize("line", HOSTILE_LINES)
def test_an_inert_line_makes_no_link_with_linkify_and_no_citation(line: str) -> None:
    from markdown_it import MarkdownIt

    from haystack_deep_research.evidence.citations import extract_citations
    from haystack_deep_research.evidence.text import inert_text

    shown = inert_text(line)
    html = MarkdownIt("gfm-like").render(f"- {shown}\n")

    assert "<a " not in html
    assert "<img" not in html
    assert extract_citations(f"A line: {shown}\n") == []
    assert shown.replace("\u2060", "").replace("\\", "").replace("&amp;", "&") == " ".join(line.split())
