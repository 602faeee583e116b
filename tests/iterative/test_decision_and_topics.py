"""The analysis model's decision as read from its reply, and which proposed topics repeat searched ones."""

from __future__ import annotations

import pytest

from haystack_deep_research.iterative.decide import SearchDecision, TopicFilter, extract_json_object, parse_decision


@pytest.mark.parametrize(
    "reply",
    [
        '{"nextSearchTopic": "solar capacity", "shouldContinue": true}',
        'Here is my decision:\n```json\n{"nextSearchTopic": "solar capacity", "shouldContinue": true}\n```',
        'I would search next. {"nextSearchTopic": "solar capacity", "shouldContinue": true} That should help.',
        '```\n{"nextSearchTopic": "  solar   capacity ", "shouldContinue": true, "reason": "gap"}\n```',
    ],
)
def test_a_decision_is_read_from_plain_fenced_or_chatty_replies(reply: str) -> None:
    decision, errors = parse_decision(reply)

    assert errors == []
    assert decision == SearchDecision(nextSearchTopic="solar capacity", shouldContinue=True)
    assert decision is not None
    assert decision.topics == ["solar capacity"]


def test_several_topics_and_a_stop_are_decisions() -> None:
    several, _ = parse_decision('{"nextSearchTopic": ["a", " ", "b"], "shouldContinue": true}')
    stop, _ = parse_decision('{"nextSearchTopic": null, "shouldContinue": false}')

    assert several is not None
    assert several.topics == ["a", "b"]
    assert stop is not None
    assert stop.topics == []


@pytest.mark.parametrize(
    ("reply", "complaint"),
    [
        ("I am not sure what to search next.", "holds no JSON object"),
        ('{"nextSearchTopic": null, "shouldContinue": true}', "nextSearchTopic must name"),
        ('{"nextSearchTopic": "x"}', "shouldContinue"),
        ('{"nextSearchTopic": 3, "shouldContinue": true}', "nextSearchTopic"),
    ],
)
def test_an_invalid_reply_gives_the_errors_the_retry_shows(reply: str, complaint: str) -> None:
    decision, errors = parse_decision(reply)

    assert decision is None
    assert complaint in str(errors)


def test_extracting_json_refuses_text_without_an_object() -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object("nothing {here")


@pytest.mark.parametrize(
    ("searched", "proposed"),
    [
        ("latest advances in AI medical diagnosis", "AI medical diagnosis: latest advances"),
        ("latest advances in AI medical diagnosis", "Latest advances in AI-based medical diagnosis"),
        ("battery storage costs", "the cost of battery storage"),
        ("AI医疗诊断最新进展", "AI医疗诊断的最新进展"),
    ],
)
def test_reworded_repeats_are_refused(searched: str, proposed: str) -> None:
    assert TopicFilter([searched]).repeats(proposed)


@pytest.mark.parametrize(
    ("searched", "proposed"),
    [
        ("latest advances in AI medical diagnosis", "breakthroughs in medical imaging AI technology"),
        ("latest advances in AI medical diagnosis", "applications of AI in drug development"),
        ("solar capacity", "solar capacity growth"),
        ("solar capacity 2024", "solar capacity 2025"),
        ("AI医疗诊断最新进展", "医疗影像AI技术突破"),
    ],
)
def test_new_topics_pass(searched: str, proposed: str) -> None:
    assert not TopicFilter([searched]).repeats(proposed)


def test_a_round_may_not_repeat_itself() -> None:
    new, refused = TopicFilter(["solar"]).split(["battery storage", "Battery-storage", "solar", "grid prices"])

    assert new == ["battery storage", "grid prices"]
    assert refused == ["Battery-storage", "solar"]


@pytest.mark.parametrize(
    "reply",
    ["[" * 1200, "{" * 1200, 'My decision: {"nextSearchTopic": ' + "[" * 1200, "```json\n" + '{"a":' * 1200 + "\n```"],
)
def test_json_nested_too_deeply_is_a_malformed_reply_not_a_crash(reply: str) -> None:
    decision, errors = parse_decision(reply)

    assert decision is None
    assert "holds no JSON object" in str(errors)


def test_an_updates_topics_are_shown_inert_in_its_what_changed_section() -> None:
    """The topics come from the analysis model and from journal notes: no link, image or tag of theirs survives."""
    from markdown_it import MarkdownIt

    from haystack_deep_research.evidence.citations import extract_citations
    from haystack_deep_research.iterative.write import _changes_section
    from haystack_deep_research.report.headings import report_sections

    hostile = {
        "since": "2026-11-30",
        "new_topics": ["![t](https://evil.example/track.png)"],
        "rechecked_topics": ["<img src=x onerror=alert(1)>"],
        "kept_topics": ["Kosten [Preise](https://evil.example/phish) https://evil.example/bare"],
        "changed_sources": [],
        "new_sources": [],
        "changed_claims": [],
        "new_claims": [],
        "no_longer_supported": [],
    }

    section = _changes_section(hostile, report_sections("Was kostet Solarstrom?"), set())
    html = MarkdownIt("gfm-like").render(section)

    assert "<a " not in html
    assert "<img" not in html
    assert extract_citations(section) == []
    assert "Kosten" in section
    assert "Preise" in section
