"""Claims, the judge's replies and the verdict rules, without an agent."""

from __future__ import annotations

import json
from typing import Any

import pytest
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research import EvidenceLedger
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.report.assessment import (
    NOTHING_MATCHED,
    READ_PASSAGES_URL,
    UNSUPPORTED_MARK,
    ReadPassages,
    cited_claims,
    judge_claims,
    mark_unsupported,
    parse_verdicts,
    uncited_claims,
)
from haystack_deep_research.run._phases import drive, drive_async

A, B, C = "https://a.example/x", "https://b.example/y", "https://c.example/z"
REPORT = f"""# Report

Wind output rose 10% in 2024 [A]({A}) [B]({B}). Nothing cited here. Prices fell [C]({C})!
Costs dropped [1].

[1]: {A}

## Sources

- [A]({A})
- [B]({B})
"""


def test_claims_are_body_sentences_with_verified_citations_grouped_per_sentence() -> None:
    claims = cited_claims(REPORT, [A, B])

    assert [(c.text, c.line, c.urls) for c in claims] == [
        ("Wind output rose 10% in 2024 A B.", 3, (A, B)),
        ("Costs dropped.", 4, (A,)),
    ]
    assert all(c.line < 7 for c in extract_citations(REPORT, sources_section=False))
    assert {c.line for c in extract_citations(REPORT)} >= {10, 11}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"verdicts": [{"id": 1, "verdict": "Supported", "reason": "ok"}]}', {1: ("supported", "ok")}),
        ('```json\n[{"id": "2", "verdict": "unsupported"}]\n```', {2: ("unsupported", "")}),
        ('Here you go: {"verdicts": [{"id": 1, "verdict": "maybe"}]} Hope it helps.', {1: ("unknown", "")}),
        ('{"verdicts": [{"id": 9, "verdict": "supported"}, {"id": true, "verdict": "supported"}, "x"]}', {}),
        ("All supported.", None),
        ('{"verdicts": "supported"}', None),
    ],
)
def test_replies_are_read_leniently(reply: str, expected: dict[int, Any] | None) -> None:
    assert parse_verdicts(reply, 2) == expected


def _ledger() -> EvidenceLedger:
    ledger = EvidenceLedger()
    ledger.record_page(url=A, title="A", text="Wind output rose 10% in 2024.")
    ledger.record_page(url=B, title="B", text="Something else entirely.")
    ledger.record_search_result(url=C, title="C", snippet="")  # a result without a snippet: nothing to judge
    return ledger


def _judge(verdicts: dict[str, str]) -> MockChatGenerator:
    """Answers for each source by its URL: the same verdict for all its claims; "garbage" is not JSON."""

    def answer(messages: list[ChatMessage]) -> str:
        prompt = messages[-1].text or ""
        verdict = next(v for url, v in verdicts.items() if f'url="{url}"' in prompt)
        count = prompt.split("<untrusted_claims>")[1].count("\n") - 1
        if verdict == "garbage":
            return "no JSON here"
        return json.dumps({"verdicts": [{"id": i, "verdict": verdict} for i in range(1, count + 1)]})

    return MockChatGenerator(response_fn=answer)


def test_a_claim_is_supported_when_any_cited_source_supports_it() -> None:
    claims = cited_claims(REPORT, [A, B, C])
    judged = drive(judge_claims(claims, _ledger(), _judge({A: "supported", B: "unsupported"})))

    assert [v.verdict for v in judged.verdicts] == ["supported", "unknown", "supported"]
    assert judged.verdicts[1].sources[0].reason == "no stored text for this source"  # C was only a search result
    assert judged.score == 1.0


async def test_unsupported_needs_every_source_and_garbage_is_unknown_with_a_warning() -> None:
    claims = cited_claims(REPORT, [A, B])
    judged = await drive_async(judge_claims(claims, _ledger(), _judge({A: "unsupported", B: "garbage"})))

    assert [v.verdict for v in judged.verdicts] == ["unknown", "unsupported"]
    assert judged.score == 0.0
    assert judged.warnings == [f"the judge's reply for {B} was not the JSON asked for; its 1 claim(s) count as unknown"]


def test_marking_puts_the_marker_before_the_final_punctuation() -> None:
    claims = cited_claims(REPORT, [A, B, C])

    wind, prices, costs = claims
    marked, done = mark_unsupported(REPORT, [wind, costs])

    lines = marked.split("\n")
    assert lines[2] == (
        f"Wind output rose 10% in 2024 [A]({A}) [B]({B}) {UNSUPPORTED_MARK}. Nothing cited here. Prices fell [C]({C})!"
    )
    assert lines[3] == f"Costs dropped [1] {UNSUPPORTED_MARK}."
    assert done == [wind, costs]
    assert prices.text == "Prices fell C!"
    assert mark_unsupported(marked, cited_claims(marked, [A]))[1] == []  # already marked: left alone


