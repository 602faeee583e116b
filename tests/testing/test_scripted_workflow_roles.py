"""The scripted roles of the research workflow answer by template name and variables, never by wording."""

from __future__ import annotations

import json

import pytest

from haystack_deep_research import ConfigurationError, ResearchSummary
from haystack_deep_research._prompts import (
    CAUSAL,
    REWRITE_OPENING,
    STRUCTURED,
    WRITER_OPENING,
    WRITER_SECTION,
    render_chat,
)
from haystack_deep_research.testing import ScriptedChatGenerator

FINDING = "## Tides\n\nFindings:\n- Spring tides occur at new moon. They are strong [Tides](https://t.example/tides)"
CLAIM = "Tides stopped in 1990"
URLS = ["https://t.example/tides"]
OPENING = {"brief": "q", "urls": URLS, "keys": ["1"], "max_words": 250, "summary": "Executive summary", "findings": ""}
OPENING |= {"closing": [], "translate": False, "topics": [], "causal_chain": "", "title_only": False}


def _reply(generator: ScriptedChatGenerator, template: object, **variables: object) -> str:
    return generator.run(messages=render_chat(template, **variables))["replies"][0].text or ""  # type: ignore[arg-type]


def _opening(corrects: str, template: object, notes: list[str], **extra: object) -> str:
    generator = ScriptedChatGenerator(role="summarize", unsupported_claims=[CLAIM], corrects=corrects)  # type: ignore[arg-type]
    return _reply(generator, template, **{**OPENING, "notes": notes, **extra})


def test_a_section_restates_each_allowed_finding_as_one_cited_claim_and_the_opening_states_the_claim() -> None:
    generator = ScriptedChatGenerator(role="summarize", unsupported_claims=[CLAIM])
    section = _reply(
        generator, WRITER_SECTION, notes=[FINDING], urls=URLS, keys=["1"], number=1, total=1, max_words=500, heading=""
    )
    opening = _opening("never", WRITER_OPENING, [FINDING], causal_chain="1. Moon -> tides\n2. Tides -> coasts")

    assert section.startswith("## Tides\n\n")
    assert "- Spring tides occur at new moon, They are strong [source](https://t.example/tides)." in section
    assert CLAIM not in section
    assert opening.startswith(
        "# Summary\n\n## Executive summary\n\nThis summary covers the question: q\n\n"
        "This summary follows a causal chain of 2 step(s)."
    )
    assert f"- {CLAIM} [source](https://t.example/tides)." in opening


@pytest.mark.parametrize(
    ("corrects", "on_rewrite", "with_new_evidence"),
    [("never", True, True), ("on_rewrite", False, True), ("on_new_evidence", True, False)],
)
def test_summarize_drops_its_unsupported_claim_by_its_rule(
    corrects: str, on_rewrite: bool, with_new_evidence: bool
) -> None:
    previous = {"previous": "p", "unsupported": [f"{CLAIM} source."], "researched": False}
    rewrite = _opening(corrects, REWRITE_OPENING, [FINDING], **previous)
    later = _opening(corrects, WRITER_OPENING, [FINDING, f"## Evidence on claims checked again (round 1): {CLAIM}"])

    assert (CLAIM in rewrite, CLAIM in later) == (on_rewrite, with_new_evidence)


def test_causal_numbers_the_cited_findings() -> None:
    text = _reply(ScriptedChatGenerator(role="causal"), CAUSAL, question="q", findings=[FINDING])

    assert text == "1. Spring tides occur at new moon. They are strong [Tides](https://t.example/tides)"


def test_summarize_fills_a_structured_output_schema_from_the_report() -> None:
    report = "# Summary\n\nThe answer.\n\n## Key findings\n\n- Spring tides are strong [s](https://t.example/tides).\n"
    schema = json.dumps(ResearchSummary.model_json_schema())
    text = _reply(
        ScriptedChatGenerator(role="summarize"),
        STRUCTURED,
        schema=schema,
        report=report,
        sources=["Tides — https://t.example/tides"],
    )

    summary = ResearchSummary.model_validate_json(text)
    assert summary.summary == "The answer."
    assert summary.key_findings == ["Spring tides are strong"]
    assert summary.sources == ["https://t.example/tides"]


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="corrects must be one of never, on_rewrite, on_new_evidence"):
        ScriptedChatGenerator(role="summarize", corrects="sometimes")  # type: ignore[arg-type]
