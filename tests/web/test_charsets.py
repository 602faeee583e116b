"""Character sets: pages keep their characters however they declare them, and a hostile charset is read as UTF-8."""

from __future__ import annotations

import pytest

from haystack_deep_research import ReadUrlTool, ResearchRun, UrlPolicy
from haystack_deep_research.testing import LoopbackWebServer, ScriptedChatGenerator

TITLE = "Imagerie médicale à Zürich"
ARTICLE = (
    "<html><head>{meta}<title>" + TITLE + "</title></head><body><article>"
    "<p>L'imagerie médicale révèle l'intérieur du corps sans l'ouvrir, grâce aux rayons et aux ondes.</p>"
    "<p>Les hôpitaux de Zürich utilisent l'IRM et l'échographie chaque jour pour leurs patients âgés.</p>"
    "</article></body></html>"
)


def _read(web: LoopbackWebServer, *paths: str) -> tuple[str, ResearchRun]:
    run = ResearchRun()
    tool = ReadUrlTool(
        summarizer_llm=ScriptedChatGenerator(role="summarizer"), url_policy=UrlPolicy(allow_hosts=("127.0.0.1",))
    )
    text = tool.bind(run.view()).invoke(urls=[web.url(path) for path in paths], question="imagerie médicale")
    return text, run


@pytest.mark.parametrize(
    ("encoding", "content_type", "meta"),
    [
        ("utf-8", "text/html; charset=utf-8", ""),
        ("utf-8", "text/html", ""),
        ("utf-8", "text/html", '<meta charset="utf-8">'),
        ("utf-8", "application/xhtml+xml", ""),
        ("windows-1252", "text/html; charset=windows-1252", ""),
        ("iso-8859-1", "text/html; charset=ISO-8859-1", ""),
        ("windows-1252", "text/html", '<meta charset="windows-1252">'),
        ("iso-8859-1", "text/html", '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'),
        ("windows-1252", "text/html", ""),  # no declaration at all, not valid UTF-8: what browsers assume
    ],
)
def test_titles_and_text_keep_their_characters_in_the_ledger(
    web: LoopbackWebServer, encoding: str, content_type: str, meta: str
) -> None:
    web.add_page("/page", ARTICLE.format(meta=meta).encode(encoding), content_type=content_type)

    text, run = _read(web, "/page")

    [entry] = run.ledger.entries()
    assert entry.title == TITLE
    assert "Les hôpitaux de Zürich" in entry.text
    assert f"Title: {TITLE}" in text
    assert "Ã" not in entry.title + entry.text


@pytest.mark.parametrize(
    "charset", ["base64", "hex", "rot13", "zlib", "uu", "idna", "unicode_escape", "undefined", "no-such-charset"]
)
@pytest.mark.parametrize("kind", ["text/plain", "text/html"])
def test_a_page_with_a_hostile_charset_is_read_as_utf8_beside_a_normal_page(
    web: LoopbackWebServer, charset: str, kind: str
) -> None:
    body = ARTICLE.format(meta="") if kind == "text/html" else "Les hôpitaux de Zürich lisent l'IRM chaque jour."
    web.add_page("/hostile", body.encode("utf-8"), content_type=f"{kind}; charset={charset}")
    web.add_page("/normal", ARTICLE.format(meta=""))

    text, run = _read(web, "/hostile", "/normal")

    entries = {entry.url: entry for entry in run.ledger.entries()}
    assert set(entries) == {web.url("/hostile"), web.url("/normal")}
    assert "Les hôpitaux de Zürich" in entries[web.url("/hostile")].text
    assert entries[web.url("/normal")].title == TITLE
    assert text.count("Source: ") == 2