def test_claims_of_a_report_written_elsewhere_follow_its_markers_and_skip_its_reference_list() -> None:
    bird, its = "https://en.wikipedia.org/wiki/Bird_(disambiguation)", "https://example.com/it's"
    report = (
        "Birds fly.[1] Some [birds](" + bird + ") swim. [2] Cats purr [^a].\n"
        f"Also {its} says so [1, 2].\n\n"
        f"References\n[1] Birds — {bird}\n[2] It's — {its}\n\n"
        f"[^a]: Cats, {A}\n"
    )

    claims = cited_claims(report, [bird, its, A])

    assert [(c.text, c.sentence, c.line, c.urls) for c in claims] == [
        ("Birds fly.", "Birds fly.[1]", 1, (bird,)),
        ("Some birds swim.", f"Some [birds]({bird}) swim. [2]", 1, (bird, its)),
        ("Cats purr.", "Cats purr [^a].", 1, (A,)),
        ("Also says so.", f"Also {its} says so [1, 2].", 2, (its, bird)),
    ]


def test_the_claims_that_cite_nothing_follow_one_rule() -> None:
    summary = (
        "# Summary\n\nWhat drives the tides?\n\nThe moon pulls the oceans toward it [a](https://a.example/). "
        "The sun adds a smaller pull of its own every day. See below.\n\n"
        "This report covers the tides. The following sections explain why. Key points:\n\n"
        "- Le Vatican a découvert les marées en 1850. [1]\n"
        "- 潮汐主要由月球引力引起。\n\n"
        "```\nThe code block claims nothing at all.\n```\n\n"
        "## Sources\n\n- https://a.example/\n\n[1]: https://unread.example/\n"
    )

    claims = uncited_claims(summary, ["https://a.example/"])

    # not the question, the short line, the signposts, the label, the heading, the code or the Sources; a sentence
    # citing only what was not verified cites nothing; a CJK sentence counts its characters
    assert [claim.sentence for claim in claims] == [
        "The sun adds a smaller pull of its own every day.",
        "Le Vatican a découvert les marées en 1850. [1]",
        "潮汐主要由月球引力引起。",
    ]
    assert claims[1].text == "Le Vatican a découvert les marées en 1850."  # as the judge sees it: no marker
    assert {claim.urls for claim in claims} == {("evidence:read-passages",)}
    assert [claim.line for claim in claims] == [5, 9, 10]


@pytest.mark.parametrize(
    "sentence",
    [
        "Temperatures in Lisbon stay below freezing all winter.",
        "The vaccine is safe above all for infants.",
        "This analysis draws on proof that aspirin cures cancer.",
        "The following drugs were withdrawn in every country.",
    ],
)
def test_a_claim_that_only_looks_like_a_signpost_is_judged(sentence: str) -> None:
    [claim] = uncited_claims(f"## Findings\n\n{sentence}\n", [])

    assert claim.text == sentence


def test_claims_that_cite_nothing_are_judged_against_the_passages_that_match_them() -> None:
    ledger = EvidenceLedger()
    ledger.record_page(url="https://solar.example/", title="Solar", text="Solar capacity grew by 450 gigawatts.")
    ledger.record_page(
        url="https://tides.example/", title="Marées", text="Les marées suivent la Lune.\n\nThe Moon pulls the oceans."
    )
    report = "## Tides\n\nThe Moon pulls the oceans twice a day.\n\nZyx qwv plonk frobs.\n"
    claims = uncited_claims(report, [])

    source = ReadPassages(ledger, claims).get(READ_PASSAGES_URL)

    assert source is not None
    assert "[Marées]\nLes marées suivent la Lune.\n\nThe Moon pulls the oceans." in source.text
    assert "450 gigawatts" not in source.text  # a source that shares no word with any claim is left out
    assert ReadPassages(ledger, claims).get("https://solar.example/") is ledger.get("https://solar.example/")
    nothing = ReadPassages(ledger, uncited_claims("Zyx qwv plonk frobs.", [])).get(READ_PASSAGES_URL)
    assert nothing is not None
    assert nothing.text == NOTHING_MATCHED  # judged unsupported, not left unknown
    assert ReadPassages(EvidenceLedger(), claims).get(READ_PASSAGES_URL) is None  # nothing read: unknown
